//! `topocoll optimize`: the optimal broadcast on a tree network, with the
//! built-in broadcasts' times on the same model beside it.

use super::args::{OutputFile, TextOrJson};
use crate::error::Error;
use crate::optimize::treebcast::{self, Limits, Options, Problem};
use crate::schedule;
use crate::topology::{self, Kind, NodeKind, Topology};
use crate::units::parse_bytes;
use anyhow::Result;
use clap::Args;
use serde::Serialize;
use std::io::Write;

#[derive(Args)]
pub struct OptimizeArgs {
    /// A tree network: a TOML file with kind = "tree" (see examples/).
    #[arg(long, short = 't')]
    pub topology: String,
    /// The collective to optimise: bcast.
    #[arg(long, short = 'c')]
    pub collective: String,
    /// The root: a rank, or a host's name in the topology file.
    #[arg(long, default_value = "0")]
    pub root: String,
    /// Bytes to broadcast: plain bytes or 64KiB, 1MiB, 1MB.
    #[arg(long, short = 's')]
    pub size: String,
    /// Do not merge equivalent receivers (RCut).
    #[arg(long)]
    pub no_rcut: bool,
    /// Do not merge equivalent senders (SCut).
    #[arg(long)]
    pub no_scut: bool,
    /// Prune with the running makespan only, not the lower bounds.
    #[arg(long)]
    pub no_bound: bool,
    /// Do not remember explored states.
    #[arg(long)]
    pub no_memo: bool,
    /// Stop after this many seconds with the best schedule found (not
    /// proven); the time counts from the start, reading the tree included.
    #[arg(long, default_value_t = 60.0)]
    pub time_limit: f64,
    /// text or json.
    #[arg(long, value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    /// Write the schedule as JSON in the IR (for verify, simulate and run --schedule).
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

pub fn run(a: OptimizeArgs) -> Result<i32> {
    if a.collective != "bcast" {
        return Err(Error::Invalid(format!(
            "--collective '{}': optimize finds the optimal bcast only",
            a.collective
        ))
        .into());
    }
    let json = a.format == TextOrJson::Json;
    if !(a.time_limit.is_finite() && a.time_limit > 0.0) {
        return Err(Error::Invalid(format!(
            "--time-limit must be a positive number of seconds, got {}",
            a.time_limit
        ))
        .into());
    }
    let size = parse_bytes(&a.size)?;
    let started = std::time::Instant::now();
    let deadline = started + std::time::Duration::from_secs_f64(a.time_limit.min(1e9));
    let topo = topology::parse_spec(&a.topology)?;
    let root = root_rank(&topo, &a.root)?;
    let p = Problem::within(&topo, &[root], size, &Limits::with_deadline(deadline))?;
    // The output file is opened (not emptied) before the search, so a path
    // that cannot be written fails at once.
    let mut out_file = a
        .schedule_out
        .as_deref()
        .map(OutputFile::open)
        .transpose()?;
    let opts = Options {
        rcut: !a.no_rcut,
        scut: !a.no_scut,
        bound: !a.no_bound,
        memo: !a.no_memo,
        time_limit_s: a.time_limit,
        deadline: Some(deadline),
    };
    let mut sol = treebcast::solve(&p, &opts);
    // The solve time counts reading the tree and its paths too.
    sol.solve_s = started.elapsed().as_secs_f64();
    let (baselines, unpriced) = treebcast::baselines_until(&topo, root, size, deadline);
    if let Some(f) = out_file.as_mut() {
        let s = treebcast::to_schedule(&p, &sol);
        schedule::to_json(&s, f)?;
        f.flush()?;
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
        format!(
            "best found, not proven: the {} s time limit stopped the search",
            a.time_limit
        )
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
    for (alg, t) in &baselines {
        outln!(
            "  {alg:<18} {:>16}  {:.3}x the optimum",
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
