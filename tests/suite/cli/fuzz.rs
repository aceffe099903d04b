//! Seeded, bounded fuzzing of every input format: mutated topology files
//! (TOML and SimGrid XML), schedule files (JSON and MSCCL XML), traces
//! (GOAL, Chakra) and command lines; what reads is verified and simulated. Nothing may panic or hang;
//! every refusal is one line.

use crate::common::child;

use std::panic::{catch_unwind, AssertUnwindSafe};
use topocoll::algorithms::Request;
use topocoll::schedule::{self, Collective, Dtype, ReduceOp};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::{parse_spec, parse_toml};

/// The suite's seeded generator: the same mutations on every run.
use topocoll_testkit::Rng;

const PIECES: &[&str] = &[
    "0",
    "-1",
    "1e309",
    "NaN",
    "inf",
    "4294967296",
    "18446744073709551615",
    "\"\"",
    "[]",
    "{}",
    "null",
    "true",
    ",",
    "\"x\"",
    "99999999999999999999",
    "0.5",
    "-0",
    "\"root\"",
    "\n",
    "=",
];

/// One mutation: replace a number or a byte, delete a run, or splice a piece in.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut b: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.index(3) {
        let at = rng.index(b.len().max(1));
        match rng.index(4) {
            0 => {
                // Replace the number under `at`, if any, with a piece.
                let (mut lo, mut hi) = (at, at);
                while lo > 0 && (b[lo - 1].is_ascii_digit() || b[lo - 1] == '.') {
                    lo -= 1;
                }
                while hi < b.len() && (b[hi].is_ascii_digit() || b[hi] == '.') {
                    hi += 1;
                }
                let piece: Vec<char> = PIECES[rng.index(PIECES.len())].chars().collect();
                b.splice(lo..hi, piece);
            }
            1 => {
                let end = (at + 1 + rng.index(8)).min(b.len());
                b.drain(at..end);
            }
            2 => {
                let piece: Vec<char> = PIECES[rng.index(PIECES.len())].chars().collect();
                b.splice(at..at, piece);
            }
            _ => {
                if at < b.len() {
                    b[at] = (b' ' + (rng.next_u64() % 95) as u8) as char;
                }
            }
        }
    }
    b.into_iter().collect()
}

/// Numbers only: each of a few numbers becomes another (small, off by one,
/// huge), so that the text still parses and the reader's checks are what
/// stands between it and the engines.
fn mutate_numbers(text: &str, rng: &mut Rng) -> String {
    let mut b: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.index(2) {
        let starts: Vec<usize> = (0..b.len())
            .filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit()))
            .collect();
        if starts.is_empty() {
            break;
        }
        let lo = starts[rng.index(starts.len())];
        let mut hi = lo;
        while hi < b.len() && b[hi].is_ascii_digit() {
            hi += 1;
        }
        let old: u64 = b[lo..hi].iter().collect::<String>().parse().unwrap_or(0);
        let new = match rng.index(6) {
            0 => 0,
            1 => old + 1,
            2 => old.saturating_sub(1),
            3 => rng.index(10) as u64,
            4 => 1 << (rng.index(64)),
            _ => u64::MAX,
        };
        b.splice(lo..hi, new.to_string().chars());
    }
    b.into_iter().collect()
}

fn one_line(e: &str, what: &str) {
    assert!(
        !e.trim_end().contains('\n'),
        "{what}: a refusal of several lines: {e}"
    );
}

/// How a campaign mutates its texts.
#[derive(Clone, Copy, PartialEq)]
enum Mutations {
    /// A number or byte replaced, a run deleted, a piece spliced in.
    Anything,
    /// That one round in three; numbers only the other two.
    MostlyNumbers,
}

