//! `topocoll optimize`: the fastest schedule of a collective on a network
//! (synthesised from packed spanning trees or a built-in algorithm, priced
//! under the node model) with its cut bound; or, with `--whole-message`, the
//! optimal broadcast on a tree network in the tree-broadcast paper's model,
//! with the built-in broadcasts' times on the same model beside it.

use super::args::{
    check_root, BuildArgs, DriverArgs, Given, NodeModelArgs, OutputFile, TextOrJson,
};
use crate::limits::Deadline;
use crate::optimize::synth;
use crate::optimize::treebcast::{self, Limits, Options, Problem};
use crate::schedule::{self, Collective};
use crate::sim::SimConfig;
use crate::topology::{self, Kind, NodeKind, Topology};
use crate::units::parse_bytes;
use anyhow::Result;
use clap::{ArgGroup, Args};
use serde::Serialize;
use std::io::Write;
use topocoll_base::Error;

/// The flags of one model only, by group (refused in the other, by
/// [`refuse_the_other_models`]): the synthesis's (`synthesis`, with the
/// node model's `NodeModelArgs` and the simulator's `DriverArgs`), and the
/// branch and bound's (`whole_message_search`).
#[derive(Args)]
#[command(group(ArgGroup::new("synthesis").multiple(true)))]
#[command(group(ArgGroup::new("whole_message_search").multiple(true)))]
pub struct OptimizeArgs {
    /// The network: any topology `simulate` takes; with --whole-message a tree
    /// network (a TOML file with kind = "tree", see examples/).
    #[arg(long, short = 't')]
    pub topology: String,
    /// bcast, reduce, allgather, reduce_scatter or allreduce (--whole-message: bcast).
    #[arg(long, short = 'c')]
    pub collective: String,
    /// The tree-broadcast paper's model: each host receives the whole message in
    /// one transfer, links reserved; a branch and bound proves the optimum.
    #[arg(long)]
    pub whole_message: bool,
    /// Ranks on each host [default: 1].
    #[arg(long, group = "synthesis")]
    pub ranks_per_node: Option<usize>,
    /// Take cables out of the network (as `simulate --fail`).
    #[arg(long, group = "synthesis")]
    pub fail: Option<String>,
    /// Seed for --fail random:K [default: 0].
    #[arg(long, group = "synthesis")]
    pub seed: Option<u64>,
    /// Transfers each node drives at once [default: 4].
    #[arg(long, group = "synthesis")]
    pub engines: Option<usize>,
    /// Latency of every link, seconds (overrides the topology's).
    #[arg(
        long,
        group = "synthesis",
        allow_negative_numbers = true,
        allow_hyphen_values = true
    )]
    pub latency: Option<f64>,
    /// Element type: u8, i32, i64, f32, f64 (default: f64 for reductions, u8 otherwise).
    #[arg(long, group = "synthesis")]
    pub dtype: Option<String>,
    /// Reduction operator: sum, prod, min, max, band, bor, bxor [default: sum].
    #[arg(long, group = "synthesis")]
    pub op: Option<String>,
    #[command(flatten)]
    pub node: NodeModelArgs,
    #[command(flatten)]
    pub drivers: DriverArgs,
    /// The root: a rank, or a host's name in the topology file.
    #[arg(long, default_value = "0")]
    pub root: String,
    /// Bytes, as `simulate --size` reads them (the block for allgather, the whole
    /// buffer otherwise): plain bytes or 64KiB, 1MiB, 1MB.
    #[arg(long, short = 's')]
    pub size: String,
    /// --whole-message: do not merge equivalent receivers (RCut).
    #[arg(long, group = "whole_message_search")]
    pub no_rcut: bool,
    /// --whole-message: do not merge equivalent senders (SCut).
    #[arg(long, group = "whole_message_search")]
    pub no_scut: bool,
    /// --whole-message: prune with the running makespan only, not the lower bounds.
    #[arg(long, group = "whole_message_search")]
    pub no_bound: bool,
    /// --whole-message: do not remember explored states.
    #[arg(long, group = "whole_message_search")]
    pub no_memo: bool,
    /// Stop after this many seconds with the best schedule found so far (not
    /// proven; the bounds must finish within it) [default: 20; --whole-message:
    /// 60]. The time counts from the start, reading the network included.
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// text or json.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    /// Write the schedule found, in the format its extension names: .json
    /// (a synthesised schedule as its trees, `topocoll-forest/1`; a built-in
    /// one in the IR), .xml (MSCCL's XML, for the sizes from --size to twice
    /// it) or .goal (LogGOPSim's GOAL). verify, simulate and run --schedule
    /// read the .json and .xml back.
    #[arg(long)]
    pub schedule_out: Option<String>,
}

