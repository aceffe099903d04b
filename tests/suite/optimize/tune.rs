//! `topocoll tune` and `--algorithm auto`: every choice is the fastest of
//! the candidates as `simulate` prices them one by one; the table is cached
//! and followed; the exported MPI rules say what the table says.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// Runs topocoll with its tuning cache in `cache`: (exit code, stdout, stderr).
fn topocoll_cached(cache: &Path, args: &[&str]) -> (i32, String, String) {
    let env = [("TOPOCOLL_CACHE", cache.as_os_str())];
    let out = topocoll_testkit::cli::run_args_env(env!("CARGO_BIN_EXE_topocoll"), args, &env);
    (out.code, out.stdout, out.stderr)
}

fn ok(cache: &Path, args: &[&str]) -> String {
    let (code, out, err) = topocoll_cached(cache, args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("topocoll-tune-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const MODEL: [&str; 4] = ["--overhead", "1e-6", "--latency", "5e-7"];

/// The time `simulate` gives one candidate.
fn simulated(cache: &Path, topo: &str, coll: &str, size: u64, c: &Value) -> f64 {
    let size = size.to_string();
    let alg = c["algorithm"].as_str().unwrap();
    let engines = c["engines"].to_string();
    let mut args = vec![
        "simulate",
        "-t",
        topo,
        "-c",
        coll,
        "-a",
        alg,
        "--size",
        &size,
        "--engines",
        &engines,
        "--format",
        "json",
    ];
    args.extend_from_slice(&MODEL);
    let seg = c.get("segment_bytes").map(|s| s.to_string());
    if let Some(s) = &seg {
        args.extend_from_slice(&["--segment", s]);
    }
    let v: Value = serde_json::from_str(&ok(cache, &args)).unwrap();
    v["time_s"].as_f64().unwrap()
}

#[test]
fn each_choice_is_the_fastest_candidate_as_simulate_prices_it() {
    let cache = scratch("choice");
    for (topo, coll) in [
        ("torus:4x4", "allreduce"),
        ("torus:4x4", "bcast"),
        ("mesh:4x2", "alltoall"),
        ("hypercube:3", "allgather"),
    ] {
        let mut args = vec![
            "tune",
            "-t",
            topo,
            "-c",
            coll,
            "--sizes",
            "8B,64KiB,4MiB",
            "--format",
            "json",
        ];
        args.extend_from_slice(&MODEL);
        let table: Value = serde_json::from_str(&ok(&cache, &args)).unwrap();
        let decisions = table["decisions"].as_array().unwrap();
        assert_eq!(decisions.len(), 3);
        let mut chosen = std::collections::BTreeSet::new();
        for d in decisions {
            let size = d["size_bytes"].as_u64().unwrap();
            let mut best = f64::INFINITY;
            let mut priced = 0;
            for c in d["candidates"].as_array().unwrap() {
                let Some(t) = c.get("time_s").and_then(Value::as_f64) else {
                    assert!(c["skipped"].is_string(), "{c}");
                    continue;
                };
                let again = simulated(&cache, topo, coll, size, c);
                assert!(
                    (t - again).abs() <= 1e-12 * t,
                    "{topo} {coll} {size}: {c} vs {again}"
                );
                best = best.min(t);
                priced += 1;
            }
            assert!(
                priced >= 2,
                "{topo} {coll} {size}: fewer than two candidates"
            );
            assert_eq!(
                d["predicted_s"].as_f64().unwrap(),
                best,
                "{topo} {coll} {size}"
            );
            let choice = &d["choice"];
            let t = simulated(&cache, topo, coll, size, choice);
            assert!((t - best).abs() <= 1e-12 * best);
            chosen.insert(choice["algorithm"].as_str().unwrap().to_string());
        }
        // The sizes span latency- and bandwidth-bound regimes, where the
        // allreduce and bcast algorithms trade places (a hypercube's
        // recursive doubling wins an allgather at every size).
        if matches!(coll, "allreduce" | "bcast") {
            assert!(
                chosen.len() >= 2,
                "{topo} {coll}: one algorithm at every size: {chosen:?}"
            );
        }
    }
}

#[test]
fn auto_follows_the_cached_table() {
    let cache = scratch("cache");
    let mut args = vec![
        "tune",
        "-t",
        "torus:4x4",
        "-c",
        "allreduce",
        "--sizes",
        "1KiB",
        "--format",
        "json",
    ];
    args.extend_from_slice(&MODEL);
    let table: Value = serde_json::from_str(&ok(&cache, &args)).unwrap();
    let choice = table["decisions"][0]["choice"]["algorithm"]
        .as_str()
        .unwrap()
        .to_string();
    let sim = |cache: &Path| -> Value {
        let mut a = vec![
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "allreduce",
            "-a",
            "auto",
            "--size",
            "1KiB",
            "--format",
            "json",
        ];
        a.extend_from_slice(&MODEL);
        serde_json::from_str(&ok(cache, &a)).unwrap()
    };
    assert_eq!(sim(&cache)["algorithm"], format!("auto:{choice}"));
    // Edit the cached file: auto follows it (it read the table, not a new
    // pricing).
    let file = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("tune-allreduce-")
        })
        .expect("the table is cached");
    let other = if choice == "ring" {
        "recursive_doubling"
    } else {
        "ring"
    };
    let mut t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    t["decisions"][0]["choice"]["algorithm"] = Value::from(other);
    std::fs::write(&file, t.to_string()).unwrap();
    assert_eq!(sim(&cache)["algorithm"], format!("auto:{other}"));
    // Another node model is another table.
    let mut a = vec![
        "simulate",
        "-t",
        "torus:4x4",
        "-c",
        "allreduce",
        "-a",
        "auto",
        "--size",
        "1KiB",
        "--format",
        "json",
        "--overhead",
        "2e-6",
    ];
    a.extend_from_slice(&MODEL[2..]);
    let v: Value = serde_json::from_str(&ok(&cache, &a)).unwrap();
    assert!(v["algorithm"].as_str().unwrap().starts_with("auto:"));
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 2);
    // A table that does not read is priced again.
    std::fs::write(&file, "{ not json").unwrap();
    assert_eq!(sim(&cache)["algorithm"], format!("auto:{choice}"));
}

