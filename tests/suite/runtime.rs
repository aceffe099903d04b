//! The runtime's threads backend (every algorithm on it against the
//! references, its determinism and its faults: the corpus,
//! tests/corpus/ranks.toml, large-ranks.toml and networks.toml): sends are
//! eager, the replay merges and shares its steps and streams large copies,
//! falls back to the task pool where it cannot order a run; unverified
//! schedules fail cleanly, a timeout bounds a run, a run takes time linear
//! in its ranks; reduce-scatter's results are the same bits on every run.

use std::time::{Duration, Instant};
use topocoll::algorithms::{Request, ALGORITHMS};
use topocoll::runtime::{self, threads, Elem, Options, Plan, RankBuffers};
use topocoll::schedule::{verify, Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::topology::Topology;
use topocoll::{with_dtype, RunKind};

/// Builds `alg` for a shape; None when the algorithm does not support it.
fn build(
    alg: &topocoll::algorithms::Algorithm,
    p: usize,
    elems: u64,
    dtype: Dtype,
    op: ReduceOp,
    topo: Option<&Topology>,
) -> Option<Schedule> {
    let root = (p / 2) as u32;
    let c = alg.collective.with_root(root);
    let req = Request::new(c, p, elems * dtype.size(), dtype, op, topo).unwrap();
    match (alg.build)(&req) {
        Ok(s) => Some(s),
        Err(topocoll::algorithms::Error::Unsupported { .. }) => None,
        Err(e) => panic!("{} {}: P={p} n={elems}: {e}", alg.collective, alg.name),
    }
}

fn run_and_check<T: Elem>(s: &Schedule, opts: &Options) -> Vec<RankBuffers<T>> {
    let plan = Plan::new(s).unwrap();
    let mut bufs: Vec<RankBuffers<T>> = (0..s.ranks)
        .map(|r| runtime::initial_buffers(s, r))
        .collect();
    threads::run(&plan, &mut bufs, opts).unwrap_or_else(|e| {
        panic!(
            "{} {} P={} n={}: {e}",
            s.collective.name(),
            s.algorithm,
            s.ranks,
            s.count
        )
    });
    runtime::check(s, &bufs).unwrap_or_else(|e| {
        panic!(
            "{} {} P={} n={}: {e}",
            s.collective.name(),
            s.algorithm,
            s.ranks,
            s.count
        )
    });
    bufs
}

fn opts(engines: usize) -> Options {
    Options {
        engines,
        timeout: Some(Duration::from_secs(60)),
        ..Options::default()
    }
}

fn hand_made(p: usize, count: u64) -> Schedule {
    Schedule::new(
        Collective::Bcast { root: 0 },
        p,
        count,
        Dtype::U8,
        ReduceOp::Sum,
        "hand",
    )
}

#[test]
fn sends_are_eager_even_with_one_engine() {
    // Rank 0 sends A (tag 1) then B (tag 2); rank 1 needs B before it posts
    // A's receive. With one engine and rendezvous this would deadlock.
    let mut s = hand_made(2, 8);
    let half = |o| Region::output(o, 4);
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 1,
            region: half(0),
            route: 0,
        },
        &[],
    );
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 2,
            region: half(4),
            route: 0,
        },
        &[],
    );
    let b = s.programs[1].push(
        Op::Recv {
            peer: 0,
            tag: 2,
            region: half(4),
            combine: false,
        },
        &[],
    );
    s.programs[1].push(
        Op::Recv {
            peer: 0,
            tag: 1,
            region: half(0),
            combine: false,
        },
        &[b],
    );
    verify(&s).unwrap();
    run_and_check::<u8>(&s, &opts(1));
}