#[derive(Serialize)]
struct JsonTransfer {
    from: usize,
    to: usize,
    start_s: f64,
    end_s: f64,
}

#[derive(Serialize)]
struct JsonResult<'a> {
    topology: &'a str,
    collective: &'static str,
    root: usize,
    size_bytes: u64,
    hosts: usize,
    time_s: f64,
    proven_optimal: bool,
    nodes_explored: u64,
    solve_s: f64,
    lower_bound_s: f64,
    heuristic_s: f64,
    transfers: Vec<JsonTransfer>,
    baselines: std::collections::BTreeMap<&'static str, f64>,
}

/// The rank of `--root`: a number, or the name of a host.
fn root_rank(topo: &Topology, root: &str) -> Result<usize> {
    if let Ok(r) = root.trim().parse::<usize>() {
        return Ok(r);
    }
    let (Kind::Tree(g) | Kind::Graph(g)) = &topo.kind else {
        return Err(Error::Invalid(format!("--root '{root}' is not a rank number")).into());
    };
    match g.names.iter().position(|n| n == root) {
        None => Err(Error::Invalid(format!(
            "--root '{root}' is neither a rank nor a node of {}",
            topo.name
        ))
        .into()),
        Some(n) if g.kinds[n] == NodeKind::Switch => Err(Error::Invalid(format!(
            "--root '{root}' is a switch; the root must be a host"
        ))
        .into()),
        Some(n) => Ok(topo
            .rank_node
            .iter()
            .position(|&h| h as usize == n)
            .expect("hosts hold ranks")),
    }
}

/// The first flag the command line gave that the chosen model has no use
/// for, refused in one line (exit 2) rather than ignored.
fn refuse_the_other_models(a: &OptimizeArgs, given: &Given) -> Result<()> {
    if a.whole_message {
        if let Some(flag) = given.first_of(&["synthesis", "NodeModelArgs", "DriverArgs"]) {
            return Err(Error::Invalid(format!(
                "{flag}: --whole-message prices in the tree-broadcast paper's model, which has no {flag}"
            ))
            .into());
        }
    } else if let Some(flag) = given.first_of(&["whole_message_search"]) {
        return Err(Error::Invalid(format!(
            "{flag}: only --whole-message's branch and bound takes it"
        ))
        .into());
    }
    Ok(())
}

/// Seconds `optimize` may take by default: the synthesis's, and the
/// branch and bound's.
const TIME_LIMIT_S: f64 = 20.0;
const WHOLE_MESSAGE_TIME_LIMIT_S: f64 = 60.0;

/// `--time-limit`, or the model's default, as a deadline from now.
fn time_limit(a: &OptimizeArgs) -> Result<f64> {
    let default = if a.whole_message {
        WHOLE_MESSAGE_TIME_LIMIT_S
    } else {
        TIME_LIMIT_S
    };
    let limit = a.time_limit.unwrap_or(default);
    if !(limit.is_finite() && limit > 0.0) {
        return Err(Error::Invalid(format!(
            "--time-limit must be a positive number of seconds, got {limit}"
        ))
        .into());
    }
    Ok(limit)
}

