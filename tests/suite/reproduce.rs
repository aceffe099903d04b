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
    ] {
        assert!(text.contains(paper), "--quick for {paper}: {text}");
    }
    assert!(!text.contains("(smaller tori)"), "{text}");
}
