//! The grid of sites and its multi-lane algorithms (verified on site shapes
//! from 1+1 to 16+16 with every lane count, and run on threads: the
//! corpus, tests/corpus/sites.toml): the WAN's per-stream caps in the
//! simulator; the paper's cost model met exactly where its assumptions
//! hold, the refined model wherever the lane table is flat; `--lanes auto`;
//! `topocoll model multilane`; and the refusals of bad input.

use crate::common::topocoll;
use topocoll::algorithms::{self, Request};
use topocoll::model::multilane::{self, lane_counts};
use topocoll::schedule::{Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::{Kind, Sites, Topology, Wan};

fn grid(sizes: Vec<usize>, lan_latency: f64, table: Vec<f64>) -> Topology {
    let s = Sites::new(
        sizes,
        1e8,
        lan_latency,
        4e-3,
        Wan::Lanes {
            lane_bandwidth: table,
            capacity: None,
        },
    )
    .unwrap();
    Topology::from_kind("grid", Kind::Sites(s))
}

/// A lane table that falls with the lanes in use, as the paper measured.
fn falling(n: usize) -> Vec<f64> {
    (1..=n).map(|p| 6e5 * (1.0 - 0.03 * p as f64)).collect()
}

fn request<'a>(
    alg: &algorithms::Algorithm,
    topo: &'a Topology,
    root: u32,
    elems: u64,
) -> Request<'a> {
    let coll = alg.collective.with_root(root);
    Request::new(
        coll,
        topo.num_ranks(),
        elems,
        Dtype::U8,
        ReduceOp::Sum,
        Some(topo),
    )
    .unwrap()
}

/// The scatter simulated with one engine per host.
fn simulated(topo: &Topology, root: u32, block: u64, p: usize) -> f64 {
    let alg = algorithms::find_by_name("scatter", "multilane").unwrap();
    let mut req = request(alg, topo, root, block);
    req.lanes = Some(p);
    let s = topocoll::algorithms::build(
        topocoll::algorithms::find(req.collective.kind(), "multilane").unwrap(),
        &req,
    )
    .unwrap();
    let cfg = SimConfig {
        engines: 1,
        ..SimConfig::default()
    };
    simulate(&s, topo, &cfg).unwrap().time_s
}

/// Two equal sites, P dividing them, a flat lane table (no lane is slower
/// for the others), no LAN latency: the model's assumptions hold, and the
/// simulated scatter takes T_L(P) exactly.
#[test]
fn simulated_scatter_is_the_paper_model_where_its_assumptions_hold() {
    for n in [1usize, 2, 4, 8, 16] {
        let topo = grid(vec![n, n], 0.0, vec![5e5; n]);
        let sites = topo.sites().unwrap();
        for p in (1..=n).filter(|p| n % p == 0) {
            for block in [1000u64, 65536] {
                let sim = simulated(&topo, 0, block, p);
                let model = multilane::paper(sites, block as f64, 0.0, p);
                assert!(
                    (sim - model).abs() <= 1e-9 * model,
                    "{n}+{n} P {p} M {block}: simulated {sim}, T_L {model}"
                );
            }
        }
    }
}

/// Where the lane table is flat the refined model is the scatter's time on
/// any shape, root and lane count, LAN latency included.
#[test]
fn refined_model_is_the_simulation_on_a_flat_lane_table() {
    for sizes in [
        vec![5, 3],
        vec![3, 7],
        vec![1, 6],
        vec![4, 4],
        vec![2, 3, 5],
    ] {
        let most = *sizes.iter().max().unwrap();
        let topo = grid(sizes.clone(), 2e-5, vec![4e5; most]);
        let sites = topo.sites().unwrap();
        for root in [0u32, topo.num_ranks() as u32 - 1] {
            for p in lane_counts(sites) {
                let sim = simulated(&topo, root, 3000, p);
                let model = multilane::refined(sites, root as usize, 3000.0, 0.0, p);
                assert!(
                    (sim - model).abs() <= 1e-9 * model,
                    "{sizes:?} root {root} P {p}: simulated {sim}, refined {model}"
                );
            }
        }
    }
}

