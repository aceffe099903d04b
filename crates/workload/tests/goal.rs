//! GOAL read back: a schedule written as GOAL prices to the same time, and
//! LogGOPSim's own examples read and replay.

use topocoll_algorithms::{self as algorithms, Request};
use topocoll_schedule::{from_goal, to_goal, Collective, Dtype, ReduceOp};
use topocoll_sim::{simulate, SimConfig};
use topocoll_topology::parse_spec;

#[test]
fn a_schedule_written_as_goal_prices_to_the_same_time_read_back() {
    let topo = parse_spec("torus:4x4").unwrap();
    let cfg = SimConfig {
        engines: 2,
        ..SimConfig::default()
    };
    let cases = [
        (Collective::Allreduce, "ring", 65536),
        (Collective::Bcast { root: 3 }, "binomial", 100_000),
        (Collective::Alltoall, "bruck", 4096),
        (Collective::Barrier, "dissemination", 0),
        (Collective::Reduce { root: 0 }, "binomial", 8192),
    ];
    // Combines free, and timed (a combining receive is its recv, then a calc).
    let timed = SimConfig {
        compute_bandwidth: Some(1e9),
        ..cfg.clone()
    };
    let cases = cases.iter().map(|&c| (c, &cfg)).chain(
        [
            (Collective::ReduceScatter, "ring", 65536),
            (Collective::Allreduce, "ring", 65536),
        ]
        .map(|c| (c, &timed)),
    );
    for ((c, name, bytes), cfg) in cases {
        let req = Request::new(c, 16, bytes, Dtype::U8, ReduceOp::Sum, Some(&topo)).unwrap();
        let alg = algorithms::find(c.kind(), name).unwrap();
        let s = algorithms::build(alg, &req).unwrap();
        let mut text = Vec::new();
        to_goal(&s, cfg.compute_bandwidth, &mut text).unwrap();
        let back = from_goal("t.goal", std::str::from_utf8(&text).unwrap()).unwrap();
        let (a, b) = (
            simulate(&s, &topo, cfg).unwrap(),
            simulate(&back, &topo, cfg).unwrap(),
        );
        assert_eq!(
            a.time_s.to_bits(),
            b.time_s.to_bits(),
            "{c:?} {name}: {} then {}",
            a.time_s,
            b.time_s
        );
    }
}

#[test]
fn loggopsims_examples_read_and_replay() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/goal");
    for (file, ranks, spec) in [
        ("binary_tree_16.goal", 16, "torus:4x4"),
        ("binary_tree_32.goal", 32, "torus:4x8"),
        ("dissemination_16.goal", 16, "torus:4x4"),
        ("dissemination_32.goal", 32, "torus:4x8"),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let s = from_goal(file, &text).unwrap();
        assert_eq!(s.ranks, ranks);
        let t = simulate(&s, &parse_spec(spec).unwrap(), &SimConfig::default()).unwrap();
        assert!(t.time_s > 0.0, "{file}");
    }
}

#[test]
fn irequires_starts_an_op_with_the_one_it_names() {
    // l2 may start when l1 starts: both sends go at once, as with no
    // dependency; `requires` puts them one after the other.
    let topo = parse_spec("torus:3").unwrap();
    let cfg = SimConfig {
        engines: 4,
        ..SimConfig::default()
    };
    let time = |dep: &str| {
        let text = format!(
            "num_ranks 3\nrank 0 {{\nl1: send 1000000b to 1 tag 0\nl2: send 1000000b to 2 tag 0\nl2 {dep} l1\n}}\nrank 1 {{\nrecv 1000000b from 0 tag 0\n}}\nrank 2 {{\nrecv 1000000b from 0 tag 0\n}}\n"
        );
        simulate(&from_goal("t", &text).unwrap(), &topo, &cfg)
            .unwrap()
            .time_s
    };
    assert!(time("requires") > 1.5 * time("irequires"));
}

#[test]
fn bad_goal_is_refused_naming_the_line() {
    for (text, at, what) in [
        ("rank 0 {\n}\n", "t:1", "before num_ranks"),
        (
            "num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n",
            "t:3",
            "not a size in bytes",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: recv 8b from -1\n}\n",
            "t:3",
            "any source",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 5\nl1 requires l9\n}\n",
            "t:4",
            "label 'l9'",
        ),
        (
            "num_ranks 2\nrank 0 {\na: calc 5\nb: calc 5\na requires b\nb requires a\n}\n",
            "t:2",
            "cycle",
        ),
        ("num_ranks 2\nrank 0 {\nl1: calc 5\n", "t:2", "never closed"),
        ("num_ranks 2\nrank 5 {\n}\n", "t:2", "not below num_ranks"),
    ] {
        let e = from_goal("t", text).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e.base(), Some(topocoll_base::error::Error::Parse { .. })),
            "{e:?}"
        );
        assert!(msg.starts_with(at) && msg.contains(what), "{text:?}: {msg}");
    }
}

#[test]
fn a_goal_message_nobody_matches_is_refused_at_its_line() {
    for (text, says) in [
        (
            "num_ranks 2\nrank 0 {\nl0: calc 5\nl1: send 8b to 1 tag 3\n}\nrank 1 {\n}\n",
            "t.goal:4: rank 0 sends to rank 1 with tag 3, but rank 1 never receives it",
        ),
        (
            "num_ranks 2\nrank 0 {\n}\nrank 1 {\nl0: recv 8b from 0 tag 0\n}\n",
            "t.goal:5: rank 1 receives from rank 0 with tag 0, but rank 0 sends it no such message",
        ),
    ] {
        let e = topocoll_workload::goal::parse("t.goal", text).unwrap_err();
        assert!(
            matches!(e.base(), Some(topocoll_base::error::Error::Parse { .. })),
            "{e:?}"
        );
        assert!(e.to_string().starts_with(says), "{e}");
    }
}