#[test]
fn auto_runs_on_the_runtime_and_checks() {
    let cache = scratch("run");
    for coll in ["allreduce", "bcast", "reduce", "allgather", "alltoall"] {
        for size in ["8", "65536"] {
            let out = ok(
                &cache,
                &[
                    "run", "--ranks", "4", "-c", coll, "-a", "auto", "--size", size, "--check",
                ],
            );
            assert!(out.contains("auto:"), "{coll} {size}: {out}");
        }
    }
    let out = ok(
        &cache,
        &[
            "bench",
            "--ranks",
            "4",
            "-c",
            "allreduce",
            "-a",
            "auto,ring",
            "--sizes",
            "8B,1MiB",
            "--iterations",
            "2",
            "--format",
            "csv",
        ],
    );
    assert_eq!(
        out.lines().filter(|l| l.contains(",auto:")).count(),
        2,
        "{out}"
    );
}

/// The Open MPI rules file's numbers, comments dropped.
/// The cached table of `coll` whose description ends with `among`
/// (or holds no "among", for "").
fn cached(cache: &Path, coll: &str, among: &str) -> Value {
    std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            name.starts_with(&format!("tune-{coll}-")) && name.ends_with(".json")
        })
        .map(|p| serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap())
        .find(|t| {
            let d = t["description"].as_str().unwrap();
            if among.is_empty() {
                !d.contains("among")
            } else {
                d.ends_with(among)
            }
        })
        .unwrap_or_else(|| panic!("no cached {coll} table {among}"))
}

fn ompi_numbers(text: &str) -> Vec<Vec<u64>> {
    text.lines()
        .map(|l| l.split('#').next().unwrap())
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(|w| w.parse().unwrap()).collect())
        .collect()
}