/// Feeds `rounds` mutations of `bases`, in turn, to `read`, which returns
/// `Ok` when it read the text (and has judged what it read) or the refusal.
/// Nothing may panic, every refusal is one line, and more than `least`
/// texts must be read and more than `least` refused.
fn campaign(
    what: &str,
    bases: &[String],
    seed: u64,
    rounds: usize,
    how: Mutations,
    least: usize,
    read: impl Fn(&str) -> Result<(), String>,
) {
    let mut rng = Rng::new(seed);
    let (mut read_ok, mut refused) = (0, 0);
    for round in 0..rounds {
        let base = &bases[round % bases.len()];
        let text = if how == Mutations::Anything || round % 3 == 0 {
            mutate(base, &mut rng)
        } else {
            mutate_numbers(base, &mut rng)
        };
        match catch_unwind(AssertUnwindSafe(|| read(&text))) {
            Ok(Ok(())) => read_ok += 1,
            Ok(Err(e)) => {
                one_line(&e, &text);
                refused += 1;
            }
            Err(_) => panic!("panic on {what}:\n{text}"),
        }
    }
    assert!(
        read_ok > least && refused > least,
        "read {read_ok}, refused {refused}"
    );
}

/// A schedule that read: the verifier judges it, and the simulator runs it
/// on `topo` whatever the verdict (as `--no-verify` does), to a time or a
/// one-line error.
fn judge(s: &schedule::Schedule, topo: &topocoll::topology::Topology, text: &str) {
    if let Err(e) = schedule::verify(s) {
        one_line(&e.to_string(), text);
    }
    if s.ranks == topo.num_ranks() {
        if let Err(e) = simulate(s, topo, &SimConfig::default()) {
            one_line(&e.to_string(), text);
        }
    }
}

#[test]
fn mutated_topology_files_never_panic() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    files.sort();
    campaign(
        "topology file",
        &files,
        0x5eed_7001,
        1500,
        Mutations::Anything,
        50,
        |text| {
            let t = parse_toml("fuzz.toml", text).map_err(|e| e.to_string())?;
            if t.num_ranks() <= 64 {
                // A topology that reads prices a broadcast without an error.
                let req = Request::new(
                    Collective::Bcast { root: 0 },
                    t.num_ranks(),
                    4096,
                    Dtype::U8,
                    ReduceOp::Sum,
                    Some(&t),
                )
                .unwrap();
                let s = topocoll::algorithms::build(
                    &topocoll::algorithms::bcast::binomial::ALGORITHM,
                    &req,
                )
                .unwrap();
                simulate(&s, &t, &SimConfig::default()).map(|_| ()).unwrap();
            }
            Ok(())
        },
    );
}

