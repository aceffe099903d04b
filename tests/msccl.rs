//! MSCCL's XML algorithm format: files written by hand from the format's
//! description verify, simulate and run; topocoll's schedules go out and
//! come back simulating to the same bits; bad files are one line and exit 2.

use std::path::PathBuf;
use topocoll::algorithms::{self, Request, ALGORITHMS};
use topocoll::schedule::{
    self, from_msccl_xml, to_msccl_xml, Dtype, MscclExport, MscclImport, ReduceOp, Schedule,
};
use topocoll::sim::{simulate, SimConfig, SimResult};
use topocoll::topology::parse_spec;

mod common;

fn file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/msccl")
        .join(name)
}

fn export(s: &Schedule) -> (String, MscclExport) {
    let mut out = Vec::new();
    let report = to_msccl_xml(s, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), report)
}

fn import(text: &str, count: u64, dtype: Dtype) -> Schedule {
    let how = MscclImport {
        count: Some(count),
        dtype,
        op: ReduceOp::Sum,
    };
    from_msccl_xml(text, &how).unwrap()
}

fn without_wall(mut r: SimResult) -> SimResult {
    r.run.wall_s = 0.0;
    r
}

/// (file, size, its collective, ranks): each verifies at two sizes,
/// simulates, and runs on the threads backend with its results checked.
const HAND_WRITTEN: &[(&str, &str, &str, usize)] = &[
    ("allgather_ring.xml", "8KiB", "allgather", 4),
    ("allreduce_ring_fused.xml", "8KiB", "allreduce", 4),
    ("alltoall_direct.xml", "8KiB", "alltoall", 3),
    ("reduce_scatter_ring.xml", "3KiB", "reduce_scatter", 3),
];

