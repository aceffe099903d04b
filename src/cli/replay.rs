//! `topocoll replay`: price an application's trace on a network.

use super::args::{BuildArgs, DriverArgs, Given, NodeModelArgs, OutputFile};
use crate::sim::SimConfig;
use crate::units::parse_bytes;
use crate::workload::{self, Choice, Semantics};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::Path;
use topocoll_base::Error;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace: SimGrid's (the index `smpirun -trace-ti` writes, a file
    /// name per rank or one shared file, or a trace file itself), a
    /// LogGOPSim GOAL schedule (`num_ranks N` first), or a Chakra execution
    /// trace (its rank files `P.R.et`, named by P or by any one of them).
    pub trace: String,
    #[command(flatten)]
    pub build: BuildArgs,
    /// Transfers each node drives at once [default: no limit, as SMPI's
    /// ranks, whose blocking sends are one at a time by the calls' own order].
    #[arg(long)]
    pub engines: Option<usize>,
    #[command(flatten)]
    pub node: NodeModelArgs,
    /// Latency of every link, seconds (overrides the topology's).
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub latency: Option<f64>,
    /// Every host's speed for the trace's compute actions: flops per second,
    /// as a number or as SimGrid writes it (1Gf, 100Mf).
    #[arg(long)]
    pub flops: Option<String>,
    /// A blocking send of fewer bytes returns at once; from it on, when its
    /// message has arrived [default: 64KiB, SMPI's].
    #[arg(long)]
    pub eager_threshold: Option<String>,
    /// SimGrid's options: those that choose collective algorithms,
    /// `--cfg=smpi/allreduce:lr` (SimGrid's names); with `--simgrid`, its
    /// network options (`network/model:CM02`, `network/crosstraffic:0`,
    /// `smpi/bw-factor:0:1`, ...); `smpi/send-is-detached-thresh`.
    #[arg(long = "cfg", value_name = "KEY:VALUE")]
    pub cfg: Vec<String>,
    /// A Chakra trace's communicator groups, as ASTRA-sim's
    /// `--comm-group-configuration` file: `{"1": [0, 1], "2": [2, 3]}`; a
    /// collective node's `pg_name` names its group.
    #[arg(long, value_name = "FILE")]
    pub comm_groups: Option<String>,
    /// What if: price the whole workload once for each algorithm of one
    /// collective, `allreduce=ring,rabenseifner,recursive_doubling`, and
    /// print them side by side.
    #[arg(long, value_name = "COLLECTIVE=A,B,...")]
    pub compare: Option<String>,
    /// Where the time went: each rank's compute, communication and waiting,
    /// each distinct call's time and its collective's bound (in the text and
    /// JSON reports; the CSV report is this table).
    #[arg(long)]
    pub breakdown: bool,
    /// Write the replay as a Chrome trace JSON (Perfetto, chrome://tracing)
    /// here: each rank's operations and each link's load, as `simulate
    /// --trace` writes them.
    #[arg(long = "trace", value_name = "FILE")]
    pub perfetto: Option<String>,
    /// text, json or csv.
    #[arg(long, value_enum, default_value_t = ReplayFormat::Text)]
    pub format: ReplayFormat,
    #[command(flatten)]
    pub drivers: DriverArgs,
}

/// `replay --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReplayFormat {
    Text,
    Json,
    Csv,
}

/// What `replay --format json` prints.
#[derive(Serialize)]
struct Report {
    trace: String,
    topology: String,
    ranks: usize,
    engines: usize,
    time_s: f64,
    ops: u64,
    messages: u64,
    message_bytes: u64,
    calls: Vec<CallReport>,
    rank_finish_s: Vec<f64>,
    /// Each rank's seconds of compute; the rest of its finish time it
    /// communicates or waits.
    rank_compute_s: Vec<f64>,
    flows: u64,
    /// Of the network's directed links, the fractions ever shared by two
    /// flows or more and ever used.
    links_shared_fraction: f64,
    links_used_fraction: f64,
    events: u64,
    wall_s: f64,
    driver: String,
    /// With --breakdown: each rank's time.
    #[serde(skip_serializing_if = "Option::is_none")]
    rank_breakdown: Option<Vec<RankRow>>,
    /// With --breakdown: each distinct call's time against its bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    collective_breakdown: Option<Vec<CollectiveRow>>,
}