/// The helper threads, once no other test's run holds them (None on a
/// machine with one core).
fn wait_for_team() -> Option<runtime::team::Lease> {
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return None;
    }
    let t0 = Instant::now();
    loop {
        if let Some(l) = runtime::team::lease() {
            return Some(l);
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the helpers stay busy"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_segmented_schedule_replays_as_long_copies() {
    // A pipelined broadcast in 16 segments on a chain of 4 ranks: each
    // link's segments follow one another in both buffers, so the replay
    // holds two copies per link instead of 16 (the first segment travels
    // alone: the chain's receives are posted before the rest arrive), and
    // runs them shared with a helper thread.
    let alg = &topocoll::algorithms::bcast::pipeline::ALGORITHM;
    let c = Collective::Bcast { root: 0 };
    let mut req = Request::new(c, 4, 4 << 20, Dtype::U8, ReduceOp::Sum, None).unwrap();
    req.segment_bytes = Some(256 << 10);
    let s = (alg.build)(&req).unwrap();
    verify(&s).unwrap();
    let plan = Plan::new(&s).unwrap();
    let steps = plan.replay().expect("a replay").len();
    assert!(steps <= 2 * 3, "{steps} steps");
    let mut team = wait_for_team();
    let mut bufs: Vec<RankBuffers<u8>> = (0..4).map(|r| runtime::initial_buffers(&s, r)).collect();
    plan.replay()
        .unwrap()
        .run(&plan, &mut bufs, team.as_mut(), None)
        .unwrap();
    runtime::check(&s, &bufs).unwrap();
}

#[test]
fn a_step_that_reads_the_last_ones_output_is_not_merged_into_it() {
    // Two copies on one rank, the second continuing the first in both
    // regions but reading what the first wrote: merged they would be one
    // overlapping copy, so they stay two, and run in order.
    let mut s = hand_made(1, 12);
    let first = s.programs[0].push(
        Op::Copy {
            src: Region::output(0, 4),
            dst: Region::output(4, 4),
        },
        &[],
    );
    s.programs[0].push(
        Op::Copy {
            src: Region::output(4, 4),
            dst: Region::output(8, 4),
        },
        &[first],
    );
    let plan = Plan::new(&s).unwrap();
    assert_eq!(plan.replay().expect("a replay").len(), 2);
    let mut bufs: Vec<RankBuffers<u8>> = vec![runtime::initial_buffers(&s, 0)];
    let head = bufs[0].output[..4].to_vec();
    threads::run(&plan, &mut bufs, &opts(1)).unwrap();
    assert_eq!(bufs[0].output[4..8], head[..]);
    assert_eq!(bufs[0].output[8..12], head[..]);
}

#[test]
fn large_steps_shared_and_streamed_keep_every_bit() {
    // Buffers beyond the largest cache, so copies stream past the caches,
    // and steps large enough to be cut among the threads: the results equal
    // the schedule run one operation at a time, bit for bit.
    let threshold = runtime::replay::stream_bytes();
    for (alg, c, dtype) in [
        (
            &topocoll::algorithms::alltoall::linear::ALGORITHM,
            Collective::Alltoall,
            Dtype::U8,
        ),
        (
            &topocoll::algorithms::allreduce::reduce_bcast::ALGORITHM,
            Collective::Allreduce,
            Dtype::F64,
        ),
    ] {
        if threshold > 1 << 30 {
            return; // a cache of over 1 GiB: too large to test here
        }
        // Double the size until the buffers pass the threshold.
        let mut bytes = 1 << 20;
        let s = loop {
            let req = Request::new(c, 4, bytes, dtype, ReduceOp::Sum, None).unwrap();
            let s = (alg.build)(&req).unwrap();
            let total: u64 = (0..4).map(|r| runtime::buffer_bytes(&s, r)).sum();
            if total > threshold {
                break s;
            }
            bytes *= 2;
        };
        verify(&s).unwrap();
        let plan = Plan::new(&s).unwrap();
        assert!(plan.replay().expect("a replay").streams());
        let mut team = wait_for_team();
        with_dtype!(dtype, T => {
            let mut bufs: Vec<RankBuffers<T>> =
                (0..4).map(|r| runtime::initial_buffers(&s, r)).collect();
            plan.replay().expect("a replay").run(&plan, &mut bufs, team.as_mut(), None).unwrap();
            runtime::check(&s, &bufs).unwrap();
        });
    }
}

#[test]
fn receives_after_own_sends_fall_back_to_the_task_pool() {
    // Each rank receives only after its own send completed: fine with eager
    // sends, stuck if sends waited for their receives. The replay (which
    // matches a send and its receive as one step) cannot order it, so one
    // worker runs the task pool, which buffers the parked sends.
    let mut s = hand_made(2, 8);
    for r in 0..2u32 {
        let send = s.programs[r as usize].push(
            Op::Send {
                peer: 1 - r,
                tag: 0,
                region: Region::output(4 * r as u64, 4),
                route: 0,
            },
            &[],
        );
        s.programs[r as usize].push(
            Op::Recv {
                peer: 1 - r,
                tag: 0,
                region: Region::scratch(0, 4),
                combine: false,
            },
            &[send],
        );
        s.programs[r as usize].scratch = 4;
    }
    let plan = Plan::new(&s).unwrap();
    assert!(plan.replay().is_none());
    let mut bufs: Vec<RankBuffers<u8>> = (0..2).map(|r| runtime::initial_buffers(&s, r)).collect();
    bufs[0].output[..4].copy_from_slice(&[1, 2, 3, 4]);
    bufs[1].output[4..].copy_from_slice(&[5, 6, 7, 8]);
    let stats = threads::run(&plan, &mut bufs, &opts(1)).unwrap();
    assert_eq!(stats.workers, 1);
    assert!(stats.eager_copies > 0);
    assert_eq!(bufs[0].scratch, [5, 6, 7, 8]);
    assert_eq!(bufs[1].scratch, [1, 2, 3, 4]);
}

#[test]
fn unverified_schedules_fail_cleanly() {
    let plan_err = |s: &Schedule| {
        let plan = Plan::new(s).unwrap();
        let mut bufs: Vec<RankBuffers<u8>> = (0..s.ranks)
            .map(|r| runtime::initial_buffers(s, r))
            .collect();
        let t0 = Instant::now();
        let e = threads::run(&plan, &mut bufs, &opts(2)).unwrap_err();
        assert!(t0.elapsed() < Duration::from_secs(5));
        (e.run_kind(), e.to_string())
    };
    // A receive nobody sends: a deadlock, reported at once.
    let mut s = hand_made(2, 8);
    s.programs[1].push(
        Op::Recv {
            peer: 0,
            tag: 9,
            region: Region::output(0, 8),
            combine: false,
        },
        &[],
    );
    let (kind, e) = plan_err(&s);
    assert_eq!(kind, Some(RunKind::Deadlock), "{e}");
    assert!(e.contains("rank 1"), "{e}");
    // Sizes that differ.
    let mut s = hand_made(2, 8);
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 0,
            region: Region::output(0, 8),
            route: 0,
        },
        &[],
    );
    s.programs[1].push(
        Op::Recv {
            peer: 0,
            tag: 0,
            region: Region::output(0, 4),
            combine: false,
        },
        &[],
    );
    let (kind, e) = plan_err(&s);
    assert_eq!(kind, Some(RunKind::Mismatch), "{e}");
    assert!(e.contains("rank 1 op 0"), "{e}");
    // A copy whose source and destination overlap: refused, not undefined.
    let mut s = hand_made(2, 8);
    s.programs[0].push(
        Op::Copy {
            src: Region::output(0, 6),
            dst: Region::output(2, 6),
        },
        &[],
    );
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 0,
            region: Region::output(0, 8),
            route: 0,
        },
        &[0],
    );
    s.programs[1].push(
        Op::Recv {
            peer: 0,
            tag: 0,
            region: Region::output(0, 8),
            combine: false,
        },
        &[],
    );
    let (kind, e) = plan_err(&s);
    assert_eq!(kind, Some(RunKind::Race), "{e}");
    assert!(e.contains("rank 0"), "{e}");
    // A message nobody receives.
    let mut s = hand_made(2, 8);
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 4,
            region: Region::output(0, 8),
            route: 0,
        },
        &[],
    );
    let (kind, e) = plan_err(&s);
    assert_eq!(kind, Some(RunKind::Unreceived), "{e}");
    assert!(e.contains("rank 0 op 0"), "{e}");
    // Out of bounds is caught before running.
    let mut s = hand_made(2, 8);
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 0,
            region: Region::output(4, 8),
            route: 0,
        },
        &[],
    );
    assert!(Plan::new(&s).is_err());
}