#[test]
fn mutated_schedule_files_never_panic() {
    let topo = parse_spec("torus:2x2").unwrap();
    let bases: Vec<String> = [
        ("alltoall", "linear", Dtype::U8),
        ("allreduce", "recursive_doubling", Dtype::F64),
        ("bcast", "binomial", Dtype::U8),
    ]
    .iter()
    .map(|(c, a, d)| {
        let coll = Collective::parse(c, 1).unwrap();
        let req = Request::new(coll, 4, 8 * d.size(), *d, ReduceOp::Sum, Some(&topo)).unwrap();
        let s = topocoll::algorithms::build(
            topocoll::algorithms::find(req.collective.kind(), a).unwrap(),
            &req,
        )
        .unwrap();
        let mut out = Vec::new();
        schedule::to_json(&s, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    })
    .collect();
    campaign(
        "schedule file",
        &bases,
        0x5eed_7002,
        3000,
        Mutations::MostlyNumbers,
        100,
        |text| {
            let s = schedule::from_json(text).map_err(|e| e.to_string())?;
            judge(&s, &topo, text);
            Ok(())
        },
    );
}

#[test]
fn mutated_msccl_files_never_panic() {
    let topo = parse_spec("torus:4").unwrap();
    // The hand-written files, and the real ones of tests/data/msccl under
    // 50 kB (RCCL's, msccl-scheduler's, msccl-tools' output: nops with
    // offsets -1, in-place allgathers, out-of-place reductions).
    let root = env!("CARGO_MANIFEST_DIR");
    let mut bases: Vec<String> = [
        "tests/msccl",
        "tests/data/msccl/rccl",
        "tests/data/msccl/msccl-scheduler",
        "tests/data/msccl/msccl-tools",
    ]
    .iter()
    .flat_map(|d| std::fs::read_dir(format!("{root}/{d}")).unwrap())
    .map(|f| f.unwrap().path())
    .filter(|p| p.extension().is_some_and(|e| e == "xml"))
    .filter(|p| std::fs::metadata(p).unwrap().len() < 50_000)
    .map(|p| std::fs::read_to_string(p).unwrap())
    .collect();
    bases.sort();
    assert!(bases.len() > 15, "{} bases", bases.len());
    for (c, a) in [("allreduce", "recursive_doubling"), ("alltoall", "bruck")] {
        let coll = Collective::parse(c, 0).unwrap();
        let req = Request::new(coll, 4, 64, Dtype::F64, ReduceOp::Sum, Some(&topo)).unwrap();
        let s = topocoll::algorithms::build(
            topocoll::algorithms::find(req.collective.kind(), a).unwrap(),
            &req,
        )
        .unwrap();
        let mut out = Vec::new();
        schedule::to_msccl_xml(&s, &mut out).unwrap();
        bases.push(String::from_utf8(out).unwrap());
    }
    let how = schedule::MscclImport {
        count: None,
        dtype: Dtype::F64,
        op: ReduceOp::Sum,
    };
    campaign(
        "MSCCL file",
        &bases,
        0x5eed_7003,
        4000,
        Mutations::MostlyNumbers,
        100,
        |text| {
            let s = schedule::from_msccl_xml(text, &how).map_err(|e| e.to_string())?;
            if s.ranks == topo.num_ranks() {
                judge(&s, &topo, text);
            } else if s.ranks <= 16 {
                judge(
                    &s,
                    &parse_spec(&format!("torus:{}", s.ranks)).unwrap(),
                    text,
                );
            }
            Ok(())
        },
    );
}

#[test]
fn mutated_simgrid_platforms_never_panic() {
    let cluster = |topology: &str, params: &str, n: usize| {
        format!(
            r#"<?xml version='1.0'?>
<platform version="4.1"><zone id="w" routing="Full">
<cluster id="c" topology="{topology}" topo_parameters="{params}" prefix="node-" radical="0-{}" suffix=""
 speed="1Gf" bw="1e9Bps" lat="1e-06s" sharing_policy="SPLITDUPLEX"/></zone></platform>"#,
            n - 1
        )
    };
    let explicit = r#"<platform version="4.1"><zone id="z" routing="Full">
<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/><router id="r"/>
<link id="la" bandwidth="125MBps" latency="50us" sharing_policy="SPLITDUPLEX"/>
<link id="lb" bandwidth="125MBps" latency="50us"/>
<link id="lc" bandwidth="1GBps" latency="5us"/>
<route src="a" dst="b"><link_ctn id="la" direction="UP"/><link_ctn id="lb"/></route>
<route src="a" dst="c"><link_ctn id="la" direction="UP"/><link_ctn id="lc"/></route>
<route src="b" dst="c" symmetrical="NO"><link_ctn id="lb"/><link_ctn id="lc"/></route>
<route src="c" dst="b"><link_ctn id="lc"/></route>
</zone></platform>"#;
    // Zones of every routing, zone and bypass routes, backbones, limiters
    // and FATPIPE links (SimGrid's platform language beyond one zone).
    let zones = r#"<platform version="4.1"><zone id="w" routing="Full">
<cluster id="c1" prefix="a" suffix="" radical="0-3" speed="1Gf" bw="125MBps" lat="50us" bb_bw="2GBps" bb_lat="5us" limiter_link="100MBps"/>
<zone id="c2" routing="Cluster"><router id="r2"/><host id="h1" speed="1f"/><link id="l1" bandwidth="1GBps" latency="0"/>
<host_link id="h1" up="l1" down="l1"/><backbone id="bb" bandwidth="2GBps" latency="1us"/></zone>
<zone id="f" routing="Floyd"><host id="x" speed="1f"/><host id="y" speed="1f"/><router id="m"/>
<link id="xm" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/><link id="my" bandwidth="1GBps" sharing_policy="FATPIPE"/>
<route src="x" dst="m"><link_ctn id="xm" direction="UP"/></route><route src="m" dst="y"><link_ctn id="my"/></route></zone>
<link id="w1" bandwidth="10GBps" latency="1ms" sharing_policy="FATPIPE"/><link id="w2" bandwidth="1GBps" latency="2ms"/>
<zoneRoute src="c1" dst="c2" gw_src="ac1_router" gw_dst="r2"><link_ctn id="w1"/></zoneRoute>
<zoneRoute src="c1" dst="f" gw_src="ac1_router" gw_dst="m"><link_ctn id="w2"/></zoneRoute>
<zoneRoute src="c2" dst="f" gw_src="r2" gw_dst="m"><link_ctn id="w1"/><link_ctn id="w2"/></zoneRoute>
<bypassZoneRoute src="c1" dst="c2" gw_src="ac1_router" gw_dst="r2"><link_ctn id="w2"/></bypassZoneRoute>
</zone></platform>"#;
    let bases = [
        zones.to_string(),
        cluster("TORUS", "4,4", 16),
        cluster("FAT_TREE", "2;4,4;1,2;1,2", 16),
        cluster("DRAGONFLY", "2,1;2,2;2,1;2", 16),
        explicit.to_string(),
    ];
    campaign(
        "SimGrid platform",
        &bases,
        0x5eed_7004,
        1500,
        Mutations::MostlyNumbers,
        50,
        |text| {
            let t =
                topocoll::topology::parse_platform("fuzz.xml", text).map_err(|e| e.to_string())?;
            if t.num_ranks() <= 64 {
                let n = t.num_ranks();
                let req = Request::new(
                    Collective::Alltoall,
                    n,
                    64,
                    Dtype::U8,
                    ReduceOp::Sum,
                    Some(&t),
                )
                .unwrap();
                let s = topocoll::algorithms::build(
                    &topocoll::algorithms::alltoall::linear::ALGORITHM,
                    &req,
                )
                .unwrap();
                if let Err(e) = simulate(&s, &t, &SimConfig::default()) {
                    one_line(&e.to_string(), text);
                }
            }
            Ok(())
        },
    );
}

#[test]
fn mutated_tree_files_never_panic() {
    use topocoll::optimize::treebcast::{self, Limits, Options, Problem};
    let bases: Vec<String> = ["dual-cpu-cluster.toml", "unequal-clusters.toml"]
        .iter()
        .map(|f| {
            std::fs::read_to_string(format!("{}/examples/{f}", env!("CARGO_MANIFEST_DIR"))).unwrap()
        })
        .collect();
    campaign(
        "tree file",
        &bases,
        0x5eed_7006,
        600,
        Mutations::MostlyNumbers,
        30,
        |text| {
            let t = parse_toml("fuzz.toml", text).map_err(|e| e.to_string())?;
            if t.num_ranks() > 24 {
                return Ok(());
            }
            // What optimize does with a tree that reads: its tables within a
            // budget, a bounded solve, the schedule verified.
            let limits = Limits {
                deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(5)),
                memory_bytes: Some(1 << 30),
            };
            let p = Problem::within(&t, &[0], 4096, &limits).map_err(|e| e.to_string())?;
            let opts = Options {
                time_limit_s: 0.2,
                ..Options::default()
            };
            let sol = treebcast::solve(&p, &opts);
            assert!(
                sol.time_s.is_finite() && sol.time_s >= 0.0,
                "{}",
                sol.time_s
            );
            schedule::verify(&treebcast::to_schedule(&p, &sol)).unwrap();
            Ok(())
        },
    );
}

