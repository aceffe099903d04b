//! `optimize` on any network: the cut bound against a brute force over node
//! sets, the synthesised schedules verified, simulated to the time reported
//! and run on threads, and never slower than the built-in algorithms.

use crate::common::topocoll;
use topocoll::optimize::cut::{arcs, cut_bound};
use topocoll::schedule::Collective;
use topocoll::topology::{fail, parse_spec, Fail, Topology};

/// The cut bound by its definition: the largest over every node set.
fn brute(t: &Topology, c: Collective, m: f64) -> f64 {
    let nn = t.num_nodes;
    assert!(nn <= 16, "brute force over {nn} nodes");
    let mut held = vec![0usize; nn];
    for &v in &t.rank_node {
        held[v as usize] += 1;
    }
    let n = t.num_ranks() as f64;
    let arcs = arcs(t);
    let root = c.root().map(|r| t.rank_node[r as usize] as usize);
    let mut best = 0.0f64;
    for mask in 1u32..(1 << nn) - 1 {
        let inside = |v: usize| mask & (1 << v) != 0;
        let in_ranks: usize = (0..nn).filter(|&v| inside(v)).map(|v| held[v]).sum();
        let outside = n - in_ranks as f64;
        if in_ranks == 0 {
            continue;
        }
        let b = |into: bool| -> f64 {
            arcs.iter()
                .filter(|&&(a, z, _)| {
                    let (a, z) = (inside(a as usize), inside(z as usize));
                    if into {
                        !a && z
                    } else {
                        a && !z
                    }
                })
                .map(|x| x.2)
                .sum()
        };
        let t = match c {
            Collective::Bcast { .. } if !inside(root.unwrap()) => m / b(true),
            Collective::Reduce { .. } if !inside(root.unwrap()) => m / b(false),
            Collective::Allgather if outside > 0.0 => m * outside / b(true),
            Collective::ReduceScatter if outside > 0.0 => m / n * outside / b(false),
            _ => 0.0,
        };
        best = best.max(t);
    }
    best
}

fn networks() -> Vec<(String, Topology)> {
    let mut out = Vec::new();
    for spec in ["torus:4x3", "mesh:3x3", "hypercube:3"] {
        out.push((spec.to_string(), parse_spec(spec).unwrap()));
    }
    // Tori with dead cables.
    for (k, seed) in [(1, 1), (3, 2), (5, 3)] {
        let t = parse_spec("torus:4x4").unwrap();
        if let Ok(f) = fail(&t, &Fail::Random { count: k, seed }) {
            out.push((f.name.clone(), f));
        }
    }
    // A tree with switches, half-duplex host links and uneven bandwidths.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/");
    for file in ["dual-cpu-cluster.toml", "ring-graph.toml"] {
        let path = format!("{dir}{file}");
        out.push((file.to_string(), parse_spec(&path).unwrap()));
    }
    out
}

#[test]
fn the_cut_bound_is_the_largest_over_every_node_set() {
    let mut checked = 0;
    for (name, t) in networks() {
        if t.num_nodes > 16 {
            continue;
        }
        let n = t.num_ranks() as u32;
        for c in [
            Collective::Bcast { root: 0 },
            Collective::Bcast { root: n - 1 },
            Collective::Reduce { root: n / 2 },
            Collective::Allgather,
            Collective::ReduceScatter,
        ] {
            let got = cut_bound(&t, c, 1 << 20).unwrap().seconds;
            let want = brute(&t, c, (1 << 20) as f64);
            assert!(
                (got - want).abs() <= 1e-9 * want,
                "{name} {}: {got} vs {want}",
                c.name()
            );
            checked += 1;
        }
        let ar = cut_bound(&t, Collective::Allreduce, 1 << 20)
            .unwrap()
            .seconds;
        let want = brute(&t, Collective::ReduceScatter, (1 << 20) as f64)
            + brute(&t, Collective::Allgather, (1 << 20) as f64 / n as f64);
        assert!((ar - want).abs() <= 1e-9 * want, "{name} allreduce");
    }
    assert!(checked >= 40, "{checked}");
}

