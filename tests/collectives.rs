//! Scatter, gather, allgather and reduce-scatter: every registered algorithm
//! verified on 1 to 64 ranks (powers of two and not), every root on small
//! rank counts, several block sizes; simulated on a torus; and
//! reduce-scatter's results the same bits on every run.

use std::collections::HashMap;
use topocoll::algorithms::{self, Request, TopologyNeed, ALGORITHMS};
use topocoll::error::Error;
use topocoll::runtime::{self, threads, Options, Plan, RankBuffers};
use topocoll::schedule::{verify, Collective, Dtype, ReduceOp};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::parse_spec;

const FAMILIES: [&str; 4] = ["scatter", "gather", "allgather", "reduce_scatter"];

/// The algorithms that run only on a grid of sites.
fn on_sites(alg: &algorithms::Algorithm) -> bool {
    alg.applies.topology == TopologyNeed::Sites
}

fn roots(p: usize, c: &str) -> Vec<u32> {
    if !matches!(c, "scatter" | "gather") {
        return vec![0];
    }
    if p <= 12 {
        (0..p as u32).collect()
    } else {
        vec![0, 1, (p / 2) as u32, p as u32 - 1]
    }
}

#[test]
fn every_algorithm_verifies_on_1_to_64_ranks() {
    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
    for alg in ALGORITHMS
        .iter()
        .filter(|a| FAMILIES.contains(&a.collective.name()))
    {
        for p in 1..=64usize {
            for root in roots(p, alg.collective.name()) {
                for elems in [0u64, 1, 3, 64, 101] {
                    let coll = alg.collective.with_root(root);
                    let (dtype, op) = if coll.is_reduction() {
                        (Dtype::F64, ReduceOp::Sum)
                    } else {
                        (Dtype::U8, ReduceOp::Sum)
                    };
                    let req = Request::new(coll, p, elems * dtype.size(), dtype, op, None).unwrap();
                    let s = match (alg.build)(&req) {
                        Ok(s) => s,
                        // The grid algorithms need a grid of sites (tests/multilane.rs).
                        Err(Error::Unsupported { .. }) if on_sites(alg) => continue,
                        Err(e) => panic!("{} {} P {p} root {root}: {e}", alg.collective, alg.name),
                    };
                    verify(&s).unwrap_or_else(|e| {
                        panic!(
                            "{} {} P {p} root {root} n {elems}: {e}",
                            alg.collective, alg.name
                        )
                    });
                    *seen.entry((alg.collective.name(), alg.name)).or_insert(0) += 1;
                }
            }
        }
    }
    let expected = ALGORITHMS
        .iter()
        .filter(|a| FAMILIES.contains(&a.collective.name()) && !on_sites(a))
        .map(|a| (a.collective.name(), a.name));
    for k in expected {
        assert!(seen.get(&k).copied().unwrap_or(0) > 300, "{k:?} not swept");
    }
}

#[test]
fn every_algorithm_simulates_on_a_torus() {
    let topo = parse_spec("torus:4x3").unwrap();
    for alg in ALGORITHMS
        .iter()
        .filter(|a| FAMILIES.contains(&a.collective.name()) && !on_sites(a))
    {
        let coll = alg.collective.with_root(5);
        let dtype = if coll.is_reduction() {
            Dtype::F64
        } else {
            Dtype::U8
        };
        let req = Request::new(coll, 12, 4096, dtype, ReduceOp::Sum, Some(&topo)).unwrap();
        let s = algorithms::build(alg.name, &req).unwrap();
        let r = simulate(&s, &topo, &SimConfig::default()).unwrap();
        // At least one message's bandwidth phase, and a finish for every rank.
        assert!(
            r.time_s > 4096.0 / 1e9 / 12.0,
            "{} {}",
            alg.collective,
            alg.name
        );
        assert_eq!(r.rank_finish_s.len(), 12);
    }
}

#[test]
fn reduce_scatter_gives_the_same_bits_every_run() {
    for name in ["ring", "recursive_halving"] {
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
            let s = algorithms::build(name, &req).unwrap();
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
                assert_eq!(run(engines), first, "{name} P {p} engines {engines}");
            }
        }
    }
}