pub fn run(a: OptimizeArgs, given: &Given) -> Result<i32> {
    refuse_the_other_models(&a, given)?;
    let time_limit = time_limit(&a)?;
    if !a.whole_message {
        // Under mpirun the candidates are shared between the processes,
        // and rank 0 alone writes.
        let spread = super::spread::start()?;
        return run_synthesis(a, given, Deadline::after(time_limit), &spread)
            .map_err(super::spread::refused_quietly);
    }
    if let Some(n) = crate::runtime::spread::launched().filter(|&n| n > 1) {
        return Err(super::spread::refused_quietly(
            Error::Invalid(format!(
                "--whole-message: the branch and bound runs in one process (mpirun started {n}): run it without mpirun"
            ))
            .into(),
        ));
    }
    if a.collective != "bcast" {
        return Err(Error::Invalid(format!(
            "--collective '{}': --whole-message finds the optimal bcast only",
            a.collective
        ))
        .into());
    }
    let json = a.format == TextOrJson::Json;
    let size = parse_bytes(&a.size)?;
    let started = std::time::Instant::now();
    let deadline = started + std::time::Duration::from_secs_f64(time_limit.min(1e9));
    let topo = topology::parse_spec(&a.topology)?;
    let root = root_rank(&topo, &a.root)?;
    let p = Problem::within(&topo, &[root], size, &Limits::with_deadline(deadline))?;
    // The output file is opened (not emptied) before the search, so a path
    // that cannot be written fails at once.
    let mut out = a
        .schedule_out
        .as_deref()
        .map(ScheduleOut::open)
        .transpose()?;
    let opts = Options {
        rcut: !a.no_rcut,
        scut: !a.no_scut,
        bound: !a.no_bound,
        memo: !a.no_memo,
        time_limit_s: time_limit,
        deadline: Some(deadline),
    };
    let sol = treebcast::solve(&p, &opts);
    let (baselines, unpriced) = treebcast::baselines_until(&topo, root, size, deadline);
    if let Some(out) = out.as_mut() {
        out.write(&treebcast::to_schedule(&p, &sol), size)?;
    }
    if json {
        let doc = JsonResult {
            topology: &topo.name,
            collective: "bcast",
            root,
            size_bytes: size,
            hosts: p.hosts,
            time_s: sol.time_s,
            proven_optimal: sol.proven_optimal,
            nodes_explored: sol.nodes_explored,
            solve_s: sol.solve_s,
            lower_bound_s: sol.lower_bound_s,
            heuristic_s: sol.heuristic_s,
            transfers: sol
                .transfers
                .iter()
                .map(|t| JsonTransfer {
                    from: t.from,
                    to: t.to,
                    start_s: t.start_s,
                    end_s: t.end_s,
                })
                .collect(),
            baselines,
        };
        outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(0);
    }
    let ms = |t: f64| format!("{:.6} ms", t * 1e3);
    let status = if sol.proven_optimal {
        "proven optimal".to_string()
    } else if p.hosts > treebcast::MAX_EXACT_HOSTS {
        format!(
            "heuristic, not proven: more than {} hosts",
            treebcast::MAX_EXACT_HOSTS
        )
    } else {
        format!("best found, not proven: the {time_limit} s time limit stopped the search")
    };
    outln!(
        "bcast of {} bytes from rank {root} ({}) on {} ({} hosts): {} ({status})",
        size,
        p.names[root],
        topo.name,
        p.hosts,
        ms(sol.time_s)
    );
    let w = p.hosts.to_string().len();
    for t in &sol.transfers {
        outln!(
            "  {:>w$} -> {:<w$}  {:>16} .. {:>16}   {} -> {}",
            t.from,
            t.to,
            ms(t.start_s),
            ms(t.end_s),
            p.names[t.from],
            p.names[t.to]
        );
    }
    let above = |t: f64| (sol.heuristic_s / t - 1.0) * 100.0;
    let gap = if sol.proven_optimal {
        format!(
            "{:.2}% above the bound, {:.2}% above the optimum",
            above(sol.lower_bound_s),
            above(sol.time_s)
        )
    } else {
        format!("{:.2}% above the bound", above(sol.lower_bound_s))
    };
    outln!(
        "nodes explored {}, solve time {:.3} s, lower bound {}, heuristic {} ({gap})",
        sol.nodes_explored,
        sol.solve_s,
        ms(sol.lower_bound_s),
        ms(sol.heuristic_s),
    );
    outln!("baselines on the same model (reservation sharing, 64 engines):");
    // Against what the search found: the optimum only once it is proven.
    let against = if sol.proven_optimal {
        "the optimum"
    } else {
        "the best found"
    };
    for (alg, t) in &baselines {
        outln!(
            "  {alg:<18} {:>16}  {:.3}x {against}",
            ms(*t),
            t / sol.time_s
        );
    }
    if unpriced > 0 {
        outln!("  ({unpriced} not priced: the time limit ran out)");
    }
    if let Some(path) = &a.schedule_out {
        outln!("schedule written to {path}");
    }
    Ok(0)
}