/// A rank of `--breakdown`.
#[derive(Serialize)]
struct RankRow {
    rank: usize,
    finish_s: f64,
    compute_s: f64,
    communication_s: f64,
    wait_s: f64,
}

/// A distinct call of `--breakdown`.
#[derive(Serialize)]
struct CollectiveRow {
    collective: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    root: Option<u32>,
    bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    comm_ranks: Option<Vec<u32>>,
    algorithm: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    segment_bytes: Option<u64>,
    calls: u64,
    /// From each call's first entry to its last exit, summed.
    time_s: f64,
    /// From each call's last entry to its last exit, summed.
    after_all_s: f64,
    /// The collective's lower bound on its ranks, times the calls.
    bound_s: Option<f64>,
    /// after_all_s / bound_s.
    to_bound: Option<f64>,
}

/// A row of `replay --compare`.
#[derive(Serialize)]
struct CompareRow {
    collective: &'static str,
    algorithm: &'static str,
    time_s: f64,
    /// Its time over the fastest row's.
    to_best: f64,
}

#[derive(Serialize)]
struct CallReport {
    collective: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    root: Option<u32>,
    bytes: u64,
    algorithm: &'static str,
    /// The pipeline segment `auto` picked with the algorithm.
    #[serde(skip_serializing_if = "Option::is_none")]
    segment_bytes: Option<u64>,
    calls: u64,
    /// The world ranks of the call's communicator, in its order (none: the
    /// world).
    #[serde(skip_serializing_if = "Option::is_none")]
    comm_ranks: Option<Vec<u32>>,
}

/// Engines enough for any rank: no limit.
const UNLIMITED: usize = u32::MAX as usize;

/// The flags of a single collective that a workload takes from its trace.
const NOT_HERE: [&str; 11] = [
    "--collective",
    "--size",
    "--root",
    "--dtype",
    "--op",
    "--segment",
    "--lanes",
    "--radix",
    "--inter",
    "--counts",
    "--ranks",
];