#[test]
fn timeout_bounds_a_run() {
    // A run longer than its timeout stops with an error saying what waits.
    let alg = ALGORITHMS
        .iter()
        .find(|a| a.collective.name() == "allreduce")
        .expect("an allreduce");
    let s = build(alg, 4, 4 << 20, Dtype::F64, ReduceOp::Sum, None).expect("supported");
    let plan = Plan::new(&s).unwrap();
    let mut bufs: Vec<RankBuffers<f64>> = (0..4).map(|r| runtime::initial_buffers(&s, r)).collect();
    let o = Options {
        timeout: Some(Duration::from_micros(200)),
        ..opts(4)
    };
    let e = threads::run(&plan, &mut bufs, &o).unwrap_err();
    assert_eq!(e.run_kind(), Some(RunKind::Timeout), "{e}");
    assert!(e.to_string().contains("rank "), "{e}");
}

#[test]
fn a_run_takes_time_linear_in_its_ranks() {
    // A task that released its memory claims on every rank would make
    // 262,144 ranks take about a minute (131,072: 14 s) instead of about
    // 1.5 s; the timeout fails such a run well before that.
    let p = 1 << 18;
    let req = Request::new(
        Collective::Bcast { root: 0 },
        p,
        8,
        Dtype::U8,
        ReduceOp::Sum,
        None,
    )
    .unwrap();
    let bcast = ALGORITHMS
        .iter()
        .find(|a| a.collective.name() == "bcast" && a.name == "binomial")
        .unwrap();
    let s = (bcast.build)(&req).unwrap();
    // The replay (one worker, the default here) and the task pool.
    for workers in [0, 2] {
        let opts = Options {
            timeout: Some(Duration::from_secs(20)),
            workers,
            ..opts(4)
        };
        let out = run_and_check::<u8>(&s, &opts);
        assert_eq!(out.len(), p);
    }
}

