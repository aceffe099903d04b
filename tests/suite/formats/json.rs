//! The schedule file format: its JSON Schema names what the reader reads,
//! and files of every kind of op round-trip; the GOAL export.

use crate::schedule::ring4;
use topocoll::algorithms::Request;
use topocoll::schedule::{self, Collective, Dtype, Op, ReduceOp, COLLECTIVES};

fn schema() -> serde_json::Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schemas/schedule.schema.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_schema_lists_what_the_reader_reads() {
    let s = schema();
    let p = &s["properties"];
    assert_eq!(p["format"]["const"], schedule::FORMAT);
    let names = strings(&p["collective"]["properties"]["name"]["enum"]);
    let ours: Vec<String> = COLLECTIVES.iter().map(|c| c.0.to_string()).collect();
    assert_eq!(names, ours);
    for d in strings(&p["dtype"]["enum"]) {
        assert!(Dtype::parse(&d).is_ok(), "{d}");
    }
    for o in strings(&p["op"]["enum"]) {
        assert!(ReduceOp::parse(&o, Dtype::I64).is_ok(), "{o}");
    }
    // Every top-level field an exported schedule has is in the schema.
    let req = Request::new(Collective::Alltoall, 16, 8, Dtype::U8, ReduceOp::Sum, None).unwrap();
    let topo = topocoll::topology::parse_spec("torus:4x4").unwrap();
    let mut req2 = req.clone();
    req2.topology = Some(&topo);
    let sch = topocoll::algorithms::build(&topocoll::algorithms::alltoall::a2at::ALGORITHM, &req2)
        .unwrap();
    let mut out = Vec::new();
    schedule::to_json(&sch, &mut out).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    for k in doc.as_object().unwrap().keys() {
        assert!(p.get(k).is_some(), "{k} is not in the schema");
    }
    // A schedule with explicit paths (sim::paths) has one field more.
    let mut with_paths = sch.clone();
    with_paths.add_path(vec![0, 1]);
    let mut text = Vec::new();
    schedule::to_json(&with_paths, &mut text).unwrap();
    let doc2: serde_json::Value = serde_json::from_slice(&text).unwrap();
    assert!(doc2.get("paths").is_some());
    for k in doc2.as_object().unwrap().keys() {
        assert!(p.get(k).is_some(), "{k} is not in the schema");
    }
    assert_eq!(doc["format"], schedule::FORMAT);
    // Read back: the same schedule.
    assert_eq!(
        schedule::from_json(std::str::from_utf8(&out).unwrap()).unwrap(),
        sch
    );
}

#[test]
fn another_format_version_is_refused() {
    let req = Request::new(
        Collective::Allreduce,
        4,
        64,
        Dtype::F64,
        ReduceOp::Sum,
        None,
    )
    .unwrap();
    let sch = topocoll::algorithms::build(&topocoll::algorithms::allreduce::ring::ALGORITHM, &req)
        .unwrap();
    let mut out = Vec::new();
    schedule::to_json(&sch, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let other = text.replace("topocoll-schedule/1", "topocoll-schedule/9");
    let e = schedule::from_json(&other).unwrap_err().to_string();
    assert!(e.contains("topocoll-schedule/9"), "{e}");
    // Without the field: read as version 1.
    let bare = text.replace("\"format\":\"topocoll-schedule/1\",", "");
    assert_eq!(schedule::from_json(&bare).unwrap(), sch);
}

#[test]
fn json_round_trips_and_goal_writes_sends_calcs_and_counts_lost_routes() {
    let mut s = ring4();
    let r = s.offset_route(&[1, -2]);
    if let Op::Send { route, .. } = &mut s.programs[0].ops[0] {
        *route = r;
    }
    let mut buf = Vec::new();
    schedule::to_json(&s, &mut buf).unwrap();
    let back = schedule::from_json(std::str::from_utf8(&buf).unwrap()).unwrap();
    assert_eq!(back, s);
    let mut goal = Vec::new();
    assert_eq!(schedule::to_goal(&ring4(), None, &mut goal).unwrap(), 0);
    let text = String::from_utf8(goal).unwrap();
    assert!(text.starts_with("num_ranks 4\n"));
    assert!(
        text.contains("rank 0 {\nl0: send 8b to 1 tag 0\nl1: recv 8b from 3 tag 0\n"),
        "{text}"
    );
    assert!(text.contains("l2 requires l0\nl2 requires l1\n"));
    // Every calc is nanoseconds: a copy is free, and a combine of 8,000
    // bytes at 1e9 bytes/s takes 8,000 ns (free without a rate).
    let req = topocoll::algorithms::Request::new(
        Collective::Allreduce,
        6,
        8000,
        Dtype::F64,
        ReduceOp::Sum,
        None,
    )
    .unwrap();
    let rd = topocoll::algorithms::build(
        &topocoll::algorithms::allreduce::recursive_doubling::ALGORITHM,
        &req,
    )
    .unwrap();
    let combine_bytes: Vec<u64> = rd
        .programs
        .iter()
        .flat_map(|p| p.ops.iter())
        .filter_map(|op| match op {
            Op::Combine { src, .. } => Some(src.count * 8),
            _ => None,
        })
        .collect();
    assert!(!combine_bytes.is_empty());
    let mut goal = Vec::new();
    schedule::to_goal(&rd, Some(1e9), &mut goal).unwrap();
    let text = String::from_utf8(goal).unwrap();
    for b in &combine_bytes {
        assert!(text.contains(&format!(": calc {b}\n")), "{b} {text}");
    }
    let mut goal = Vec::new();
    schedule::to_goal(&rd, None, &mut goal).unwrap();
    let text = String::from_utf8(goal).unwrap();
    assert!(
        text.contains(": calc 0\n") && !text.contains(&format!(": calc {}\n", combine_bytes[0]))
    );
    // The routes that GOAL cannot carry are counted.
    let mut goal = Vec::new();
    assert!(schedule::to_goal(&s, None, &mut goal).unwrap() > 0);
    assert!(schedule::from_json("{\"collective\": 5}").is_err());
}
