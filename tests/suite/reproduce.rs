//! `topocoll reproduce`: each paper's experiment, in its quick form, writes
//! the tables and plots it promises.

use crate::common::topocoll;

#[test]
fn reproduce_multilane_writes_the_papers_columns() {
    let dir = std::env::temp_dir().join(format!("topocoll-ml-repro-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let (code, out, err) = topocoll(&["reproduce", "multilane", "-o", &d, "--quick"]);
    assert_eq!(code, 0, "{out} {err}");
    let csv = std::fs::read_to_string(dir.join("scatter.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "size_bytes,lanes,single_lane_s,multi_lane_s,model_single_lane_s,model_multi_lane_s,wan_single_bps,wan_multi_bps"
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert!(r[3] < r[2], "multi-lane slower: {r:?}");
        assert!(r[7] > r[6], "multi-lane carries less: {r:?}");
    }
    for f in [
        "scatter_times.svg",
        "scatter_times.png",
        "wan_throughput.svg",
        "wan_throughput.png",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
}

#[test]
fn reproduce_dragonnet_writes_figure_4() {
    let dir = std::env::temp_dir().join(format!("topocoll-dragonnet-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let (code, out, err) = topocoll(&["reproduce", "dragonnet", "-o", &d, "--quick"]);
    assert_eq!(code, 0, "{out} {err}");
    let csv = std::fs::read_to_string(dir.join("efficiency.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "nodes,control,buffer_bytes,efficiency"
    );
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    let eff = |nodes: &str, control: &str, buffer: &str| -> f64 {
        rows.iter()
            .find(|r| r[0] == nodes && r[1] == control && r[2] == buffer)
            .unwrap()[3]
            .parse()
            .unwrap()
    };
    assert!(eff("16", "distributed", "512") >= 0.98);
    assert!(eff("16", "distributed", "16") < 0.1);
    assert!(eff("16", "centralised", "4096") < eff("16", "distributed", "4096"));
    assert!(dir.join("efficiency.svg").exists() && dir.join("efficiency.png").exists());
}

#[test]
fn reproduce_treebcast_quick_writes_both_tables() {
    let dir = std::env::temp_dir().join(format!("topocoll-treebcast-{}", std::process::id()));
    let (code, _, stderr) = topocoll(&[
        "reproduce",
        "treebcast",
        "--quick",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let solves = std::fs::read_to_string(dir.join("solve_times.csv")).unwrap();
    let mut lines = solves.lines();
    assert_eq!(
        lines.next(),
        Some("family,instance,hosts,rcut,scut,solve_s,nodes,proven,time_s")
    );
    assert_eq!(lines.clone().count(), 4 * 4);
    assert!(lines.all(|l| l.contains(",true,")));
    let times = std::fs::read_to_string(dir.join("bcast_times.csv")).unwrap();
    assert!(times.starts_with("family,instance,algorithm,root,time_s\n"));
    // The optimum is never slower than a baseline that sends whole messages.
    for family in ["star", "dual_cpu", "clusters", "unequal_clusters"] {
        let t = |alg: &str, root: &str| -> f64 {
            times
                .lines()
                .find(|l| l.starts_with(family) && l.contains(&format!(",{alg},{root},")))
                .unwrap()
                .rsplit(',')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        for alg in ["binomial", "binary"] {
            assert!(
                t("optimal", "0") <= t(alg, "0") * (1.0 + 1e-9),
                "{family} {alg}"
            );
        }
    }
    assert!(
        dir.join("solve_times_star.svg").exists() && dir.join("bcast_times_dual_cpu.png").exists()
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `reproduce --help` says what `--quick` runs for each paper.
#[test]
fn quick_is_described_per_paper() {
    let (code, out, err) = topocoll(&["reproduce", "--help"]);
    assert_eq!(code, 0, "{err}");
    let text = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for paper in [
        "a2at:",
        "trinaryx3:",
        "treebcast:",
        "multilane:",
        "dragonnet:",
        "swing:",
    ] {
        assert!(text.contains(paper), "--quick for {paper}: {text}");
    }
    assert!(!text.contains("(smaller tori)"), "{text}");
}

/// `reproduce swing --quick`: six algorithms at three sizes on two tori, the
/// ratio column consistent with the times, and Swing ahead of recursive
/// doubling at the largest size.
#[test]
fn reproduce_swing_quick_compares_allreduce_on_tori() {
    let dir = std::env::temp_dir().join(format!("topocoll-swing-{}", std::process::id()));
    let d = dir.to_string_lossy().into_owned();
    let (code, out, err) = topocoll(&["reproduce", "swing", "-o", &d, "--quick"]);
    assert_eq!(code, 0, "{out} {err}");
    let csv = std::fs::read_to_string(dir.join("allreduce.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "topology,algorithm,size_bytes,time_s,best_other_over_best_swing"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2 * 6 * 3, "{csv}");
    let time = |topo: &str, alg: &str, size: &str| -> f64 {
        rows.iter()
            .find(|r| r[0] == topo && r[1] == alg && r[2] == size)
            .unwrap_or_else(|| panic!("{topo} {alg} {size}"))[3]
            .parse()
            .unwrap()
    };
    for r in &rows {
        assert_eq!(r.len(), 5, "{r:?}");
        let t: f64 = r[3].parse().unwrap();
        assert!(t.is_finite() && t > 0.0, "{r:?}");
        // The ratio is the best of the others over the better Swing.
        let at = |a: &str| time(r[0], a, r[2]);
        let swing = at("swing_bw_torus").min(at("swing_lat_torus"));
        let other = ["recursive_doubling", "rabenseifner", "ring", "bucket"]
            .iter()
            .map(|a| at(a))
            .fold(f64::INFINITY, f64::min);
        let ratio: f64 = r[4].parse().unwrap();
        assert!(
            (ratio - other / swing).abs() < 1e-3 * ratio.max(1.0),
            "{r:?}"
        );
    }
    let big = (2u64 << 20).to_string();
    assert!(
        time("torus:4x4", "swing_bw_torus", &big) < time("torus:4x4", "recursive_doubling", &big),
        "{csv}"
    );
    for f in [
        "allreduce_torus_4x4.svg",
        "allreduce_torus_2x2x2.png",
        "speedup.svg",
    ] {
        assert!(dir.join(f).exists(), "{f}");
    }
    std::fs::remove_dir_all(&dir).ok();
}
