//! The registry's declarations hold: an algorithm's `check` passes exactly
//! where its builder builds, refusing with the builder's own reason, over
//! every kind of network and many rank counts and roots.

use super::super::{Request, ALGORITHMS};
use super::{OpCount, TopologyNeed};
use topocoll_schedule::{Dtype, ReduceOp};
use topocoll_topology::{parse_spec, RankMap, Topology};

/// The networks of the sweep: grids 1D to 4D (odd and even sides, meshes
/// and tori), a hypercube, Tofu, Dragon nets, the examples' tree, graph and
/// grids of sites, and a torus with two ranks per host.
fn networks() -> Vec<Topology> {
    let mut out: Vec<Topology> = [
        "torus:8",
        "mesh:5",
        "torus:2x2",
        "torus:3x3",
        "torus:4x4",
        "torus:3x4",
        "torus:5x5",
        "torus:2x6",
        "torus:1x5",
        "mesh:2x2",
        "mesh:3x3",
        "mesh:4x4",
        "mesh:3x5",
        "mesh:2x3",
        "torus:2x2x2",
        "torus:3x3x3",
        "torus:3x4x2",
        "torus:4x4x4",
        "mesh:2x2x2",
        "mesh:3x3x3",
        "mesh:2x3x4",
        "torus:2x2x2x2",
        "torus:3x2x2x2",
        "hypercube:3",
        "hypercube:4",
        "tofu:2x3x2",
        "dragonnet:8",
        "dragonnet:16",
    ]
    .iter()
    .map(|s| parse_spec(s).unwrap())
    .collect();
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/");
    for file in [
        "dual-cpu-cluster.toml",
        "ring-graph.toml",
        "torus-8x8.toml",
        "two-sites.toml",
        "three-sites.toml",
        "unequal-clusters.toml",
        "mixed-grid.toml",
    ] {
        out.push(parse_spec(&format!("{examples}{file}")).unwrap());
    }
    let mut placed = parse_spec("torus:4x4").unwrap();
    placed.place_ranks(2, &RankMap::Block, 20e9, 0.0).unwrap();
    out.push(placed);
    out
}

fn roots(p: usize) -> Vec<u32> {
    let mut r = vec![0, 1, p as u32 / 2, p as u32 - 1];
    r.retain(|&x| (x as usize) < p);
    r.sort_unstable();
    r.dedup();
    r
}

/// Checks every algorithm on `ranks` ranks of `topo` (or none), every
/// root of [`roots`]; returns how many requests it checked and how many
/// of them built.
fn sweep(ranks: usize, topo: Option<&Topology>) -> (usize, usize) {
    let (mut checked, mut built) = (0, 0);
    for a in ALGORITHMS {
        let rooted = a.collective.is_rooted();
        for root in if rooted { roots(ranks) } else { vec![0] } {
            let c = a.collective.with_root(root);
            let dtype = if c.is_reduction() {
                Dtype::F64
            } else {
                Dtype::U8
            };
            let size = if c.size_is_block() { 3 } else { 24 * 8 };
            let req = Request::new(c, ranks, size, dtype, ReduceOp::Sum, topo).unwrap();
            let what = format!(
                "{} {} on {} ranks of {}, root {root}",
                a.collective,
                a.name,
                ranks,
                topo.map_or("no topology".to_string(), |t| t.describe())
            );
            let declared = a.check(&req);
            let builds = (a.build)(&req);
            match (&declared, &builds) {
                (Ok(()), Ok(_)) => built += 1,
                (Err(d), Err(b)) => assert_eq!(d.to_string(), b.to_string(), "{what}"),
                _ => panic!(
                    "{what}: declared {:?}, builder {:?}",
                    declared.err(),
                    builds.err()
                ),
            }
            if let Some(stream) = a.stream {
                assert_eq!(stream(&req).is_ok(), declared.is_ok(), "{what}: generator");
            }
            checked += 1;
        }
    }
    (checked, built)
}

#[test]
fn an_algorithm_applies_exactly_where_it_declares() {
    let (mut checked, mut built) = (0, 0);
    for p in 1..=64 {
        let (c, b) = sweep(p, None);
        checked += c;
        built += b;
    }
    let nets = networks();
    for t in &nets {
        let (c, b) = sweep(t.num_ranks(), Some(t));
        checked += c;
        built += b;
    }
    // Every algorithm builds somewhere and is refused somewhere else
    // (bar the rank-based ones without a rank need).
    for a in ALGORITHMS {
        let anywhere = a.applies == super::Applies::ANYWHERE;
        let refused_somewhere = nets.iter().any(|t| {
            let c = a.collective.with_root(0);
            Request::new(c, t.num_ranks(), 8, Dtype::F64, ReduceOp::Sum, Some(t))
                .is_ok_and(|r| a.check(&r).is_err())
        }) || (1..=64).any(|p| {
            Request::new(
                a.collective.with_root(0),
                p,
                8,
                Dtype::F64,
                ReduceOp::Sum,
                None,
            )
            .is_ok_and(|r| a.check(&r).is_err())
        });
        assert_eq!(refused_somewhere, !anywhere, "{} {}", a.collective, a.name);
    }
    eprintln!("{checked} requests checked, {built} built");
    assert!(checked > 9_000, "{checked} requests checked");
    assert!(built > 5_000, "{built} built");
}