#[test]
fn mutated_tune_caches_and_calibrations_never_panic() {
    use topocoll::optimize::machine::Machine;
    use topocoll::optimize::tune::{Cache, Problem, Search};
    let dir = std::env::temp_dir().join(format!("topocoll-fuzz-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = Cache { dir: dir.clone() };
    let topo = parse_spec("torus:2x2").unwrap();
    let problem = Problem {
        collective: Collective::Allreduce,
        dtype: Dtype::F64,
        op: ReduceOp::Sum,
        topology: &topo,
        config: SimConfig::default(),
        engines: vec![2, 4],
        library: None,
        counts: None,
        search: Search::Every,
    };
    let sizes = [1024, 65536];
    problem.tune(&sizes, Some(&cache), |_| {}).unwrap();
    let file = cache.path("allreduce", &problem.key());
    let base = std::fs::read_to_string(&file).unwrap();
    // Whatever the file says, tune answers with a table this build would
    // make: sizes increasing, every choice a candidate with a finite time.
    campaign(
        "tune cache",
        &[base],
        0x5eed_7007,
        400,
        Mutations::MostlyNumbers,
        30,
        |text| {
            std::fs::write(&file, text).unwrap();
            let (t, notes) = problem.tune(&sizes, Some(&cache), |_| {}).unwrap();
            for &size in &sizes {
                let d = t.get(size).expect("every size decided");
                assert!(problem.candidates(size).contains(&d.choice), "{text}");
                assert!(d.predicted_s.is_finite() && d.predicted_s >= 0.0, "{text}");
            }
            assert!(t
                .decisions
                .windows(2)
                .all(|w| w[0].size_bytes < w[1].size_bytes));
            match notes.repriced.first() {
                None => Ok(()),
                Some(why) => Err(why.clone()),
            }
        },
    );
    let machine = serde_json::to_string_pretty(&Machine::typical()).unwrap();
    campaign(
        "calibration",
        &[machine],
        0x5eed_7008,
        400,
        Mutations::MostlyNumbers,
        30,
        |text| {
            std::fs::write(dir.join("machine.json"), text).unwrap();
            let m = Machine::load(Some(&dir)).map_err(|e| e.to_string())?;
            assert!(m.check().is_ok());
            // A calibration that loads prices a table.
            let topo = m.topology(3).unwrap();
            let p = Problem {
                collective: Collective::Allreduce,
                dtype: Dtype::F64,
                op: ReduceOp::Sum,
                topology: &topo,
                config: m.config(true),
                engines: vec![2],
                library: None,
                counts: None,
                search: Search::Every,
            };
            p.tune(&[4096], None, |_| {}).unwrap();
            Ok(())
        },
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Runs the binary with `args`, killing it after `limit`: (exit code, stderr),
/// or `None` when it did not finish in time.
fn run_bounded(args: &[String], limit: std::time::Duration) -> Option<(i32, String)> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_topocoll"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let err = child::read_stderr(&mut child);
            // A signal (an abort, a kill) has no code: -1.
            return Some((status.code().unwrap_or(-1), err));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

#[test]
fn mutated_command_lines_never_panic_or_hang() {
    let bases: Vec<Vec<&str>> = [
        "simulate -t torus:4x4 -c alltoall -a linear -s 1KiB --engines 2",
        "simulate -t torus:3x3 -c allreduce -a ring,rabenseifner -s 1KiB,8KiB --overhead 1e-6",
        "verify --ranks 6 -c bcast -a binomial --root 2 -s 100",
        "schedule --ranks 4 -c allgather -a ring -s 64 --format goal",
        "run --ranks 4 -c allreduce -a ring -s 4KiB --check --iterations 2",
        "bench --ranks 3 -c alltoall -a linear --sizes 8B..1KiB --iterations 1",
        "simulate -t torus:2x2 --ranks-per-node 2 --map cyclic -c gather -a binomial -s 1KiB",
        "model trinaryx3",
        "optimize -t torus:3x3 -c allgather -s 4KiB --engines 2 --time-limit 5",
    ]
    .iter()
    .map(|line| line.split_whitespace().collect())
    .collect();
    // An empty value among the odd ones: a flag given "".
    let values: Vec<&str> = "-1 0 1 3 nan inf -inf 1e309 99999999999999999999 abc 1KiB 64kib \
                             0x10 1,2 torus:0x4 mesh:2x2 - -- 1e-300 2.5 1TiB 65537"
        .split_whitespace()
        .chain([""])
        .collect();
    let mut rng = Rng::new(0x5eed_7005);
    let limit = std::time::Duration::from_secs(30);
    let (mut ok, mut refused) = (0, 0);
    for round in 0..300 {
        let mut args: Vec<String> = bases[round % bases.len()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        // Mostly a value replaced (what the program's own checks must
        // catch); sometimes a word dropped, doubled or an unknown flag.
        let values_at: Vec<usize> = (1..args.len())
            .filter(|&i| !args[i].starts_with('-'))
            .collect();
        match rng.index(8) {
            0 => {
                let i = 1 + rng.index(args.len() - 1);
                args.remove(i);
            }
            1 => {
                let i = 1 + rng.index(args.len() - 1);
                let dup = args[i].clone();
                args.insert(i, dup);
            }
            2 => {
                let i = 1 + rng.index(args.len() - 1);
                args.insert(i, format!("--{}", values[rng.index(values.len())]));
            }
            _ if !values_at.is_empty() => {
                let i = values_at[rng.index(values_at.len())];
                args[i] = values[rng.index(values.len())].to_string();
            }
            _ => {}
        }
        let Some((code, err)) = run_bounded(&args, limit) else {
            panic!("no answer within {limit:?}: topocoll {}", args.join(" "));
        };
        assert!(
            [0, 1, 2].contains(&code) && !err.contains("panicked"),
            "exit {code} for topocoll {}: {err}",
            args.join(" ")
        );
        if code != 0 {
            one_line(&err, &args.join(" "));
            assert!(
                err.starts_with("topocoll: "),
                "topocoll {}: {err}",
                args.join(" ")
            );
            refused += 1;
        } else {
            ok += 1;
        }
    }
    assert!(ok > 10 && refused > 100, "ran {ok}, refused {refused}");
}

/// `list --links` on every SimGrid platform of SimGrid's examples: each it
/// reads lists every link, one line each, those routed host by host (whose
/// links join no nodes) too; each it refuses is one line.
#[test]
fn list_links_lists_every_platform_it_reads() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/simgrid-platforms");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    let mut listed = 0;
    for path in &files {
        let path = path.to_str().unwrap();
        let (code, out, err) = crate::common::topocoll(&["list", "--links", "-t", path]);
        assert!(
            !err.contains("panicked") && (code == 0 || code == 2),
            "{path}: exit {code}: {err}"
        );
        if code == 2 {
            one_line(&err, path);
            continue;
        }
        let t = topocoll::topology::parse_spec(path).unwrap();
        // A header, the columns, a line a link.
        assert_eq!(out.lines().count(), 2 + t.links.len(), "{path}: {out}");
        listed += 1;
    }
    for routed in ["small_platform.xml", "two_hosts.xml", "bypassRoute.xml"] {
        let (code, out, err) =
            crate::common::topocoll(&["list", "--links", "-t", &format!("{dir}/{routed}")]);
        assert_eq!(code, 0, "{routed}: {err}");
        assert!(out.contains("its links join no nodes"), "{routed}: {out}");
        assert!(
            out.lines().skip(2).all(|l| l.contains(" by routes ")),
            "{routed}: {out}"
        );
    }
    assert!(listed >= 30, "{listed} platforms listed");
}

/// GOAL text, LogGOPSim's examples and a schedule topocoll wrote, mutated:
/// what reads is replayed to a time or a one-line error.
#[test]
fn mutated_goal_schedules_never_panic() {
    use topocoll::workload::goal;
    let topo = parse_spec("torus:4x4").unwrap();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/goal");
    let mut bases: Vec<String> = ["binary_tree_16.goal", "dissemination_16.goal"]
        .iter()
        .map(|f| std::fs::read_to_string(format!("{dir}/{f}")).unwrap())
        .collect();
    let req = Request::new(
        Collective::Allreduce,
        16,
        4096,
        Dtype::U8,
        ReduceOp::Sum,
        None,
    )
    .unwrap();
    let mut out = Vec::new();
    schedule::to_goal(
        &topocoll::algorithms::build(&topocoll::algorithms::allreduce::ring::ALGORITHM, &req)
            .unwrap(),
        Some(1e9),
        &mut out,
    )
    .unwrap();
    bases.push(String::from_utf8(out).unwrap());
    campaign(
        "GOAL schedule",
        &bases,
        0x5eed_7009,
        1500,
        Mutations::MostlyNumbers,
        50,
        |text| {
            let s = goal::parse("t.goal", text).map_err(|e| e.to_string())?;
            if s.ranks == topo.num_ranks() {
                if let Err(e) = goal::replay(&s, &topo, &SimConfig::default()) {
                    one_line(&e.to_string(), text);
                }
            }
            Ok(())
        },
    );
}

/// Chakra traces, written here and ASTRA-sim's, with bytes replaced,
/// deleted or spliced in: what reads is replayed to a time or a one-line
/// error.
#[test]
fn mutated_chakra_traces_never_panic() {
    use topocoll::workload::chakra::encode;
    use topocoll::workload::chakra::et_def::{attribute_proto::Value, AttributeProto};
    use topocoll::workload::chakra::et_def::{GlobalMetadata, Node, NodeType};
    use topocoll::workload::{read, replay_trace, Choice, Semantics};
    let attr = |name: &str, v| AttributeProto {
        name: name.into(),
        value: Some(Value::Int64Val(v)),
        ..Default::default()
    };
    let file = |nodes: Vec<Node>| encode(&GlobalMetadata::default(), &nodes);
    let node = |id, t: NodeType, deps: Vec<u64>, a: Vec<AttributeProto>| Node {
        id,
        r#type: t as i32,
        data_deps: deps,
        duration_micros: 3,
        attr: a,
        ..Default::default()
    };
    let mine = [0i64, 1].map(|r| {
        file(vec![
            node(0, NodeType::CompNode, vec![], vec![attr("num_ops", 1000)]),
            node(
                1,
                NodeType::CommSendNode,
                vec![0],
                vec![attr("comm_dst", 1 - r), attr("comm_size", 100)],
            ),
            node(
                2,
                NodeType::CommRecvNode,
                vec![0],
                vec![attr("comm_src", 1 - r), attr("comm_size", 100)],
            ),
            node(
                3,
                NodeType::CommCollNode,
                vec![1, 2],
                vec![attr("comm_type", 0), attr("comm_size", 64)],
            ),
        ])
    });
    let astra = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/chakra/all_gather_4npus_1MB/all_gather"
    );
    let theirs = [0, 1].map(|r| std::fs::read(format!("{astra}.{r}.et")).unwrap());
    let dir = std::env::temp_dir().join(format!("topocoll-fuzz-chakra-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let topo = parse_spec("mesh:2").unwrap();
    let sem = Semantics {
        flops: Some(1e9),
        ..Semantics::default()
    };
    let mut rng = Rng::new(0x5eed_700a);
    let (mut read_ok, mut refused) = (0, 0);
    for round in 0..1500 {
        let mut files = if round % 2 == 0 {
            mine.clone()
        } else {
            theirs.clone()
        };
        let b = &mut files[rng.index(2)];
        for _ in 0..1 + rng.index(3) {
            let at = rng.index(b.len().max(1));
            match rng.index(3) {
                0 if at < b.len() => b[at] = rng.next_u64() as u8,
                1 => {
                    let end = (at + 1 + rng.index(4)).min(b.len());
                    b.drain(at.min(end)..end);
                }
                _ => {
                    let at = at.min(b.len());
                    b.insert(at, rng.next_u64() as u8);
                }
            }
        }
        for (r, bytes) in files.iter().enumerate() {
            std::fs::write(dir.join(format!("t.{r}.et")), bytes).unwrap();
        }
        let prefix = dir.join("t");
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            read(&prefix).and_then(|t| {
                replay_trace(&t, &topo, &Choice::default(), &sem, &SimConfig::default())
            })
        }));
        match outcome {
            Ok(Ok(_)) => read_ok += 1,
            Ok(Err(e)) => {
                one_line(&e.to_string(), &format!("{files:?}"));
                refused += 1;
            }
            Err(_) => panic!("panic on a Chakra trace: {files:?}"),
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    // Most changed bytes break the protobuf framing: few files still read.
    assert!(
        read_ok > 20 && refused > 50,
        "read {read_ok}, refused {refused}"
    );
}
