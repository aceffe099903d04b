//! GPU servers from NCCL's topology files, and clusters of them, through
//! the binary: the verbs run on them unchanged, bad files are refused in
//! one line.

use crate::common::{topocoll, topocoll_line};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nccl");

const SERVERS: [&str; 4] = [
    "dgx-a100-nvswitch.xml",
    "p4d-24xl-topo.xml",
    "azure-ndv4-topo.xml",
    "rccl-mi300x-8p-940.xml",
];

fn time_s(json: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["time_s"].as_f64().unwrap()
}

#[test]
fn simulate_runs_a_ring_allreduce_on_every_server_and_the_cluster() {
    for f in SERVERS.iter().chain(&["cluster-p4d-x2.toml"]) {
        let t = format!("{DATA}/{f}");
        let (code, out, err) = topocoll_line(&format!(
            "simulate -t {t} -c allreduce -a ring -s 1MiB --format json"
        ));
        assert_eq!(code, 0, "{f}: {err}");
        assert!(time_s(&out) > 0.0, "{f}");
    }
}

/// The NVSwitch server's ring moves each GPU's 2·7/8 MiB at 240 GB/s
/// (12 SM80 NVLinks): faster than the PCIe server's, whose ring crosses
/// the sockets' 10 GB/s link.
#[test]
fn nvlink_servers_beat_pcie_servers_on_the_same_ring() {
    let run = |f: &str| {
        let t = format!("{DATA}/{f}");
        let (code, out, err) = topocoll_line(&format!(
            "simulate -t {t} -c allreduce -a ring -s 64MiB --format json"
        ));
        assert_eq!(code, 0, "{err}");
        time_s(&out)
    };
    let (nvs, pcie) = (run("dgx-a100-nvswitch.xml"), run("p4d-24xl-topo.xml"));
    let bytes = 2.0 * 7.0 / 8.0 * 64.0 * 1048576.0;
    assert!(
        nvs >= bytes / 240e9 && nvs < 1.1 * bytes / 240e9 + 1e-4,
        "{nvs}"
    );
    assert!(pcie > 10.0 * nvs, "{pcie} vs {nvs}");
}