#[test]
fn op_counts_are_declared_as_the_entries_can_count_them() {
    for a in ALGORITHMS {
        // A generated schedule is counted by its generator, and only then.
        assert_eq!(
            a.ops == OpCount::Generated,
            a.stream.is_some(),
            "{} {}",
            a.collective,
            a.name
        );
        // A count declared per pair is a floor of what is built, so a
        // schedule refused by it would not have fit either.
        if matches!(a.ops, OpCount::PerPair | OpCount::PerChunkStep) {
            for (p, size) in [1usize, 2, 3, 5, 8, 13, 40]
                .into_iter()
                .flat_map(|p| [(p, 8 * 3 * p as u64), (p, 8 * 5)])
            {
                let c = a.collective.with_root(0);
                let dtype = if c.is_reduction() {
                    Dtype::F64
                } else {
                    Dtype::U8
                };
                let req = Request::new(c, p, size, dtype, ReduceOp::Sum, None).unwrap();
                if a.check(&req).is_err() {
                    continue;
                }
                let s = (a.build)(&req).unwrap();
                assert!(
                    s.num_ops() as u64 >= a.op_count(&req).unwrap(),
                    "{} {} on {p} ranks: {} ops, declared {}",
                    a.collective,
                    a.name,
                    s.num_ops(),
                    a.op_count(&req).unwrap()
                );
            }
        }
        // Only an algorithm on a grid of sites crosses in lanes.
        if a.lanes {
            assert_eq!(a.applies.topology, TopologyNeed::Sites, "{}", a.name);
        }
    }
}

/// docs/algorithms.md's table by family describes every registered
/// algorithm in a row of its collective, and nothing the registry lacks.
#[test]
fn the_family_table_lists_the_registry() {
    let page = include_str!("../../../../docs/algorithms.md");
    let table = page
        .split("\n## By family\n")
        .nth(1)
        .expect("docs/algorithms.md has a section by family");
    let mut listed: Vec<(String, String)> = Vec::new();
    for row in table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
    {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Ok(kind) = topocoll_schedule::CollectiveKind::parse(cells[1]) else {
            continue;
        };
        for name in cells[2].split('`').skip(1).step_by(2) {
            // `topocoll optimize`: a command, not a registered algorithm.
            if !name.contains(' ') {
                listed.push((kind.name().to_string(), name.to_string()));
            }
        }
    }
    for a in ALGORITHMS {
        let entry = (a.collective.name().to_string(), a.name.to_string());
        assert!(
            listed.contains(&entry),
            "docs/algorithms.md's table by family lacks {} {}",
            a.collective,
            a.name
        );
    }
    for (c, name) in &listed {
        let kind = topocoll_schedule::CollectiveKind::parse(c).unwrap();
        assert!(
            super::super::find(kind, name).is_ok(),
            "docs/algorithms.md's table by family lists {c} {name}, which is not registered"
        );
    }
}

/// An all-to-all or ring that would not fit is refused by its declared
/// count before anything is built (65,536 ranks: billions of ops).
#[test]
fn too_large_per_pair_schedules_are_refused_before_building() {
    use topocoll_schedule::Collective;
    for (c, alg) in [
        (Collective::Alltoall, &crate::alltoall::bruck::ALGORITHM),
        (Collective::Allgather, &crate::allgather::ring::ALGORITHM),
        (
            Collective::ReduceScatter,
            &crate::reduce_scatter::ring::ALGORITHM,
        ),
    ] {
        let dtype = if c.is_reduction() {
            Dtype::F64
        } else {
            Dtype::U8
        };
        let req = Request::new(c, 65_536, 8 << 16, dtype, ReduceOp::Sum, None).unwrap();
        let t0 = std::time::Instant::now();
        let e = crate::build(alg, &req).unwrap_err();
        assert!(
            matches!(e.base(), Some(topocoll_base::Error::TooLarge(_))),
            "{alg:?}: {e:?}"
        );
        assert!(
            e.to_string().contains("too many to write out"),
            "{alg:?}: {e}"
        );
        assert!(t0.elapsed().as_secs_f64() < 1.0, "{alg:?}");
    }
}

/// A request's parameter error names the parameter as the API does.
#[test]
fn a_request_of_no_ranks_names_the_parameter() {
    let req = Request::new(
        topocoll_schedule::Collective::Allreduce,
        0,
        8,
        topocoll_schedule::Dtype::F64,
        topocoll_schedule::ReduceOp::Sum,
        None,
    );
    assert!(
        matches!(
            req.as_ref().map_err(crate::Error::base),
            Err(Some(topocoll_base::Error::Param { param: "ranks", .. }))
        ),
        "{req:?}"
    );
}