pub fn run(mut a: ReplayArgs, given: &Given) -> Result<i32> {
    if let Some(flag) = NOT_HERE.iter().find(|f| given.has(f)) {
        return Err(Error::Invalid(format!(
            "{flag}: replay takes its collectives from the trace (--algorithm COLLECTIVE=ALGORITHM,... chooses their algorithms)"
        ))
        .into());
    }
    let engines = a.engines.unwrap_or(UNLIMITED);
    if engines == 0 {
        return Err(Error::Invalid("--engines must be at least 1".into()).into());
    }
    let mut choice = match &a.build.algorithm {
        Some(list) => Choice::parse(list.as_str())?,
        None => Choice::default(),
    };
    let mut sem = Semantics {
        eager_bytes: match a.eager_threshold.as_deref() {
            Some(t) => parse_bytes(t)?,
            None => workload::SMPI_EAGER_BYTES,
        },
        flops: a.flops.as_deref().map(workload::parse_flops).transpose()?,
    };
    // SimGrid's options, each to the layer it sets: the network model, the
    // calls' semantics, or a collective's algorithm.
    for option in &a.cfg {
        let (key, value) = super::args::cfg_option(option)?;
        if a.node.take_network_option(key, value) {
            continue;
        }
        if key == "smpi/send-is-detached-thresh" && a.eager_threshold.is_some() {
            return Err(Error::Invalid(format!(
                "--cfg={key}: --eager-threshold sets it too: give one"
            ))
            .into());
        }
        if !sem.simgrid_option(key, value)? {
            let mut others = crate::sim::simgrid::NETWORK_KEYS.to_vec();
            others.extend(workload::SIMGRID_SEMANTICS_KEYS);
            choice.simgrid_option(key, value, &others)?;
        }
    }
    if workload::jobs::is_job_file(Path::new(&a.trace)) {
        if a.perfetto.is_some() {
            return Err(Error::Invalid(
                "--trace: a job file's report is its jobs' times (replay a job's trace for its Perfetto trace)".into(),
            )
            .into());
        }
        if a.breakdown {
            return Err(Error::Invalid(
                "--breakdown: a job file's report is its jobs' times (replay a job's trace for its breakdown)".into(),
            )
            .into());
        }
        return jobs(&a, &choice, &sem, engines);
    }
    if a.breakdown && a.compare.is_some() {
        return Err(Error::Invalid(
            "--breakdown: --compare prints each choice's time (give one --algorithm for a breakdown)".into(),
        )
        .into());
    }
    if a.perfetto.is_some() && a.compare.is_some() {
        return Err(Error::Invalid(
            "--trace records one replay: --compare runs one for each choice".into(),
        )
        .into());
    }
    // Fail on the output path before the replay, not after it.
    let perfetto = a.perfetto.as_deref().map(OutputFile::open).transpose()?;
    let opts = workload::ReadOptions {
        comm_groups: a
            .comm_groups
            .as_deref()
            .map(|f| workload::chakra::CommGroups::read(Path::new(f)))
            .transpose()?,
    };
    let w = workload::read_with(Path::new(&a.trace), &opts)?;
    // A hostfile places the trace's ranks as smpirun does: rank i on its
    // (i mod H)-th host.
    if let Some(path) = a
        .build
        .map
        .as_deref()
        .filter(|m| !matches!(*m, "block" | "cyclic"))
    {
        let hosts = super::args::rankfile(path)?;
        let n = w.ranks();
        a.build.hosts = Some((0..n).map(|i| hosts[i % hosts.len()].clone()).collect());
    }
    let topo = a.node.topology(&a.build, a.latency)?;
    let breakdown = a.breakdown || (a.format == ReplayFormat::Csv && a.compare.is_none());
    let recorded = breakdown || perfetto.is_some();
    let cfg = a
        .node
        .config(&a.build, engines, &a.drivers, recorded, None)?;
    let compared = a.compare.as_deref().map(Choice::alternatives).transpose()?;
    let auto = choice.has_auto()
        || compared
            .as_ref()
            .is_some_and(|(_, algs)| algs.iter().any(workload::Alternative::is_auto));
    let choice = if auto {
        let tune = crate::optimize::machine::auto_picker(topo.clone(), cfg.clone());
        let picker = move |collective: crate::schedule::Collective, bytes| {
            let c = tune(collective, bytes).map_err(for_workload)?;
            Ok(workload::Picked {
                algorithm: crate::algorithms::find(collective.kind(), &c.algorithm)?,
                segment_bytes: c.segment_bytes,
            })
        };
        choice.with_auto(workload::Auto(std::sync::Arc::new(picker)))
    } else {
        choice
    };
    if let Some((kind, algs)) = compared {
        let runs = workload::compare(&w, &topo, &choice, kind, &algs, &sem, &cfg)?;
        let best = runs
            .iter()
            .map(|r| r.result.time_s)
            .fold(f64::INFINITY, f64::min);
        let rows: Vec<CompareRow> = algs
            .iter()
            .zip(&runs)
            .map(|(alg, r)| CompareRow {
                collective: kind.name(),
                algorithm: alg.name(),
                time_s: r.result.time_s,
                to_best: r.result.time_s / best,
            })
            .collect();
        match a.format {
            ReplayFormat::Json => outln!("{}", serde_json::to_string_pretty(&rows)?),
            ReplayFormat::Csv => {
                outln!("collective,algorithm,time_s,to_best");
                for r in &rows {
                    outln!(
                        "{},{},{:e},{}",
                        r.collective,
                        r.algorithm,
                        r.time_s,
                        r.to_best
                    );
                }
            }
            ReplayFormat::Text => {
                outln!(
                    "replay {} on {}: {} ranks, under each {} algorithm",
                    a.trace,
                    topo.name,
                    w.ranks(),
                    kind.name()
                );
                outln!("{:<20} {:>16} {:>8}", "algorithm", "time_s", "/ best");
                for r in &rows {
                    outln!("{:<20} {:>16.9e} {:>8.4}", r.algorithm, r.time_s, r.to_best);
                }
            }
        }
        return Ok(0);
    }
    let r = super::progress::with_bar("replay", |progress| {
        let cfg = SimConfig { progress, ..cfg };
        workload::replay_trace(&w, &topo, &choice, &sem, &cfg)
    })?;
    if let (Some(path), Some(file)) = (&a.perfetto, perfetto) {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(file);
        let name = |l: u32| topo.link_name(l);
        crate::sim::write_chrome_trace(
            &r.result.spans,
            w.ranks(),
            &r.result.link_samples,
            &name,
            &mut f,
        )
        .and_then(|()| {
            f.flush()
                .map_err(|e| crate::sim::Error::io("writing the output", e))
        })
        .map_err(|e| anyhow::Error::from(e).context(format!("writing '{path}'")))?;
    }
    let calls: Vec<CallReport> = r
        .calls
        .iter()
        .map(|c| CallReport {
            collective: c.name(),
            root: c.root(),
            bytes: c.bytes,
            algorithm: c.algorithm,
            segment_bytes: c.segment_bytes,
            calls: c.calls,
            comm_ranks: c.comm_ranks.clone(),
        })
        .collect();
    let (rank_rows, coll_rows) = match r.breakdown.as_ref().filter(|_| breakdown) {
        Some(b) => {
            let ranks: Vec<RankRow> = b
                .ranks
                .iter()
                .enumerate()
                .map(|(rank, t)| RankRow {
                    rank,
                    finish_s: t.finish_s,
                    compute_s: t.compute_s,
                    communication_s: t.communication_s,
                    wait_s: t.wait_s,
                })
                .collect();
            let colls: Vec<CollectiveRow> = calls
                .iter()
                .zip(&b.calls)
                .map(|(c, t)| CollectiveRow {
                    collective: c.collective,
                    root: c.root,
                    bytes: c.bytes,
                    comm_ranks: c.comm_ranks.clone(),
                    algorithm: c.algorithm,
                    segment_bytes: c.segment_bytes,
                    calls: c.calls,
                    time_s: t.time_s,
                    after_all_s: t.after_all_s,
                    bound_s: t.bound_s,
                    to_bound: t.bound_s.filter(|&b| b > 0.0).map(|b| t.after_all_s / b),
                })
                .collect();
            (Some(ranks), Some(colls))
        }
        None => (None, None),
    };
    match a.format {
        ReplayFormat::Csv => {
            let (ranks, colls) = (rank_rows.unwrap_or_default(), coll_rows.unwrap_or_default());
            print_csv(&ranks, &colls)?;
        }
        ReplayFormat::Json => {
            let report = Report {
                trace: a.trace.clone(),
                topology: topo.name.clone(),
                ranks: w.ranks(),
                engines,
                time_s: r.result.time_s,
                ops: r.ops,
                messages: r.messages,
                message_bytes: r.message_bytes,
                calls,
                rank_finish_s: r.result.rank_finish_s.clone(),
                rank_compute_s: r.rank_compute_s.clone(),
                flows: r.result.flows,
                links_shared_fraction: r.result.links_shared_fraction,
                links_used_fraction: r.result.links_used_fraction,
                events: r.result.run.events,
                wall_s: r.result.run.wall_s,
                driver: r.result.run.driver.clone(),
                rank_breakdown: rank_rows,
                collective_breakdown: coll_rows,
            };
            outln!("{}", serde_json::to_string_pretty(&report)?);
        }
        ReplayFormat::Text => {
            outln!(
                "replay {} on {}: {} ranks, {} ops, {} messages ({} bytes)",
                a.trace,
                topo.name,
                w.ranks(),
                r.ops,
                r.messages,
                r.message_bytes
            );
            for c in &calls {
                let root = c.root.map_or(String::new(), |r| format!(" root {r}"));
                let on = c
                    .comm_ranks
                    .as_ref()
                    .map_or(String::new(), |r| format!(" on world ranks {r:?}"));
                outln!(
                    "  {} of {} bytes{root}{on}: {} call{}, {}",
                    c.collective,
                    c.bytes,
                    c.calls,
                    if c.calls == 1 { "" } else { "s" },
                    label(c.algorithm, c.segment_bytes)
                );
            }
            let compute = r.rank_compute_s.iter().sum::<f64>();
            let busy = r.result.rank_finish_s.iter().sum::<f64>();
            if busy > 0.0 {
                outln!(
                    "  the ranks compute {:.1}% of their time, and communicate or wait the rest",
                    100.0 * compute / busy
                );
            }
            outln!(
                "  links: {:.2}% ever shared by 2+ flows, {:.2}% used, of {} directed links",
                100.0 * r.result.links_shared_fraction,
                100.0 * r.result.links_used_fraction,
                r.result.links.len()
            );
            if let (Some(ranks), Some(colls)) = (&rank_rows, &coll_rows) {
                print_tables(ranks, colls)?;
            }
            outln!("time_s {:.9e}", r.result.time_s);
        }
    }
    Ok(0)
}