/// Runs `optimize` with a schedule written out; the schedule verifies,
/// simulates to the reported time, and runs bit-identically on threads.
fn optimize_and_check(topology: &[&str], collective: &str, size: &str) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!(
        "topocoll-synth-{}-{collective}-{}",
        std::process::id(),
        topology.join("-").replace(['/', ':', ' '], "_")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("s.json");
    let out = out.to_str().unwrap();
    let mut args = vec!["optimize"];
    args.extend_from_slice(topology);
    args.extend_from_slice(&[
        "-c",
        collective,
        "-s",
        size,
        "--engines",
        "8",
        "--format",
        "json",
        "--schedule-out",
        out,
    ]);
    let (code, stdout, stderr) = topocoll(&args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for key in ["time_s", "cut_bound_s", "solve_s"] {
        assert!(v[key].as_f64().is_some(), "{key}: {v}");
    }
    assert!(v["algorithm"].is_string() && v["trees"].is_u64() && v["chunks"].is_u64());
    let (code, _, stderr) = topocoll(&["verify", "--schedule", out]);
    assert_eq!(code, 0, "{stderr}");
    let mut sim = vec!["simulate"];
    sim.extend_from_slice(topology);
    sim.extend_from_slice(&["--schedule", out, "--engines", "8", "--format", "json"]);
    let (code, stdout, stderr) = topocoll(&sim);
    assert_eq!(code, 0, "{stderr}");
    let s: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(s["time_s"].as_f64(), v["time_s"].as_f64(), "{args:?}");
    let (code, stdout, stderr) = topocoll(&["run", "--schedule", out, "--check"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("bit-identical"), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();
    v
}

#[test]
fn optimized_schedules_verify_simulate_to_their_time_and_run() {
    let dual = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/dual-cpu-cluster.toml"
    );
    let mut synthesized = 0;
    for topology in [
        vec!["-t", "torus:4x4"],
        vec!["-t", "torus:4x4", "--fail", "random:3", "--seed", "2"],
        vec!["-t", "hypercube:3"],
        vec!["-t", dual],
    ] {
        for c in [
            "bcast",
            "reduce",
            "allgather",
            "reduce_scatter",
            "allreduce",
        ] {
            let v = optimize_and_check(&topology, c, "256KiB");
            let (time, bound) = (
                v["time_s"].as_f64().unwrap(),
                v["cut_bound_s"].as_f64().unwrap(),
            );
            assert!(
                time >= bound * (1.0 - 1e-9),
                "{topology:?} {c}: {time} < {bound}"
            );
            // Never slower than a built-in algorithm.
            for cand in v["candidates"].as_array().unwrap() {
                assert!(time <= cand["time_s"].as_f64().unwrap(), "{topology:?} {c}");
            }
            if v["algorithm"] == "synthesized" {
                synthesized += 1;
            }
        }
    }
    assert!(synthesized >= 10, "{synthesized} synthesized winners");
}

#[test]
fn bad_optimize_input_is_one_line() {
    for (args, needle) in [
        (
            vec!["-t", "torus:4x4", "-c", "alltoall", "-s", "1KiB"],
            "alltoall",
        ),
        (
            vec![
                "-t",
                "torus:4x4",
                "-c",
                "bcast",
                "-s",
                "1KiB",
                "--fail",
                "(0,0) -> (1,7)",
            ],
            "did you mean",
        ),
        (
            vec![
                "-t",
                "mesh:3",
                "-c",
                "bcast",
                "-s",
                "1KiB",
                "--fail",
                "(1) -> (2)",
            ],
            "rank 2 ((2)) cannot reach rank 0",
        ),
        (
            vec![
                "--whole-message",
                "-t",
                "torus:4x4",
                "-c",
                "bcast",
                "-s",
                "1KiB",
                "--engines",
                "2",
            ],
            "--engines",
        ),
    ] {
        let mut full = vec!["optimize"];
        full.extend(args.iter());
        let (code, stdout, stderr) = topocoll(&full);
        assert_eq!(code, 2, "{args:?}: {stdout} {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}
