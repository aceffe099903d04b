//! MSCCL's XML algorithm format: files written by hand from the format's
//! description verify, simulate and run; the command line writes files that
//! read back; bad files are one line and exit 2. (topocoll's schedules out
//! and back, simulating to the same bits: the corpus,
//! tests/corpus/networks.toml.)

use std::path::PathBuf;
use topocoll::schedule::{self, from_msccl_xml, Dtype, MscclImport, ReduceOp};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::parse_spec;

use crate::common;

fn file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/msccl")
        .join(name)
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
            "<gpu id=\"4\"> is missing",
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
            "<step> 1 of gpu 0 tb 0: s=\"7\"",
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

/// A file's header says where it applies: its collective, its GPUs and
/// the sizes MSCCL takes it for (`minBytes <= n < maxBytes`, the largest
/// `maxBytes` read as no limit), as the PMPI library reads it.
#[test]
fn the_header_says_which_sizes_a_file_serves() {
    let ring = topocoll::algorithms::find_by_name("allreduce", "ring").unwrap();
    let req = topocoll_testkit::request(topocoll::schedule::Collective::Allreduce, 4)
        .bytes(4096)
        .build();
    let s = topocoll::algorithms::build(ring, &req).unwrap();
    for (bytes, inside, outside) in [
        (
            schedule::MscclBytes::ALWAYS,
            vec![0, 1, u64::MAX >> 2],
            vec![],
        ),
        (
            schedule::MscclBytes {
                min: 1024,
                max: Some(65536),
            },
            vec![1024, 65535],
            vec![1023, 65536],
        ),
    ] {
        let mut xml = Vec::new();
        schedule::to_msccl_xml_for(&s, bytes, &mut xml).unwrap();
        let h = schedule::msccl_header(std::str::from_utf8(&xml).unwrap()).unwrap();
        assert_eq!(h.collective, topocoll::schedule::Collective::Allreduce);
        assert_eq!(h.ranks, 4);
        for n in inside {
            assert!(h.takes(n), "{bytes:?} takes {n}");
        }
        for n in outside {
            assert!(!h.takes(n), "{bytes:?} does not take {n}");
        }
    }
    let e = schedule::msccl_header("<algo ngpus=\"2\" coll=\"allreduce\" maxBytes=\"x\"/>")
        .unwrap_err();
    assert!(
        matches!(
            e,
            schedule::Error::Schedule {
                kind: topocoll::ScheduleKind::Format,
                ..
            }
        ),
        "{e:?}"
    );
}

/// `schedule --schedule FILE.xml --format json` converts an MSCCL file: the
/// JSON written reads back to the very schedule the XML is, and an XML
/// file that does not parse is refused in one line naming it.
#[test]
fn schedule_converts_msccl_xml_to_json() {
    let xml = file("allreduce_ring_fused.xml");
    let xml = xml.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("topocoll-msccl-convert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("ring.json");
    let json = json.to_str().unwrap();
    let (code, _, err) = common::topocoll(&[
        "schedule",
        "--schedule",
        xml,
        "--size",
        "4KiB",
        "--format",
        "json",
        "-o",
        json,
    ]);
    assert_eq!(code, 0, "{err}");
    let from_json = schedule::from_json(&std::fs::read_to_string(json).unwrap()).unwrap();
    let from_xml = from_msccl_xml(
        &std::fs::read_to_string(xml).unwrap(),
        &MscclImport {
            count: Some(4096 / 8),
            dtype: Dtype::F64,
            op: ReduceOp::Sum,
        },
    )
    .unwrap();
    assert_eq!(from_json, from_xml);
    let bad = dir.join("bad.xml");
    std::fs::write(&bad, "<algo name=\"x\">\n<gpu").unwrap();
    let (code, _, err) = common::topocoll(&[
        "schedule",
        "--schedule",
        bad.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.xml"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