#[derive(Serialize)]
struct JsonSynthesis<'a> {
    topology: &'a str,
    collective: &'static str,
    root: Option<u32>,
    ranks: usize,
    size_bytes: u64,
    engines: usize,
    time_s: f64,
    cut_bound_s: f64,
    switch_bound_s: f64,
    split_bound_s: f64,
    bound_s: f64,
    /// Every candidate was priced within --time-limit.
    complete: bool,
    algorithm: &'a str,
    trees: usize,
    chunks: u64,
    solve_s: f64,
    candidates: Vec<JsonCandidate<'a>>,
}

#[derive(Serialize)]
struct JsonCandidate<'a> {
    algorithm: &'a str,
    trees: usize,
    chunks: u64,
    time_s: f64,
}

/// The fastest schedule of any of the five collectives on any network,
/// under the node model, with its cut bound.
fn run_synthesis(
    a: OptimizeArgs,
    given: &Given,
    deadline: Deadline,
    spread: &crate::runtime::spread::Spread,
) -> Result<i32> {
    let build = BuildArgs {
        topology: Some(a.topology.clone()),
        ranks_per_node: a.ranks_per_node,
        fail: a.fail.clone(),
        seed: a.seed,
        ..BuildArgs::default()
    };
    let mut topo = build.topology()?.expect("a topology was given");
    topo.set_uniform_links(a.node.bandwidth, a.latency)?;
    let root = a
        .root
        .trim()
        .parse::<u32>()
        .map_err(|_| Error::Invalid(format!("--root '{}' is not a rank number", a.root)))?;
    let collective = Collective::parse(&a.collective, root)?;
    check_root(given.has("--root").then_some(root), collective)?;
    if !matches!(
        collective,
        Collective::Bcast { .. }
            | Collective::Reduce { .. }
            | Collective::Allgather
            | Collective::ReduceScatter
            | Collective::Allreduce
    ) {
        return Err(Error::Invalid(format!(
            "--collective {}: optimize serves bcast, reduce, allgather, reduce_scatter and allreduce",
            collective.name()
        ))
        .into());
    }
    let engines = a.engines.unwrap_or(4);
    if engines == 0 {
        return Err(Error::Invalid("--engines must be at least 1".into()).into());
    }
    let cfg = SimConfig {
        deadline,
        ..a.node.config(&build, engines, &a.drivers, false, None)?
    };
    let size = parse_bytes(&a.size)?;
    let (dtype, op) = super::args::elements(collective, a.dtype.as_deref(), a.op.as_deref())?;
    let writes = spread.rank() == 0;
    let mut out = a
        .schedule_out
        .as_deref()
        .filter(|_| writes)
        .map(ScheduleOut::open)
        .transpose()?;
    let problem = synth::Problem {
        topo: &topo,
        collective,
        size_bytes: size,
        dtype,
        op,
        cfg,
    };
    let found = synth::optimize_shared(&problem, &super::spread::Shared(spread))?;
    if !writes {
        return Ok(0);
    }
    if let Some(out) = out.as_mut() {
        match &found.schedule {
            synth::Best::Forest(f) if out.format == OutFormat::Json => out.write_forest(f)?,
            best => out.write(&*best.schedule()?, size)?,
        }
    }
    if a.format == TextOrJson::Json {
        let doc = JsonSynthesis {
            topology: &topo.name,
            collective: collective.name(),
            root: collective.root(),
            ranks: topo.num_ranks(),
            size_bytes: size,
            engines,
            time_s: found.best.time_s,
            cut_bound_s: found.cut.seconds,
            switch_bound_s: found.switch.seconds,
            split_bound_s: found.split_s,
            bound_s: found.bound_s,
            complete: found.complete,
            algorithm: &found.best.algorithm,
            trees: found.best.trees,
            chunks: found.best.chunks,
            solve_s: found.solve_s,
            candidates: found
                .candidates
                .iter()
                .map(|c| JsonCandidate {
                    algorithm: &c.algorithm,
                    trees: c.trees,
                    chunks: c.chunks,
                    time_s: c.time_s,
                })
                .collect(),
        };
        outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(0);
    }
    let t = |s: f64| crate::units::format_seconds(s);
    let b = &found.best;
    let how = if b.algorithm == "synthesized" {
        format!(
            "synthesized: {} tree(s) a root, {} chunk(s) a tree",
            b.trees, b.chunks
        )
    } else {
        format!("built-in {}", b.algorithm)
    };
    outln!(
        "{} of {size} bytes on {} ({} ranks, {engines} engines): {} ({how})",
        collective.name(),
        topo.name,
        topo.num_ranks(),
        t(b.time_s)
    );
    let what = if collective == Collective::Allreduce {
        " (the least time of any allreduce built from a reduce-scatter and an allgather)"
    } else {
        ""
    };
    if found.cut.seconds > 0.0 {
        outln!(
            "cut bound {}{what}; time / bound = {:.4}",
            t(found.cut.seconds),
            b.time_s / found.cut.seconds
        );
    } else {
        outln!("cut bound 0 s{what}: nothing to move");
    }
    if found.bound_s > found.cut.seconds {
        outln!(
            "least time {} (split bound {}: half-duplex cables split between their directions; \
             switch bound {}: switches neither copy nor combine); time / least = {:.4}",
            t(found.bound_s),
            t(found.split_s),
            t(found.switch.seconds),
            b.time_s / found.bound_s
        );
    }
    outln!("candidates (fastest first):");
    for c in &found.candidates {
        let name = if c.algorithm == "synthesized" {
            format!("synthesized, {} tree(s), {} chunk(s)", c.trees, c.chunks)
        } else {
            c.algorithm.clone()
        };
        outln!("  {name:<38} {}", t(c.time_s));
    }
    if found.complete {
        outln!("solve time {:.3} s", found.solve_s);
    } else {
        outln!(
            "solve time {:.3} s (within the {} s time limit: the fastest of {} candidates, not of all)",
            found.solve_s,
            deadline.limit_s(),
            found.candidates.len()
        );
    }
    if let Some(path) = &a.schedule_out {
        outln!("schedule written to {path}");
    }
    Ok(0)
}

