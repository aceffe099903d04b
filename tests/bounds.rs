//! The collective's lower bound (`model::collective_bound`): the same for
//! every algorithm, and never above any algorithm's simulated time, on
//! several networks and node models; and sweeps that report it beside each
//! schedule's own bound and go on past an algorithm that does not apply.

mod common;
use common::topocoll;
use topocoll::algorithms::{Request, ALGORITHMS};
use topocoll::error::Error;
use topocoll::model::collective_bound;
use topocoll::schedule::{Collective, Dtype, ReduceOp};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::parse_spec;

#[test]
fn no_algorithm_beats_the_collective_bound() {
    let specs = [
        "torus:4x4",
        "mesh:3x5",
        "hypercube:3",
        "torus:2x2x4",
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/two-sites.toml"),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/dual-cpu-cluster.toml"
        ),
    ];
    let mut checked = 0;
    for spec in specs {
        let topo = parse_spec(spec).unwrap();
        let p = topo.num_ranks();
        for alg in ALGORITHMS {
            let coll = alg.collective.with_root((p / 2) as u32);
            let (dtype, size) = if coll.is_reduction() {
                (Dtype::F64, 8 * 3000)
            } else {
                (Dtype::U8, 5000)
            };
            let req = Request::new(coll, p, size, dtype, ReduceOp::Sum, Some(&topo)).unwrap();
            let s = match (alg.build)(&req) {
                Ok(s) => s,
                Err(Error::Unsupported { .. }) => continue,
                Err(e) => panic!("{} {} on {spec}: {e}", alg.collective, alg.name),
            };
            for (engines, inj) in [(1, None), (4, None), (4, Some(2e8))] {
                let cfg = SimConfig {
                    engines,
                    injection_bandwidth: inj,
                    ejection_bandwidth: inj,
                    ..SimConfig::default()
                };
                let t = simulate(&s, &topo, &cfg).unwrap().time_s;
                let lb = collective_bound(s.collective, s.count, s.elem_bytes(), &topo, inj, inj)
                    .unwrap();
                assert!(lb > 0.0, "{} {} on {spec}", alg.collective, alg.name);
                assert!(
                    t >= lb * (1.0 - 1e-9),
                    "{} {} on {spec}, engines {engines}: time {t} below the bound {lb}",
                    alg.collective,
                    alg.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "{checked}");
}

#[test]
fn bounds_by_hand() {
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
fn a_sweep_gives_a_row_per_engine_count() {
    let (code, out, err) = topocoll(&[
        "simulate",
        "-t",
        "torus:4x4",
        "-c",
        "alltoall",
        "-a",
        "linear",
        "-s",
        "64",
        "--engines",
        "1,2,4",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 4);
}

#[test]
fn a_sweep_draws_its_plot() {
    let dir = std::env::temp_dir().join(format!("topocoll-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for ext in ["svg", "png"] {
        let path = dir.join(format!("sweep.{ext}"));
        let p = path.to_string_lossy().into_owned();
        let (code, _, err) = topocoll(&[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "alltoall",
            "-a",
            "linear,bruck",
            "-s",
            "64B..4KiB",
            "--engines",
            "1,2",
            "--plot",
            &p,
        ]);
        assert_eq!(code, 0, "{err}");
        assert!(std::fs::metadata(&path).unwrap().len() > 1000);
    }
    let (code, _, err) = topocoll(&[
        "simulate",
        "-t",
        "torus:4x4",
        "-c",
        "alltoall",
        "-a",
        "linear",
        "--plot",
        "x.pdf",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains(".svg or .png"), "{err}");
}
