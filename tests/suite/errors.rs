//! One corpus of bad inputs run through every layer's API: each refusal
//! is its layer's own error, of its variant and kind, and its sentence is
//! one line; the workspace's `topocoll::Error` answers the same kinds
//! whichever layer gave them. The
//! command line's wording of the same refusals is tested in `cli::refusals`.

use std::io::Cursor;
use topocoll::algorithms::{self, forest};
use topocoll::optimize::nccl_tuner;
use topocoll::schedule::{self, Collective};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::{self, parse_rankfile, parse_spec, parse_toml, Fail, RankMap};
use topocoll::workload::{self, Choice};
use topocoll::{
    AlgorithmKind, OptimizeKind, RunKind, ScheduleKind, SimKind, TopologyKind, VerifyKind,
    WorkloadKind,
};
use topocoll_testkit::request;

/// `result`'s error, checked to be one line.
fn refusal<T: std::fmt::Debug, E: std::fmt::Display>(result: Result<T, E>) -> E {
    let e = result.expect_err("a bad input was accepted");
    let text = e.to_string();
    assert!(!text.is_empty() && !text.contains('\n'), "{text:?}");
    e
}

fn topology_kind<T: std::fmt::Debug>(result: topology::Result<T>) -> TopologyKind {
    match refusal(result) {
        topology::Error::Topology { kind, .. } => kind,
        other => panic!("not a topology error: {other:?}"),
    }
}

#[test]
fn topology_refusals_name_their_kind() {
    assert_eq!(
        topology_kind(parse_spec("torus:0x4")),
        TopologyKind::Spec,
        "a size of 0 in a spec"
    );
    assert_eq!(topology_kind(parse_spec("tours:4x4")), TopologyKind::Spec);
    assert_eq!(topology_kind(parse_spec("fattree:3")), TopologyKind::Shape);
    assert_eq!(
        topology_kind(parse_toml("t.toml", "kind = \"torus\"\n")),
        TopologyKind::File,
        "a kind without its dims"
    );
    assert_eq!(
        topology_kind(parse_toml("t.toml", "kind = \"moebius\"\n")),
        TopologyKind::File
    );
    assert_eq!(
        topology_kind(parse_toml(
            "t.toml",
            "kind = \"torus\"\ndims = [4, 4]\nbandwidth = -1.0\n"
        )),
        TopologyKind::Value
    );
    assert_eq!(
        topology_kind(parse_rankfile("rank 0=a\nrank 0=b\n", "r.txt")),
        TopologyKind::Placement
    );
    let mut placed = parse_spec("torus:4x4").unwrap();
    placed.place_ranks(2, &RankMap::Block, 8e9, 1e-7).unwrap();
    assert_eq!(
        topology_kind(placed.place_ranks(2, &RankMap::Block, 8e9, 1e-7)),
        TopologyKind::Placement,
        "ranks placed twice"
    );
    let fail = Fail::parse("random:1", 1).unwrap();
    assert_eq!(
        topology_kind(topology::fail(&placed, &fail)),
        TopologyKind::Failure,
        "links failed after ranks are placed"
    );
    assert_eq!(
        topology_kind(topology::parse_platform("p.xml", "not xml at all")),
        TopologyKind::File
    );
}

#[test]
fn schedule_refusals_name_their_kind() {
    let kind = |e: schedule::Error| match e {
        schedule::Error::Schedule { kind, .. } => kind,
        schedule::Error::Base(topocoll_base::Error::Parse { .. }) => ScheduleKind::Format,
        other => panic!("not a schedule error: {other:?}"),
    };
    assert_eq!(
        kind(refusal(schedule::from_json("{"))),
        ScheduleKind::Format
    );
    assert_eq!(
        kind(refusal(schedule::from_json("{\"ranks\": 2}"))),
        ScheduleKind::Format
    );
    let v = algorithms::find_by_name("alltoallv", "linear").unwrap();
    let s = algorithms::build(v, &request(Collective::Alltoallv, 4).bytes(64).build()).unwrap();
    assert_eq!(
        kind(refusal(
            schedule::to_msccl_xml(&s, &mut Vec::new()).map(|_| ())
        )),
        ScheduleKind::Export,
        "MSCCL XML has no alltoallv"
    );
}

#[test]
fn algorithm_refusals_name_their_kind() {
    let kind = |e: algorithms::Error| match e {
        algorithms::Error::Algorithm { kind, .. } => kind,
        other => panic!("not an algorithm error: {other:?}"),
    };
    assert_eq!(
        kind(refusal(algorithms::trees::binomial_tree(4, 4))),
        AlgorithmKind::Request
    );
    assert_eq!(
        kind(refusal(forest::from_json_reader(Cursor::new("not json")))),
        AlgorithmKind::Forest
    );
    assert_eq!(
        kind(refusal(algorithms::find_by_name("alltoall", "nope"))),
        AlgorithmKind::Request
    );
    // An algorithm asked for what it does not serve is Unsupported.
    let ring = algorithms::find_by_name("allreduce", "ring").unwrap();
    let req = request(Collective::Allreduce, 8).bytes(64).radix(4).build();
    assert!(
        matches!(
            refusal(algorithms::build(ring, &req)),
            algorithms::Error::Unsupported { algorithm, .. } if algorithm == "ring"
        ),
        "ring takes no radix"
    );
}

