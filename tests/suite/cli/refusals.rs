//! Bad inputs that could panic, exhaust memory, overflow or be silently
//! ignored: each is refused with one line naming the problem and exit code
//! 2 (never 101, a panic, or 134, an abort).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common;

/// Exit code and stderr.
fn code_and_stderr(args: &[&str]) -> (i32, String) {
    let (code, _, err) = common::topocoll(args);
    (code, err)
}

/// Exit code 2 and a single stderr line that contains `says`.
fn refused(args: &[&str], says: &str) {
    let (code, err) = code_and_stderr(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: expected '{says}' in: {err}");
}

/// `refused` for a command line as a user types it.
fn refused_line(line: &str, says: &str) {
    let (code, _, err) = common::topocoll_line(line);
    assert_eq!(code, 2, "{line}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{line}: {err}");
    assert!(err.contains(says), "{line}: expected '{says}' in: {err}");
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("topocoll-refusals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A valid schedule as JSON, from `topocoll schedule`.
fn schedule_json(dir: &Path, args: &[&str]) -> Value {
    let path = dir.join("valid.json");
    let mut all = vec!["schedule", "--format", "json", "-o", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let (code, err) = code_and_stderr(&all);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// Writes `doc` and returns its path.
fn write(dir: &Path, name: &str, doc: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, doc.to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

/// An edit that breaks a valid schedule document.
type Corruption = Box<dyn Fn(&mut Value)>;

#[test]
fn corrupt_schedule_files_are_refused_even_unverified() {
    let dir = scratch_dir();
    // A2AT on a 4×4 torus: its sends take signed-offset routes.
    let valid = schedule_json(
        &dir,
        &[
            "-t",
            "torus:4x4",
            "-c",
            "alltoall",
            "-a",
            "a2at",
            "--size",
            "8",
        ],
    );
    let first_send = valid["programs"][0]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .position(|o| o["kind"] == "send" && o["route"].as_u64().is_some())
        .expect("a2at sends by offset");
    let cases: Vec<(&str, Corruption, &str)> = vec![
        (
            "dep_out_of_range",
            Box::new(|d| d["programs"][0]["ops"][1]["deps"] = serde_json::json!([100])),
            "depends on op 100, which is not an earlier operation",
        ),
        (
            "route_out_of_range",
            Box::new(move |d| d["programs"][0]["ops"][first_send]["route"] = 99.into()),
            "route 99 is not in the schedule's",
        ),
        (
            "misspelt_field",
            Box::new(move |d| {
                let op = d["programs"][0]["ops"][first_send].as_object_mut().unwrap();
                let route = op.remove("route").unwrap();
                op.insert("rout".into(), route);
            }),
            "unknown field `rout`",
        ),
        (
            "field_of_another_kind",
            Box::new(move |d| d["programs"][0]["ops"][first_send]["combine"] = true.into()),
            "a send op has no field 'combine'",
        ),
        (
            "no_ranks",
            Box::new(|d| {
                d["ranks"] = 0.into();
                d["programs"] = serde_json::json!([]);
            }),
            "0 ranks",
        ),
        (
            "huge_count",
            Box::new(|d| d["count"] = (1u64 << 62).into()),
            "larger than 2^50 bytes",
        ),
        (
            "huge_scratch",
            Box::new(|d| d["programs"][0]["scratch"] = u64::MAX.into()),
            "larger than 2^50 bytes",
        ),
        (
            "bitwise_op_on_floats",
            Box::new(|d| {
                d["dtype"] = "f64".into();
                d["op"] = "band".into();
            }),
            "needs an integer dtype",
        ),
        (
            // abs() of i64::MIN wraps; the route walked 2^63 hops.
            "most_negative_offset",
            Box::new(|d| d["offsets"][0][0] = i64::MIN.into()),
            "is not smaller than its size",
        ),
    ];
    for (name, corrupt, says) in cases {
        let mut doc = valid.clone();
        corrupt(&mut doc);
        let path = write(&dir, &format!("{name}.json"), &doc);
        refused(
            &[
                "simulate",
                "-t",
                "torus:4x4",
                "--schedule",
                &path,
                "--no-verify",
            ],
            says,
        );
    }
    // A network or a rank count given with a schedule must fit it.
    let path = write(&dir, "valid.json", &valid);
    refused(
        &["verify", "--schedule", &path, "--ranks", "9"],
        "--ranks 9",
    );
    refused(
        &["verify", "--schedule", &path, "-t", "torus:2x2"],
        "has 4 ranks",
    );
    assert_eq!(
        code_and_stderr(&["verify", "--schedule", &path, "-t", "torus:4x4"]).0,
        0
    );
}

#[test]
fn out_of_range_numbers_are_refused() {
    let sim = "simulate -t torus:4x4 -c allreduce -a ring --size 64";
    // Finite inputs whose times would overflow to inf (or, for a subnormal
    // bandwidth, make a transfer last forever), and a header that wrapped.
    for (extra, says) in [
        (
            "--latency 1e308",
            "--latency: latency 1e308 s is more than 1e9 s",
        ),
        (
            "--overhead 1e308",
            "--overhead must be from 0 to 1e9 seconds",
        ),
        (
            "--bandwidth 1e-310",
            "bandwidth 1e-310 bytes/s is outside 1e-6 to 1e18",
        ),
        (
            "--flow-cap 1e-310",
            "--flow-cap: bandwidth 1e-310 bytes/s is outside",
        ),
        ("--tcp-window 1e300", "--tcp-window must be from 1 byte"),
        (
            "--header-bytes 18446744073709551615",
            "--header-bytes 18446744073709551615 is more than 2^50 bytes",
        ),
    ] {
        refused_line(&format!("{sim} {extra}"), says);
    }
    // Segments are whole elements, like sizes.
    refused_line(
        "verify --ranks 8 -c allreduce -a reduce_bcast --size 1KiB --segment 12",
        "--segment 12 bytes is not a whole number of f64 elements",
    );
    // Given to an algorithm that does not pipeline, it would be ignored.
    refused_line(
        &format!("{sim} --segment 1KiB"),
        "--segment: allreduce ring does not pipeline in segments \
         (the allreduce algorithms that do: trinaryx3, reduce_bcast, two_tree, segmented_ring)",
    );
    refused_line(
        "bench --ranks 4 -c allreduce -a ring --sizes 1KiB --segment 256",
        "does not pipeline",
    );
    // A sweep that mixes them passes it to those that pipeline.
    let (code, err) = code_and_stderr(&[
        "simulate",
        "-t",
        "torus:4x4x4",
        "-c",
        "allreduce",
        "-a",
        "trinaryx3,ring",
        "--size",
        "64KiB",
        "--segment",
        "8KiB",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    // A trace records one run.
    refused_line(
        &format!("{sim} --engines 1,2 --trace /dev/null"),
        "--trace records one run",
    );
    // A timeout past the clock's range, and no iterations.
    refused_line(
        "run --ranks 4 -c allreduce -a ring --size 64 --timeout 1e30",
        "--timeout",
    );
    refused_line(
        "bench --ranks 4 -c allreduce -a ring --sizes 8B --iterations 0",
        "--iterations must be from 1 to",
    );
    // The model: a segment larger than the message, a fractional height,
    // times that overflow.
    refused(
        &["model", "trinaryx3", "--segment", "2GiB"],
        "larger than the message",
    );
    refused(
        &["model", "trinaryx3", "--reduce-segment", "2GiB"],
        "--reduce-segment",
    );
    refused(
        &["model", "trinaryx3", "--height", "2.5"],
        "whole number of stages",
    );
    refused(&["model", "trinaryx3", "--latency", "1e308"], "overflow");
}

#[test]
fn jobs_too_large_for_memory_are_refused_before_they_start() {
    // Built before: a 64 M-node torus's links, 2·10^5 two-site host names,
    // 4·10^10 ring ops, 2·10^12 Dragon ops, terabyte buffers.
    refused(
        &["model", "trinaryx3", "--topology", "torus:8000x8000"],
        "more nodes than the 16777216 supported",
    );
    let dir = scratch_dir();
    let sites = dir.join("sites.toml");
    std::fs::write(
        &sites,
        "kind = \"sites\"\nn0 = 100000000\nn1 = 100000000\nlan_bandwidth = 1e9\nlan_latency = 1e-6\n\
         wan_latency = 1e-3\nwan_lane_bandwidth = [1e8]\n",
    )
    .unwrap();
    refused(
        &[
            "verify",
            "-t",
            sites.to_str().unwrap(),
            "-c",
            "bcast",
            "-a",
            "binomial",
        ],
        "more than the 8192 nodes supported",
    );
    refused_line(
        "verify --ranks 100000 -c allreduce -a ring --size 8",
        "too many to write out",
    );
    refused_line(
        "simulate -t hypercube:20 -c alltoall -a dragon --size 1 --no-verify",
        "too many to write out",
    );
    refused_line(
        "run --ranks 4 -c allreduce -a ring --size 1TiB",
        "of memory is available",
    );
    refused(
        &["bench", "--kernels", "--kernel-bytes", "1TiB"],
        "of memory is available",
    );
}

#[test]
fn a_full_or_closed_standard_output_is_an_error_not_a_panic() {
    for args in [
        &["verify", "--ranks", "4", "-c", "alltoall", "-a", "linear"][..],
        &["model", "trinaryx3"][..],
        &["list"][..],
        &["--help"][..],
        &["simulate", "--help"][..],
        &[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "alltoall",
            "-a",
            "linear",
        ][..],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_topocoll"))
            .args(args)
            .stdout(Stdio::from(std::fs::File::create("/dev/full").unwrap()))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("No space left on device"), "{args:?}: {err}");
    }
}

#[test]
fn topology_file_fields_of_another_kind_are_refused() {
    let dir = scratch_dir();
    for (name, text, says) in [
        (
            "torus_n0.toml",
            "kind = \"torus\"\ndims = [4, 4]\nn0 = 3\n",
            "field 'n0' does not apply to kind 'torus'",
        ),
        (
            "hypercube_dims.toml",
            "kind = \"hypercube\"\ndim = 3\ndims = [2, 2]\n",
            "field 'dims' does not apply to kind 'hypercube'",
        ),
        (
            "mesh_tie.toml",
            "kind = \"mesh\"\ndims = [4, 4]\ntorus_tie = \"simgrid\"\n",
            "field 'torus_tie' does not apply to kind 'mesh'",
        ),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        refused(
            &[
                "verify",
                "-t",
                path.to_str().unwrap(),
                "-c",
                "bcast",
                "-a",
                "binomial",
            ],
            says,
        );
    }
}

#[test]
fn options_that_do_not_apply_are_refused_not_ignored() {
    refused_line(
        "verify --ranks 4 -c allreduce -a ring --root 2",
        "--root 2: allreduce has no root",
    );
    refused_line(
        "verify --ranks 4 -c bcast -a binomial --op prod",
        "--op prod: bcast combines nothing",
    );
    refused_line(
        "simulate -t hypercube:3 -c alltoall -a linear --torus-tie simgrid",
        "--torus-tie simgrid",
    );
    // Still accepted where they apply.
    for args in [
        &[
            "verify", "--ranks", "4", "-c", "reduce", "-a", "binomial", "--root", "2", "--op",
            "max",
        ][..],
        &[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "alltoall",
            "-a",
            "linear",
            "--torus-tie",
            "simgrid",
        ][..],
        &[
            "simulate",
            "-t",
            "tofu:1x1x1",
            "-c",
            "alltoall",
            "-a",
            "linear",
            "--torus-tie",
            "simgrid",
        ][..],
    ] {
        let (code, err) = code_and_stderr(args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
}

#[test]
fn messages_name_the_option_at_fault() {
    refused_line(
        "bench --ranks 4 -c allreduce -a ring --sizes 8 --size 1MiB",
        "bench takes its sizes from --sizes, not --size",
    );
    refused(
        &[
            "bench",
            "--ranks",
            "4",
            "-c",
            "allreduce",
            "-a",
            "ring",
            "--sizes",
            "",
        ],
        "--sizes: ",
    );
    refused_line(
        "bench --ranks 4 -c allreduce -a ring --sizes 12",
        "--sizes at 12 bytes",
    );
    refused_line(
        "verify -t torus:18446744073709551616 -c bcast -a binomial",
        "is too large",
    );
}

#[test]
fn counts_that_overflow_and_a_huge_skew_are_refused() {
    // Counts that overflowed the record of timings (a panic) or the loop
    // (a table of inf, exit 0).
    refused_line(
        "run --ranks 2 -c allreduce -a ring --iterations 18446744073709551615",
        "--iterations",
    );
    refused_line(
        "bench --ranks 3 -c allreduce -a ring --sizes 8B --warmup 18446744073709551615",
        "--warmup",
    );
    refused_line(
        "simulate -t torus:3x3 -c allreduce -a ring --skew 1e300",
        "--skew 1e300",
    );
}

#[test]
fn trace_and_output_naming_one_file_are_refused() {
    // (In the scratch directory: the output is opened before it is refused,
    // and a relative name left an empty x.json in the repository.)
    let same = scratch_dir().join("same.json");
    let same = same.to_str().unwrap();
    refused(
        &[
            "simulate",
            "-t",
            "torus:3x3",
            "-c",
            "alltoall",
            "-a",
            "linear",
            "--trace",
            same,
            "-o",
            same,
        ],
        "name the same file",
    );
    let dir = scratch_dir();
    // -o and --trace naming one file in two spellings.
    let same = dir.join("same.csv");
    let dotted = format!("{}/./same.csv", dir.to_str().unwrap());
    refused(
        &[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "bcast",
            "-a",
            "binomial",
            "-o",
            same.to_str().unwrap(),
            "--trace",
            &dotted,
        ],
        "--trace and -o name the same file",
    );
}

#[test]
fn trinaryx3_model_inputs_out_of_range_are_refused() {
    refused(
        &["model", "trinaryx3", "--size", "0"],
        "size must be at least one byte",
    );
    refused(
        &["model", "trinaryx3", "--topology", "torus:1"],
        "this torus has 1",
    );
    // The model's equations (3) and (4) are for three trees.
    refused(
        &["model", "trinaryx3", "--topology", "torus:8x8"],
        "this torus has 2; give a 3D torus, or --height",
    );
}

#[test]
fn a_schedule_file_that_is_not_json_fails_at_once() {
    // Files that are not JSON or TOML fail at once, not after filling memory.
    refused(&["verify", "--schedule", "/dev/zero"], "schedule JSON");
}

#[test]
fn parse_errors_are_one_line_and_keep_what_they_name() {
    // Parse errors are one line too.
    refused(
        &["run", "--root", "-1"],
        "unexpected argument '-1' found (see --help)",
    );
    // Parse errors keep what they name, on one line.
    refused(&["reproduce"], "<PAPER>");
}

#[test]
fn schedule_json_fields_are_checked_without_verifying() {
    // Schedule JSON: a collective's fields, the algorithm's name (printed in
    // reports and CSV), compute times.
    let dir = scratch_dir();
    let valid = schedule_json(
        &dir,
        &[
            "--ranks",
            "4",
            "-c",
            "allreduce",
            "-a",
            "ring",
            "--size",
            "64",
        ],
    );
    let cases: Vec<(&str, Corruption, &str)> = vec![
        (
            "root_on_allreduce",
            Box::new(|d| d["collective"]["root"] = 2.into()),
            "collective allreduce has no field 'root'",
        ),
        (
            "control_character",
            Box::new(|d| d["algorithm"] = "evil\u{1b}[2J\nok".into()),
            "has a control character, comma or quote",
        ),
        (
            "negative_compute",
            Box::new(|d| {
                d["programs"][0]["ops"]
                    .as_array_mut()
                    .unwrap()
                    .push(serde_json::json!({"kind": "compute", "seconds": -1.0}))
            }),
            "is not a duration",
        ),
    ];
    for (name, corrupt, says) in cases {
        let mut doc = valid.clone();
        corrupt(&mut doc);
        let path = write(&dir, &format!("{name}.json"), &doc);
        refused(
            &[
                "simulate",
                "-t",
                "torus:4",
                "--schedule",
                &path,
                "--no-verify",
            ],
            says,
        );
    }
}

#[test]
fn a_failing_command_leaves_its_output_file_as_it_was() {
    let dir = scratch_dir();
    // A failing command leaves an existing output file as it was.
    let keep = dir.join("keep.txt");
    let keep_path = keep.to_str().unwrap();
    for args in [
        &[
            "schedule", "--ranks", "4", "-c", "bcast", "-a", "binomial", "--format", "xml", "-o",
            keep_path,
        ][..],
        &[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "bcast",
            "-a",
            "nosuch",
            "-o",
            keep_path,
        ][..],
        &[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "bcast",
            "-a",
            "binomial",
            "--size",
            "3",
            "--dtype",
            "f64",
            "-o",
            keep_path,
        ][..],
    ] {
        std::fs::write(&keep, "precious").unwrap();
        let (code, err) = code_and_stderr(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(
            std::fs::read_to_string(&keep).unwrap(),
            "precious",
            "{args:?}"
        );
    }
}

#[test]
fn output_to_dev_stdout_under_a_pipe_is_written() {
    // A pipe is written, not emptied (`-o /dev/stdout` under a pipe).
    let (code, out, err) = common::topocoll(&[
        "simulate",
        "-t",
        "torus:4x4",
        "-c",
        "bcast",
        "-a",
        "binomial",
        "--format",
        "csv",
        "-o",
        "/dev/stdout",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("topology,"), "{out}");
}

#[test]
fn a_misspelt_algorithm_in_a_sweep_is_refused_before_any_run() {
    // Misspelt algorithms in a sweep are refused before any run.
    refused_line(
        "simulate -t torus:4x4 -c allreduce -a ring,nosuch --size 64",
        "unknown allreduce algorithm 'nosuch'",
    );
}

#[test]
fn compute_bandwidth_on_a_broadcast_is_refused() {
    // Nothing combines in a broadcast.
    refused_line(
        "simulate -t torus:4x4 -c bcast -a binomial --compute-bandwidth 1e9",
        "--compute-bandwidth times combines, and bcast combines nothing",
    );
}

#[test]
fn a_half_duplex_edge_with_two_latencies_is_refused() {
    let dir = scratch_dir();
    // A half-duplex edge is one link: one latency.
    let half = dir.join("half.toml");
    std::fs::write(
        &half,
        "kind = \"tree\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
         [[edge]]\na = \"a\"\nb = \"b\"\nduplex = \"half\"\nlatency_ab = 1e-6\nlatency_ba = 10.0\n",
    )
    .unwrap();
    refused(
        &[
            "verify",
            "-t",
            half.to_str().unwrap(),
            "-c",
            "bcast",
            "-a",
            "binomial",
        ],
        "one latency for both directions",
    );
}

#[test]
fn negative_numbers_are_judged_as_values() {
    // A negative number is a value, judged as one.
    refused(
        &["model", "trinaryx3", "--height", "-1"],
        "model parameter height must be a non-negative finite number, got -1",
    );
    refused_line(
        "simulate -t torus:4x4 -c bcast -a binomial --latency -1",
        "--latency: latency must be a non-negative number of seconds, got -1",
    );
}

#[test]
fn grids_whose_links_or_routes_would_not_fit_are_refused() {
    // Grids whose link table or routes would not fit: many dimensions,
    // even of size 1.
    let padded = format!("torus:{}4096x4096", "1x".repeat(2000));
    for (spec, says) in [
        (
            padded.as_str(),
            "2002 dimensions are more than the 64 supported",
        ),
        (
            "torus:2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2x2",
            "more than the 67108864 link slots supported",
        ),
    ] {
        refused(
            &["verify", "-t", spec, "-c", "bcast", "-a", "binomial"],
            says,
        );
    }
}

#[test]
fn worker_counts_and_options_a_benchmark_ignores_are_refused() {
    // More workers than the system starts; options a benchmark ignores.
    refused_line(
        "run --ranks 4 -c bcast -a binomial --workers 20000",
        "--workers 20000 must be from 1 to 1024",
    );
    refused_line(
        "run --ranks 4 -c bcast -a binomial --workers 0",
        "--workers 0 must be from 1 to 1024",
    );
    refused_line(
        "bench --ranks 4 -c allreduce -a ring --sizes 8 --kernel-bytes 1KiB",
        "--kernel-bytes sizes the arrays of bench --kernels",
    );
    refused_line(
        "bench --kernels --kernel-bytes 1KiB --engines 7",
        "--engines does not apply",
    );
}

#[test]
fn a_message_quoting_a_long_input_line_is_cut() {
    let dir = scratch_dir();
    // A message quoting a huge input line is cut.
    let long = dir.join("long.toml");
    std::fs::write(
        &long,
        format!(
            "kind = \"torus\"\ndims = [4, 4]\nbandwidth = \"{}\"\n",
            "x".repeat(100_000)
        ),
    )
    .unwrap();
    let (code, err) = code_and_stderr(&[
        "verify",
        "-t",
        long.to_str().unwrap(),
        "-c",
        "bcast",
        "-a",
        "binomial",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.len() < 1000 && err.contains("more characters"),
        "{} bytes",
        err.len()
    );
}

#[test]
fn bench_kernels_refuses_an_unknown_type() {
    refused_line("bench --kernels --kernel-bytes 1KiB --dtype foo", "foo");
}

#[test]
fn options_that_would_do_nothing_are_refused() {
    // Options that did nothing where they were given.
    refused_line(
        "simulate -t torus:4x4 -c alltoall -a linear --seed 7",
        "--seed draws the --skew offsets",
    );
    refused_line(
        "simulate -t torus:4x4 -c alltoall -a linear --sharing reservation --fairness rtt",
        "--fairness rtt",
    );
    for (flag, value) in [
        ("-c", "allreduce"),
        ("-a", "ring"),
        ("--sizes", "8B..64B"),
        ("--op", "max"),
        ("--warmup", "3"),
    ] {
        refused(
            &["bench", "--kernels", "--kernel-bytes", "1KiB", flag, value],
            "does not apply",
        );
    }
    // A fault that names no op would never fire.
    for (fault, says) in [
        ("9:0", "rank 9 is not one"),
        ("0:100000", "op 100000 does not exist"),
    ] {
        refused(
            &[
                "run", "--ranks", "4", "-c", "bcast", "-a", "binomial", "--size", "8", "--fault",
                fault,
            ],
            says,
        );
    }
    // A sites file's LAN fields are named, not the edge built from them.
    let dir = scratch_dir();
    let path = dir.join("sites_lan.toml");
    std::fs::write(
        &path,
        "kind = \"sites\"\nn0 = 2\nn1 = 2\nlan_bandwidth = -1\nwan_latency = 1e-3\nwan_lane_bandwidth = [1e6]\n",
    )
    .unwrap();
    refused(
        &[
            "verify",
            "-t",
            path.to_str().unwrap(),
            "-c",
            "bcast",
            "-a",
            "binomial",
        ],
        "sites: lan_bandwidth",
    );
    // Still accepted where they apply.
    for args in [
        &[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "alltoall",
            "-a",
            "linear",
            "--skew",
            "1e-6",
            "--seed",
            "7",
        ][..],
        &[
            "bench",
            "--kernels",
            "--kernel-bytes",
            "1KiB",
            "--dtype",
            "i32",
            "--iterations",
            "1",
        ][..],
    ] {
        let (code, err) = code_and_stderr(args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
}

#[test]
fn a_zero_byte_run_prints_no_ratio_to_its_zero_bound() {
    let (code, out, err) = common::topocoll(&[
        "simulate",
        "-t",
        "torus:4x4",
        "-c",
        "alltoall",
        "-a",
        "linear",
        "--size",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    let line = out.lines().find(|l| l.starts_with("lower bound")).unwrap();
    assert!(
        !line.contains("inf") && !line.contains("ratio") && !line.contains("/"),
        "{line}"
    );
}

#[test]
fn graphs_too_large_to_route_are_refused_before_routing() {
    // 8,192 nodes in a chain, and parallel edges to pass 2^30 nodes x edges.
    let dir = scratch_dir();
    let mut text = String::from("kind = \"graph\"\n");
    for i in 0..8192 {
        text += &format!("[[node]]\nname = \"n{i}\"\n");
    }
    for i in 0..8191 {
        text += &format!("[[edge]]\na = \"n{i}\"\nb = \"n{}\"\n", i + 1);
    }
    for _ in 0..(131_073 - 8191) {
        text += "[[edge]]\na = \"n0\"\nb = \"n1\"\n";
    }
    let path = dir.join("big_graph.toml");
    std::fs::write(&path, text).unwrap();
    refused(
        &[
            "verify",
            "-t",
            path.to_str().unwrap(),
            "-c",
            "bcast",
            "-a",
            "binomial",
        ],
        "more than routing handles",
    );
}

/// A schedule file whose region runs past its buffer is refused when it is
/// read, so that `--no-verify` cannot price bytes that are not there.
#[test]
fn a_region_past_its_buffer_is_refused_on_reading() {
    let dir = std::env::temp_dir().join(format!("topocoll-region-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.json");
    let g = good.to_string_lossy().into_owned();
    let (code, err) = code_and_stderr(&[
        "schedule", "--ranks", "2", "-c", "alltoall", "-a", "linear", "-s", "8", "--format",
        "json", "-o", &g,
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&good).unwrap();
    let bad = dir.join("bad.json");
    let b = bad.to_string_lossy().into_owned();
    std::fs::write(
        &bad,
        text.replacen(
            "\"offset\":8,\"count\":8",
            "\"offset\":8,\"count\":2305843009213693953",
            1,
        ),
    )
    .unwrap();
    for args in [
        vec!["simulate", "-t", "mesh:2", "--schedule", &b, "--no-verify"],
        vec!["run", "--schedule", &b, "--no-verify"],
    ] {
        refused(&args, "ends past the input buffer");
    }
}

/// Negative and non-finite numbers reach the checks that name them (not
/// clap's flag parser), and long inputs are not echoed whole.
#[test]
fn negative_numbers_and_long_inputs_are_named() {
    refused(
        &[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "alltoall",
            "-a",
            "linear",
            "--bandwidth",
            "-inf",
        ],
        "--bandwidth",
    );
    refused(
        &[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "alltoall",
            "-a",
            "linear",
            "--latency",
            "-1e-3",
        ],
        "--latency",
    );
    let long = format!("1{}", "0".repeat(300));
    let (code, err) = code_and_stderr(&[
        "simulate",
        "-t",
        "torus:4x4",
        "-c",
        "alltoall",
        "-a",
        "linear",
        "--size",
        &long,
    ]);
    assert_eq!(code, 2);
    assert!(err.len() < 200, "{err}");
}

#[test]
fn bench_baselines_are_checked() {
    refused_line(
        "bench --ranks 4 -c allreduce -a ring --sizes 1KiB --baseline openmpi",
        "invalid value 'openmpi' for '--baseline",
    );
    // The library's own collective needs MPI: a build without it says so
    // rather than dropping the row.
    if !cfg!(feature = "mpi") {
        refused_line(
            "bench --ranks 4 -c allreduce -a ring --sizes 1KiB --baseline native",
            "--baseline native: this topocoll was built without MPI",
        );
        refused_line(
            "bench --ranks 4 -c allreduce -a ring --sizes 1KiB --backend mpi",
            "--backend mpi: this topocoll was built without MPI",
        );
    }
}

#[test]
fn a_mode_refuses_the_flags_of_another_by_name() {
    // The packet model refuses the flow model's flags, whichever struct
    // they come from (node model, drivers, single-run outputs).
    for (flag, value) in [
        ("--engines", "2"),
        ("--overhead", "1e-6"),
        ("--sharing", "reservation"),
        ("--no-fold", ""),
        ("--threads", "1"),
        ("--sweep", ""),
        ("--stream", ""),
    ] {
        let line = format!(
            "simulate -t dragonnet:16 -c alltoall -a dragon_net --size 64KiB --model packet --buffer 1KiB {flag} {value}"
        );
        refused_line(
            line.trim_end(),
            &format!("{flag} is an option of the flow model; --model packet takes --buffer"),
        );
    }
    refused_line(
        "simulate -t dragonnet:16 -c alltoall -a dragon_net --size 64KiB --model packet --buffer 1KiB --bandwidth 1e9",
        "--bandwidth (give --link-rate) is an option of the flow model",
    );
    // And the flow model the packet model's.
    for flag in ["--buffer 1KiB", "--packet-time 1e-6", "--control none"] {
        refused_line(
            &format!("simulate -t torus:4x4 -c alltoall -a linear {flag}"),
            &format!(
                "{} is an option of the packet model (--model packet)",
                flag.split(' ').next().unwrap()
            ),
        );
    }
    // tune decides every algorithm at every size of --sizes.
    for flag in ["--size 1KiB", "--algorithm ring", "--segment 8KiB"] {
        refused_line(
            &format!("tune -t torus:4x4 -c allreduce --sizes 1KiB {flag}"),
            &format!(
                "{} is not an option of tune",
                flag.split(' ').next().unwrap()
            ),
        );
    }
    // Without --topology the calibration is the node model.
    for flag in [
        "--bandwidth 1e9",
        "--latency 1e-6",
        "--ranks-per-node 2",
        "--fairness rtt",
    ] {
        refused_line(
            &format!("tune --ranks 4 -c allreduce --sizes 1KiB {flag}"),
            &format!(
                "{}: without --topology the node model is this machine's calibration",
                flag.split(' ').next().unwrap()
            ),
        );
    }
    // --calibrate takes --ranks, --backend and --cache-dir; --backend
    // belongs to it.
    for flag in [
        "-t torus:4x4",
        "-c allreduce",
        "--sizes 1KiB",
        "--export-ompi x.conf",
    ] {
        refused_line(
            &format!("tune --calibrate --ranks 2 {flag}"),
            "tune --calibrate measures this machine",
        );
    }
    refused_line(
        "tune --ranks 4 -c allreduce --sizes 1KiB --backend threads",
        "--backend is an option of --calibrate",
    );
    // Flags with a fixed set of values name them.
    refused_line(
        "simulate -t torus:4x4 -c alltoall -a linear --sharing fifo",
        "[possible values: maxmin, reservation]",
    );
    refused_line(
        "reproduce nope",
        "[possible values: a2at, trinaryx3, treebcast, multilane, dragonnet, swing]",
    );
}

/// `--radix` goes to the k-nomial trees only, at 2 or more; the bucket
/// algorithms need a mesh or torus, neighbor exchange an even rank count.
#[test]
fn radix_and_the_classic_algorithms_shapes_are_refused_in_one_line() {
    for (line, says) in [
        (
            "verify -c bcast -a binomial --ranks 8 --radix 3",
            "--radix: bcast binomial builds no k-nomial tree (the bcast algorithms that take a radix: knomial)",
        ),
        ("verify -c bcast -a knomial --ranks 8 --radix 1", "--radix 1: a k-nomial tree needs a radix of at least 2"),
        ("verify -c gather -a knomial --ranks 8 --radix 0", "at least 2"),
        ("verify -c scatter -a knomial --ranks 8 --radix x", "--radix 'x' is not a whole number"),
        ("tune -c bcast --ranks 4 --radix 3", "--radix is not an option of tune"),
        ("verify -c allgather -a neighbor --ranks 7", "needs an even rank count, not 7"),
        ("verify -c allgather -a bucket --ranks 8", "needs a mesh or torus topology"),
        ("verify -c allreduce -a bucket --topology hypercube:3", "needs a mesh or torus topology"),
        (
            "verify -c reduce_scatter -a bucket --topology torus:4x4 --ranks-per-node 2",
            "bucket",
        ),
    ] {
        refused_line(line, says);
    }
}

/// `--inter` goes to the node-aware compositions only, and names a
/// rank-based algorithm of the same collective; a composition refuses a
/// placement it cannot compose, each in one line.
#[test]
fn inter_and_node_aware_placements_are_refused_in_one_line() {
    for (line, says) in [
        (
            "verify -c allreduce -a ring -t torus:2x2 --ranks-per-node 2 --inter ring",
            "--inter: allreduce ring is no node-aware composition (the allreduce algorithms that take --inter: node_aware, node_aware_multi)",
        ),
        (
            "verify -c allreduce -a node_aware -t torus:2x2 --ranks-per-node 2 --inter rign",
            "--inter rign: no such allreduce algorithm (did you mean 'ring'?) (the leaders' allreduce takes one of: ring,",
        ),
        (
            "simulate -c bcast -a node_aware -t torus:2x2 --ranks-per-node 2 --inter trinaryx3",
            "--inter trinaryx3: it needs a network, and the leaders run on ranks alone",
        ),
        (
            "verify -c gather -a node_aware -t torus:2x2 --ranks-per-node 2 --inter node_aware",
            "a composition cannot lead another",
        ),
        ("tune -c allreduce --ranks 4 --inter ring", "--inter is not an option of tune"),
        (
            "verify -c allreduce -a node_aware --ranks 8",
            "needs ranks placed several to a node",
        ),
        (
            "verify -c allgather -a node_aware -t torus:2x2",
            "every node holds one rank, so there is nothing to compose",
        ),
        (
            "verify -c reduce_scatter -a node_aware -t torus:2x2 --ranks-per-node 3 -s 80",
            "give a count that the 12 ranks divide",
        ),
    ] {
        refused_line(line, says);
    }
}

/// alltoallv's and allgatherv's counts: a bad CSV names its file, row and
/// column; counts where none are taken, or a --size beside a file's
/// counts, are refused.
#[test]
fn bad_counts_name_their_row_and_column() {
    let dir = scratch_dir();
    let csv = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let bad_cell = csv("cell.csv", "1,2,3\n4,5,6\n7,8,x\n");
    refused(
        &[
            "verify",
            "--ranks",
            "3",
            "-c",
            "alltoallv",
            "-a",
            "linear",
            "--counts",
            &bad_cell,
        ],
        "cell.csv: row 3, column 3: 'x' is not a count",
    );
    let short = csv("short.csv", "1,2,3\n4,5\n7,8,9\n");
    refused(
        &[
            "verify",
            "--ranks",
            "3",
            "-c",
            "alltoallv",
            "-a",
            "bruck",
            "--counts",
            &short,
        ],
        "short.csv: row 2 has 2 values, want 3 (ranks)",
    );
    let rows = csv("rows.csv", "1,2\n3,4\n");
    refused(
        &[
            "run",
            "--ranks",
            "3",
            "-c",
            "allgatherv",
            "-a",
            "ring",
            "--counts",
            &rows,
        ],
        "rows.csv: row 1 has 2 values, want 1",
    );
    let good = csv("good.csv", "1,2,3\n");
    refused(
        &[
            "verify",
            "--ranks",
            "3",
            "-c",
            "allgatherv",
            "-a",
            "ring",
            "--counts",
            &good,
            "-s",
            "8",
        ],
        "--size",
    );
    refused_line(
        "verify --ranks 4 -c alltoall -a linear --counts hot:1",
        "--counts: alltoall has no counts per rank",
    );
    refused_line(
        "verify --ranks 4 -c alltoallv -a linear --counts hot:5",
        "--counts hot:5: only 4 ranks",
    );
    refused_line(
        "verify --ranks 4 -c alltoallv -a linear --counts zipf:x",
        "S is an exponent",
    );
    refused_line(
        "verify --ranks 4 -c alltoallv -a linear --counts nosuchfile.csv",
        "nosuchfile.csv",
    );
    refused_line(
        "verify --ranks 3000 -c alltoallv -a linear",
        "at most 2048 ranks",
    );
    refused_line(
        "schedule --ranks 4 -c alltoallv -a linear --counts hot:1 --format msccl",
        "MSCCL XML has no alltoallv",
    );
}

/// Per-send paths on tests/data/networks/detour.toml (sim::paths): every
/// kind of bad path refused in one line by `simulate` and by `verify -t`,
/// a half-duplex link crossed backwards accepted, a full-duplex one not.
#[test]
fn bad_paths_are_refused() {
    use crate::sim::paths::{detour, detour_half_text, pairs_allreduce, set_route, walk, DETOUR};
    use topocoll::schedule::{to_json, Schedule};
    let dir = scratch_dir();
    let t = detour();
    let json = |s: &Schedule| -> Value {
        let mut text = Vec::new();
        to_json(s, &mut text).unwrap();
        serde_json::from_slice(&text).unwrap()
    };
    // Rank 0's send across (to rank 2, on h2) by `path`.
    let across = |path: Vec<u32>| {
        let mut s = pairs_allreduce(8);
        let k = s.add_path(path);
        set_route(&mut s, 0, k);
        json(&s)
    };
    let good = walk(&t, &["h0", "s0", "s2", "s1", "h2"]);
    let w = |nodes: &[&str]| walk(&t, nodes);
    let s0s1 = w(&["s0", "s1"])[0];
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "link_out_of_range",
            across(vec![good[0], 99, good[3]]),
            "link 99 is not a link of topology",
        ),
        (
            "not_joined",
            across(vec![good[0], good[1], s0s1, good[3]]),
            "does not join link",
        ),
        (
            "wrong_start",
            across(w(&["h1", "s0", "s1", "h2"])),
            "does not leave the sender's node h0",
        ),
        (
            "wrong_end",
            across(w(&["h0", "s0", "s1", "h3"])),
            "the path ends at h3, not at the receiver's node h2",
        ),
        (
            // s2 -> s0 crossed from s0 to s2: the cable is full duplex.
            "full_duplex_reverse",
            across(vec![good[0], w(&["s2", "s0"])[0], good[2], good[3]]),
            "is crossed against its direction",
        ),
        (
            "revisits_a_node",
            across([&good[..2], &w(&["s2", "s0", "s1", "h2"])].concat()),
            "not a simple path: link",
        ),
        (
            "route_out_of_range",
            {
                let mut d = across(good.clone());
                d["programs"][0]["ops"][0]["route"] = 9.into();
                d
            },
            "route 9 is not in the schedule's 0 offset route(s) and 1 path(s)",
        ),
        (
            "empty_path",
            {
                let mut d = across(good.clone());
                d["paths"][0] = serde_json::json!([]);
                d
            },
            "paths[0] (route 1) is empty",
        ),
    ];
    for (name, doc, says) in cases {
        let path = write(&dir, &format!("path_{name}.json"), &doc);
        for verb in ["simulate", "verify"] {
            refused(&[verb, "-t", DETOUR, "--schedule", &path], says);
        }
        refused(
            &["simulate", "-t", DETOUR, "--schedule", &path, "--no-verify"],
            says,
        );
        // Without a network the verifier cannot judge a path's links.
        let (code, err) = code_and_stderr(&["verify", "--schedule", &path]);
        if name.ends_with("range") && name.starts_with("route") || name == "empty_path" {
            assert_eq!(code, 2, "{name}: {err}");
        } else {
            assert_eq!(code, 0, "{name}: {err}");
        }
    }
    // The good path, both ways: simulated and verified on the network.
    let mut s = pairs_allreduce(8);
    let there = s.add_path(good.clone());
    let back = s.add_path(w(&["h2", "s1", "s2", "s0", "h0"]));
    set_route(&mut s, 0, there);
    set_route(&mut s, 2, back);
    let path = write(&dir, "path_good.json", &json(&s));
    for verb in ["simulate", "verify"] {
        let (code, err) = code_and_stderr(&[verb, "-t", DETOUR, "--schedule", &path]);
        assert_eq!(code, 0, "{verb}: {err}");
    }
    // The runtime moves the same data whatever the route.
    let (code, err) = code_and_stderr(&["run", "--schedule", &path, "--check"]);
    assert_eq!(code, 0, "run: {err}");
    // With the detour's cables half duplex (one link each, s0 -> s2 and
    // s2 -> s1), the way back crosses both from their `to` to their `from`.
    let half = dir.join("detour-half.toml");
    std::fs::write(&half, detour_half_text()).unwrap();
    let half = half.to_str().unwrap();
    let ht = topocoll::topology::parse_toml("half", &detour_half_text()).unwrap();
    let hw = |nodes: &[&str]| walk(&ht, nodes);
    let mut s = pairs_allreduce(8);
    let back = s.add_path(hw(&["h2", "s1", "s2", "s0", "h0"]));
    set_route(&mut s, 2, back);
    let back_links = &s.paths[0];
    assert!(back_links.iter().any(|&l| ht.both_ways(l)
        && ht.node_name(ht.links[l as usize].from) == "s2"
        && ht.node_name(ht.links[l as usize].to) == "s1"));
    let path = write(&dir, "path_half_back.json", &json(&s));
    for verb in ["simulate", "verify"] {
        let (code, err) = code_and_stderr(&[verb, "-t", half, "--schedule", &path]);
        assert_eq!(code, 0, "{verb}: {err}");
    }
    // The same indices on the full-duplex network are other links.
    refused(
        &["verify", "-t", DETOUR, "--schedule", &path],
        "rank 2 op 0: route 1 (path [",
    );
    // A path between two ranks of one node is refused: route 0 is theirs.
    let placed = ["-t", DETOUR, "--ranks-per-node", "2"];
    let mut doc = schedule_json(
        &dir,
        &[
            &placed[..],
            &["-c", "allgather", "-a", "ring", "--size", "8"],
        ]
        .concat(),
    );
    let first = doc["programs"][0]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .position(|o| o["kind"] == "send" && o["peer"] == 1)
        .expect("the ring's rank 0 sends to rank 1");
    doc["programs"][0]["ops"][first]["route"] = 1.into();
    doc["paths"] = serde_json::json!([good]);
    let path = write(&dir, "path_same_node.json", &doc);
    refused(
        &[&["verify", "--schedule", &path][..], &placed[..]].concat(),
        "the sender and the receiver share node h0",
    );
}

#[test]
fn optimize_refuses_a_root_its_collective_has_not() {
    for c in ["allgather", "reduce_scatter", "allreduce"] {
        refused_line(
            &format!("optimize -t torus:4x4 -c {c} -s 1MiB --root 3"),
            &format!("--root 3: {c} has no root (bcast, reduce, scatter and gather do)"),
        );
    }
    // The rooted ones take it.
    let (code, out, err) =
        common::topocoll_line("optimize -t torus:3x3 -c bcast -s 1KiB --root 3 --format json");
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["root"], 3);
}

/// An outage that a transfer meets stops the run in one line, exit 2; a
/// window that does not read is refused naming `--fail`.
#[test]
fn an_outage_under_a_transfer_and_a_bad_window_are_refused_in_one_line() {
    let mut cmd = vec![
        "simulate",
        "-t",
        "torus:4x4",
        "-c",
        "allreduce",
        "-a",
        "ring",
    ];
    cmd.extend(["-s", "1MiB", "--fail"]);
    let with = |fail: &str| {
        let mut c = cmd.clone();
        c.push(fail);
        c.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let args = with("(0,0) -> (1,0)@1e-5..1");
    refused(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "link '(0,0) -> (1,0)' turns off at 0.00001 s under rank 0's send to rank 1",
    );
    let args = with("(0,0) -> (1,0)@1..0.5");
    refused(
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        "--fail: an outage is LINKS@T1..T2, two times in seconds with T1 < T2, got '@1..0.5'",
    );
}

#[test]
fn every_link_name_of_a_torus_of_2_fails_every_cable() {
    // The two parallel cables of a dimension of 2 share their links'
    // names: a name fails both, so every name fails every cable.
    let names: Vec<String> = {
        let t = topocoll::topology::parse_spec("torus:2x2").unwrap();
        (0..t.links.len() as u32).map(|l| t.link_name(l)).collect()
    };
    refused(
        &[
            "simulate",
            "-t",
            "torus:2x2",
            "--fail",
            &names.join(","),
            "-c",
            "bcast",
            "-a",
            "binomial",
        ],
        "--fail: with 8 cable(s) failed, rank 1 ((1,0)) cannot reach rank 0 ((0,0))",
    );
    let (code, out, err) = common::topocoll(&[
        "list",
        "--links",
        "-t",
        "torus:2x2",
        "--fail",
        "(0,0) -> (1,0)",
    ]);
    assert_eq!(code, 0, "{err}");
    // 16 links less the 2 cables' 4: a header, the columns, 12 links.
    assert_eq!(out.lines().count(), 2 + 12, "{out}");
}

#[test]
fn a_lone_clusters_zones_are_read_as_every_zone_is() {
    let dir = scratch_dir();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/simgrid-platforms");
    for file in ["cluster_torus.xml", "cluster_fat_tree.xml"] {
        let text = std::fs::read_to_string(format!("{data}/{file}")).unwrap();
        let bogus = text.replacen("routing=\"Full\"", "routing=\"bogus\"", 1);
        assert_ne!(bogus, text, "{file}");
        let path = dir.join(format!("bogus-{file}"));
        std::fs::write(&path, bogus).unwrap();
        refused(
            &[
                "simulate",
                "-t",
                path.to_str().unwrap(),
                "-c",
                "bcast",
                "-a",
                "binomial",
            ],
            "<zone>: zone 'world': routing 'bogus' is not a SimGrid routing",
        );
    }
    // The cluster's own attributes too: its id, and nothing but <prop> in it.
    let torus = |attrs: &str, inside: &str| {
        format!(
            r#"<platform version="4.1"><zone id="w" routing="Full"><cluster {attrs} topology="TORUS" topo_parameters="2,2"
 prefix="n" radical="0-3" suffix="" speed="1Gf" bw="1GBps" lat="1us">{inside}</cluster></zone></platform>"#
        )
    };
    for (text, says) in [
        (torus("", ""), "<cluster>: needs 'id'"),
        (
            torus("id=\"c\"", "<host id=\"x\" speed=\"1f\"/>"),
            "<host>: only <prop> goes in a <cluster>",
        ),
        (
            torus("id=\"c\"", "")
                .replace(
                    "<zone id=\"w\" routing=\"Full\">",
                    "<zone id=\"w\" routing=\"Full\"><zone id=\"w\" routing=\"Full\">",
                )
                .replace("</zone>", "</zone></zone>"),
            "zone 'w' is declared twice",
        ),
    ] {
        let path = dir.join("lone.xml");
        std::fs::write(&path, &text).unwrap();
        refused(
            &[
                "simulate",
                "-t",
                path.to_str().unwrap(),
                "-c",
                "bcast",
                "-a",
                "binomial",
            ],
            says,
        );
    }
}

#[test]
fn output_flags_naming_one_file_are_refused_before_any_work() {
    let dir = scratch_dir();
    let f = dir.join("rules");
    let f = f.to_str().unwrap();
    let dotted = format!("{}/./rules", dir.to_str().unwrap());
    for (a, b) in [(f, f), (f, dotted.as_str())] {
        refused(
            &[
                "tune",
                "-t",
                "torus:2x2",
                "-c",
                "allreduce",
                "--sizes",
                "8B",
                "--export-ompi",
                a,
                "--export-mpich",
                b,
            ],
            "--export-ompi and --export-mpich name the same file: give them different paths",
        );
    }
    let plot = dir.join("p.svg");
    let plot = plot.to_str().unwrap();
    refused(
        &[
            "tune",
            "-t",
            "torus:2x2",
            "-c",
            "bcast",
            "--sizes",
            "8B",
            "-o",
            plot,
            "--plot",
            plot,
        ],
        "-o and --plot name the same file",
    );
    refused(
        &[
            "simulate",
            "-t",
            "torus:2x2",
            "-c",
            "bcast",
            "-a",
            "binomial",
            "--size",
            "8B,16B",
            "-o",
            plot,
            "--plot",
            plot,
        ],
        "-o and --plot name the same file",
    );
    assert!(!Path::new(f).exists() && !Path::new(plot).exists());
}

#[test]
fn tune_names_the_size_limit() {
    // Past 2^50 bytes a buffer is refused, at once, whatever the algorithm.
    for sizes in ["1125899906842625", "8B..2251799813685248"] {
        refused_line(
            &format!("tune -t mesh:2 -c bcast --sizes {sizes} --no-cache"),
            "on 2 ranks makes a buffer larger than 2^50 bytes",
        );
    }
    refused_line(
        "tune -t mesh:2 -c bcast --sizes 1125899906842625 --no-cache",
        "--sizes 1125899906842625 on 2 ranks makes a buffer larger than 2^50 bytes",
    );
}

#[test]
fn counts_past_2_64_name_the_flag() {
    for verb in [
        "simulate -t torus:2x2 -c allgatherv -a ring",
        "tune -t torus:2x2 -c allgatherv --sizes 8B --no-cache",
    ] {
        refused_line(
            &format!("{verb} --counts uniform:18446744073709551615"),
            "--counts uniform:18446744073709551615: the counts add up past 2^64 elements",
        );
    }
}

/// `replay` refuses, in one line, a missing trace, flags of one collective
/// (the trace gives them), a SimGrid option it does not map and a trace of
/// another rank count than the network's.
#[test]
fn replay_refuses_bad_traces_and_flags_in_one_line() {
    let is4 = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/traces/nas-is4/index.txt"
    );
    refused_line(
        "replay no-such-trace.txt -t torus:2x2",
        "cannot read trace 'no-such-trace.txt'",
    );
    refused_line(
        &format!("replay {is4} -t torus:2x2 --collective bcast"),
        "--collective: replay takes its collectives from the trace",
    );
    refused_line(
        &format!("replay {is4} -t torus:2x2 --flops 1Gf --cfg=smpi/allreduce:smp_rsag"),
        "(mapped: default, lr, rdb, rab_rdb)",
    );
    refused_line(
        &format!("replay {is4} -t torus:2x2 --cfg=surf/precision:1e-9"),
        "--cfg=surf/precision: not an option replay takes",
    );
    // SimGrid's network options: only over its model, each value checked.
    for (flags, says) in [
        ("--cfg=network/weight-S:5", "give --simgrid"),
        (
            "--simgrid --cfg=network/model:LV08",
            "the network models priced are SMPI and CM02",
        ),
        ("--simgrid --tcp-window 5", "--cfg=network/TCP-gamma"),
        (
            "--simgrid --cfg=smpi/bw-factor:abc",
            "chunk 'abc' is not THRESHOLD:VALUE",
        ),
        (
            "--simgrid --cfg=smpi/lat-factor:0:-2",
            "must be a positive number",
        ),
        ("--simgrid --cfg=network/TCP-gamma:0", "must be more than 0"),
        (
            "--simgrid --cfg=network/crosstraffic:maybe",
            "not yes or no",
        ),
        ("--simgrid --cfg=smpi/os:0:1e-6:0", "only SimGrid's default"),
        (
            "--simgrid --cfg=smpi/send-is-detached-thresh:big",
            "not a byte count",
        ),
    ] {
        refused_line(
            &format!("replay {is4} -t torus:2x2 --flops 1Gf {flags}"),
            says,
        );
    }
    // simulate takes SimGrid's network options, and no other.
    for (flags, says) in [
        ("--cfg=network/crosstraffic:0", "give --simgrid"),
        (
            "--simgrid --cfg=smpi/allreduce:lr",
            "not an option simulate takes",
        ),
        (
            "--simgrid --cfg=network/weight-S:-1",
            "not a non-negative number",
        ),
    ] {
        refused_line(
            &format!("simulate -t torus:4x4 -c allreduce -a ring -s 1MiB {flags}"),
            says,
        );
    }
    refused_line(
        &format!("replay {is4} -t torus:4x4 --flops 1Gf"),
        "the trace has 4 ranks but topology torus:4x4 has 16",
    );
    refused_line(&format!("replay {is4} -t torus:2x2"), "give --flops");
    refused_line(
        &format!("replay {is4} -t torus:2x2 --flops fast"),
        "--flops 'fast' is not a speed",
    );
    refused_line(
        &format!("replay {is4} -t torus:2x2 --flops 1Gf --compare allreduce=nosuch"),
        "nosuch",
    );
}

/// `replay` refuses, in one line naming the file and line, exit 2, a call
/// on a communicator never created and ranks that disagree on a call's
/// communicator.
#[test]
fn replay_refuses_bad_communicators_naming_file_and_line() {
    let dir = scratch_dir().join("replay-comms");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, trace, says) in [
        (
            "never",
            "0 bcast 10 0 comm=3\n1 bcast 10 0 comm=3\n",
            ":1: communicator 3 was never created on rank 0",
        ),
        (
            "differ",
            "0 comm_dup 1\n0 barrier comm=1\n1 comm_dup 1\n1 barrier\n",
            ":4: rank 1's collective call 1 (barrier) is never made by rank 0",
        ),
    ] {
        let f = dir.join(format!("{name}.txt"));
        std::fs::write(&f, trace).unwrap();
        let f = f.display();
        refused_line(&format!("replay {f} -t mesh:2"), &format!("{f}{says}"));
    }
}

/// `replay` refuses a job file whose jobs overlap or exceed the network's
/// hosts, in one line naming the file and the job's line, exit 2.
#[test]
fn replay_refuses_job_files_whose_placements_overlap_or_exceed_the_hosts() {
    let dir = scratch_dir().join("replay-jobs");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.txt"), "0 send 1 0 10\n1 recv 0 0 10\n").unwrap();
    for (name, toml, says) in [
        (
            "overlap",
            "[[job]]\ntrace = \"t.txt\"\nhosts = [0, 1]\n[[job]]\ntrace = \"t.txt\"\nhosts = [1, 2]\n",
            ":4: job 'job 2' is placed on host '(1)', which job 'job 1' is placed on already",
        ),
        (
            "exceed",
            "[[job]]\ntrace = \"t.txt\"\nhosts = [2, 4]\n",
            ":1: job 'job 1': host '4' is not one of the network's 4 hosts",
        ),
    ] {
        let f = dir.join(format!("{name}.toml"));
        std::fs::write(&f, toml).unwrap();
        let f = f.display();
        refused_line(&format!("replay {f} -t mesh:4"), &format!("{f}{says}"));
    }
}

/// `replay` refuses a bad GOAL schedule or Chakra trace in one line that
/// names the file and the line (GOAL) or message (Chakra), exit 2.
#[test]
fn replay_refuses_bad_goal_and_chakra_traces_naming_the_place() {
    let dir = scratch_dir().join("replay-formats");
    std::fs::create_dir_all(&dir).unwrap();
    let goal = dir.join("unmatched.goal");
    std::fs::write(
        &goal,
        "num_ranks 2\nrank 0 {\nl0: send 8b to 1 tag 0\nl1: send 8b to 1 tag 5\n}\nrank 1 {\nl0: recv 8b from 0 tag 0\n}\n",
    )
    .unwrap();
    let g = goal.display();
    refused_line(
        &format!("replay {g} -t mesh:2"),
        &format!("{g}:4: rank 0 sends to rank 1 with tag 5, but rank 1 never receives it"),
    );
    // Chakra: an empty metadata (size 0), then one node (its size first).
    for (name, bytes, says) in [
        (
            "type",
            vec![0, 2, 0x18, 42],
            ":2: node 0: unknown node type 42",
        ),
        (
            "cut",
            vec![0, 5, 0x18, 4],
            ":2: message 2 is 5 bytes, but the file holds 2 more",
        ),
        (
            "dep",
            vec![0, 7, 0x08, 1, 0x18, 4, 0x2a, 1, 9],
            ":2: node 1 depends on node 9, which the file does not hold",
        ),
    ] {
        let f = dir.join(format!("{name}.et"));
        std::fs::write(&f, bytes).unwrap();
        let f = f.display();
        refused_line(&format!("replay {f} -t mesh:1"), &format!("{f}{says}"));
    }
    let gap = dir.join("gap");
    for r in [0, 2] {
        std::fs::write(dir.join(format!("gap.{r}.et")), [0]).unwrap();
    }
    refused_line(
        &format!("replay {} -t mesh:3", gap.display()),
        "rank 1's file",
    );
}

/// The NCCL algorithms' flags: a channel count out of NCCL's 1..64, a
/// protocol NCCL has not, either flag on an algorithm that runs no
/// channels, and `--algorithm nccl` on a collective NCCL runs none of its
/// own for: one line each, exit 2.
#[test]
fn nccl_flags_out_of_place_are_refused() {
    let s = "simulate -t torus:8 -c allreduce -s 1MiB";
    refused_line(
        &format!("{s} -a nccl_ring --channels 0"),
        "--channels 0 is not 1 to 64",
    );
    refused_line(
        &format!("{s} -a nccl_tree --channels 65"),
        "--channels 65 is not 1 to 64",
    );
    refused_line(
        &format!("{s} -a nccl_ring --protocol LL64"),
        "none of NCCL's protocols",
    );
    refused_line(
        &format!("{s} -a ring --channels 4"),
        "--channels: allreduce ring runs no NCCL channels",
    );
    refused_line(
        &format!("{s} -a ring --protocol LL"),
        "--protocol: allreduce ring runs no NCCL channels",
    );
    refused_line(
        "simulate -t torus:8 -c alltoall -s 1KiB -a nccl",
        "NCCL runs no algorithm of its own for alltoall",
    );
    refused_line(
        "simulate -t torus:8 -c bcast -s 1KiB -a nccl_pat",
        "unknown bcast algorithm 'nccl_pat'",
    );
}

/// `replay --comm-groups` takes a Chakra trace's groups only, and a file
/// that is missing or not JSON, in one line naming it.
#[test]
fn communicator_groups_are_refused_for_other_traces_and_when_unreadable() {
    let dir = scratch_dir();
    let groups = dir.join("groups.json");
    std::fs::write(&groups, r#"{"1": [0, 1]}"#).unwrap();
    let g = groups.to_str().unwrap();
    let trace = "tests/data/traces/nas-is4/index.txt";
    refused(
        &["replay", trace, "-t", "torus:2x2", "--comm-groups", g],
        "--comm-groups: 'tests/data/traces/nas-is4/index.txt' is not a Chakra trace",
    );
    let chakra = "tests/data/chakra/all_reduce_4npus_1MB/all_reduce";
    refused(
        &[
            "replay",
            chakra,
            "-t",
            "torus:4",
            "--comm-groups",
            "no-such-groups.json",
        ],
        "cannot read communicator groups 'no-such-groups.json'",
    );
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"1\": [0,").unwrap();
    refused(
        &[
            "replay",
            chakra,
            "-t",
            "torus:4",
            "--comm-groups",
            bad.to_str().unwrap(),
        ],
        "not a JSON object of communicator groups",
    );
}