#[test]
fn exported_rules_say_what_the_table_says() {
    let cache = scratch("export");
    let ompi = cache.join("rules.txt");
    let mpich = cache.join("tuning.json");
    let mut args = vec![
        "tune",
        "-t",
        "torus:4x4",
        "-c",
        "allreduce",
        "--sizes",
        "8B..16MiB",
        "--format",
        "json",
        "--export-ompi",
        ompi.to_str().unwrap(),
        "--export-mpich",
        mpich.to_str().unwrap(),
    ];
    args.extend_from_slice(&MODEL);
    let full: Value = serde_json::from_str(&ok(&cache, &args)).unwrap();
    // The export's table: tuned among the algorithms Open MPI runs exactly,
    // kept in the cache beside the full one.
    let table = cached(&cache, "allreduce", "among Open MPI's algorithms");
    let n = ompi_numbers(&std::fs::read_to_string(&ompi).unwrap());
    assert_eq!(n[0], [1]);
    assert_eq!(n[1], [2], "allreduce is Open MPI's collective 2");
    assert_eq!(n[2], [1]);
    let rules = &n[4..];
    assert_eq!(
        n[3],
        [16, rules.len() as u64],
        "the communicator size, the rules"
    );
    assert_eq!(rules[0][0], 0, "the first rule starts at 0 bytes");
    // Each size's rule is the export table's choice, an algorithm Open MPI
    // runs exactly, and the fastest of those the full table priced.
    let ompi_id = |alg: &str| match alg {
        "recursive_doubling" => Some(3),
        "ring" => Some(4),
        "segmented_ring" => Some(5),
        "rabenseifner" => Some(6),
        _ => None,
    };
    let decisions = table["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), full["decisions"].as_array().unwrap().len());
    for (d, f) in decisions.iter().zip(full["decisions"].as_array().unwrap()) {
        let size = d["size_bytes"].as_u64().unwrap();
        let rule = rules.iter().rev().find(|r| r[0] <= size).unwrap();
        let id = ompi_id(d["choice"]["algorithm"].as_str().unwrap());
        assert_eq!(Some(rule[1]), id, "at {size} bytes");
        let best = f["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| ompi_id(c["algorithm"].as_str().unwrap()).is_some())
            .filter_map(|c| c["time_s"].as_f64())
            .fold(f64::INFINITY, f64::min);
        assert_eq!(d["predicted_s"].as_f64(), Some(best), "at {size} bytes");
        for c in d["candidates"].as_array().unwrap() {
            assert!(ompi_id(c["algorithm"].as_str().unwrap()).is_some(), "{c}");
        }
    }

    let j: Value = serde_json::from_str(&std::fs::read_to_string(&mpich).unwrap()).unwrap();
    let sizes =
        &j["collective=allreduce"]["comm_type=intra"]["comm_size<=16"]["is_op_built_in=yes"];
    let keys: Vec<&String> = sizes.as_object().unwrap().keys().collect();
    assert!(
        !keys.is_empty() && keys.iter().all(|k| k.starts_with("avg_msg_size")),
        "{keys:?}"
    );
    // Into a base file: its other collectives kept, in order, this one replaced.
    let base = cache.join("base.json");
    std::fs::write(
        &base,
        r#"{"collective=bcast": {"algorithm=MPIR_Bcast_intra_binomial": {}},
 "collective=allreduce": {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}},
 "collective=barrier": {"algorithm=MPIR_Barrier_intra_dissemination": {}}}"#,
    )
    .unwrap();
    let mut args = vec![
        "tune",
        "-t",
        "torus:4x4",
        "-c",
        "allreduce",
        "--sizes",
        "8B..16MiB",
        "--export-mpich",
        mpich.to_str().unwrap(),
        "--mpich-base",
        base.to_str().unwrap(),
    ];
    args.extend_from_slice(&MODEL);
    ok(&cache, &args);
    let text = std::fs::read_to_string(&mpich).unwrap();
    let merged: Value = serde_json::from_str(&text).unwrap();
    let leaf = |alg: &str| serde_json::json!({ format!("algorithm={alg}"): {} });
    assert_eq!(
        merged["collective=bcast"],
        leaf("MPIR_Bcast_intra_binomial")
    );
    assert_eq!(
        merged["collective=barrier"],
        leaf("MPIR_Barrier_intra_dissemination")
    );
    assert_eq!(merged["collective=allreduce"], j["collective=allreduce"]);
    let at: Vec<usize> = [
        "collective=bcast",
        "collective=allreduce",
        "collective=barrier",
    ]
    .iter()
    .map(|k| text.find(k).unwrap())
    .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn bad_tuning_input_is_one_line() {
    let cache = scratch("bad");
    for (args, says) in [
        (
            &["tune", "-c", "allreduce"][..],
            "give --topology, or --ranks",
        ),
        (
            &[
                "tune",
                "-t",
                "torus:4x4",
                "-c",
                "allreduce",
                "--size",
                "1KiB",
            ][..],
            "--size",
        ),
        (
            &[
                "tune",
                "-t",
                "torus:4x4",
                "-c",
                "allreduce",
                "--sizes",
                "1KiB",
                "--plot",
                "x.pdf",
            ][..],
            ".svg or .png",
        ),
        (
            &[
                "simulate",
                "-t",
                "torus:4x4",
                "-c",
                "allreduce",
                "-a",
                "auto",
                "--segment",
                "8KiB",
            ][..],
            "chooses the segment",
        ),
        (
            &[
                "tune",
                "--ranks",
                "4",
                "-c",
                "allreduce",
                "--sizes",
                "8B",
                "--overhead",
                "1e-6",
            ][..],
            "calibration",
        ),
    ] {
        let (code, _, err) = topocoll_cached(&cache, args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn calibration_is_kept_and_used() {
    let cache = scratch("calibrate");
    let out = ok(&cache, &["tune", "--calibrate", "--ranks", "2"]);
    assert!(
        out.contains("calibrated on the threads backend with 2 ranks"),
        "{out}"
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(cache.join("machine.json")).unwrap())
            .unwrap();
    // On 2 ranks overhead and latency are one: all of it is latency.
    assert_eq!(m["overhead_s"].as_f64(), Some(0.0));
    for f in [
        "latency_s",
        "pair_bandwidth",
        "node_bandwidth",
        "compute_bandwidth",
    ] {
        let x = m[f].as_f64().unwrap();
        assert!(x.is_finite() && x > 0.0, "{f} = {x}");
    }
    assert!(m["node_bandwidth"].as_f64() >= m["pair_bandwidth"].as_f64());
    let out = ok(
        &cache,
        &["tune", "--ranks", "2", "-c", "allreduce", "--sizes", "8B"],
    );
    assert!(
        out.contains("node model: calibrated on the threads backend"),
        "{out}"
    );
    // The calibration is the model: a prediction follows its latency.
    let table: Value = serde_json::from_str(&ok(
        &cache,
        &[
            "tune", "--ranks", "2", "-c", "bcast", "--sizes", "8B", "--format", "json",
        ],
    ))
    .unwrap();
    let t = table["decisions"][0]["predicted_s"].as_f64().unwrap();
    let l = m["latency_s"].as_f64().unwrap();
    assert!(
        t >= l && t < l + 1e-6,
        "one 8-byte message: {t} s against a latency of {l} s"
    );
}

#[test]
fn a_cache_that_cannot_be_written_is_a_warning() {
    let file = scratch("unwritable").join("a-file");
    std::fs::write(&file, "").unwrap();
    // A cache directory under a regular file cannot be created.
    let cache = file.join("cache");
    let (code, out, err) = topocoll_cached(
        &cache,
        &[
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "allreduce",
            "-a",
            "auto",
            "--size",
            "1KiB",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("auto:"), "{out}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("warning") && err.contains("not kept"), "{err}");
}

/// docs/tuning.md's tables of counterparts say what the registry says:
/// each library's table lists exactly the algorithms with a counterpart
/// there, with that counterpart, and the table of relatives left out names
/// only algorithms without one.
#[test]
fn the_mapping_tables_are_the_registry() {
    use topocoll::algorithms::ALGORITHMS;
    use topocoll::schedule::CollectiveKind;
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/tuning.md")).unwrap();
    let rows = |after: &str| -> Vec<Vec<String>> {
        doc.split(after)
            .nth(1)
            .unwrap_or_else(|| panic!("docs/tuning.md has {after}"))
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
            .collect()
    };
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(String::from)
            .collect()
    };
    let kinds = |cell: &str| -> Vec<CollectiveKind> {
        cell.split(", ")
            .map(|c| CollectiveKind::parse(c).unwrap())
            .collect()
    };
    // (collective, algorithm, the library's counterpart as the table says it)
    let mut ompi = Vec::new();
    for r in rows("### Open MPI (4.1)") {
        for k in kinds(&r[1]) {
            for a in ticked(&r[2]) {
                ompi.push((k, a, r[3].clone()));
            }
        }
    }
    let mut mpich = Vec::new();
    for r in rows("### MPICH (4.0)") {
        for (a, m) in ticked(&r[2]).into_iter().zip(ticked(&r[3])) {
            mpich.push((kinds(&r[1])[0], a, m));
        }
    }
    for alg in ALGORITHMS {
        let k = alg.collective;
        let in_ompi = ompi.iter().find(|(c, a, _)| *c == k && a == alg.name);
        match (&alg.mpi.ompi, in_ompi) {
            (Some(o), Some((_, _, cell))) => assert!(
                cell.contains(&format!("{} {}", o.id, o.name)),
                "{k} {}: {cell}",
                alg.name
            ),
            (None, None) => {}
            (o, t) => panic!("{k} {}: registry {o:?}, docs {t:?}", alg.name),
        }
        let in_mpich = mpich.iter().find(|(c, a, _)| *c == k && a == alg.name);
        match (alg.mpi.mpich, in_mpich) {
            (Some(m), Some((_, _, name))) => assert_eq!(m, name, "{k} {}", alg.name),
            (None, None) => {}
            (m, t) => panic!("{k} {}: registry {m:?}, docs {t:?}", alg.name),
        }
    }
    let left_out = rows("never chooses them:");
    assert!(left_out.len() >= 6);
    for r in left_out {
        let k = CollectiveKind::parse(&r[2]).unwrap();
        let name = &ticked(&r[3])[0];
        let alg = ALGORITHMS
            .iter()
            .find(|a| a.collective == k && a.name == name)
            .unwrap_or_else(|| panic!("{k} {name} is not registered"));
        let has = match r[1].as_str() {
            "Open MPI" => alg.mpi.ompi.is_some(),
            "MPICH" => alg.mpi.mpich.is_some(),
            other => panic!("library {other}"),
        };
        assert!(!has, "{k} {name} has a {} counterpart", r[1]);
    }
}

/// Rewrites the one cached table of `coll` (the full one) with `edit`.
fn edit_cached(cache: &Path, coll: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let file = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with(&format!("tune-{coll}-")) && n.ends_with(".json")
        })
        .expect("the table is cached");
    let mut t: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    edit(&mut t);
    std::fs::write(&file, t.to_string()).unwrap();
    file
}

#[test]
fn cached_decisions_this_build_would_not_make_are_priced_again() {
    let cache = scratch("refit");
    let tune = |sizes: &str| -> (Value, String) {
        let mut args = vec![
            "tune",
            "-t",
            "torus:4x4",
            "-c",
            "allreduce",
            "--sizes",
            sizes,
            "--format",
            "json",
        ];
        args.extend_from_slice(&MODEL);
        let (code, out, err) = topocoll_cached(&cache, &args);
        assert_eq!(code, 0, "{err}");
        (serde_json::from_str(&out).unwrap(), err)
    };
    let (first, err) = tune("1KiB,64KiB,1MiB");
    assert!(err.is_empty(), "{err}");
    // A choice this build refuses (rabenseifner does not pipeline), a
    // negative time: each priced again, said naming the file and field.
    let file = edit_cached(&cache, "allreduce", |t| {
        t["decisions"][1]["choice"] =
            serde_json::json!({"algorithm": "rabenseifner", "segment_bytes": 32768, "engines": 4});
        t["decisions"][2]["predicted_s"] = Value::from(-1.0);
    });
    let name = file.to_str().unwrap().to_string();
    let auto = |size: &str| -> (i32, String, String) {
        let mut a = vec![
            "simulate",
            "-t",
            "torus:4x4",
            "-c",
            "allreduce",
            "-a",
            "auto",
            "--size",
            size,
        ];
        a.extend_from_slice(&MODEL);
        topocoll_cached(&cache, &a)
    };
    let (code, out, err) = auto("64KiB");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("auto:"), "{out}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].contains(&name) && lines[0].contains("decisions[1].choice: rabenseifner/32KiB"),
        "{err}"
    );
    assert!(lines[1].contains("decisions[2].predicted_s: -1"), "{err}");
    // Priced again and kept: the same table as the first time, no warning.
    let (again, err) = tune("1KiB,64KiB,1MiB");
    assert!(err.is_empty(), "{err}");
    assert_eq!(again["decisions"], first["decisions"]);
    // Sizes out of order, another rank count: the whole table again.
    for (field, edit) in [
        (
            "decisions[1].size_bytes",
            (|t: &mut Value| t["decisions"].as_array_mut().unwrap().reverse()) as fn(&mut Value),
        ),
        ("ranks is 17", |t: &mut Value| t["ranks"] = Value::from(17)),
    ] {
        edit_cached(&cache, "allreduce", edit);
        let (t, err) = tune("1KiB");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(field) && err.contains(&name), "{err}");
        assert_eq!(t["decisions"][0], first["decisions"][0]);
    }
}

#[test]
fn a_bad_calibration_is_refused_naming_the_file_and_field() {
    let cache = scratch("badcal");
    let file = cache.join("machine.json");
    let good = serde_json::json!({
        "source": "test", "overhead_s": 1e-6, "latency_s": 1e-6,
        "pair_bandwidth": 5e9, "node_bandwidth": 1e10, "compute_bandwidth": 4e9
    });
    std::fs::write(&file, good.to_string()).unwrap();
    ok(
        &cache,
        &["tune", "--ranks", "4", "-c", "allreduce", "--sizes", "1KiB"],
    );
    for (field, value) in [
        ("latency_s", Value::from(-1.0)),
        ("pair_bandwidth", Value::from(0.0)),
        ("overhead_s", Value::from(1e300)),
        ("compute_bandwidth", Value::from("fast")),
    ] {
        let mut m = good.clone();
        m[field] = value;
        std::fs::write(&file, m.to_string()).unwrap();
        for args in [
            &["tune", "--ranks", "4", "-c", "allreduce", "--sizes", "1KiB"][..],
            &[
                "run",
                "--ranks",
                "4",
                "-c",
                "allreduce",
                "-a",
                "auto",
                "-s",
                "1KiB",
            ][..],
        ] {
            let (code, _, err) = topocoll_cached(&cache, args);
            assert_eq!(code, 2, "{field}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(
                err.contains(file.to_str().unwrap()) && err.contains(field),
                "{field}: {err}"
            );
            assert!(!err.contains("--node-latency"), "{err}");
        }
    }
}

/// `tune` and `--algorithm auto` price a v-collective with its `--counts`:
/// each candidate's time is `simulate`'s with the same counts (a
/// generator drawn at each size's mean block, or a file's, one row), the
/// choice the fastest; the counts change the table (its key and times);
/// auto follows it, and runs it checked.
#[test]
fn v_collectives_tune_with_their_counts() {
    let cache = scratch("vcounts");
    let topo = ["-t", "torus:2x2", "--ranks-per-node", "2"];
    let csv = cache.join("counts.csv");
    let rows: Vec<String> = (0..8)
        .map(|s| {
            (0..8)
                .map(|d| {
                    if d == 3 {
                        "4000"
                    } else if s == d {
                        "0"
                    } else {
                        "7"
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    std::fs::write(&csv, rows.join("\n")).unwrap();
    let csv = csv.to_str().unwrap();
    for (coll, counts, sizes) in [
        (
            "alltoallv",
            vec!["--counts", "hot:2", "--seed", "1"],
            Some("64,64KiB"),
        ),
        ("allgatherv", vec!["--counts", "zipf:1.5"], Some("64,64KiB")),
        ("alltoallv", vec!["--counts", csv], None),
    ] {
        let mut args = vec!["tune", "-c", coll, "--format", "json"];
        args.extend_from_slice(&topo);
        args.extend_from_slice(&counts);
        if let Some(s) = sizes {
            args.extend_from_slice(&["--sizes", s]);
        }
        args.extend_from_slice(&MODEL);
        let table: Value = serde_json::from_str(&ok(&cache, &args)).unwrap();
        let decisions = table["decisions"].as_array().unwrap();
        assert_eq!(decisions.len(), if sizes.is_some() { 2 } else { 1 });
        for d in decisions {
            let size = d["size_bytes"].as_u64().unwrap().to_string();
            let mut best = (f64::INFINITY, String::new());
            for c in d["candidates"].as_array().unwrap() {
                let Some(t) = c.get("time_s").and_then(Value::as_f64) else {
                    continue;
                };
                let alg = c["algorithm"].as_str().unwrap();
                let engines = c["engines"].to_string();
                let mut sim = vec!["simulate", "-c", coll, "-a", alg, "--engines", &engines];
                sim.extend_from_slice(&["--format", "json"]);
                sim.extend_from_slice(&topo);
                sim.extend_from_slice(&counts);
                if sizes.is_some() {
                    sim.extend_from_slice(&["--size", &size]);
                }
                sim.extend_from_slice(&MODEL);
                let v: Value = serde_json::from_str(&ok(&cache, &sim)).unwrap();
                let again = v["time_s"].as_f64().unwrap();
                assert!(
                    (t - again).abs() <= 1e-12 * t,
                    "{coll} {alg} {size}: {t} vs {again}"
                );
                if t < best.0 {
                    best = (t, alg.to_string());
                }
            }
            assert!(best.0.is_finite(), "{coll} {size}: nothing priced");
            assert_eq!(d["predicted_s"].as_f64().unwrap(), best.0);
            // --algorithm auto makes the table's choice.
            let mut auto = vec!["simulate", "-c", coll, "-a", "auto", "--format", "json"];
            auto.extend_from_slice(&topo);
            auto.extend_from_slice(&counts);
            if sizes.is_some() {
                auto.extend_from_slice(&["--size", &size]);
            }
            auto.extend_from_slice(&MODEL);
            let engines = d["choice"]["engines"].to_string();
            auto.extend_from_slice(&["--engines", &engines]);
            let v: Value = serde_json::from_str(&ok(&cache, &auto)).unwrap();
            assert_eq!(
                v["algorithm"].as_str().unwrap(),
                format!("auto:{}", d["choice"]["algorithm"].as_str().unwrap()),
                "{coll} {size}"
            );
        }
    }
    // The counts are part of the problem: without them the 64 B alltoallv
    // prices other blocks (every one 64 B) under another key.
    let plain = ok(
        &cache,
        &[
            "tune",
            "-c",
            "alltoallv",
            "-t",
            "torus:2x2",
            "--ranks-per-node",
            "2",
            "--sizes",
            "64KiB",
            "--format",
            "json",
            "--overhead",
            "1e-6",
            "--latency",
            "5e-7",
        ],
    );
    let plain: Value = serde_json::from_str(&plain).unwrap();
    let hot = ok(
        &cache,
        &[
            "tune",
            "-c",
            "alltoallv",
            "-t",
            "torus:2x2",
            "--ranks-per-node",
            "2",
            "--sizes",
            "64KiB",
            "--format",
            "json",
            "--overhead",
            "1e-6",
            "--latency",
            "5e-7",
            "--counts",
            "hot:2",
            "--seed",
            "1",
        ],
    );
    let hot: Value = serde_json::from_str(&hot).unwrap();
    assert_ne!(plain["key"], hot["key"]);
    assert_ne!(
        plain["decisions"][0]["predicted_s"],
        hot["decisions"][0]["predicted_s"]
    );
    // A file's counts are the same at every size: --sizes is refused.
    let (code, _, err) = topocoll_cached(
        &cache,
        &[
            "tune",
            "-c",
            "alltoallv",
            "-t",
            "torus:2x2",
            "--ranks-per-node",
            "2",
            "--counts",
            csv,
            "--sizes",
            "1KiB",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--sizes: the blocks are") && err.trim().lines().count() == 1,
        "{err}"
    );
    // On this machine's runtime, auto runs its choice with the counts, checked.
    let out = ok(
        &cache,
        &[
            "run",
            "--ranks",
            "4",
            "-c",
            "allgatherv",
            "-a",
            "auto",
            "--counts",
            "hot:1",
            "-s",
            "256",
            "--check",
        ],
    );
    assert!(out.contains("auto:") && out.contains("check:"), "{out}");
}

/// One bound on tune's work at a size: no pipelined candidate cuts the
/// message into more than `MAX_SEGMENTS` segments, every segment of
/// `SEGMENTS` is tried up to 8 MiB, and sizes up to 2^50 bytes take one
/// segment each past 2 GiB; a range reaching 2^50 bytes on 2 ranks is
/// priced in seconds.
#[test]
fn tune_bounds_its_work_at_every_size() {
    use topocoll::optimize::tune::{segments_at, MAX_SEGMENTS, SEGMENTS};
    for k in 0..=50 {
        let size = 1u64 << k;
        let segs = segments_at(size);
        assert!(!segs.is_empty());
        for seg in segs.iter().flatten() {
            assert!(size.div_ceil(*seg) <= MAX_SEGMENTS, "{size}: {seg}");
            assert!(*seg < size, "{size}: {seg}");
        }
        if size > SEGMENTS[0] && size <= 8 << 20 {
            let all: Vec<u64> = SEGMENTS.iter().copied().filter(|&s| s < size).collect();
            assert_eq!(
                segs,
                all.into_iter().map(Some).collect::<Vec<_>>(),
                "{size}"
            );
        }
        if size > 2 << 30 {
            assert_eq!(segs.len(), 1, "{size}");
        }
    }
    let cache = scratch("bound");
    let started = std::time::Instant::now();
    let out = ok(
        &cache,
        &[
            "tune",
            "-t",
            "mesh:2",
            "-c",
            "bcast",
            "--sizes",
            "4GiB,1TiB,1125899906842624",
            "--format",
            "json",
        ],
    );
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    let table: Value = serde_json::from_str(&out).unwrap();
    let decisions = table["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 3);
    for d in decisions {
        let size = d["size_bytes"].as_u64().unwrap();
        // The bandwidth's time at least (1 GB/s, one link).
        assert!(
            d["predicted_s"].as_f64().unwrap() >= size as f64 / 1e9,
            "{d}"
        );
        for c in d["candidates"].as_array().unwrap() {
            if let Some(seg) = c["segment_bytes"].as_u64() {
                assert!(size.div_ceil(seg) <= MAX_SEGMENTS, "{c}");
            }
        }
    }
    let started = std::time::Instant::now();
    ok(
        &cache,
        &[
            "tune",
            "-t",
            "mesh:2",
            "-c",
            "bcast",
            "--sizes",
            "8B..1125899906842624",
            "--no-cache",
        ],
    );
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    std::fs::remove_dir_all(&cache).ok();
}

/// `--algorithm auto`'s search (`Search::Winner`: fewest operations first,
/// each run stopped once it passes the best so far, only a new best
/// verified) makes the choice of `tune`'s full search, at the same time to
/// the bit, at every size on several networks and collectives, and stops
/// some runs early.
#[test]
fn the_winner_search_makes_the_full_searchs_choice() {
    use topocoll::optimize::tune::{Problem, Search};
    use topocoll::schedule::{Collective, Dtype, ReduceOp};
    use topocoll::sim::SimConfig;
    use topocoll::topology::parse_spec;
    let mut stopped = 0;
    for (spec, collective) in [
        ("torus:4x4", Collective::Allreduce),
        ("torus:4x4", Collective::Alltoall),
        ("fattree:4", Collective::Bcast { root: 3 }),
        ("mesh:3x5", Collective::ReduceScatter),
        ("hypercube:4", Collective::Allgather),
        ("dragonfly:2,2,1,3", Collective::Reduce { root: 0 }),
    ] {
        let topo = parse_spec(spec).unwrap();
        let problem = |search| Problem {
            collective,
            dtype: Dtype::F64,
            op: ReduceOp::Sum,
            topology: &topo,
            config: SimConfig {
                overhead_s: 1e-6,
                ..SimConfig::default()
            },
            engines: vec![1, 4],
            library: None,
            counts: None,
            search,
        };
        let (every, winner) = (problem(Search::Every), problem(Search::Winner));
        for size in [8u64, 4096, 1 << 20] {
            let full = every.decide(size, |_| {}).unwrap();
            let fast = winner.decide(size, |_| {}).unwrap();
            let at = format!("{spec} {} {size}", collective.name());
            assert_eq!(full.choice, fast.choice, "{at}");
            assert_eq!(
                full.predicted_s.to_bits(),
                fast.predicted_s.to_bits(),
                "{at}"
            );
            assert_eq!(full.candidates.len(), fast.candidates.len(), "{at}");
            for (f, w) in full.candidates.iter().zip(&fast.candidates) {
                assert_eq!(f.candidate, w.candidate, "{at}");
                match (w.time_s, w.slower_than_s) {
                    (Some(t), None) => assert_eq!(f.time_s, Some(t), "{at}"),
                    (None, Some(best)) => {
                        stopped += 1;
                        assert!(f.time_s.is_none_or(|t| t > best), "{at}: {f:?}");
                    }
                    _ => assert_eq!(f.skipped, w.skipped, "{at}"),
                }
            }
        }
    }
    assert!(stopped > 20, "{stopped} runs stopped early");
}