#[test]
fn simulator_refusals_name_their_kind() {
    let torus = parse_spec("torus:2x2").unwrap();
    let ring = algorithms::find_by_name("allreduce", "ring").unwrap();
    let s = algorithms::build(ring, &request(Collective::Allreduce, 8).bytes(64).build()).unwrap();
    match refusal(simulate(&s, &torus, &SimConfig::default())) {
        topocoll::sim::Error::Sim { kind, .. } => {
            assert_eq!(kind, SimKind::Schedule, "8 ranks on 4 hosts")
        }
        other => panic!("not a simulator error: {other:?}"),
    }
    // A link that turns off under the ring's first sends.
    let ring4 = request(Collective::Allreduce, 4).bytes(1 << 20).build();
    let ring4 = algorithms::build(ring, &ring4).unwrap();
    let outage = Fail::parse(&format!("{}@1e-5..1", torus.link_name(0)), 0).unwrap();
    let out = topology::fail(&torus, &outage).unwrap();
    match refusal(simulate(&ring4, &out, &SimConfig::default())) {
        topocoll::sim::Error::Sim { kind, .. } => assert_eq!(kind, SimKind::Failure),
        other => panic!("not a simulator error: {other:?}"),
    }
}

#[test]
fn workload_and_optimiser_refusals_name_their_kind() {
    match refusal(Choice::parse("allreduce")) {
        workload::Error::Workload { kind, .. } => assert_eq!(kind, WorkloadKind::Choice),
        other => panic!("not a workload error: {other:?}"),
    }
    match refusal(workload::simgrid_ti::parse("t.txt", "0 frobnicate 3\n")) {
        workload::Error::Base(topocoll_base::Error::Parse { file, line, .. }) => {
            assert_eq!((file.as_str(), line), ("t.txt", 1))
        }
        other => panic!("not a parse error: {other:?}"),
    }
    match refusal(nccl_tuner::Line::parse("allreduce,0,1,2")) {
        topocoll::optimize::Error::Optimize { kind, .. } => assert_eq!(kind, OptimizeKind::Tuner),
        other => panic!("not an optimiser error: {other:?}"),
    }
}

#[test]
fn a_broken_schedule_names_the_verifier_check_and_a_failed_run_its_cause() {
    let ring = algorithms::find_by_name("allreduce", "ring").unwrap();
    let mut s =
        algorithms::build(ring, &request(Collective::Allreduce, 4).bytes(64).build()).unwrap();
    s.programs[1].ops.clear();
    let e = refusal(schedule::verify(&s).map(|_| ()));
    assert!(e.verify_kind().is_some(), "{e:?}");
    assert_ne!(e.verify_kind(), Some(VerifyKind::ScanOrder), "{e:?}");
    let e = topocoll::runtime::Error::runtime(RunKind::Timeout, "rank 0 timed out");
    assert_eq!(e.run_kind(), Some(RunKind::Timeout));
}

#[test]
fn a_prefix_keeps_the_kind() {
    let e = parse_spec("torus:0x4").unwrap_err().within("--topology");
    assert!(
        matches!(
            &e,
            topology::Error::Topology {
                kind: TopologyKind::Spec,
                message
            } if message.starts_with("--topology: topology 'torus:0x4'")
        ),
        "{e:?}"
    );
}

/// A lower layer's error keeps its variant and kind through every layer
/// above it and in the workspace's error, flattened: a topology error is a
/// `Topology` there, not a workload error holding a simulator error.
#[test]
fn a_lower_layer_error_keeps_its_kind_through_the_layers_above() {
    let t = parse_spec("tours:4x4").unwrap_err();
    let w: workload::Error = topocoll::sim::Error::from(t.clone()).into();
    assert!(
        matches!(&w, workload::Error::Topology(inner) if *inner == t),
        "{w:?}"
    );
    let top = topocoll::Error::from(w);
    assert_eq!(top.topology_kind(), Some(TopologyKind::Spec));
    assert_eq!(
        top.to_string(),
        t.to_string(),
        "the sentence is the topology's"
    );
    let shared: algorithms::Error =
        schedule::Error::from(topocoll_base::Error::TooLarge("too many".into())).into();
    assert!(matches!(
        shared.base(),
        Some(topocoll_base::Error::TooLarge(_))
    ));
    let unsupported =
        topocoll::Error::from(workload::Error::from(algorithms::Error::Unsupported {
            algorithm: "ring".into(),
            reason: "takes no radix".into(),
        }));
    assert_eq!(unsupported.unsupported(), Some("takes no radix"));
}
