//! The command line: exit codes, one-line errors, the verbs, and sweeps
//! (a row per engine count, a plot).

use crate::common::{child, topocoll, topocoll_line};

/// The paper's normalised units for `simulate`: link bandwidth 1, latency 0.
const NORMALISED: [&str; 4] = ["--bandwidth", "1", "--latency", "0"];

/// `time_s` of a `simulate --format json` report.
fn time_s(json: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    v["time_s"].as_f64().unwrap()
}

/// `topocoll simulate` of the linear all-to-all on a 4×4 torus, with `extra` flags.
fn simulate_linear_4x4(extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "simulate",
        "-t",
        "torus:4x4",
        "-c",
        "alltoall",
        "-a",
        "linear",
    ];
    args.extend_from_slice(extra);
    topocoll(&args)
}

#[test]
fn list_names_everything() {
    let (code, out, _) = topocoll(&["list"]);
    assert_eq!(code, 0);
    for word in [
        "torus:32x32",
        "tofu:4x3x4",
        "hypercube:4",
        "reduce_scatter",
        "linear",
        "binomial",
        "ring",
    ] {
        assert!(out.contains(word), "list lacks {word}");
    }
    // Every registered algorithm is listed, marked [stream] exactly when it
    // has a generator.
    for a in topocoll::algorithms::ALGORITHMS {
        let line = out
            .lines()
            .find(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() > 1 && w[0] == a.collective.name() && w[1] == a.name
            })
            .unwrap_or_else(|| panic!("list lacks {} {}", a.collective, a.name));
        assert_eq!(line.ends_with("[stream]"), a.stream.is_some(), "{line}");
    }
    // Every collective has built-in algorithms; an unknown one is named
    // with the ones there are.
    for c in ["allgather", "bcast", "scatter", "gather", "reduce_scatter"] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{c} ")))
            .unwrap_or_else(|| panic!("list lacks {c}"));
        assert!(!line.contains("no built-in"), "{line}");
    }
    let (code, _, err) = topocoll(&["verify", "--ranks", "4", "-c", "allgather", "-a", "ring"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = topocoll(&["verify", "--ranks", "4", "-c", "allgather", "-a", "rign"]);
    assert_eq!(code, 2);
    assert!(err.contains("ring") && err.contains("bruck"), "{err}");
}

#[test]
fn list_names_the_v_collectives_counts_flag() {
    let (code, out, _) = topocoll(&["list"]);
    assert_eq!(code, 0);
    for c in ["alltoallv", "allgatherv"] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{c} ")))
            .unwrap_or_else(|| panic!("list lacks {c}"));
        assert!(
            line.contains("--counts:") && !line.contains("--sizes"),
            "{line}"
        );
    }
}