/// A format `--schedule-out` writes, named by the file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutFormat {
    Json,
    Msccl,
    Goal,
}

/// `--schedule-out FILE`, its format known and the file opened before any
/// work starts.
struct ScheduleOut {
    format: OutFormat,
    file: OutputFile,
}

impl ScheduleOut {
    fn open(path: &str) -> Result<ScheduleOut> {
        let ext = std::path::Path::new(path)
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        let format = match ext.as_deref() {
            Some("json") => OutFormat::Json,
            Some("xml") => OutFormat::Msccl,
            Some("goal") => OutFormat::Goal,
            _ => {
                return Err(Error::Invalid(format!(
                    "--schedule-out '{path}': the extension names no format (.json, .xml or .goal)"
                ))
                .into())
            }
        };
        Ok(ScheduleOut {
            format,
            file: OutputFile::open(path)?,
        })
    }

    /// Writes a synthesised schedule's trees (`.json` only).
    fn write_forest(&mut self, f: &crate::algorithms::forest::Forest) -> Result<()> {
        let mut w = std::io::BufWriter::new(&mut self.file);
        f.to_json(&mut w)?;
        w.flush()?;
        Ok(())
    }

    /// Writes every operation of `s`, priced for `size_bytes`.
    fn write(&mut self, s: &schedule::Schedule, size_bytes: u64) -> Result<()> {
        let mut w = std::io::BufWriter::new(&mut self.file);
        match self.format {
            OutFormat::Json => schedule::to_json(s, &mut w)?,
            OutFormat::Goal => {
                let lost = schedule::to_goal(s, None, &mut w)?;
                if lost > 0 {
                    eprintln!(
                        "topocoll: warning: GOAL has no routes: {lost} sends lose their paths and take the simulator's own"
                    );
                }
            }
            OutFormat::Msccl => {
                // The sizes a runtime takes the file for: from the size it
                // was found for up to twice it.
                let bytes = schedule::MscclBytes {
                    min: size_bytes,
                    max: Some(size_bytes.saturating_mul(2).max(1)),
                };
                let lost = schedule::to_msccl_xml_for(s, bytes, &mut w)?;
                if lost.lost_routes > 0 {
                    eprintln!(
                        "topocoll: warning: MSCCL XML: {} sends lose their paths (MSCCL's runtimes route every message themselves)",
                        lost.lost_routes
                    );
                }
            }
        }
        w.flush()?;
        Ok(())
    }
}