/// Two streams cross the WAN at once, each at b(2); when the shorter ends,
/// the other speeds up to b(1).
#[test]
fn wan_streams_are_capped_by_the_lanes_in_use() {
    let topo = grid(vec![2, 2], 0.0, vec![1e6, 4e5]);
    let mut s = Schedule::new(
        Collective::Alltoall,
        4,
        800_000,
        Dtype::U8,
        ReduceOp::Sum,
        "hand",
    );
    for (src, dst, bytes) in [(0usize, 2usize, 400_000u64), (1, 3, 800_000)] {
        s.programs[src].push(
            Op::Send {
                peer: dst as u32,
                tag: 0,
                region: Region::input(0, bytes),
                route: 0,
            },
            &[],
        );
        s.programs[dst].push(
            Op::Recv {
                peer: src as u32,
                tag: 0,
                region: Region::output(0, bytes),
                combine: false,
            },
            &[],
        );
    }
    let lat = 4e-3;
    for by_rank in [false, true] {
        let cfg = SimConfig {
            by_rank,
            ..SimConfig::default()
        };
        let r = simulate(&s, &topo, &cfg).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            close(r.rank_finish_s[2], lat + 1.0),
            "{:?}",
            r.rank_finish_s
        );
        assert!(
            close(r.rank_finish_s[3], lat + 1.4),
            "{:?}",
            r.rank_finish_s
        );
    }
    // One stream alone: b(1), though the WAN could carry more.
    let mut one = s.clone();
    one.programs[1] = Default::default();
    one.programs[3] = Default::default();
    let r = simulate(&one, &topo, &SimConfig::default()).unwrap();
    assert!((r.time_s - (lat + 0.4)).abs() < 1e-9, "{}", r.time_s);
}

#[test]
fn a_tcp_window_gives_the_lane_table() {
    let s = Sites::new(
        vec![3, 2],
        1e8,
        0.0,
        4e-3,
        Wan::Window {
            capacity: 3e6,
            window: 16000.0,
        },
    )
    .unwrap();
    // RTT 8 ms: one stream 2 MB/s; more share the 3 MB/s.
    assert_eq!(&s.lane_bandwidth[..3], &[2e6, 1.5e6, 1e6]);
    assert_eq!(s.wan_capacity, 3e6);
}

/// Multi-lane beats single-lane where the WAN carries more with more
/// lanes, and `--lanes auto` picks the model's P.
#[test]
fn multilane_is_faster_and_auto_takes_p_opt() {
    let topo = grid(vec![16, 16], 5e-5, falling(16));
    let sites = topo.sites().unwrap();
    let block = 65536u64;
    let p = multilane::p_opt(sites, block as f64, 0.0);
    assert!(p > 1);
    let alg = algorithms::find_by_name("scatter", "multilane").unwrap();
    let auto = (alg.build)(&request(alg, &topo, 0, block)).unwrap();
    let mut req = request(alg, &topo, 0, block);
    req.lanes = Some(p);
    assert!(auto == (alg.build)(&req).unwrap());
    let single = simulated(&topo, 0, block, 1);
    let multi = simulated(&topo, 0, block, p);
    assert!(multi * 1.5 < single, "multi {multi} single {single}");
}