#[test]
fn hand_written_files_verify_simulate_and_run() {
    for &(name, size, collective, ranks) in HAND_WRITTEN {
        let path = file(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let how = MscclImport {
            count: None,
            dtype: Dtype::F32,
            op: ReduceOp::Sum,
        };
        let s = from_msccl_xml(&text, &how).unwrap();
        assert_eq!(s.collective.name(), collective, "{name}");
        assert_eq!(s.ranks, ranks, "{name}");
        schedule::verify(&s).unwrap_or_else(|e| panic!("{name}: {e}"));
        let topo = parse_spec(&format!("torus:{ranks}")).unwrap();
        let r = simulate(&s, &topo, &SimConfig::default()).unwrap();
        assert!(r.time_s > 0.0 && r.flows > 0, "{name}");
        let p = path.to_str().unwrap();
        for args in [
            vec!["verify", "--schedule", p, "--size", size],
            vec!["run", "--schedule", p, "--size", size, "--check"],
            vec![
                "simulate",
                "-t",
                &format!("torus:{ranks}"),
                "--schedule",
                p,
                "--size",
                size,
            ],
        ] {
            let (code, out, err) = common::topocoll(&args);
            assert_eq!(code, 0, "{args:?}: {out}{err}");
        }
    }
}

/// Every algorithm of the four collectives MSCCL names, on several shapes:
/// written out and read back, it verifies; where nothing was lost (no wait
/// added by a threadblock's order, no route, no compute step) it simulates
/// to the same bits as the original, and writing it again gives the same
/// text.
#[test]
fn schedules_go_out_and_come_back_the_same() {
    let (mut same, mut with_waits) = (0, 0);
    for spec in [
        "torus:4",
        "torus:5",
        "torus:3x2",
        "torus:4x4",
        "hypercube:3",
    ] {
        let topo = parse_spec(spec).unwrap();
        let p = topo.num_ranks();
        for alg in ALGORITHMS {
            if !matches!(
                alg.collective.name(),
                "allreduce" | "allgather" | "alltoall" | "reduce_scatter"
            ) {
                continue;
            }
            let c = alg.collective.with_root(0);
            let dtype = if c.is_reduction() {
                Dtype::F64
            } else {
                Dtype::U8
            };
            let bytes = 8 * 60 * dtype.size();
            let req = Request::new(c, p, bytes, dtype, ReduceOp::Sum, Some(&topo)).unwrap();
            let Ok(s) = algorithms::build(alg.name, &req) else {
                continue;
            };
            let what = format!("{} {} on {spec}", alg.collective, alg.name);
            let (text, lost) = export(&s);
            let back = import(&text, s.count, dtype);
            schedule::verify(&back).unwrap_or_else(|e| panic!("{what}: {e}"));
            if lost == MscclExport::default() {
                same += 1;
                let cfg = SimConfig {
                    engines: 2,
                    overhead_s: 1e-7,
                    ..SimConfig::default()
                };
                assert_eq!(
                    without_wall(simulate(&s, &topo, &cfg).unwrap()),
                    without_wall(simulate(&back, &topo, &cfg).unwrap()),
                    "{what}"
                );
                assert_eq!(export(&back).0, text, "{what}");
            } else {
                with_waits += 1;
                assert_eq!(lost.lost_compute, 0, "{what}");
            }
        }
    }
    eprintln!("{same} the same, {with_waits} with waits");
    assert!(
        same >= 20 && with_waits > 0,
        "{same} the same, {with_waits} with waits"
    );
}

#[test]
fn bad_files_are_one_line_and_exit_2() {
    let good = std::fs::read_to_string(file("allreduce_ring_fused.xml")).unwrap();
    let dir = std::env::temp_dir().join(format!("topocoll-msccl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (edit, says) in [
        (
            good.replacen("type=\"rrs\"", "type=\"xyz\"", 1),
            "type=\"xyz\"",
        ),
        (
            good.replacen("coll=\"allreduce\"", "coll=\"broadcast\"", 1),
            "coll=\"broadcast\"",
        ),
        (
            good.replacen("ngpus=\"4\"", "ngpus=\"5\"", 1),
            "GPU 4 is missing",
        ),
        (good.replacen("srcoff=\"0\"", "srcoff=\"9\"", 1), "end past"),
        (
            good.replacen("depid=\"-1\" deps=\"-1\"", "depid=\"0\" deps=\"3\"", 1),
            "cycle",
        ),
        (good.replacen("send=\"1\"", "send=\"0\"", 1), "send=\"0\""),
        (good.replacen(" cnt=\"1\"", "", 1), "no 'cnt'"),
        (good[..good.len() / 2].to_string(), "MSCCL XML"),
        (
            good.replacen("<step s=\"1\"", "<step s=\"7\"", 1),
            "step s=\"7\"",
        ),
    ] {
        let path = dir.join("bad.xml");
        std::fs::write(&path, &edit).unwrap();
        let (code, _, err) = common::topocoll(&["verify", "--schedule", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{says}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{says}: {err}");
        assert!(err.contains(says), "expected '{says}' in: {err}");
    }
    // A size that is not a whole number of chunks, and flags the file fixes.
    let p = file("allreduce_ring_fused.xml");
    let p = p.to_str().unwrap();
    for (args, says) in [
        (
            vec!["verify", "--schedule", p, "--size", "24"],
            "not a whole number",
        ),
        (vec!["verify", "--schedule", p, "--root", "1"], "--root"),
        (
            vec!["verify", "--schedule", p, "--dtype", "f64", "--op", "bxor"],
            "bxor",
        ),
    ] {
        let (code, _, err) = common::topocoll(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: expected '{says}' in: {err}");
    }
}

#[test]
fn the_cli_writes_msccl_xml_that_reads_back() {
    let dir = std::env::temp_dir().join(format!("topocoll-msccl-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("ring.xml");
    let o = out.to_str().unwrap();
    let (code, _, err) = common::topocoll(&[
        "schedule",
        "--ranks",
        "6",
        "-c",
        "allreduce",
        "-a",
        "ring",
        "--size",
        "6KiB",
        "--format",
        "msccl",
        "-o",
        o,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = common::topocoll(&["run", "--schedule", o, "--size", "6KiB", "--check"]);
    assert_eq!(code, 0, "{err}");
    // The bcast has no MSCCL form.
    let (code, _, err) = common::topocoll(&[
        "schedule", "--ranks", "4", "-c", "bcast", "-a", "binomial", "--format", "msccl",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("MSCCL XML has no bcast"), "{err}");
}
