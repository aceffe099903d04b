//! The MPI backend on every registered algorithm. Run under mpirun (see
//! scripts/mpi-tests.sh): `mpirun -np 4 <this test binary>`; the rank count
//! is the world's. Without mpirun it runs as a single rank.
//!
//! Every process runs every case; the outcome of a case is agreed on by all
//! ranks (an allreduce of "ok"), and rank 0 prints one line per case and a
//! closing `N passed, M failed` line. The fault-injection case runs last,
//! because a failed run leaves abandoned transfers behind.

use std::time::{Duration, Instant};
use topocoll::algorithms::Error;
use topocoll::algorithms::{Algorithm, Request, ALGORITHMS};
use topocoll::runtime::mpi::{exit_all, run_rank, World};
use topocoll::runtime::{self, Elem, Fault, Options, Plan};
use topocoll::schedule::{verify, Collective, Dtype, ReduceOp, Schedule};
use topocoll::topology::{parse_spec, RankMap, Topology};
use topocoll::with_dtype;

fn build(
    alg: &topocoll::algorithms::Algorithm,
    p: usize,
    elems: u64,
    dtype: Dtype,
    op: ReduceOp,
    topo: Option<&Topology>,
) -> Result<Option<Schedule>, String> {
    let c = alg.collective.with_root((p / 2) as u32);
    let req =
        Request::new(c, p, elems * dtype.size(), dtype, op, topo).map_err(|e| e.to_string())?;
    match (alg.build)(&req) {
        Ok(s) => Ok(Some(s)),
        Err(Error::Unsupported { .. }) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `s` twice on the MPI backend, checked; the output's hash.
fn case<T: Elem>(w: &World, s: &Schedule, engines: usize) -> Result<u64, String> {
    verify(s).map_err(|e| e.to_string())?;
    let plan = Plan::new(s).map_err(|e| e.to_string())?;
    let opts = Options {
        engines,
        timeout: Some(Duration::from_secs(60)),
        ..Options::default()
    };
    let mut b = runtime::initial_buffers::<T>(s, w.rank());
    // Twice: the second run must give the same bits (inputs refilled).
    run_rank(w, &plan, &mut b, &opts).map_err(|e| e.to_string())?;
    let first = runtime::output_hash(&b);
    runtime::check_rank(s, w.rank(), &b).map_err(|e| e.to_string())?;
    runtime::reset_buffers(s, w.rank(), &mut b);
    run_rank(w, &plan, &mut b, &opts).map_err(|e| e.to_string())?;
    if runtime::output_hash(&b) != first {
        return Err("a second run gave different bits".into());
    }
    Ok(first)
}

/// Every alltoallv and allgatherv algorithm with counts from each
/// generator (uniform with many empty blocks, Zipf, hot experts): the MPI
/// run checked against the reference and bit-identical, rank by rank, to
/// the same schedule on the threads backend in this process. The
/// node-aware ones run with two ranks to each host of a line (P even).
fn v_collectives(w: &World, report: &mut impl FnMut(String, Result<(), String>)) {
    use std::sync::Arc;
    use topocoll::runtime::threads;
    use topocoll::schedule::Sizes;
    let p = w.size();
    let line = (p >= 2 && p.is_multiple_of(2)).then(|| {
        let mut t = parse_spec(&format!("mesh:{}", p / 2)).expect("a line");
        t.place_ranks(2, &RankMap::Block, 20e9, 0.0)
            .expect("placed");
        t
    });
    for alg in ALGORITHMS {
        let Some(shape) = alg.collective.with_root(0).sizes_shape() else {
            continue;
        };
        let topo = if alg.takes_inter() {
            match &line {
                Some(t) => Some(t),
                None => continue,
            }
        } else {
            None
        };
        for (spec, mean) in [("uniform:24", 0), ("zipf:1.2", 1000), ("hot:1", 3000)] {
            let name = format!("{} {} P={p} counts {spec}", alg.collective, alg.name);
            let build = || -> Result<Schedule, String> {
                let dtype = Dtype::F32;
                let c = alg.collective.with_root(0);
                let sizes = Sizes::parse(spec, shape, p, mean, dtype.size(), 7)
                    .map_err(|e| e.to_string())?;
                Request::new(c, p, mean * dtype.size(), dtype, ReduceOp::Sum, topo)
                    .and_then(|r| r.with_sizes(Arc::new(sizes)))
                    .and_then(|r| (alg.build)(&r))
                    .map_err(|e| e.to_string())
            };
            let s = match build() {
                Ok(s) => s,
                Err(e) => {
                    report(name, Err(e));
                    continue;
                }
            };
            let mine = case::<f32>(w, &s, 4).and_then(|hash| {
                let plan = Plan::new(&s).map_err(|e| e.to_string())?;
                let mut all: Vec<runtime::RankBuffers<f32>> =
                    (0..p).map(|r| runtime::initial_buffers(&s, r)).collect();
                threads::run(&plan, &mut all, &Options::default()).map_err(|e| e.to_string())?;
                if runtime::output_hash(&all[w.rank()]) == hash {
                    Ok(())
                } else {
                    Err("other bits than the threads backend".into())
                }
            });
            report(name, mine);
        }
    }
}

fn main() {
    let w = World::init().expect("MPI");
    let p = w.size();
    let lead = w.rank() == 0;
    let (mut passed, mut failed) = (0, 0);
    let mut report = |name: String, mine: Result<(), String>| {
        let all = w.all_true(mine.is_ok());
        if let Err(e) = &mine {
            eprintln!("rank {}: {name}: {e}", w.rank());
        }
        if all {
            passed += 1;
        } else {
            failed += 1;
        }
        if lead {
            println!("test mpi {name} ... {}", if all { "ok" } else { "FAILED" });
        }
    };
    for alg in ALGORITHMS {
        let c = alg.collective.with_root(0);
        let block = c.size_is_block();
        let big = if block {
            (2 << 20) / 8 / p as u64 + 1
        } else {
            (2 << 20) / 8 + 3
        };
        for n in [0, 1, 3 * p as u64 + 1, big] {
            let types: &[(Dtype, ReduceOp)] = if c.is_reduction() {
                &[(Dtype::F64, ReduceOp::Sum), (Dtype::I64, ReduceOp::Max)]
            } else {
                &[(Dtype::U8, ReduceOp::Sum), (Dtype::F32, ReduceOp::Sum)]
            };
            for &(dtype, op) in types {
                let name = format!(
                    "{} {} P={p} n={n} {} {}",
                    alg.collective,
                    alg.name,
                    dtype.name(),
                    op.name()
                );
                let s = match build(alg, p, n, dtype, op, None) {
                    Ok(Some(s)) => s,
                    Ok(None) => continue,
                    Err(e) => {
                        report(name, Err(e));
                        continue;
                    }
                };
                let engines = if n % 2 == 0 { 1 } else { 4 };
                let r = with_dtype!(dtype, T => case::<T>(&w, &s, engines));
                report(name, r.map(|_| ()));
            }
        }
    }
    // The node-aware compositions take ranks placed several to a host: two
    // to each host of a line (P even), with their default leaders.
    if p >= 4 && p.is_multiple_of(2) {
        let mut t = parse_spec(&format!("mesh:{}", p / 2)).expect("a line");
        t.place_ranks(2, &RankMap::Block, 20e9, 0.0)
            .expect("placed");
        for alg in Algorithm::composed() {
            for n in [1, 4 * p as u64] {
                let (dtype, op) = if alg.collective.with_root(0).is_reduction() {
                    (Dtype::F64, ReduceOp::Sum)
                } else {
                    (Dtype::U8, ReduceOp::Sum)
                };
                let name = format!("{} {} P={p} (2 a host) n={n}", alg.collective, alg.name);
                let s = match build(alg, p, n, dtype, op, Some(&t)) {
                    Ok(Some(s)) => s,
                    Ok(None) => continue,
                    Err(e) => {
                        report(name, Err(e));
                        continue;
                    }
                };
                let r = with_dtype!(dtype, T => case::<T>(&w, &s, 4));
                report(name, r.map(|_| ()));
            }
        }
    }
    // The v-collectives with skewed counts, every algorithm (the node-aware
    // ones with two ranks a host), bit-identical to the threads backend.
    v_collectives(&w, &mut report);
    // Fault injection: rank 1 (or 0 alone) fails half-way through its program;
    // every rank must return an error naming it, well within the timeout.
    let victim = usize::from(p > 1);
    if let Some(alg) = ALGORITHMS
        .iter()
        .find(|a| a.collective.name() == "allreduce")
    {
        if let Ok(Some(s)) = build(alg, p, 1 << 18, Dtype::F64, ReduceOp::Sum, None) {
            let op = s.programs[victim].len() / 2;
            if !s.programs[victim].is_empty() {
                let plan = Plan::new(&s).unwrap();
                let timeout = Duration::from_secs(20);
                let opts = Options {
                    fault: Some(Fault { rank: victim, op }),
                    timeout: Some(timeout),
                    ..Options::default()
                };
                let mut b = runtime::initial_buffers::<f64>(&s, w.rank());
                let t0 = Instant::now();
                let r = run_rank(&w, &plan, &mut b, &opts);
                let mine = match r {
                    Ok(_) => Err("the run succeeded".to_string()),
                    Err(e) => {
                        let e = e.to_string();
                        if t0.elapsed() >= timeout {
                            Err(format!("error only after the timeout: {e}"))
                        } else if !e.contains(&format!("rank {victim} failed at op {op}")) {
                            Err(format!("error does not name the failed rank and op: {e}"))
                        } else {
                            Ok(())
                        }
                    }
                };
                report(
                    format!("fault injection: rank {victim} op {op} of {p}"),
                    mine,
                );
            }
        }
    }
    // A deadlocked (unverified) schedule: every rank waits for a message
    // nobody sends; --timeout must turn that into an error on every rank.
    {
        let mut s = Schedule::new(
            Collective::Allreduce,
            p,
            4,
            Dtype::F64,
            ReduceOp::Sum,
            "hang",
        );
        for r in 0..p {
            s.programs[r].push(
                topocoll::schedule::Op::Recv {
                    peer: ((r + 1) % p) as u32,
                    tag: 99,
                    region: topocoll::schedule::Region::output(0, 4),
                    combine: false,
                },
                &[],
            );
        }
        let plan = Plan::new(&s).unwrap();
        let timeout = Duration::from_secs(2);
        let opts = Options {
            timeout: Some(timeout),
            ..Options::default()
        };
        let mut b = runtime::initial_buffers::<f64>(&s, w.rank());
        let t0 = Instant::now();
        let mine = match run_rank(&w, &plan, &mut b, &opts) {
            Ok(_) => Err("the run succeeded".to_string()),
            Err(e) if !e.to_string().contains("timed out") => Err(format!("not a timeout: {e}")),
            Err(_) if t0.elapsed() > timeout * 3 => Err("the error came late".to_string()),
            Err(_) => Ok(()),
        };
        report(format!("timeout: a deadlocked schedule on {p} ranks"), mine);
    }
    if lead {
        println!("\n{passed} passed, {failed} failed");
    }
    exit_all(i32::from(failed > 0));
}
