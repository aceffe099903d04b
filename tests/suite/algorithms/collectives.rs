//! Scatter, gather, allgather and reduce-scatter: every registered algorithm
//! verified on 1 to 64 ranks (powers of two and not), every root on small
//! rank counts, several block sizes; simulated on a torus.

use std::collections::HashMap;
use topocoll::algorithms::{self, Request, ALGORITHMS};
use topocoll::error::Error;
use topocoll::schedule::{verify, Collective, Dtype, ReduceOp};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::parse_spec;

const FAMILIES: [&str; 4] = ["scatter", "gather", "allgather", "reduce_scatter"];

/// The algorithms that run only on a grid of sites.
fn on_sites(alg: &algorithms::Algorithm) -> bool {
    alg.lanes || matches!(alg.name, "single_lane" | "hierarchical")
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
        .filter(|a| FAMILIES.contains(&a.collective))
    {
        for p in 1..=64usize {
            for root in roots(p, alg.collective) {
                for elems in [0u64, 1, 3, 64, 101] {
                    let coll = Collective::parse(alg.collective, root).unwrap();
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
                    *seen.entry((alg.collective, alg.name)).or_insert(0) += 1;
                }
            }
        }
    }
    let expected = [
        ("scatter", "linear"),
        ("scatter", "binomial"),
        ("gather", "linear"),
        ("gather", "binomial"),
        ("allgather", "ring"),
        ("allgather", "recursive_doubling"),
        ("allgather", "bruck"),
        ("reduce_scatter", "ring"),
        ("reduce_scatter", "recursive_halving"),
    ];
    for k in expected {
        assert!(seen.get(&k).copied().unwrap_or(0) > 300, "{k:?} not swept");
    }
}

#[test]
fn every_algorithm_simulates_on_a_torus() {
    let topo = parse_spec("torus:4x3").unwrap();
    for alg in ALGORITHMS
        .iter()
        .filter(|a| FAMILIES.contains(&a.collective) && !on_sites(a))
    {
        let coll = Collective::parse(alg.collective, 5).unwrap();
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