#[test]
fn ranks_per_node_and_map_place_ranks_on_the_gpus() {
    let t = format!("{DATA}/dgx-a100-nvswitch.xml");
    let (code, out, err) = topocoll_line(&format!(
        "simulate -t {t} -c allreduce -a ring -s 1MiB --ranks-per-node 2"
    ));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("16 ranks on 8 hosts"), "{out}");
    let dir = std::env::temp_dir().join(format!("topocoll-nccl-map-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = dir.join("map.txt");
    std::fs::write(&map, "gpu0\ngpu7\ngpu3\n").unwrap();
    let (code, out, err) = topocoll(&[
        "simulate",
        "-t",
        &t,
        "-c",
        "bcast",
        "-a",
        "binomial",
        "-s",
        "1MiB",
        "--map",
        map.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("3 ranks"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_server_file_is_refused_in_one_line_naming_its_line() {
    let dir = std::env::temp_dir().join(format!("topocoll-nccl-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(format!("{DATA}/dgx-a100-nvswitch.xml")).unwrap();
    for (from, to, says) in [
        (
            "\"16.0 GT/s PCIe\"",
            "\"17 GT/s\"",
            ":4: <pci>: link_speed \"17 GT/s\"",
        ),
        (
            "<nvlink target=\"0000:c0:00.0\" count=\"2\" tclass=\"0x068000\"/>",
            "<nvlink target=\"0000:c0:00.0\" count=\"2\" tclass=\"0x030200\"/>",
            ":7: <nvlink>: target '0000:c0:00.0' is no GPU of the file",
        ),
        (
            "<nic>",
            "<nic><port/>",
            ":26: <port>: is not an element NCCL reads here (<nic> holds <net>)",
        ),
    ] {
        let bad = dir.join("bad.xml");
        std::fs::write(&bad, text.replacen(from, to, 1)).unwrap();
        let (code, _, err) = topocoll(&["simulate", "-t", bad.to_str().unwrap(), "-c", "bcast"]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(says), "expected '{says}' in {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--algorithm nccl` names NCCL's choice (algorithm, protocol, channels)
/// by its cost model, and simulates that schedule: on the two-server
/// cluster a small allreduce takes a latency protocol on few channels, a
/// large one Simple on every channel; a sweep prices it beside `auto`'s
/// candidates and the NCCL algorithms at any channel count.
#[test]
fn algorithm_nccl_simulates_nccls_own_choice_beside_the_others() {
    let t = format!("{DATA}/cluster-p4d-x2.toml");
    let (code, out, err) = topocoll_line(&format!(
        "simulate -t {t} -c allreduce -a nccl -s 16MiB --format json"
    ));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["algorithm"], "nccl:ring/Simple/8ch");
    let (code, out, err) = topocoll_line(&format!(
        "simulate -t {t} -c allreduce -a nccl -s 4KiB --format json"
    ));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let label = v["algorithm"].as_str().unwrap().to_string();
    assert!(
        label.starts_with("nccl:") && label.contains("/LL") && label.ends_with("/1ch"),
        "{label}"
    );
    let (code, out, err) = topocoll_line(&format!(
        "simulate -t {t} -c allgather -a nccl,nccl_ring,nccl_pat,ring -s 64KiB --channels 4 --protocol LL128 --format csv"
    ));
    // --protocol is the NCCL algorithms' alone: `nccl` makes its own choice.
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("--protocol"), "{err}");
    let (code, out, err) = topocoll_line(&format!(
        "simulate -t {t} -c allgather -a nccl,nccl_ring,nccl_pat,ring -s 64KiB --channels 4 --format csv"
    ));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 5, "{out}");
    assert!(out.contains(",nccl:ring/"), "{out}");
}

/// `--algorithm nccl` reports the time NCCL's cost model gives its choice
/// beside the simulated time (`nccl_model_s`, and a text line); on the
/// two-server cluster a 1 GiB allreduce's two agree within 2% (the model's
/// bandwidth is the links'), and another algorithm reports no model time.
#[test]
fn algorithm_nccl_reports_nccls_modelled_time_beside_the_simulated_one() {
    let t = format!("{DATA}/cluster-p4d-x2.toml");
    let json = |alg: &str| -> serde_json::Value {
        let (code, out, err) = topocoll_line(&format!(
            "simulate -t {t} -c allreduce -a {alg} -s 1GiB --format json"
        ));
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let v = json("nccl");
    let (time, model) = (
        v["time_s"].as_f64().unwrap(),
        v["nccl_model_s"].as_f64().unwrap(),
    );
    assert!((time / model - 1.0).abs() < 0.02, "{time} against {model}");
    assert!(json("nccl_ring").get("nccl_model_s").is_none());
    let (code, out, err) = topocoll_line(&format!("simulate -t {t} -c allreduce -a nccl -s 8B"));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("NCCL's model    ") && out.contains("(time / model = "),
        "{out}"
    );
}

/// The NCCL algorithms run on every server at one channel and many, each
/// protocol: `verify --topology` checks their NIC paths too.
#[test]
fn the_nccl_algorithms_verify_on_every_server_through_the_binary() {
    for f in SERVERS.iter().chain(&["cluster-p4d-x2.toml"]) {
        let t = format!("{DATA}/{f}");
        for (c, a) in [
            ("allreduce", "nccl_ring"),
            ("allreduce", "nccl_tree"),
            ("reduce_scatter", "nccl_pat"),
        ] {
            for extra in [
                "--channels 1 --protocol LL",
                "--channels 12 --protocol LL128",
                "",
            ] {
                let (code, out, err) =
                    topocoll_line(&format!("verify -t {t} -c {c} -a {a} -s 64KiB {extra}"));
                assert_eq!(code, 0, "{f} {a} {extra}: {out}{err}");
            }
        }
    }
}

/// `tune --export-nccl` writes lines NCCL's example tuner plugin reads,
/// field by field as it reads its own example (`nccl_tuner.conf`): NCCL's
/// collective, algorithm and protocol names, the size ranges in order and
/// joined, the cluster's 2 nodes and 16 ranks.
#[test]
fn tune_export_nccl_writes_the_example_plugins_format() {
    use topocoll::optimize::nccl_tuner::Line;
    let t = format!("{DATA}/cluster-p4d-x2.toml");
    let dir = std::env::temp_dir().join(format!("topocoll-nccl-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("tuner.conf");
    let (code, _, err) = topocoll_line(&format!(
        "tune -t {t} -c reduce_scatter --sizes 4KiB,256KiB,4MiB --no-cache --cache-dir {} --export-nccl {}",
        dir.display(),
        out.display()
    ));
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<Line> = text
        .lines()
        .filter_map(|l| Line::parse(l).unwrap())
        .collect();
    assert!(!lines.is_empty(), "{text}");
    assert_eq!(lines[0].min_bytes, 0);
    assert_eq!(lines.last().unwrap().max_bytes, u32::MAX as u64);
    for w in lines.windows(2) {
        assert_eq!(w[1].min_bytes, w[0].max_bytes + 1, "{text}");
    }
    for l in &lines {
        assert_eq!(l.collective, "reducescatter");
        assert!(["ring", "pat"].contains(&l.algorithm.as_str()), "{text}");
        assert_eq!((l.nodes, l.ranks), (2, 16));
        assert!(l.channels >= 1);
    }
    // A collective NCCL's tuner has not, and a path that cannot be written.
    let (code, _, err) = topocoll_line(&format!(
        "tune -t {t} -c alltoall --sizes 1KiB --export-nccl {}",
        out.display()
    ));
    assert_eq!(code, 2);
    assert!(err.contains("NCCL's tuner takes"), "{err}");
    let (code, _, err) = topocoll_line(&format!(
        "tune -t {t} -c allreduce --sizes 1KiB --export-nccl {}/no/such/dir/x.conf",
        dir.display()
    ));
    assert_eq!(code, 2);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