/// `--breakdown`'s tables, as text.
fn print_tables(ranks: &[RankRow], colls: &[CollectiveRow]) -> Result<()> {
    outln!(
        "  {:>6} {:>16} {:>16} {:>16} {:>16}",
        "rank",
        "finish_s",
        "compute_s",
        "communication_s",
        "wait_s"
    );
    for r in ranks {
        outln!(
            "  {:>6} {:>16.9e} {:>16.9e} {:>16.9e} {:>16.9e}",
            r.rank,
            r.finish_s,
            r.compute_s,
            r.communication_s,
            r.wait_s
        );
    }
    outln!(
        "  {:<32} {:>6} {:>16} {:>16} {:>16} {:>9}",
        "collective",
        "calls",
        "time_s",
        "after_all_s",
        "bound_s",
        "/ bound"
    );
    for c in colls {
        let what = format!(
            "{} {}B{}{} {}",
            c.collective,
            c.bytes,
            c.root.map_or(String::new(), |r| format!(" root {r}")),
            c.comm_ranks
                .as_ref()
                .map_or(String::new(), |r| format!(" on {r:?}")),
            label(c.algorithm, c.segment_bytes)
        );
        let bound = c
            .bound_s
            .map_or("unknown".to_string(), |b| format!("{b:.9e}"));
        let ratio = c.to_bound.map_or("-".to_string(), |x| format!("{x:.4}"));
        outln!(
            "  {:<32} {:>6} {:>16.9e} {:>16.9e} {:>16} {:>9}",
            what,
            c.calls,
            c.time_s,
            c.after_all_s,
            bound,
            ratio
        );
    }
    Ok(())
}

