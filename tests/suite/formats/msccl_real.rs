//! MSCCL XML as the generators and runtimes write it: the real files of
//! tests/data/msccl (RCCL's, msccl-scheduler's, msccl-tools' MSCCLang
//! output; sources and licences in its README) import, verify, simulate
//! and run; out-of-place files keep input and output apart; nops with
//! offsets -1 and in-place allgathers read; import is linear in the file;
//! what topocoll writes every runtime chooses at every size.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use topocoll::runtime::{self, threads, Elem, Options, Plan, RankBuffers};
use topocoll::schedule::{
    self, from_msccl_xml, to_msccl_xml, to_msccl_xml_for, Buf, Collective, Dtype, MscclBytes,
    MscclImport, Op, ReduceOp, Region, Schedule,
};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::parse_spec;
use topocoll::with_dtype;

use crate::common;

fn data(sub: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/msccl")
        .join(sub)
}

/// Every committed file that must read, sorted.
fn real_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["rccl", "msccl-scheduler", "msccl-tools"]
        .iter()
        .flat_map(|d| std::fs::read_dir(data(d)).unwrap())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    files
}

fn read(path: &Path, count: Option<u64>) -> Schedule {
    let text = std::fs::read_to_string(path).unwrap();
    let probe = from_msccl_xml(
        &text,
        &MscclImport {
            count: None,
            dtype: Dtype::U8,
            op: ReduceOp::Sum,
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dtype = if probe.collective.is_reduction() {
        Dtype::F64
    } else {
        Dtype::U8
    };
    let how = MscclImport {
        count,
        dtype,
        op: ReduceOp::Sum,
    };
    from_msccl_xml(&text, &how).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `s` on the threads backend with `workers` and `engines`, checks
/// every rank's buffers against the sequential executor and the
/// collective's definition, and returns the outputs' bits.
fn run_checked(s: &Schedule, workers: usize, engines: usize, what: &str) -> Vec<Vec<u64>> {
    fn go<T: Elem>(s: &Schedule, opts: &Options, what: &str) -> Vec<Vec<u64>> {
        let plan = Plan::new(s).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut bufs: Vec<RankBuffers<T>> = (0..s.ranks)
            .map(|r| runtime::initial_buffers(s, r))
            .collect();
        threads::run(&plan, &mut bufs, opts).unwrap_or_else(|e| panic!("{what}: {e}"));
        runtime::check(s, &bufs).unwrap_or_else(|e| panic!("{what}: {e}"));
        bufs.iter()
            .map(|b| b.output.iter().map(|x| x.bits()).collect())
            .collect()
    }
    let opts = Options {
        workers,
        engines,
        timeout: Some(Duration::from_secs(60)),
        ..Options::default()
    };
    with_dtype!(s.dtype, T => go::<T>(s, &opts, what))
}

#[test]
fn every_real_file_imports_verifies_simulates_and_runs() {
    let files = real_files();
    assert!(files.len() >= 15, "{files:?}");
    for path in &files {
        let what = path.display().to_string();
        let one = read(path, None);
        // One element per chunk, and three.
        for s in [read(path, Some(3 * one.count)), one] {
            schedule::verify(&s).unwrap_or_else(|e| panic!("{what}: {e}"));
            let topo = parse_spec(&format!("torus:{}", s.ranks)).unwrap();
            let r = simulate(&s, &topo, &SimConfig::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(r.time_s > 0.0 && r.flows > 0, "{what}");
            let first = run_checked(&s, 1, 1, &what);
            assert_eq!(first, run_checked(&s, 3, 4, &what), "{what}: other bits");
        }
    }
}

#[test]
fn the_command_line_runs_real_files_with_check() {
    for (file, size) in [
        ("rccl/allreduce-allpairs-8n-ll-32tb-op.xml", "16KiB"),
        ("msccl-scheduler/ndv4-ag-1k-512k.xml", "2"),
        ("msccl-tools/reduce_scatter_ring_outofplace.xml", "64"),
        ("msccl-tools/alltoall_a100_two_step.xml", "8"),
    ] {
        let p = data(file);
        let p = p.to_str().unwrap();
        for args in [
            vec!["verify", "--schedule", p, "--size", size],
            vec!["run", "--schedule", p, "--size", size, "--check"],
        ] {
            let (code, out, err) = common::topocoll(&args);
            assert_eq!(code, 0, "{args:?}: {out}{err}");
        }
    }
}

/// The out-of-place files: the rank's data is copied into a scratch
/// region that stands for MSCCL's input buffer before any step runs, and
/// steps read `i` there and `o` in the output, apart.
#[test]
fn out_of_place_files_keep_input_and_output_apart() {
    for file in [
        "rccl/allreduce-allpairs-8n-ll-32tb-op.xml",
        "msccl-tools/allreduce_allpairs_outofplace.xml",
        "msccl-tools/reduce_scatter_ring_outofplace.xml",
    ] {
        let path = data(file);
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("inplace=\"0\""));
        let s = read(&path, None);
        assert!(matches!(
            s.collective,
            Collective::Allreduce | Collective::ReduceScatter
        ));
        let input = Region {
            buf: Buf::Scratch,
            offset: 0,
            count: s.count,
        };
        for (r, prog) in s.programs.iter().enumerate() {
            let whole = Region {
                buf: Buf::Output,
                offset: 0,
                count: s.count,
            };
            assert_eq!(
                prog.ops[0],
                Op::Copy {
                    src: whole,
                    dst: input
                },
                "{file}: rank {r}"
            );
            assert!(prog.deps(0).is_empty());
            let (mut reads_input, mut writes_output) = (false, false);
            for op in &prog.ops[1..] {
                let (read, written): (Vec<Region>, Option<Region>) = match *op {
                    Op::Send { region, .. } => (vec![region], None),
                    Op::Recv { region, .. } => (vec![], Some(region)),
                    Op::Copy { src, dst } => (vec![src], Some(dst)),
                    Op::Combine { src, dst } => (vec![src, dst], Some(dst)),
                    Op::Compute { .. } => (vec![], None),
                };
                reads_input |= read
                    .iter()
                    .any(|g| g.buf == Buf::Scratch && g.offset < s.count);
                writes_output |= written.is_some_and(|w| w.buf == Buf::Output);
            }
            assert!(reads_input && writes_output, "{file}: rank {r}");
        }
        schedule::verify(&s).unwrap_or_else(|e| panic!("{file}: {e}"));
        run_checked(&s, 2, 2, file);
    }
}

#[test]
fn nops_with_offsets_minus_one_read_and_other_steps_need_theirs() {
    let path = data("msccl-tools/allreduce_1step.xml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("type=\"nop\" srcbuf=\"i\" srcoff=\"-1\""));
    let s = read(&path, None);
    schedule::verify(&s).unwrap();
    // An offset a step reads must name a chunk: one line naming the file,
    // the line and the element.
    let bad = text.replacen(
        "type=\"s\" srcbuf=\"i\" srcoff=\"0\"",
        "type=\"s\" srcbuf=\"i\" srcoff=\"-1\"",
        1,
    );
    assert_ne!(bad, text);
    let dir = std::env::temp_dir().join(format!("topocoll-msccl-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad_offset.xml");
    std::fs::write(&p, &bad).unwrap();
    let (code, _, err) = common::topocoll(&["verify", "--schedule", p.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for says in ["bad_offset.xml", "line ", "<step>", "offset -1"] {
        assert!(err.contains(says), "expected '{says}' in: {err}");
    }
}

#[test]
fn in_place_allgather_reads_with_no_input_chunks() {
    for file in [
        "msccl-scheduler/ndv4-ag-1k-512k.xml",
        "msccl-tools/allgather_ring.xml",
    ] {
        let path = data(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("i_chunks=\"0\"") && text.contains("inplace=\"1\""));
        let s = read(&path, Some(2));
        assert_eq!(s.collective, Collective::Allgather);
        // The rank's block goes to its place in the output first.
        for (r, prog) in s.programs.iter().enumerate() {
            assert_eq!(
                prog.ops[0],
                Op::Copy {
                    src: Region {
                        buf: Buf::Input,
                        offset: 0,
                        count: 2
                    },
                    dst: Region {
                        buf: Buf::Output,
                        offset: 2 * r as u64,
                        count: 2
                    }
                },
                "{file}"
            );
        }
        schedule::verify(&s).unwrap_or_else(|e| panic!("{file}: {e}"));
        run_checked(&s, 2, 2, file);
    }
}

#[test]
fn rejected_files_say_why_in_one_line() {
    for (file, says, exit) in [
        ("rejected/alltonext_forward.xml", "custom collective", 2),
        (
            "rejected/pipeline_a100_allpairs.xml",
            "verification failed",
            1,
        ),
    ] {
        let p = data(file);
        let (code, _, err) = common::topocoll(&["verify", "--schedule", p.to_str().unwrap()]);
        assert_eq!(code, exit, "{file}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{file}: {err}");
        assert!(err.contains(says), "{file}: expected '{says}' in: {err}");
    }
}

/// A ring allreduce on `p` ranks as MSCCL XML (4·p·(p−1) steps).
fn ring_xml(p: usize) -> String {
    let req = topocoll::algorithms::Request::new(
        Collective::Allreduce,
        p,
        8 * p as u64,
        Dtype::F64,
        ReduceOp::Sum,
        None,
    )
    .unwrap();
    let s = topocoll::algorithms::build(&topocoll::algorithms::allreduce::ring::ALGORITHM, &req)
        .unwrap();
    let mut out = Vec::new();
    to_msccl_xml(&s, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn import_seconds(text: &str, dtype: Dtype) -> f64 {
    let how = MscclImport {
        count: None,
        dtype,
        op: ReduceOp::Sum,
    };
    let t0 = Instant::now();
    let s = from_msccl_xml(text, &how).unwrap();
    let t = t0.elapsed().as_secs_f64();
    assert_eq!(s.ranks, text.matches("<gpu ").count());
    t
}

#[test]
fn import_is_linear_in_the_file() {
    // 40,400 steps (a 5 MB file), and a 128-GPU ring of 65,024.
    for (p, deadline) in [(101, 2.0), (128, 3.0)] {
        let text = ring_xml(p);
        let steps = text.matches("<step ").count();
        assert_eq!(steps, 4 * p * (p - 1));
        let t = import_seconds(&text, Dtype::F64);
        assert!(t < deadline, "{steps} steps imported in {t:.2} s");
    }
    // 20,000 threadblocks without steps.
    let mut text = String::from(
        "<algo name=\"empty\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allgather\" inplace=\"0\">\n",
    );
    for g in 0..2 {
        text.push_str(&format!(
            "<gpu id=\"{g}\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n"
        ));
        for t in 0..10_000 {
            text.push_str(&format!(
                "<tb id=\"{t}\" send=\"-1\" recv=\"-1\" chan=\"0\"></tb>\n"
            ));
        }
        text.push_str("</gpu>\n");
    }
    text.push_str("</algo>\n");
    let t = import_seconds(&text, Dtype::U8);
    assert!(t < 2.0, "20,000 empty threadblocks imported in {t:.2} s");
    // 20,000 nops in a row, each waiting for another copy: what they pass
    // on grows with every one.
    let n = 20_000;
    let mut text = String::from(
        "<algo name=\"nops\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"2\" ngpus=\"2\" coll=\"allgather\" inplace=\"0\">\n\
         <gpu id=\"0\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n<tb id=\"0\" send=\"-1\" recv=\"-1\" chan=\"0\">\n",
    );
    for k in 0..n {
        text.push_str(&format!("<step s=\"{k}\" type=\"cpy\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"1\"/>\n"));
    }
    text.push_str("</tb>\n<tb id=\"1\" send=\"1\" recv=\"-1\" chan=\"0\">\n");
    for k in 0..n {
        text.push_str(&format!("<step s=\"{k}\" type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"0\" depid=\"0\" deps=\"{k}\" hasdep=\"0\"/>\n"));
    }
    text.push_str(&format!("<step s=\"{n}\" type=\"s\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n</tb>\n</gpu>\n"));
    text.push_str("<gpu id=\"1\" i_chunks=\"1\" o_chunks=\"2\" s_chunks=\"0\">\n<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n\
        <step s=\"0\" type=\"r\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"1\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n</tb>\n</gpu>\n</algo>\n");
    let t = import_seconds(&text, Dtype::U8);
    assert!(t < 2.0, "20,000 nops in a row imported in {t:.2} s");
}

/// The `<algo>` line of a written file.
fn algo_line(s: &Schedule, bytes: Option<MscclBytes>) -> topocoll::Result<String> {
    let mut out = Vec::new();
    match bytes {
        None => to_msccl_xml(s, &mut out)?,
        Some(b) => to_msccl_xml_for(s, b, &mut out)?,
    };
    let text = String::from_utf8(out).unwrap();
    Ok(text.lines().next().unwrap().to_string())
}

fn attr(line: &str, name: &str) -> u64 {
    let at = line.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    line[at..].split('"').next().unwrap().parse().unwrap()
}

#[test]
fn written_files_are_chosen_at_every_size_unless_told() {
    for (c, a) in [
        ("allreduce", "ring"),
        ("allgather", "ring"),
        ("reduce_scatter", "ring"),
        ("alltoall", "linear"),
    ] {
        let coll = Collective::parse(c, 0).unwrap();
        let req = topocoll::algorithms::Request::new(coll, 4, 64, Dtype::F32, ReduceOp::Sum, None)
            .unwrap();
        let s = topocoll::algorithms::build(
            topocoll::algorithms::find(req.collective.kind(), a).unwrap(),
            &req,
        )
        .unwrap();
        let line = algo_line(&s, None).unwrap();
        let (min, max) = (attr(&line, "minBytes"), attr(&line, "maxBytes"));
        // MSCCL takes min <= n < max; RCCL and msccl-scheduler min <= n
        // <= max, or max == 0: every size up to 2^63 - 2 in all three.
        assert_eq!(min, 0, "{line}");
        assert_eq!(max, i64::MAX as u64, "{line}");
        // What MSCCL's loader holds a file to: the chunks of each GPU
        // against the loop's, both placements named.
        let per_loop = attr(&line, "nchunksperloop");
        let mut out = Vec::new();
        to_msccl_xml(&s, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let gpu = text.lines().find(|l| l.contains("<gpu ")).unwrap();
        let (i, o) = (attr(gpu, "i_chunks"), attr(gpu, "o_chunks"));
        let (i_times, o_times) = match c {
            "allgather" => (4, 1),
            "reduce_scatter" => (1, 4),
            _ => (1, 1),
        };
        assert_eq!((i * i_times, o * o_times), (per_loop, per_loop), "{line}");
        assert!(line.contains(" inplace=\"") && line.contains(" outofplace=\""));
        // A range, when given, is written as it is.
        let ranged = MscclBytes {
            min: 1024,
            max: Some(1 << 20),
        };
        let line = algo_line(&s, Some(ranged)).unwrap();
        assert_eq!(
            (attr(&line, "minBytes"), attr(&line, "maxBytes")),
            (1024, 1 << 20)
        );
        for bad in [
            MscclBytes {
                min: 0,
                max: Some(0),
            },
            MscclBytes {
                min: 10,
                max: Some(5),
            },
            MscclBytes {
                min: 0,
                max: Some(u64::MAX),
            },
        ] {
            let e = algo_line(&s, Some(bad)).unwrap_err().to_string();
            assert!(e.contains("maxBytes"), "{e}");
        }
    }
    // On the command line.
    let (code, out, err) = common::topocoll(&[
        "schedule",
        "--ranks",
        "4",
        "-c",
        "allreduce",
        "-a",
        "ring",
        "--size",
        "64",
        "--format",
        "msccl",
        "--msccl-sizes",
        "1KiB..1MiB",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("minBytes=\"1024\" maxBytes=\"1048576\""),
        "{out}"
    );
    let (code, _, err) = common::topocoll(&[
        "schedule",
        "--ranks",
        "4",
        "-c",
        "allreduce",
        "-a",
        "ring",
        "--msccl-sizes",
        "1KiB..",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--format msccl"), "{err}");
}

#[test]
fn counts_that_overflow_are_refused_not_wrapped() {
    // o_chunks × ngpus wraps to 0 in 64 bits.
    let text = format!(
        "<algo name=\"x\" proto=\"Simple\" nchannels=\"1\" ngpus=\"4\" coll=\"reduce_scatter\" inplace=\"1\">\n\
         <gpu id=\"0\" i_chunks=\"0\" o_chunks=\"{}\" s_chunks=\"0\"/>\n\
         <gpu id=\"1\" i_chunks=\"0\" o_chunks=\"1\" s_chunks=\"0\"/>\n\
         <gpu id=\"2\" i_chunks=\"0\" o_chunks=\"1\" s_chunks=\"0\"/>\n\
         <gpu id=\"3\" i_chunks=\"0\" o_chunks=\"1\" s_chunks=\"0\"/>\n</algo>\n",
        1u64 << 62
    );
    for with_loop in [false, true] {
        let text = if with_loop {
            text.replacen("ngpus=", "nchunksperloop=\"4\" ngpus=", 1)
        } else {
            text.clone()
        };
        let how = MscclImport {
            count: None,
            dtype: Dtype::F32,
            op: ReduceOp::Sum,
        };
        let e = from_msccl_xml(&text, &how).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains("chunks"), "{e}");
    }
}