fn write(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("topocoll-multilane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

const TWO_SITES: &str = "kind = \"sites\"\nn0 = 4\nn1 = 6\nlan_bandwidth = 1.25e7\nwan_latency = 8e-3\nwan_lane_bandwidth = [6e5, 5.8e5, 5.5e5]\n";

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let two = write("two.toml", TWO_SITES);
    let empty = write(
        "empty.toml",
        "kind = \"sites\"\nsites = [4, 0, 2]\nlan_bandwidth = 1e7\nwan_latency = 1e-3\nwan_lane_bandwidth = [1e5]\n",
    );
    let both = write(
        "both.toml",
        "kind = \"sites\"\nn0 = 2\nsites = [2, 2]\nlan_bandwidth = 1e7\nwan_latency = 1e-3\nwan_lane_bandwidth = [1e5]\n",
    );
    let window = write(
        "window.toml",
        "kind = \"sites\"\nn0 = 2\nn1 = 2\nlan_bandwidth = 1e7\nwan_latency = 1e-3\nwan_window = 65536\n",
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "verify",
                "-t",
                &two,
                "-c",
                "scatter",
                "-a",
                "multilane",
                "--lanes",
                "7",
            ],
            "P_max = 6",
        ),
        (
            vec![
                "verify",
                "-t",
                &two,
                "-c",
                "gather",
                "-a",
                "multilane",
                "--lanes",
                "4",
            ],
            "only up to P = 3",
        ),
        (
            vec![
                "verify",
                "-t",
                &two,
                "-c",
                "scatter",
                "-a",
                "multilane",
                "--lanes",
                "0",
            ],
            "at least 1",
        ),
        (
            vec![
                "verify",
                "-t",
                &two,
                "-c",
                "scatter",
                "-a",
                "multilane",
                "--lanes",
                "many",
            ],
            "neither a whole number nor auto",
        ),
        (
            vec![
                "verify", "-t", &two, "-c", "scatter", "-a", "linear", "--lanes", "2",
            ],
            "does not cross a WAN in lanes",
        ),
        (
            vec![
                "verify",
                "-t",
                "torus:4x4",
                "-c",
                "scatter",
                "-a",
                "multilane",
            ],
            "kind \"sites\"",
        ),
        (
            vec!["verify", "-t", &empty, "-c", "scatter", "-a", "multilane"],
            "site 1 has none",
        ),
        (
            vec!["verify", "-t", &both, "-c", "scatter", "-a", "multilane"],
            "not both",
        ),
        (
            vec!["verify", "-t", &window, "-c", "scatter", "-a", "multilane"],
            "wan_bandwidth",
        ),
        (
            vec!["model", "multilane", "-t", "torus:4x4", "-s", "1KiB"],
            "grid of sites",
        ),
        (
            vec![
                "model",
                "multilane",
                "-t",
                &two,
                "-s",
                "1KiB",
                "--alpha",
                "-1",
            ],
            "--alpha",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = topocoll(&args);
        assert_eq!(code, 2, "{args:?}: {out} {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn model_multilane_prints_every_lane_count_and_p_opt() {
    let two = write("model.toml", TWO_SITES);
    let (code, out, err) = topocoll(&[
        "model",
        "multilane",
        "-t",
        &two,
        "-s",
        "64KiB",
        "--alpha",
        "0.001",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lanes = v["lanes"].as_array().unwrap();
    // P_max = 6, but the table stops at 3.
    assert_eq!(lanes.len(), 3);
    let t: Vec<f64> = lanes.iter().map(|l| l["t_s"].as_f64().unwrap()).collect();
    let p: Vec<u64> = lanes.iter().map(|l| l["p"].as_u64().unwrap()).collect();
    assert_eq!(p, vec![1, 2, 3]);
    // T_L(1) by hand: x = 6, y = 4 + 6 − 1 − 6 = 3.
    let m = 65536.0;
    let want = 8e-3 + 6.0 * m / 6e5 + 3.0 * m / 1.25e7 + 0.001;
    assert!((t[0] - want).abs() < 1e-12, "{} {want}", t[0]);
    let best = t
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0
        + 1;
    assert_eq!(v["p_opt"].as_u64().unwrap(), best as u64);
    assert!(v["p_simulated"].as_u64().is_some());
    assert_eq!(v["simulated"].as_array().unwrap().len(), 3);
    let (code, out, _) = topocoll(&["model", "multilane", "-t", &two, "-s", "64KiB"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("P_opt (T_L)") && out.contains("P_opt (simulated)"),
        "{out}"
    );
}
