//! The node-aware compositions (`algorithms::compose`): every one verifies
//! on 1 to 64 ranks placed 1 to 4 to a node, block, cyclic and unequal,
//! every root up to 12 ranks, with every leaders' algorithm `--inter` may
//! name, on lines, tori, a tree, a dragonfly and a fat tree; and each
//! refuses what it does not take in one line.

use topocoll::algorithms::Error;
use topocoll::algorithms::{self, compose, Algorithm, Request};
use topocoll::schedule::{verify, Collective, Dtype, ReduceOp};
use topocoll::topology::{parse_spec, RankMap, Topology};

fn placed(spec: &str, k: usize, map: &RankMap) -> Topology {
    let mut t = parse_spec(spec).unwrap();
    t.place_ranks(k, map, 8e9, 1e-7).unwrap();
    t
}

/// Roots to try on P ranks: all of them up to 12, else a few.
fn roots(p: usize) -> Vec<u32> {
    if p <= 12 {
        (0..p as u32).collect()
    } else {
        vec![0, 1, p as u32 / 2, p as u32 - 1]
    }
}

/// Builds and verifies every composition on `topo` with each of `inters`
/// (`None`: the default); returns (built, refused).
fn sweep(topo: &Topology, inters: &[Option<&str>], counts: &[u64]) -> (usize, usize) {
    let p = topo.num_ranks();
    let (mut built, mut refused) = (0, 0);
    for a in Algorithm::composed() {
        let rooted = a.collective.is_rooted();
        for root in if rooted { roots(p) } else { vec![0] } {
            let c = a.collective.with_root(root);
            let dtype = if c.is_reduction() {
                Dtype::I64
            } else {
                Dtype::U8
            };
            for &count in counts {
                for inter in inters {
                    let inter = match inter {
                        Some(name) => match compose::inter_choice(a.collective, name) {
                            Ok(alg) => Some(alg),
                            Err(_) => continue,
                        },
                        None => None,
                    };
                    let mut req =
                        Request::new(c, p, count * dtype.size(), dtype, ReduceOp::Sum, Some(topo))
                            .unwrap();
                    req.inter = inter;
                    let what = format!(
                        "{} {} on {}, root {root}, {count} elements, inter {inter:?}",
                        a.collective,
                        a.name,
                        topo.describe()
                    );
                    match algorithms::build(a, &req) {
                        Ok(s) => {
                            verify(&s).unwrap_or_else(|e| panic!("{what}: {e}"));
                            built += 1;
                        }
                        Err(Error::Unsupported { reason, .. }) => {
                            assert!(!reason.contains('\n'), "{what}: {reason}");
                            refused += 1;
                        }
                        Err(e) => panic!("{what}: {e}"),
                    }
                }
            }
        }
    }
    (built, refused)
}

/// Lines of 1 to 16 hosts with 1 to 4 ranks each, block and cyclic: every
/// composition verifies wherever it applies, with the default leaders'
/// algorithm and with others.
#[test]
fn compositions_verify_on_1_to_64_ranks() {
    let (mut built, mut refused) = (0, 0);
    for hosts in 1..=16 {
        for k in 1..=4 {
            for map in [RankMap::Block, RankMap::Cyclic] {
                let t = placed(&format!("mesh:{hosts}"), k, &map);
                let inters: &[Option<&str>] = if hosts * k <= 24 {
                    &[
                        None,
                        Some("ring"),
                        Some("recursive_doubling"),
                        Some("linear"),
                        Some("bine"),
                    ]
                } else {
                    &[None]
                };
                let (b, r) = sweep(&t, inters, &[1, (hosts * k * 3) as u64]);
                built += b;
                refused += r;
            }
        }
    }
    eprintln!("{built} built, {refused} refused");
    assert!(built > 5_000, "{built} built");
}

