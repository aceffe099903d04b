//! `optimize`'s search shared between processes (`mpirun -np N topocoll
//! optimize`) finds what one process finds: the same candidates at the same
//! times, the same best and the same schedule. The processes here are
//! threads meeting at a barrier, so the rounds' exchanges run without MPI
//! (`scripts/mpi-tests.sh` runs the command under mpirun).

use std::sync::{Arc, Barrier, Mutex};
use topocoll::optimize::share::Share;
use topocoll::optimize::synth::{optimize, optimize_shared, Best, Optimized, Problem};
use topocoll::optimize::Result;
use topocoll::schedule::{Collective, Dtype, ReduceOp};
use topocoll::sim::SimConfig;
use topocoll::topology::Topology;

/// Processes as threads: each puts its bytes in its slot, all meet, each
/// reads every slot, and all meet again before the next exchange.
struct Threads {
    rank: usize,
    size: usize,
    slots: Arc<Mutex<Vec<Vec<u8>>>>,
    barrier: Arc<Barrier>,
}

impl Share for Threads {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn all_gather(&self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        self.slots.lock().unwrap()[self.rank] = mine;
        self.barrier.wait();
        let all = self.slots.lock().unwrap().clone();
        self.barrier.wait();
        Ok(all)
    }
}

/// The search on `size` threads sharing it: each thread's result.
fn shared(p: &Problem, size: usize) -> Vec<Optimized> {
    let slots = Arc::new(Mutex::new(vec![Vec::new(); size]));
    let barrier = Arc::new(Barrier::new(size));
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..size)
            .map(|rank| {
                let share = Threads {
                    rank,
                    size,
                    slots: slots.clone(),
                    barrier: barrier.clone(),
                };
                s.spawn(move || optimize_shared(p, &share).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// The schedule chosen, as its file's bytes.
fn written(b: &Best) -> Vec<u8> {
    let mut out = Vec::new();
    match b {
        Best::Forest(f) => f.to_json(&mut out).unwrap(),
        Best::Schedule(s) => topocoll::schedule::to_json(s, &mut out).unwrap(),
    }
    out
}

fn problem(topo: &Topology, collective: Collective) -> Problem<'_> {
    Problem {
        topo,
        collective,
        size_bytes: 1 << 20,
        dtype: Dtype::F32,
        op: ReduceOp::Sum,
        cfg: SimConfig {
            engines: 4,
            ..SimConfig::default()
        },
    }
}

#[test]
fn a_search_shared_between_processes_finds_what_one_finds() {
    let collectives = [
        Collective::Allreduce,
        Collective::Bcast { root: 0 },
        Collective::ReduceScatter,
        Collective::Allgather,
        Collective::Reduce { root: 1 },
    ];
    for (i, (name, topo)) in super::synthesis::networks().iter().enumerate() {
        let c = collectives[i % collectives.len()];
        let p = problem(topo, c);
        let alone = optimize(&p).unwrap();
        for size in [2, 3] {
            for (rank, got) in shared(&p, size).iter().enumerate() {
                let case = format!("{} on {name}, rank {rank} of {size}", c.name());
                assert_eq!(got.candidates, alone.candidates, "{case}: candidates");
                assert_eq!(got.best, alone.best, "{case}: best");
                assert_eq!(got.complete, alone.complete, "{case}");
                assert_eq!(
                    written(&got.schedule),
                    written(&alone.schedule),
                    "{case}: the schedule chosen"
                );
            }
        }
    }
}
