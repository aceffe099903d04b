//! The models: the collective's lower bound (`model::collective_bound`) by
//! hand, and sweeps that report it beside each schedule's own bound and go
//! on past an algorithm that does not apply (that no algorithm beats it:
//! the corpus's `bounds` check); `topocoll model trinaryx3` prints the
//! paper's values.

use crate::common::topocoll;
use topocoll::model::collective_bound;
use topocoll::schedule::Collective;
use topocoll::topology::parse_spec;

#[test]
fn collective_bounds_equal_the_values_worked_by_hand() {
    // bcast of M on a 4x4 torus: the root sends M over its four links and
    // every other rank receives M over its four.
    let t = parse_spec("torus:4x4").unwrap();
    let m = 1 << 20;
    let lb = collective_bound(Collective::Bcast { root: 3 }, m, 1, &t, None, None).unwrap();
    assert_eq!(lb, m as f64 / 4e9);
    // With a node model that injects at 1e9, the root's M takes M / 1e9.
    let lb = collective_bound(Collective::Bcast { root: 3 }, m, 1, &t, Some(1e9), None).unwrap();
    assert_eq!(lb, m as f64 / 1e9);
    // allgather of B per rank: every rank receives 15 B.
    let lb = collective_bound(Collective::Allgather, 1000, 1, &t, None, None).unwrap();
    assert_eq!(lb, 15.0 * 1000.0 / 4e9);
    // allreduce of M: every rank sends and receives 15/16 of it.
    let lb = collective_bound(Collective::Allreduce, 1600, 8, &t, None, None).unwrap();
    assert_eq!(lb, 15.0 / 16.0 * 12800.0 / 4e9);
    // One rank: nothing to move.
    let one = parse_spec("mesh:1").unwrap();
    assert_eq!(
        collective_bound(Collective::Allreduce, 8, 8, &one, None, None),
        Some(0.0)
    );
}

#[test]
fn a_sweep_reports_one_bound_and_goes_past_what_does_not_apply() {
    let (code, out, err) = topocoll(&[
        "simulate",
        "-t",
        "tofu:2x1x2",
        "-c",
        "alltoall",
        "-a",
        "linear,a2at,bruck",
        "-s",
        "1KiB",
        "--engines",
        "1,4",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<String>> = lines
        .map(|l| {
            // The skip reason is quoted and may hold commas: split the rest.
            let mut f: Vec<String> = l.splitn(header.len(), ',').map(String::from).collect();
            f.resize(header.len(), String::new());
            f
        })
        .collect();
    assert_eq!(rows.len(), 6);
    let a2at: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[col("algorithm")] == "a2at")
        .collect();
    assert_eq!(a2at.len(), 2);
    for r in &a2at {
        assert!(r[col("skipped")].contains("mesh or torus"), "{r:?}");
        assert!(r[col("time_s")].is_empty());
    }
    let ran: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[col("algorithm")] != "a2at")
        .collect();
    let bounds: std::collections::HashSet<&str> = ran
        .iter()
        .map(|r| r[col("lower_bound_s")].as_str())
        .collect();
    assert_eq!(
        bounds.len(),
        1,
        "one collective bound for every algorithm: {bounds:?}"
    );
    let schedule_bounds: std::collections::HashSet<&str> = ran
        .iter()
        .map(|r| r[col("schedule_bound_s")].as_str())
        .collect();
    assert_eq!(schedule_bounds.len(), 2, "{schedule_bounds:?}");
    // JSON says the same.
    let (code, out, _) = topocoll(&[
        "simulate",
        "-t",
        "tofu:2x1x2",
        "-c",
        "alltoall",
        "-a",
        "a2at,bruck",
        "-s",
        "1KiB",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v[0]["skipped"].as_str().unwrap().contains("mesh or torus"));
    assert!(v[1]["time_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn model_trinaryx3_prints_the_papers_values() {
    let bin = env!("CARGO_BIN_EXE_topocoll");
    let out = std::process::Command::new(bin)
        .args(["model", "trinaryx3", "--topology", "tofu:24x2x16"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("H = 84 (height of the 3 Trinaryx3 trees on the 48x6x32 torus)"),
        "{text}"
    );
    assert!(text.contains("94.096 ms"), "{text}");
    assert!(text.contains("192.729 ms"), "{text}");
    let bad = std::process::Command::new(bin)
        .args(["model", "trinaryx3", "--segment", "0"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