/// `--format csv`: `--breakdown`'s two tables as one, a row per rank
/// (`row` rank) and per distinct call (`row` collective), each with its
/// columns and the others' left empty.
fn print_csv(ranks: &[RankRow], colls: &[CollectiveRow]) -> Result<()> {
    outln!("row,rank,finish_s,compute_s,communication_s,wait_s,collective,root,bytes,comm_ranks,algorithm,calls,time_s,after_all_s,bound_s,to_bound");
    for r in ranks {
        outln!(
            "rank,{},{:e},{:e},{:e},{:e},,,,,,,,,,",
            r.rank,
            r.finish_s,
            r.compute_s,
            r.communication_s,
            r.wait_s
        );
    }
    let opt = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:e}"));
    for c in colls {
        let comm = c.comm_ranks.as_ref().map_or(String::new(), |r| {
            r.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
        });
        outln!(
            "collective,,,,,,{},{},{},{},{},{},{:e},{:e},{},{}",
            c.collective,
            c.root.map_or(String::new(), |r| r.to_string()),
            c.bytes,
            comm,
            label(c.algorithm, c.segment_bytes),
            c.calls,
            c.time_s,
            c.after_all_s,
            opt(c.bound_s),
            opt(c.to_bound)
        );
    }
    Ok(())
}

/// What `replay JOBS.toml --format json` prints.
#[derive(Serialize)]
struct JobsJson<'a> {
    jobs_file: &'a str,
    topology: &'a str,
    time_s: f64,
    jobs: Vec<JobJson<'a>>,
    shared_links: Vec<SharedJson<'a>>,
    background_ranks: usize,
}

#[derive(Serialize)]
struct JobJson<'a> {
    name: &'a str,
    ranks: usize,
    hosts: &'a [String],
    start_s: f64,
    alone_s: f64,
    together_s: f64,
    slowdown: f64,
}

#[derive(Serialize)]
struct SharedJson<'a> {
    link: u32,
    from: &'a str,
    to: &'a str,
    users: &'a [String],
}

