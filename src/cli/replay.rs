//! `topocoll replay`: price an application's trace on a network.

use super::args::{BuildArgs, DriverArgs, Given, NodeModelArgs};
use crate::error::Error;
use crate::units::parse_bytes;
use crate::workload::{self, Choice, Semantics};
use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::Path;

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
    /// SimGrid's options that choose collective algorithms,
    /// `--cfg=smpi/allreduce:lr` (SimGrid's names), and
    /// `--cfg=network/model:CM02`, the model the node-model flags describe.
    #[arg(long = "cfg", value_name = "KEY:VALUE")]
    pub cfg: Vec<String>,
    /// What if: price the whole workload once for each algorithm of one
    /// collective, `allreduce=ring,rabenseifner,recursive_doubling`, and
    /// print them side by side.
    #[arg(long, value_name = "COLLECTIVE=A,B,...")]
    pub compare: Option<String>,
    /// text or json.
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
    events: u64,
    wall_s: f64,
    driver: String,
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
    for option in &a.cfg {
        choice.simgrid_option(option)?;
    }
    let sem = Semantics {
        eager_bytes: match a.eager_threshold.as_deref() {
            Some(t) => parse_bytes(t)?,
            None => workload::SMPI_EAGER_BYTES,
        },
        flops: a.flops.as_deref().map(workload::parse_flops).transpose()?,
    };
    if workload::jobs::is_job_file(Path::new(&a.trace)) {
        return jobs(&a, &choice, &sem, engines);
    }
    let w = workload::read(Path::new(&a.trace))?;
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
    let cfg = a.node.config(&a.build, engines, &a.drivers, false, None)?;
    if let Some(text) = a.compare.as_deref() {
        let (kind, algs) = Choice::alternatives(text)?;
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
                algorithm: alg.name,
                time_s: r.result.time_s,
                to_best: r.result.time_s / best,
            })
            .collect();
        match a.format {
            ReplayFormat::Json => outln!("{}", serde_json::to_string_pretty(&rows)?),
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
    let r = workload::replay_trace(&w, &topo, &choice, &sem, &cfg)?;
    let calls: Vec<CallReport> = r
        .calls
        .iter()
        .map(|c| CallReport {
            collective: c.collective.name(),
            root: c.collective.root(),
            bytes: c.bytes,
            algorithm: c.algorithm,
            calls: c.calls,
            comm_ranks: c.comm_ranks.clone(),
        })
        .collect();
    match a.format {
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
                events: r.result.run.events,
                wall_s: r.result.run.wall_s,
                driver: r.result.run.driver.clone(),
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
                    c.algorithm
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
            outln!("time_s {:.9e}", r.result.time_s);
        }
    }
    Ok(0)
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
