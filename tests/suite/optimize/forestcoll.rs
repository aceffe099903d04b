//! `optimize`'s allgather cut bound on ForestColl's own clusters
//! (tests/data/forestcoll: `a100_topology(n)` and `mi250_topology(n)` of its
//! `topologies.py`, edge for edge) is the optimal allgather time ForestColl's
//! code computes for them (docs/optimize.md, "ForestColl's optimum and
//! topocoll's cut bound").
//!
//! ForestColl's numbers are what `OptimalBranchingsAlgo(G, capacitated=True,
//! compute_nodes=gpus).binary_search()` returns, U and k, turned by
//! `convertToRuntime(U, k)` = U / (k·N) into seconds per GB (10⁹ bytes) of
//! the allgather's output M = N · block: exact rationals, which both sides
//! compute to rounding, so the tolerance is 1e-9 relative.

use topocoll_testkit::cli;

/// Every rank's block (`--size`), bytes.
const BLOCK: f64 = 16.0 * 1024.0 * 1024.0;

/// `optimize -c allgather` on a file of tests/data/forestcoll:
/// (`cut_bound_s`, `bound_s`). The bounds take well under a second; the
/// time limit only cuts the search for a schedule short.
fn bounds(file: &str) -> (f64, f64) {
    let path = format!(
        "{}/tests/data/forestcoll/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let args: [&str; 11] = [
        "optimize",
        "-t",
        path.as_str(),
        "-c",
        "allgather",
        "--size",
        "16MiB",
        "--time-limit",
        "2",
        "--format",
        "json",
    ];
    let out = cli::run_args(env!("CARGO_BIN_EXE_topocoll"), &args[..]);
    assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let cut = v["cut_bound_s"].as_f64().unwrap_or_else(|| panic!("{v}"));
    let least = v["bound_s"].as_f64().unwrap_or_else(|| panic!("{v}"));
    (cut, least)
}

/// ForestColl's optimum for N GPUs at `per_gb` seconds per GB of output.
fn forestcoll(gpus: f64, per_gb: f64) -> f64 {
    per_gb * gpus * BLOCK / 1e9
}

/// The cut bound and the least time are both ForestColl's optimum, within
/// 1e-9 relative: the network has no half-duplex cable and its switches do
/// not raise the bound (ForestColl's edge splitting reaches it).
fn assert_is_optimum(file: &str, gpus: f64, per_gb: f64) {
    let want = forestcoll(gpus, per_gb);
    let (cut, least) = bounds(file);
    for (what, got) in [("cut_bound_s", cut), ("bound_s", least)] {
        assert!(
            ((got - want) / want).abs() < 1e-9,
            "{file}: {what} {got:e} s, ForestColl's optimum {want:e} s"
        );
    }
}

/// 2 boxes of 8 A100s (NVSwitch 300 GB/s, a 25 GB/s NIC a GPU, two IB
/// switches): ForestColl's U = 0.6, k = 13, 3/1040 s per GB (346.67 GB/s).
/// The binding cut is one GPU, its 15 blocks in over 300 + 25 GB/s.
#[test]
fn the_cut_bound_of_forestcolls_2_box_a100_cluster_is_its_optimum() {
    assert_is_optimum("a100-2box.toml", 16.0, 3.0 / 1040.0);
    // The cut by hand: m · 15 / 325 GB/s.
    assert!((forestcoll(16.0, 3.0 / 1040.0) / (BLOCK * 15.0 / 325e9) - 1.0).abs() < 1e-12);
}

/// 4 boxes of 8 A100s: U = 0.12, k = 1, 3/800 s per GB (266.67 GB/s). The
/// binding cut is one box with its NICs, 24 blocks in over 8 × 25 GB/s.
#[test]
fn the_cut_bound_of_forestcolls_4_box_a100_cluster_is_its_optimum() {
    assert_is_optimum("a100-4box.toml", 32.0, 3.0 / 800.0);
    assert!((forestcoll(32.0, 3.0 / 800.0) / (BLOCK * 24.0 / 200e9) - 1.0).abs() < 1e-12);
}

/// 2 boxes of 16 MI250 GCDs (xGMI links of 50 GB/s, 7 a GCD; every GCD
/// on one IB switch at 16 GB/s): U = 7.5, k = 83, 15/5312 s per GB
/// (354.13 GB/s). A binding cut is the GCD pair gpu0, gpu1 of a box,
/// joined by 4 links: 30 blocks in over 6 × 50 + 2 × 16 GB/s.
#[test]
fn the_cut_bound_of_forestcolls_2_box_mi250_cluster_is_its_optimum() {
    assert_is_optimum("mi250-2box.toml", 32.0, 15.0 / 5312.0);
    assert!((forestcoll(32.0, 15.0 / 5312.0) / (BLOCK * 30.0 / 332e9) - 1.0).abs() < 1e-12);
}

/// 4 boxes of 16 MI250 GCDs: U = 1.5, k = 8, 3/1024 s per GB (341.33
/// GB/s). The binding cut is one box, 48 blocks in over 16 × 16 GB/s.
#[test]
fn the_cut_bound_of_forestcolls_4_box_mi250_cluster_is_its_optimum() {
    assert_is_optimum("mi250-4box.toml", 64.0, 3.0 / 1024.0);
    assert!((forestcoll(64.0, 3.0 / 1024.0) / (BLOCK * 48.0 / 256e9) - 1.0).abs() < 1e-12);
}