/// `replay JOBS.toml`: each job of a job file alone and together.
fn jobs(a: &ReplayArgs, choice: &Choice, sem: &Semantics, engines: usize) -> Result<i32> {
    for (flag, given) in [
        ("--map", a.build.map.is_some()),
        ("--ranks-per-node", a.build.ranks_per_node.is_some()),
        ("--compare", a.compare.is_some()),
        ("--comm-groups", a.comm_groups.is_some()),
    ] {
        if given {
            return Err(Error::Invalid(format!(
                "{flag}: a job file places its jobs and prices each alone and together"
            ))
            .into());
        }
    }
    let file = workload::jobs::read(Path::new(&a.trace))?;
    let base = a.node.topology(&a.build, a.latency)?;
    let cfg = a.node.config(&a.build, engines, &a.drivers, false, None)?;
    let setting = workload::jobs::Setting {
        base: &base,
        node_bandwidth: a.build.node_bandwidth.unwrap_or(20e9),
        node_latency: a.build.node_latency.unwrap_or(0.0),
        choice,
        sem,
        cfg: &cfg,
    };
    let r = workload::jobs::run(&file, &setting)?;
    match a.format {
        ReplayFormat::Json => {
            let out = JobsJson {
                jobs_file: &a.trace,
                topology: &base.name,
                time_s: r.time_s,
                jobs: r
                    .jobs
                    .iter()
                    .map(|j| JobJson {
                        name: &j.name,
                        ranks: j.ranks,
                        hosts: &j.hosts,
                        start_s: j.start_s,
                        alone_s: j.alone_s,
                        together_s: j.together_s,
                        slowdown: j.slowdown,
                    })
                    .collect(),
                shared_links: r
                    .shared
                    .iter()
                    .map(|l| SharedJson {
                        link: l.link,
                        from: &l.from,
                        to: &l.to,
                        users: &l.users,
                    })
                    .collect(),
                background_ranks: r.background_ranks,
            };
            outln!("{}", serde_json::to_string_pretty(&out)?);
        }
        ReplayFormat::Csv => {
            outln!("job,ranks,start_s,alone_s,together_s,slowdown");
            for j in &r.jobs {
                outln!(
                    "{},{},{:e},{:e},{:e},{}",
                    j.name,
                    j.ranks,
                    j.start_s,
                    j.alone_s,
                    j.together_s,
                    j.slowdown
                );
            }
        }
        ReplayFormat::Text => {
            outln!(
                "replay {} on {}: {} jobs{}",
                a.trace,
                base.name,
                r.jobs.len(),
                if r.background_ranks > 0 {
                    format!(", background traffic on {} hosts", r.background_ranks)
                } else {
                    String::new()
                }
            );
            outln!(
                "{:<20} {:>6} {:>12} {:>16} {:>16} {:>9}",
                "job",
                "ranks",
                "start_s",
                "alone_s",
                "together_s",
                "slowdown"
            );
            for j in &r.jobs {
                outln!(
                    "{:<20} {:>6} {:>12.6e} {:>16.9e} {:>16.9e} {:>9.4}",
                    j.name,
                    j.ranks,
                    j.start_s,
                    j.alone_s,
                    j.together_s,
                    j.slowdown
                );
            }
            if r.shared.is_empty() {
                outln!("  the jobs share no link");
            }
            for l in &r.shared {
                outln!(
                    "  link {} {} -> {}: {}",
                    l.link,
                    l.from,
                    l.to,
                    l.users.join(", ")
                );
            }
            outln!("time_s {:.9e}", r.time_s);
        }
    }
    Ok(0)
}

/// An algorithm as the text and CSV reports show it: `ring`, or
/// `pipeline/32KiB` with the segment `auto` picked.
fn label(algorithm: &str, segment_bytes: Option<u64>) -> String {
    match segment_bytes {
        Some(seg) => format!("{algorithm}/{}", crate::units::format_bytes(seg)),
        None => algorithm.to_string(),
    }
}

/// An optimiser's error as the workload layer's, for `--algorithm auto`'s
/// picks: the layers both share keep their variant, the optimiser's own
/// refusal is a choice the trace cannot make.
fn for_workload(e: crate::optimize::Error) -> workload::Error {
    use crate::optimize::Error as O;
    match e {
        O::Base(b) => b.into(),
        O::Topology(t) => t.into(),
        O::Schedule(s) => s.into(),
        O::Algorithm(a) => a.into(),
        O::Sim(s) => s.into(),
        own @ O::Optimize { .. } => workload::Error::Workload {
            kind: workload::WorkloadKind::Choice,
            message: own.to_string(),
        },
    }
}