/// Nodes of unequal rank counts (a rankfile): the leader forms of bcast,
/// reduce and allreduce verify; the others refuse in one line.
#[test]
fn unequal_nodes_compose_or_refuse_in_one_line() {
    let mut t = parse_spec("torus:2x2").unwrap();
    let map = RankMap::List(
        ["0", "0", "0", "1", "2", "2", "3", "3", "3", "3"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    );
    t.place_ranks(4, &map, 8e9, 0.0).unwrap();
    let (built, _) = sweep(&t, &[None, Some("ring"), Some("binomial")], &[1, 30]);
    assert!(built > 20, "{built}");
    for (c, name) in [
        (Collective::Allgather, "node_aware"),
        (Collective::Allreduce, "node_aware_multi"),
        (Collective::Alltoall, "node_aware"),
        (Collective::Alltoall, "node_aware_multi"),
        (Collective::Reduce { root: 3 }, "node_aware_multi"),
        (Collective::Gather { root: 3 }, "node_aware_multi"),
        (Collective::Scatter { root: 3 }, "node_aware_multi"),
    ] {
        let dtype = if c.is_reduction() {
            Dtype::F64
        } else {
            Dtype::U8
        };
        let req = Request::new(c, 10, 80, dtype, ReduceOp::Sum, Some(&t)).unwrap();
        match topocoll::algorithms::build(
            topocoll::algorithms::find(req.collective.kind(), name).unwrap(),
            &req,
        ) {
            Err(Error::Unsupported { algorithm, reason }) => {
                assert_eq!(algorithm, name);
                assert!(reason.contains("its nodes hold 1 to 4 ranks"), "{reason}");
            }
            other => panic!("{name}: expected unsupported, got {other:?}"),
        }
    }
}

/// A rankfile that puts 3 ranks on each of 4 hosts in no order (neither
/// block nor cyclic): every composition that takes K ranks a node verifies,
/// and every multi-leader form runs on threads to the reference's bits,
/// every root, with skewed counts for the v-collectives (a count the ranks
/// divide, which the multi-leader reduce-scatter needs).
#[test]
fn shuffled_equal_nodes_compose_and_run_on_threads() {
    use std::sync::Arc;
    use topocoll::schedule::Sizes;
    let mut t = parse_spec("torus:2x2").unwrap();
    let hosts = ["2", "0", "1", "3", "0", "2", "3", "1", "1", "0", "2", "3"];
    let map = RankMap::List(hosts.map(String::from).to_vec());
    t.place_ranks(3, &map, 8e9, 0.0).unwrap();
    let (built, refused) = sweep(&t, &[None, Some("linear"), Some("ring")], &[1, 7]);
    assert!(built > 150, "{built} built, {refused} refused");
    let p = t.num_ranks();
    let mut ran = 0;
    for a in Algorithm::composed().filter(|a| a.name == "node_aware_multi") {
        let rooted = a.collective.is_rooted();
        for root in if rooted { roots(p) } else { vec![0] } {
            let c = a.collective.with_root(root);
            let mut req =
                Request::new(c, p, 7 * 4 * p as u64, Dtype::I32, ReduceOp::Sum, Some(&t)).unwrap();
            if let Some(shape) = c.sizes_shape() {
                let v = Sizes::parse("zipf:1.2", shape, p, 7, 4, 3).unwrap();
                req = req.with_sizes(Arc::new(v)).unwrap();
            }
            let what = format!(
                "{} node_aware_multi, root {root}, on a shuffled rankfile",
                a.collective
            );
            let s = algorithms::build(a, &req).unwrap_or_else(|e| panic!("{what}: {e}"));
            verify(&s).unwrap_or_else(|e| panic!("{what}: {e}"));
            run_on_threads(&s, &what);
            ran += 1;
        }
    }
    assert!(ran >= 10 + 4 * 11, "{ran}");
}

/// On a torus, a dragonfly, a fat tree and a tree of hosts with 2 and 3
/// ranks a host, every composition verifies with its default.
#[test]
fn compositions_verify_on_networks() {
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/");
    let mut built = 0;
    for spec in [
        "torus:4x4".to_string(),
        "torus:2x2x2".to_string(),
        format!("{examples}dragonfly-64.xml"),
        format!("{examples}fat-tree-64.xml"),
        format!("{examples}dual-cpu-cluster.toml"),
    ] {
        for k in [2, 3] {
            let t = placed(&spec, k, &RankMap::Block);
            if t.num_ranks() > 64 * 3 {
                continue;
            }
            built += sweep(&t, &[None], &[t.num_ranks() as u64 * 2]).0;
        }
    }
    assert!(built > 100, "{built}");
}

/// `--inter` takes the same collective's rank-based algorithms, and a
/// request that names another is refused with the choices.
#[test]
fn inter_names_the_choices() {
    let choices = compose::inter_choices(topocoll::schedule::CollectiveKind::Allreduce);
    assert!(choices.contains(&"rabenseifner") && choices.contains(&"ring"));
    assert!(!choices.contains(&"node_aware") && !choices.contains(&"swing_lat"));
    let t = placed("torus:2x2", 2, &RankMap::Block);
    for (inter, says) in [
        ("rign", "did you mean 'ring'?"),
        ("node_aware", "a composition cannot lead another"),
        ("swing_lat", "last bits"),
        ("trinaryx3", "needs a network"),
    ] {
        // The name is refused as `--inter` parses it; an entry that may
        // not lead is refused as the request is checked, with the same line.
        let kind = topocoll::schedule::CollectiveKind::Allreduce;
        let e = compose::inter_choice(kind, inter).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Base(topocoll_base::Error::Param { param: "inter", .. })
            ),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(e.contains(says), "{e}");
        assert!(e.contains("one of: ring"), "{e}");
        let Ok(entry) = topocoll::algorithms::find(kind, inter) else {
            continue;
        };
        let mut req = Request::new(
            Collective::Allreduce,
            8,
            64,
            Dtype::F64,
            ReduceOp::Sum,
            Some(&t),
        )
        .unwrap();
        req.inter = Some(entry);
        let built = topocoll::algorithms::build(
            topocoll::algorithms::find(req.collective.kind(), "node_aware").unwrap(),
            &req,
        )
        .unwrap_err();
        assert_eq!(built.to_string(), e);
    }
    // An algorithm that composes nothing takes no --inter.
    let mut req = Request::new(
        Collective::Allreduce,
        8,
        64,
        Dtype::F64,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    req.inter = Some(&topocoll::algorithms::allreduce::ring::ALGORITHM);
    let e = topocoll::algorithms::build(&topocoll::algorithms::allreduce::ring::ALGORITHM, &req)
        .unwrap_err()
        .to_string();
    assert!(e.contains("takes no --inter"), "{e}");
}

/// scan and exscan compose where every node holds a run of consecutive
/// ranks, of any sizes, and refuse a cyclic placement in one line naming
/// why; their leaders run an exscan, which `--inter` names.
#[test]
fn scan_needs_consecutive_nodes() {
    use topocoll::schedule::CollectiveKind;
    assert_eq!(
        compose::inter_choices(CollectiveKind::Scan),
        compose::inter_choices(CollectiveKind::Exscan)
    );
    let cyclic = placed("torus:2x2", 3, &RankMap::Cyclic);
    let unequal = {
        let mut t = parse_spec("mesh:3").unwrap();
        let map = RankMap::List(["0", "1", "1", "1", "2", "2"].map(String::from).to_vec());
        t.place_ranks(3, &map, 8e9, 0.0).unwrap();
        t
    };
    for c in [Collective::Scan, Collective::Exscan] {
        let req = Request::new(c, 12, 24, Dtype::F64, ReduceOp::Sum, Some(&cyclic)).unwrap();
        let e = topocoll::algorithms::build(
            topocoll::algorithms::find(req.collective.kind(), "node_aware").unwrap(),
            &req,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("node 0 holds ranks 0 and 4 but none between") && !e.contains('\n'),
            "{e}"
        );
        for inter in ["linear", "recursive_doubling"] {
            let mut req =
                Request::new(c, 6, 40, Dtype::F64, ReduceOp::Sum, Some(&unequal)).unwrap();
            req.inter = Some(compose::inter_choice(c.kind(), inter).unwrap());
            verify(
                &topocoll::algorithms::build(
                    topocoll::algorithms::find(req.collective.kind(), "node_aware").unwrap(),
                    &req,
                )
                .unwrap(),
            )
            .unwrap();
        }
    }
}

/// The node-aware alltoallv and allgatherv prove exactly the given blocks
/// on 1 to 64 ranks, 1 to 4 to a host, block and cyclic, and on nodes of
/// unequal sizes, with every leaders' algorithm and counts equal, uniform
/// (many empty), Zipf-skewed and hot experts; where every node holds one
/// rank they refuse in one line.
#[test]
fn v_compositions_verify_on_1_to_64_ranks() {
    use std::sync::Arc;
    use topocoll::schedule::{CollectiveKind, Sizes};
    let unequal = {
        let mut t = parse_spec("torus:2x2").unwrap();
        let map = RankMap::List(
            ["0", "0", "0", "1", "2", "2", "3", "3", "3", "3"]
                .map(String::from)
                .to_vec(),
        );
        t.place_ranks(4, &map, 8e9, 0.0).unwrap();
        t
    };
    let mut topologies = vec![unequal];
    for hosts in 1..=16 {
        for k in 1..=4 {
            for map in [RankMap::Block, RankMap::Cyclic] {
                topologies.push(placed(&format!("mesh:{hosts}"), k, &map));
            }
        }
    }
    let (mut built, mut refused) = (0, 0);
    for (at, t) in topologies.iter().enumerate() {
        let p = t.num_ranks();
        // The unequal nodes run on threads too (the corpus runs the others).
        let on_threads = at == 0;
        for kind in [CollectiveKind::Alltoallv, CollectiveKind::Allgatherv] {
            let c = kind.with_root(0);
            let shape = c.sizes_shape().unwrap();
            for inter in compose::inter_choices(kind) {
                for spec in ["equal", "uniform:12", "zipf:1.2", "hot:1", "hot:2"] {
                    for (mean, seed) in [(0, 0), (5, 1), (7, 2)] {
                        let req = Request::new(c, p, mean * 4, Dtype::I32, ReduceOp::Sum, Some(t))
                            .unwrap();
                        let mut req = if spec == "equal" {
                            req
                        } else {
                            // (hot:K takes K ranks or more.)
                            let Ok(v) = Sizes::parse(spec, shape, p, mean, 4, seed) else {
                                assert!(spec == "hot:2" && p == 1);
                                continue;
                            };
                            req.with_sizes(Arc::new(v)).unwrap()
                        };
                        req.inter = Some(compose::inter_choice(kind, inter).unwrap());
                        let what =
                            format!("{kind} node_aware --inter {inter} on {} with {spec}, mean {mean}, seed {seed}", t.describe());
                        match topocoll::algorithms::build(
                            topocoll::algorithms::find(req.collective.kind(), "node_aware")
                                .unwrap(),
                            &req,
                        ) {
                            Ok(s) => {
                                verify(&s).unwrap_or_else(|e| panic!("{what}: {e}"));
                                if on_threads {
                                    run_on_threads(&s, &what);
                                }
                                built += 1;
                            }
                            Err(Error::Unsupported { reason, .. }) => {
                                assert!(
                                    reason.contains("every node holds one rank")
                                        && !reason.contains('\n'),
                                    "{what}: {reason}"
                                );
                                refused += 1;
                            }
                            Err(e) => panic!("{what}: {e}"),
                        }
                    }
                }
            }
        }
    }
    eprintln!("{built} built, {refused} refused");
    // The multi-leader allgatherv and alltoallv take nodes of one size only.
    for kind in [CollectiveKind::Allgatherv, CollectiveKind::Alltoallv] {
        let c = kind.with_root(0);
        let req = Request::new(c, 10, 8, Dtype::I32, ReduceOp::Sum, Some(&topologies[0])).unwrap();
        let e = topocoll::algorithms::build(
            topocoll::algorithms::find(req.collective.kind(), "node_aware_multi").unwrap(),
            &req,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("node_aware_multi") && !e.contains('\n'), "{e}");
        assert!(e.contains("its nodes hold 1 to 4 ranks"), "{e}");
    }
    assert!(
        built > 5_000 && refused > 0,
        "{built} built, {refused} refused"
    );
}

/// Runs `s` (of i32) on the threads backend and holds every rank's buffers
/// to the sequential reference and the collective's meaning.
fn run_on_threads(s: &topocoll::schedule::Schedule, what: &str) {
    use topocoll::runtime::{self, threads, Options, Plan, RankBuffers};
    let plan = Plan::new(s).unwrap_or_else(|e| panic!("{what}: {e}"));
    for engines in [1, 4] {
        let mut bufs: Vec<RankBuffers<i32>> = (0..s.ranks)
            .map(|r| runtime::initial_buffers(s, r))
            .collect();
        let opts = Options {
            engines,
            ..Options::default()
        };
        threads::run(&plan, &mut bufs, &opts).unwrap_or_else(|e| panic!("{what}: {e}"));
        runtime::check(s, &bufs).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}