#[test]
fn verify_succeeds_with_exit_0() {
    let (code, out, err) = topocoll(&[
        "verify",
        "--topology",
        "torus:4x4",
        "--collective",
        "alltoall",
        "--algorithm",
        "linear",
        "--size",
        "1KiB",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("ok: alltoall linear on torus 4x4"), "{out}");
    let (code, _, err) = topocoll(&[
        "verify", "--ranks", "5", "-c", "bcast", "-a", "binomial", "--root", "3", "--size", "100",
    ]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for args in [
        vec![
            "verify",
            "--topology",
            "torus:0x4",
            "-c",
            "alltoall",
            "-a",
            "linear",
        ],
        vec![
            "verify",
            "--topology",
            "torus:4x4",
            "-c",
            "alltoall",
            "-a",
            "nosuch",
        ],
        vec![
            "verify",
            "--topology",
            "torus:4x4",
            "-c",
            "nosuch",
            "-a",
            "linear",
        ],
        vec![
            "verify",
            "--topology",
            "torus:4x4",
            "-c",
            "alltoall",
            "-a",
            "linear",
            "--size",
            "12QB",
        ],
        vec![
            "verify",
            "--topology",
            "torus:4x4",
            "-c",
            "bcast",
            "-a",
            "binomial",
            "--root",
            "16",
        ],
        vec![
            "verify",
            "--topology",
            "torus:4x4",
            "-c",
            "allreduce",
            "-a",
            "ring",
            "--size",
            "12",
        ],
        vec!["verify", "-c", "allreduce", "-a", "ring"],
        vec![
            "schedule",
            "--ranks",
            "4",
            "-c",
            "allreduce",
            "-a",
            "ring",
            "--format",
            "xml",
        ],
        vec!["verify", "--schedule", "/nonexistent.json"],
        vec!["verify", "--schedule", "/nonexistent.json", "--size", "8"],
        vec![
            "simulate",
            "-t",
            "torus:2x2",
            "--schedule",
            "/nonexistent.json",
        ],
        // The all-to-all paper has no segment sweep.
        vec![
            "reproduce",
            "a2at",
            "--full-sweep",
            "-o",
            "/nonexistent/out",
        ],
    ] {
        let (code, out, err) = topocoll(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("topocoll: "), "{err}");
    }
    // clap's own usage errors also exit 2.
    assert_eq!(topocoll(&["verify", "--bogus"]).0, 2);
    assert_eq!(topocoll(&["frobnicate"]).0, 2);
}

#[test]
fn schedule_writes_json_and_goal_and_verify_reads_json_back() {
    let dir = std::env::temp_dir().join(format!("topocoll-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("s.json");
    let (code, _, err) = topocoll(&[
        "schedule",
        "--ranks",
        "6",
        "-c",
        "allreduce",
        "-a",
        "ring",
        "--size",
        "48",
        "--format",
        "json",
        "-o",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = topocoll(&["verify", "--schedule", json.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("ok: schedule"));
    // Break it: retag one message. Verification fails with exit 1 and says where.
    let text = std::fs::read_to_string(&json)
        .unwrap()
        .replacen("\"tag\":0", "\"tag\":77", 1);
    std::fs::write(&json, text).unwrap();
    let (code, _, err) = topocoll(&["verify", "--schedule", json.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("verification failed") && err.contains("tag"),
        "{err}"
    );
    let (code, out, _) = topocoll(&[
        "schedule", "--ranks", "2", "-c", "bcast", "-a", "binomial", "--size", "4", "--format",
        "goal",
    ]);
    assert_eq!(code, 0);
    assert_eq!(out, "num_ranks 2\n\nrank 0 {\nl0: send 4b to 1 tag 0\n}\n\nrank 1 {\nl0: recv 4b from 0 tag 0\n}\n");
    std::fs::remove_dir_all(&dir).ok();
}

/// `simulate --schedule` prices a schedule read from JSON exactly as the
/// built one; a broken file is refused by the verifier (exit 1), and with
/// --no-verify by the simulator (exit 1, no hang); a file and an algorithm
/// together, a file on a topology with another rank count, or a file with
/// --stream, exit 2.
#[test]
fn simulate_reads_a_schedule_file() {
    let dir = std::env::temp_dir().join(format!("topocoll-cli-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("a2at.json");
    let path = json.to_str().unwrap();
    let built = [
        "-t",
        "torus:4x4",
        "-c",
        "alltoall",
        "-a",
        "a2at",
        "--size",
        "2",
    ];
    let mut args = vec!["schedule"];
    args.extend(built);
    args.extend(["-o", path]);
    assert_eq!(topocoll(&args).0, 0);
    let mut flags = NORMALISED.to_vec();
    flags.extend(["--engines", "2", "--format", "json"]);
    let mut direct = vec!["simulate"];
    direct.extend(built);
    direct.extend(&flags);
    let (code, out, err) = topocoll(&direct);
    assert_eq!(code, 0, "{err}");
    let want = time_s(&out);
    let mut from_file = vec!["simulate", "-t", "torus:4x4", "--schedule", path];
    from_file.extend(&flags);
    let (code, out, err) = topocoll(&from_file);
    assert_eq!(code, 0, "{err}");
    assert_eq!(time_s(&out).to_bits(), want.to_bits());
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["algorithm"], "a2at", "{out}");

    // Retag one message: the verifier refuses it, and so does the simulator.
    let text = std::fs::read_to_string(&json)
        .unwrap()
        .replacen("\"tag\":0", "\"tag\":77", 1);
    std::fs::write(&json, text).unwrap();
    let (code, _, err) = topocoll(&from_file);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("verification failed"), "{err}");
    // Without the verifier the simulator still finds the unmatched message:
    // bad input, named as such.
    from_file.push("--no-verify");
    let (code, _, err) = topocoll(&from_file);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("messages do not match"), "{err}");

    // A file with --collective, on a topology of another size, with
    // --stream, with a --size, --dtype or --segment the file would override.
    for (topology, extra) in [
        ("torus:4x4", &["-c", "alltoall"][..]),
        ("torus:4x5", &["--no-verify"][..]),
        ("torus:4x4", &["--stream"][..]),
        ("torus:4x4", &["--size", "2"][..]),
        ("torus:4x4", &["--dtype", "f64"][..]),
        ("torus:4x4", &["--segment", "1KiB"][..]),
    ] {
        let mut args = vec!["simulate", "-t", topology, "--schedule", path];
        args.extend(extra);
        let (code, _, err) = topocoll(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.starts_with("topocoll: "), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_verb_has_help() {
    for verb in ["list", "verify", "schedule"] {
        let (code, out, _) = topocoll(&[verb, "--help"]);
        assert_eq!(code, 0, "{verb}");
        assert!(out.contains("Usage"), "{verb}");
    }
}

#[test]
fn simulate_json_is_reproducible_bit_for_bit() {
    let mut args = vec![
        "simulate",
        "--topology",
        "torus:8x8",
        "--collective",
        "alltoall",
        "--algorithm",
        "linear",
        "--size",
        "1",
        "--engines",
        "1",
        "--format",
        "json",
    ];
    args.extend(NORMALISED);
    let (code, a, err) = topocoll(&args);
    assert_eq!(code, 0, "{err}");
    let (_, b, _) = topocoll(&args);
    let va: serde_json::Value = serde_json::from_str(&a).unwrap();
    let vb: serde_json::Value = serde_json::from_str(&b).unwrap();
    for key in [
        "time_s",
        "lower_bound_s",
        "flows",
        "links_shared_fraction",
        "wall_s",
    ] {
        assert!(va.get(key).is_some(), "missing {key}");
    }
    assert!(va["time_s"].as_f64().unwrap() > 0.0);
    assert_eq!(
        va["time_s"].as_f64().unwrap().to_bits(),
        vb["time_s"].as_f64().unwrap().to_bits()
    );
    assert_eq!(va["detail"]["links"], vb["detail"]["links"]);
    assert_eq!(va["flows"], 64 * 63);
}

#[test]
fn simulate_sweeps_write_a_table() {
    let (code, out, err) = topocoll(&[
        "simulate",
        "--topology",
        "torus:4x4",
        "--collective",
        "alltoall",
        "--algorithm",
        "linear,a2at",
        "--size",
        "1KiB,4KiB",
        "--engines",
        "1,4",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("topology,collective,algorithm,ranks,size_bytes,engines,time_s"));
    assert_eq!(lines.len(), 1 + 2 * 2 * 2);
    let (code, _, err) = simulate_linear_4x4(&["--engines", "0"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = simulate_linear_4x4(&["--sharing", "fifo"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'fifo' for '--sharing"), "{err}");
    // One run: csv is a header and a row, and -o takes it off stdout.
    let (code, out, err) = simulate_linear_4x4(&["--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 2, "{out}");
    let dir = std::env::temp_dir().join(format!("topocoll-cli-o-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("one.txt");
    let (code, out, err) = simulate_linear_4x4(&["-o", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "{out}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("alltoall linear on torus 4x4"), "{text}");
    // A topology file's name with a comma is one quoted CSV field.
    let topo = dir.join("a,b.toml");
    std::fs::write(&topo, "kind = \"torus\"\ndims = [4, 4]\n").unwrap();
    let (code, out, err) = topocoll(&[
        "simulate",
        "-t",
        topo.to_str().unwrap(),
        "-c",
        "alltoall",
        "-a",
        "linear",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let row = out.lines().nth(1).unwrap();
    assert!(
        row.starts_with(&format!("\"{}\",alltoall,", topo.display())),
        "{row}"
    );
}

/// `--stream` runs a pipeline generated op by op: the same time as the
/// written-out schedule, and a clear error for algorithms that are not
/// generated pipelines.
#[test]
fn simulate_stream_matches_the_written_out_schedule() {
    let base = [
        "simulate",
        "-t",
        "torus:4x3x4",
        "-c",
        "allreduce",
        "-a",
        "trinaryx3",
        "--size",
        "96KiB",
        "--segment",
        "4KiB",
        "--overhead",
        "1e-6",
        "--compute-bandwidth",
        "5e9",
        "--format",
        "json",
    ];
    let (code, written, err) = topocoll(&base);
    assert_eq!(code, 0, "{err}");
    let mut args = base.to_vec();
    args.push("--stream");
    let (code, streamed, err) = topocoll(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(time_s(&written), time_s(&streamed));
    let (code, _, err) = simulate_linear_4x4(&["--stream"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("has no generator"), "{err}");
}

/// `simulate` folds a translation-invariant run and says so (text and JSON);
/// `--no-fold` simulates every rank, to the same result.
#[test]
fn simulate_folds_unless_told_not_to() {
    let mut base = vec!["--size", "1", "--engines", "2"];
    base.extend(NORMALISED);
    let (code, text, err) = simulate_linear_4x4(&base);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("stood for 4 translates"), "{text}");
    let json = |extra: &[&str]| {
        let mut args = base.clone();
        args.extend_from_slice(&["--format", "json"]);
        args.extend_from_slice(extra);
        let (code, out, err) = simulate_linear_4x4(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let (folded, full) = (json(&[]), json(&["--no-fold"]));
    assert_eq!(folded["folded"], 4);
    assert_eq!(full["folded"], 1);
    assert_eq!(folded["flows"], full["flows"]);
    let (a, b) = (
        folded["time_s"].as_f64().unwrap(),
        full["time_s"].as_f64().unwrap(),
    );
    assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
}

/// A reader that stops reading (`topocoll list | head -1`) ends the output
/// quietly, with the status a closed pipe gives (128 + SIGPIPE), for a verb's
/// output and for `--help`; a full disk is an error on one line, exit 2.
#[test]
fn a_closed_pipe_ends_output_quietly() {
    use std::process::{Command, Stdio};
    for args in [&["list"][..], &["simulate", "--help"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_topocoll"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the pipe's reading end at once: the process, still
        // starting, writes into a pipe nobody reads.
        drop(child.stdout.take());
        let err = child::read_stderr(&mut child);
        let status = child.wait().unwrap();
        // (0 if it wrote everything before the close.)
        assert!(
            matches!(status.code(), Some(0) | Some(141)),
            "{args:?}: {status:?}"
        );
        assert_eq!(err, "", "{args:?}");
    }
    if std::path::Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_topocoll"))
            .arg("list")
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("No space left"), "{err}");
    }
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

/// The k-nomial trees take `--radix` on every verb that builds, the radix
/// changes the tree (a star at a radix of P or more), and a sweep that
/// mixes them with other algorithms passes it to them alone.
#[test]
fn radix_builds_the_k_nomial_trees() {
    let time = |radix: &str| {
        let (code, out, err) = topocoll(&[
            "simulate",
            "-c",
            "bcast",
            "-a",
            "knomial",
            "--topology",
            "torus:3x3x3",
            "--radix",
            radix,
            "--size",
            "1MiB",
        ]);
        assert_eq!(code, 0, "{err}");
        out.lines()
            .find(|l| l.starts_with("time"))
            .unwrap()
            .to_string()
    };
    // Three levels of two children each against one level of 26.
    assert_ne!(time("3"), time("27"));
    let (code, _, err) = topocoll(&[
        "simulate",
        "-c",
        "reduce",
        "-a",
        "binomial,knomial",
        "--topology",
        "torus:4x4",
        "--radix",
        "3",
        "--size",
        "64KiB",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = topocoll(&[
        "run", "-c", "gather", "-a", "knomial", "--ranks", "9", "--radix", "3", "--root", "4",
        "--check",
    ]);
    assert_eq!(code, 0, "{err}");
}

/// The Bine collectives run on rank counts that are not powers of two
/// from the command line, and an option they do not take (`--radix`,
/// `--segment`) is refused in one line with exit 2.
#[test]
fn bine_runs_on_any_count_and_refuses_an_option_in_one_line() {
    let (code, out, err) = topocoll(&[
        "run", "-c", "alltoall", "-a", "bine", "--ranks", "13", "--size", "3KiB", "--check",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("exactly equal to the reference"), "{out}");
    for (c, flag, v) in [("bcast", "--radix", "3"), ("alltoall", "--segment", "4")] {
        let (code, _, err) = topocoll(&[
            "verify", "-c", c, "-a", "bine", "--ranks", "12", "--size", "8", flag, v,
        ]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(flag), "{err}");
    }
}

/// A saved alltoallv schedule carries its counts: `verify`, `simulate`
/// and `run --check` read them from the file; the same seed gives the same
/// schedule, and the generators and a CSV file run from the command line.
#[test]
fn alltoallv_counts_travel_with_a_saved_schedule() {
    let dir = std::env::temp_dir().join(format!("topocoll-vcoll-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a2av.json");
    let file = path.to_str().unwrap();
    let save = |out: &str| {
        topocoll(&[
            "schedule",
            "--ranks",
            "6",
            "-c",
            "alltoallv",
            "-a",
            "bruck",
            "--counts",
            "hot:2",
            "--seed",
            "3",
            "-s",
            "40",
            "--format",
            "json",
            "-o",
            out,
        ])
    };
    let (code, _, err) = save(file);
    assert_eq!(code, 0, "{err}");
    let again = dir.join("again.json");
    assert_eq!(save(again.to_str().unwrap()).0, 0);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        std::fs::read(&again).unwrap()
    );
    for verb in [
        vec!["verify", "--schedule", file],
        vec!["simulate", "--schedule", file, "-t", "torus:3x2"],
        vec!["run", "--schedule", file, "--check"],
    ] {
        let (code, _, err) = topocoll(&verb);
        assert_eq!(code, 0, "{verb:?}: {err}");
    }
    let csv = dir.join("counts.csv");
    std::fs::write(&csv, "0,1,2\n3,0,0\n5,6,7\n").unwrap();
    for (c, a, counts) in [
        ("alltoallv", "pairwise", csv.to_str().unwrap()),
        ("alltoallv", "linear", "zipf:1.1"),
        ("allgatherv", "bruck", "uniform:64"),
        ("allgatherv", "ring", "hot:1"),
    ] {
        let (code, out, err) = topocoll(&[
            "run", "--ranks", "3", "-c", c, "-a", a, "--counts", counts, "--dtype", "f64",
            "--check",
        ]);
        assert_eq!(code, 0, "{c} {a} {counts}: {err}");
        assert!(out.contains("check:"), "{out}");
    }
}

/// `replay --map` reads SimGrid's hostfile as smpirun does: `HOST:N`
/// unrolled, and rank i on the (i mod H)-th host, so a hostfile of the
/// first host twice over places the trace's four ranks two a host.
#[test]
fn replay_places_ranks_by_a_simgrid_hostfile() {
    let dir = std::env::temp_dir().join(format!("topocoll-hostfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hosts = dir.join("hosts.txt");
    std::fs::write(&hosts, "node-0.simgrid.org:2\nnode-1.simgrid.org\n").unwrap();
    let is4 = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/traces/nas-is4/index.txt"
    );
    let xml = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/simgrid-platforms/cluster_backbone.xml"
    );
    let (code, out, err) = topocoll(&[
        "replay",
        is4,
        "--topology",
        xml,
        "--map",
        hosts.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ranks"], 4);
    assert!(v["time_s"].as_f64().unwrap() > 0.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `replay --trace FILE` writes the replay as a Chrome trace (a thread per
/// rank, the links' load) and leaves its time as it is; the report gives
/// the links' statistics as `simulate`'s does.
#[test]
fn replay_writes_a_perfetto_trace_and_its_links_statistics() {
    let is4 = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/traces/nas-is4/index.txt"
    );
    let dir = std::env::temp_dir().join(format!("topocoll-replay-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("is4.json");
    let base = [
        "replay",
        is4,
        "-t",
        "torus:2x2",
        "--flops",
        "1Gf",
        "--format",
        "json",
    ];
    let (code, plain, err) = topocoll(&base);
    assert_eq!(code, 0, "{err}");
    let mut args = base.to_vec();
    args.extend(["--trace", path.to_str().unwrap()]);
    let (code, traced, err) = topocoll(&args);
    assert_eq!(code, 0, "{err}");
    let (plain, traced): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(&plain).unwrap(),
        serde_json::from_str(&traced).unwrap(),
    );
    assert_eq!(plain["time_s"], traced["time_s"]);
    let shared = plain["links_shared_fraction"].as_f64().unwrap();
    let used = plain["links_used_fraction"].as_f64().unwrap();
    assert!(
        0.0 < shared && shared <= used && used <= 1.0,
        "{shared} {used}"
    );
    let chrome: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let events = chrome["traceEvents"].as_array().unwrap();
    let ranks: std::collections::BTreeSet<u64> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 0)
        .map(|e| e["tid"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks.len(), 4, "a thread of operations for each rank");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `replay --breakdown` splits each rank's time to its finish into compute,
/// communication and waiting, gives every distinct call its time and
/// bound, and leaves the replay's time as it is without it; `--format csv`
/// prints the same as one table, a row per rank and per call.
#[test]
fn replay_breaks_each_ranks_time_down_and_times_each_call_against_its_bound() {
    let is4 = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/traces/nas-is4/index.txt"
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["replay", is4, "-t", "torus:2x2", "--flops", "1Gf"];
        args.extend_from_slice(extra);
        let (code, out, err) = topocoll(&args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let plain: serde_json::Value = serde_json::from_str(&run(&["--format", "json"])).unwrap();
    assert!(plain.get("rank_breakdown").is_none());
    let v: serde_json::Value =
        serde_json::from_str(&run(&["--format", "json", "--breakdown"])).unwrap();
    assert_eq!(v["time_s"], plain["time_s"]);
    let ranks = v["rank_breakdown"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    for r in ranks {
        let f = |k: &str| r[k].as_f64().unwrap();
        let sum = f("compute_s") + f("communication_s") + f("wait_s");
        assert!((sum - f("finish_s")).abs() <= 1e-12, "{r}");
        assert!(f("communication_s") > 0.0 && f("compute_s") > 0.0, "{r}");
    }
    let calls = v["collective_breakdown"].as_array().unwrap();
    assert_eq!(calls.len(), v["calls"].as_array().unwrap().len());
    for c in calls {
        let (t, after, bound) = (
            c["time_s"].as_f64().unwrap(),
            c["after_all_s"].as_f64().unwrap(),
            c["bound_s"].as_f64().unwrap(),
        );
        assert!(after <= t && bound > 0.0 && bound <= after, "{c}");
    }
    let csv = run(&["--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("row,rank,finish_s"));
    let width = lines[0].split(',').count();
    assert!(lines[1..].iter().all(|l| l.split(',').count() == width));
    assert_eq!(lines.iter().filter(|l| l.starts_with("rank,")).count(), 4);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("collective,"))
            .count(),
        calls.len()
    );
}

/// A schedule that `schedule --format goal` writes replays to the time
/// `simulate` gives the schedule itself, for several collectives and
/// algorithms, with combines timed at the same rate on both sides.
#[test]
fn a_schedule_written_as_goal_replays_to_simulates_time() {
    let dir = std::env::temp_dir().join(format!("topocoll-goal-trip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let goal = dir.join("s.goal");
    let goal = goal.to_str().unwrap();
    for (c, a, size, flags) in [
        ("allreduce", "ring", "64KiB", ""),
        (
            "allreduce",
            "recursive_doubling",
            "4KiB",
            "--compute-bandwidth 1e9",
        ),
        ("bcast", "binomial", "100000", "--root 3"),
        ("alltoall", "bruck", "4096", ""),
        ("allgather", "ring", "1MiB", ""),
        ("reduce_scatter", "ring", "64KiB", "--compute-bandwidth 2e9"),
        ("barrier", "dissemination", "0", ""),
    ] {
        let shape = format!("-t torus:4x4 -c {c} -a {a} -s {size} {flags}");
        let (code, _, err) = topocoll_line(&format!("schedule {shape} --format goal -o {goal}"));
        assert_eq!(code, 0, "{shape}: {err}");
        let node = "--engines 2 --format json";
        let (code, want, err) = topocoll_line(&format!("simulate {shape} {node}"));
        assert_eq!(code, 0, "{shape}: {err}");
        let model = flags.replace("--root 3", "");
        let (code, got, err) = topocoll_line(&format!("replay {goal} -t torus:4x4 {model} {node}"));
        assert_eq!(code, 0, "{shape}: {err}");
        let (want, got) = (time_s(&want), time_s(&got));
        assert!(
            (got - want).abs() <= 1e-12 * want,
            "{shape}: simulated {want:e} s, its GOAL replayed {got:e} s"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// ASTRA-sim's Chakra example traces replay from the command line, the
/// trace named by its prefix (ASTRA-sim's workload argument) or a file.
#[test]
fn replay_reads_chakra_traces_by_prefix_or_rank_file() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/chakra");
    for (trace, spec, collective) in [
        ("all_reduce_4npus_1MB/all_reduce", "torus:4", "allreduce"),
        (
            "all_to_all_4npus_1MB/all_to_all.1.et",
            "torus:2x2",
            "alltoall",
        ),
    ] {
        let (code, out, err) =
            topocoll_line(&format!("replay {data}/{trace} -t {spec} --format json"));
        assert_eq!(code, 0, "{trace}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["ranks"], 4);
        assert_eq!(v["calls"][0]["collective"], collective, "{out}");
        assert!(v["time_s"].as_f64().unwrap() > 0.0);
    }
}

/// `replay --algorithm allreduce=auto` serves a world call by the
/// algorithm and segment `simulate -a auto` picks at its size on the same
/// network, to simulate's time (and to the time of the algorithm named
/// when it does not pipeline); `--compare` prices `auto` as one of its
/// rows; a call on another communicator is refused in one line.
#[test]
fn replay_auto_serves_a_world_call_by_the_tune_tables_choice() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let trace = format!("{data}/chakra/all_reduce_4npus_1MB/all_reduce");
    let mut segmented = 0;
    for spec in ["torus:4", "mesh:2x2", "hypercube:2"] {
        let replay = |alg: &str| {
            let (code, out, err) = topocoll_line(&format!(
                "replay {trace} -t {spec} --algorithm allreduce={alg} --format json"
            ));
            assert_eq!(code, 0, "{spec} {alg}: {err}");
            serde_json::from_str::<serde_json::Value>(&out).unwrap()
        };
        let auto = replay("auto");
        let call = &auto["calls"][0];
        let picked = call["algorithm"].as_str().unwrap().to_string();
        let (code, out, err) = topocoll_line(&format!(
            "simulate -t {spec} -c allreduce -a auto -s 1MiB --format json"
        ));
        assert_eq!(code, 0, "{spec}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let label = match call["segment_bytes"].as_u64() {
            Some(seg) => {
                segmented += 1;
                format!("{picked}/{}KiB", seg / 1024)
            }
            None => {
                assert_eq!(replay(&picked)["time_s"], auto["time_s"], "{spec} {picked}");
                picked
            }
        };
        assert_eq!(v["algorithm"], format!("auto:{label}"), "{spec}");
        let (want, got) = (time_s(&out), auto["time_s"].as_f64().unwrap());
        assert!(
            (got - want).abs() <= 1e-9 * want,
            "{spec}: {got:e} s, simulate {want:e} s"
        );
        let (code, out, err) = topocoll_line(&format!(
            "replay {trace} -t {spec} --compare allreduce=ring,auto --format json"
        ));
        assert_eq!(code, 0, "{spec}: {err}");
        let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(rows[1]["algorithm"], "auto", "{out}");
        assert_eq!(rows[1]["time_s"], auto["time_s"], "{out}");
    }
    assert!(segmented > 0, "no network picked a pipelining algorithm");
    let split = format!("{data}/communicators/comm-split4/index.txt");
    let (code, _, err) = topocoll_line(&format!(
        "replay {split} -t torus:2x2 --algorithm bcast=auto"
    ));
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("communicator") && err.contains("auto"),
        "{err}"
    );
}

/// `replay TRACE --topology PLATFORM.xml --map HOSTFILE --simgrid --format
/// json` gives SimGrid 3.32's time under its default model, SMPI's, within
/// 1% (`traces/simgrid-smpi-times.tsv`); `--cfg=network/model:CM02
/// --cfg=network/crosstraffic:0` over it prices as the CM02 flags do.
#[test]
fn replay_simgrid_gives_simgrids_smpi_time() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let dir = std::env::temp_dir().join(format!("topocoll-smpi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hosts = dir.join("hosts.txt");
    let names: Vec<String> = (0..4).map(|i| format!("node-{i}.simgrid.org")).collect();
    std::fs::write(&hosts, names.join("\n") + "\n").unwrap();
    let times = std::fs::read_to_string(format!("{data}/traces/simgrid-smpi-times.tsv")).unwrap();
    let want: f64 = times
        .lines()
        .find(|l| l.starts_with("nas-is4\tcluster_backbone\t4\t1\t"))
        .unwrap()
        .split('\t')
        .nth(4)
        .unwrap()
        .parse()
        .unwrap();
    let cfg = std::fs::read_to_string(format!("{data}/traces/nas-is4/cfg")).unwrap();
    let replay = |flags: &str| {
        let (code, out, err) = topocoll_line(&format!(
            "replay {data}/traces/nas-is4/index.txt --topology {data}/simgrid-platforms/cluster_backbone.xml --map {} {} {flags} --format json",
            hosts.display(),
            cfg.trim()
        ));
        assert_eq!(code, 0, "{flags}: {err}");
        time_s(&out)
    };
    let got = replay("--simgrid");
    assert!(
        (got / want - 1.0).abs() < 0.01,
        "{got:e} s, SimGrid {want:e} s"
    );
    let cm02 = replay("--simgrid --cfg=network/model:CM02 --cfg=network/crosstraffic:0");
    let flags = replay("--fairness rtt --header-bytes 16 --rendezvous --tcp-window 4194304");
    assert_eq!(cm02.to_bits(), flags.to_bits());
    assert!((cm02 - got).abs() > 1e-3 * got, "the models should differ");
    std::fs::remove_dir_all(&dir).ok();
}

/// On a platform whose link bandwidth changes while a message crosses it
/// (`small_platform_profile.xml`: link 1 goes from 1 MB/s to 2 MB/s at
/// 2 s), the message's rate follows it: 3 MB from Fafard over link 1
/// alone, after its 10 ms latency, is 1.99 MB by 2 s and the rest at
/// 2 MB/s, 2.505 s; from Jupiter it crosses link 2 too, which stays at
/// 1 MB/s: 0.02 + 3 s.
#[test]
fn a_message_follows_a_link_bandwidth_that_changes_under_it() {
    let xml = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/simgrid-platforms/small_platform_profile.xml"
    );
    for (root, want) in [(1, 2.505), (0, 3.02)] {
        let (code, out, err) = topocoll_line(&format!(
            "simulate -t {xml} -c bcast -a binomial -s 3000000 --dtype u8 --root {root} --format json"
        ));
        assert_eq!(code, 0, "{err}");
        let got = time_s(&out);
        assert!(
            (got - want).abs() < 1e-9,
            "root {root}: {got} s, want {want} s"
        );
    }
}