#[test]
fn reduce_scatter_gives_the_same_bits_every_run() {
    use topocoll::algorithms::reduce_scatter::{recursive_halving, ring};
    for alg in [&ring::ALGORITHM, &recursive_halving::ALGORITHM] {
        for p in [3usize, 5, 8] {
            let req = Request::new(
                Collective::ReduceScatter,
                p,
                8 * 1000,
                Dtype::F64,
                ReduceOp::Sum,
                None,
            )
            .unwrap();
            let s = topocoll::algorithms::build(alg, &req).unwrap();
            let plan = Plan::new(&s).unwrap();
            let run = |engines: usize| {
                let mut bufs: Vec<RankBuffers<f64>> = (0..p)
                    .map(|r| {
                        let mut b = runtime::initial_buffers(&s, r);
                        // Values whose sums depend on the order of addition.
                        for (i, x) in b.output.iter_mut().enumerate() {
                            *x = 1.0 / (1.0 + (i * 7 + r * 13) as f64) * 1e10f64.powi(r as i32 % 3);
                        }
                        b
                    })
                    .collect();
                let opts = Options {
                    engines,
                    timeout: Some(std::time::Duration::from_secs(60)),
                    fault: None,
                    workers: 0,
                };
                threads::run(&plan, &mut bufs, &opts).unwrap();
                bufs.iter()
                    .map(|b| b.output.iter().map(|x| x.to_bits()).collect::<Vec<u64>>())
                    .collect::<Vec<_>>()
            };
            let first = run(1);
            for engines in [1, 2, 4, 8] {
                assert_eq!(run(engines), first, "{} P {p} engines {engines}", alg.name);
            }
        }
    }
}
