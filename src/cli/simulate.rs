//! `topocoll simulate`: price a schedule on a network model, once or as a sweep.

use super::args::{
    build_auto, build_nccl, check_plot_path, distinct_outputs, parse_engines, refuse_segment,
    value_name, AlgorithmList, BuildArgs, Given, OutputFile, SimFormat, SimulateArgs,
};
use crate::algorithms;
use crate::optimize::tune;
use crate::price;
use crate::runtime::spread::Spread;
use crate::schedule::{self, Schedule};
use crate::sim::{self, SimConfig, SimResult};
use crate::topology::Topology;
use crate::units::{format_bytes, parse_bytes, parse_size_list};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;
use std::io::Write;
use topocoll_base::Error;

/// One simulation's report, as printed in JSON.
#[derive(Serialize)]
pub struct Report {
    pub topology: String,
    pub collective: String,
    pub algorithm: String,
    pub ranks: usize,
    pub size_bytes: u64,
    pub engines: usize,
    pub time_s: f64,
    /// The collective's bound on the topology and node model, the same for
    /// every algorithm (`model::collective_bound`).
    pub lower_bound_s: Option<f64>,
    /// This schedule's own bound: its busiest link's bytes over its bandwidth.
    pub schedule_bound_s: Option<f64>,
    pub flows: u64,
    pub links_shared_fraction: f64,
    pub links_used_fraction: f64,
    /// Bytes on each class of link, both directions (a dragonfly's cable
    /// colours, a fat tree's levels: `sim::bytes_by_class`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bytes_by_link_class: Vec<(String, f64)>,
    pub events: u64,
    pub wall_s: f64,
    /// Ranks each simulated rank stood for (1: not folded).
    pub folded: u64,
    /// The schedule was generated op by op as the simulator ran (and so
    /// not verified here).
    pub streamed: bool,
    /// `--algorithm nccl`: the time NCCL's own cost model gives its choice
    /// (`model::nccl`), beside the simulated `time_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl_model_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<SimResult>,
}

impl Report {
    /// The report of one run on `topo`: what was simulated (collective,
    /// algorithm and size in bytes, as the caller names them) and what the
    /// run gave. The ranks are the topology's (the simulator refuses a
    /// schedule of another rank count).
    fn new(
        topo: &Topology,
        (collective, algorithm, size_bytes): (String, String, u64),
        engines: usize,
        result: &SimResult,
        (lower_bound_s, schedule_bound_s): (Option<f64>, Option<f64>),
        streamed: bool,
        detail: bool,
    ) -> Report {
        Report {
            topology: topo.name.clone(),
            collective,
            algorithm,
            ranks: topo.num_ranks(),
            size_bytes,
            engines,
            time_s: result.time_s,
            lower_bound_s,
            schedule_bound_s,
            flows: result.flows,
            links_shared_fraction: result.links_shared_fraction,
            links_used_fraction: result.links_used_fraction,
            bytes_by_link_class: sim::bytes_by_class(topo, &result.links),
            events: result.run.events,
            wall_s: result.run.wall_s,
            folded: result.run.folded,
            streamed,
            nccl_model_s: None,
            detail: detail.then(|| result.clone()),
        }
    }
}

/// Builds, verifies (unless told not to) and simulates one point.
pub fn simulate_one(
    a: &SimulateArgs,
    build: &BuildArgs,
    topo: &Topology,
    engines: usize,
    detail: bool,
) -> Result<(Report, Schedule, SimResult)> {
    let (s, mut runs) = simulate_point(a, build, topo, &[engines], detail)?;
    let (report, result) = runs.pop().expect("one engine count, one run");
    Ok((report, s, result))
}

/// One point of a sweep: its schedule built (or generated) and verified
/// once, then simulated with each engine count. Returns the schedule (its
/// header only when streamed) and a report and result per engine count.
fn simulate_point(
    a: &SimulateArgs,
    build: &BuildArgs,
    topo: &Topology,
    engines: &[usize],
    detail: bool,
) -> Result<(Schedule, Vec<(Report, SimResult)>)> {
    let cfgs = engines
        .iter()
        .map(|&e| a.config(e))
        .collect::<Result<Vec<SimConfig>>>()?;
    let (priced, what) = match &a.loaded {
        Some(s) => {
            if !a.no_verify {
                schedule::verify(s)?;
            }
            let what = (
                s.collective.name().to_string(),
                s.algorithm.clone(),
                s.count * s.elem_bytes(),
            );
            (
                price::price_schedule(s.as_ref().clone(), topo, &cfgs)?,
                what,
            )
        }
        None => {
            let req = build.request(Some(topo))?;
            let name = build.algorithm_name()?;
            // Streamed when asked (an error for algorithms without a
            // generator), or when the written-out schedule would be too large.
            let how = if a.stream {
                price::Build::Stream
            } else {
                price::Build::StreamIfLarge
            };
            let what = (
                build.collective_name()?.to_string(),
                name.to_string(),
                parse_bytes(build.size())?,
            );
            (
                price::price(
                    &req,
                    build.algorithm()?,
                    topo,
                    &cfgs,
                    if a.no_verify {
                        price::Check::Trust
                    } else {
                        price::Check::Verify
                    },
                    how,
                )?,
                what,
            )
        }
    };
    let bounds = (priced.lower_bound_s, priced.schedule_bound_s);
    let runs = engines
        .iter()
        .zip(priced.runs)
        .map(|(&e, result)| {
            let report = Report::new(
                topo,
                what.clone(),
                e,
                &result,
                bounds,
                priced.streamed,
                detail,
            );
            (report, result)
        })
        .collect();
    Ok((priced.schedule, runs))
}

pub fn run(mut a: SimulateArgs, given: &Given) -> Result<i32> {
    if let Some(flag) = given.first_of(&["PacketArgs"]) {
        return Err(Error::Invalid(format!(
            "{flag} is an option of the packet model (--model packet)"
        ))
        .into());
    }
    for option in std::mem::take(&mut a.cfg) {
        let (key, value) = super::args::cfg_option(&option)?;
        if !a.node.take_network_option(key, value) {
            return Err(Error::Invalid(format!(
                "--cfg={key}: not an option simulate takes (SimGrid's network options: {}; a collective's algorithm is --algorithm)",
                crate::sim::simgrid::NETWORK_KEYS.join(", ")
            ))
            .into());
        }
    }
    if let Some(path) = &a.schedule {
        if a.stream {
            return Err(Error::Invalid(
                "--stream generates an algorithm's schedule; it cannot stream one read with --schedule".into(),
            )
            .into());
        }
        let s = a.build.read_schedule(path)?;
        // The size and algorithm are the file's, for the sweep below too.
        a.build.size = Some((s.count * s.elem_bytes()).to_string());
        a.build.algorithm = Some(AlgorithmList::one(&s.algorithm));
        a.loaded = Some(std::sync::Arc::new(s));
    }
    let topo = a.topology()?;
    let sizes =
        parse_size_list(a.build.size()).map_err(|e| Error::Invalid(format!("--size: {e}")))?;
    let engines = parse_engines(&a.engines)?;
    let algorithms: Vec<String> = a
        .build
        .algorithm_list()?
        .names()
        .map(String::from)
        .collect();
    // Every name known before the first run (a sweep found a misspelt one
    // only when it reached it).
    if a.loaded.is_none() {
        let collective = a.build.collective()?;
        for name in algorithms.iter().filter(|n| *n != "auto" && *n != "nccl") {
            algorithms::find(collective.kind(), name)?;
        }
        if algorithms.iter().any(|n| n == "auto") {
            refuse_segment(&a.build)?;
        }
        if a.node.compute_bandwidth.is_some() && !collective.is_reduction() {
            return Err(Error::Invalid(format!(
                "--compute-bandwidth times combines, and {} combines nothing",
                collective.name()
            ))
            .into());
        }
    }
    let sweeping =
        a.sweep || a.plot.is_some() || sizes.len() > 1 || engines.len() > 1 || algorithms.len() > 1;
    if sweeping && a.trace.is_some() {
        return Err(Error::Invalid(
            "--trace records one run: give one size, engine count and algorithm".into(),
        )
        .into());
    }
    check_plot_path(a.plot.as_deref())?;
    distinct_outputs(&[
        ("--trace", a.trace.as_deref()),
        ("-o", a.output.as_deref()),
        ("--plot", a.plot.as_deref()),
    ])?;
    // Fail on an output path before the runs, not after them (and leave
    // an existing file as it was if they fail).
    let output = a.output.as_deref().map(OutputFile::open).transpose()?;
    let trace = a.trace.as_deref().map(OutputFile::open).transpose()?;
    let mut out: Box<dyn Write> = match output {
        Some(file) => Box::new(std::io::BufWriter::new(file)),
        // Not locked: a lock held across the runs would block anything else
        // that prints to standard output meanwhile.
        None => Box::new(std::io::stdout()),
    };
    if sweeping {
        return sweep(&a, &topo, &sizes, &engines, &algorithms, out);
    }
    let (build, auto) = match algorithms[0].as_str() {
        "auto" if a.loaded.is_none() => {
            let (b, label) = resolve_auto(&a, &a.build, &topo, engines[0])?;
            (b, Some((label, None)))
        }
        "nccl" if a.loaded.is_none() => {
            let (b, label, model_s) = build_nccl(&a.build, &topo)?;
            (b, Some((label, Some(model_s))))
        }
        _ => (a.build.clone(), None),
    };
    let (mut report, s, result) = super::progress::with_bar("simulate", |progress| {
        a.progress = progress;
        simulate_one(
            &a,
            &build,
            &topo,
            engines[0],
            matches!(a.format, SimFormat::Json | SimFormat::JsonCompact),
        )
    })?;
    if let Some((label, model_s)) = auto {
        report.algorithm = label;
        report.nccl_model_s = model_s;
    }
    if let (Some(path), Some(file)) = (&a.trace, trace) {
        let mut f = std::io::BufWriter::new(file);
        let name = |l: u32| topo.link_name(l);
        sim::write_chrome_trace(&result.spans, s.ranks, &result.link_samples, &name, &mut f)
            .and_then(|()| {
                f.flush()
                    .map_err(|e| sim::Error::io("writing the output", e))
            })
            .with_context(|| format!("writing '{path}'"))?;
    }
    // (An output file's errors name it; standard output's say so here.)
    let what = if a.output.is_some() {
        None
    } else {
        Some("standard output")
    };
    match a.format {
        SimFormat::Json => {
            writeln!(out, "{}", serde_json::to_string_pretty(&report)?).map_err(Into::into)
        }
        SimFormat::JsonCompact => {
            writeln!(out, "{}", serde_json::to_string(&report)?).map_err(Into::into)
        }
        SimFormat::Csv => write_csv(&mut out, &[Row::Run(Box::new(report))]),
        SimFormat::Text => print_text(&mut out, &report, &topo, &s, &result, &a),
    }
    .and_then(|()| out.flush().map_err(Into::into))
    .map_err(|e| match what {
        Some(w) => e.context(format!("writing {w}")),
        None => e,
    })?;
    Ok(0)
}

fn print_text(
    out: &mut dyn Write,
    r: &Report,
    topo: &Topology,
    s: &Schedule,
    res: &SimResult,
    a: &SimulateArgs,
) -> Result<()> {
    writeln!(
        out,
        "{} {} on {}",
        r.collective,
        r.algorithm,
        topo.describe()
    )?;
    writeln!(
        out,
        "size {} per {} ({} x {}), engines {}, sharing {}/{}",
        // A v-collective's --size is only a generator's mean: its largest block.
        format_bytes(if s.sizes().is_some() {
            s.count * s.elem_bytes()
        } else {
            r.size_bytes
        }),
        if s.sizes().is_some() {
            "largest block"
        } else if s.collective.size_is_block() {
            "block"
        } else {
            "buffer"
        },
        s.count,
        s.dtype.name(),
        r.engines,
        value_name(&a.node.sharing),
        if a.node.simgrid {
            "rtt, SimGrid's flow model".to_string()
        } else {
            value_name(&a.node.fairness)
        }
    )?;
    let sec = crate::units::format_seconds;
    writeln!(out, "time            {}", sec(r.time_s))?;
    if let Some(m) = r.nccl_model_s {
        writeln!(
            out,
            "NCCL's model    {}  (time / model = {:.6})",
            sec(m),
            r.time_s / m
        )?;
    }
    match r.lower_bound_s {
        Some(lb) if lb > 0.0 => writeln!(
            out,
            "lower bound     {}  (time / bound = {:.6})",
            sec(lb),
            r.time_s / lb
        )?,
        // A bound of 0 (nothing to move) has no ratio.
        Some(lb) => writeln!(out, "lower bound     {}", sec(lb))?,
        None => writeln!(out, "lower bound     unknown")?,
    }
    if let Some(sb) = r.schedule_bound_s {
        writeln!(
            out,
            "schedule bound  {}  (this schedule's busiest link)",
            sec(sb)
        )?;
    }
    writeln!(out, "flows           {}", r.flows)?;
    let n = res.links.len();
    writeln!(
        out,
        "links           {:.2}% ever shared by 2+ flows, {:.2}% used, of {n} directed links",
        100.0 * r.links_shared_fraction,
        100.0 * r.links_used_fraction
    )?;
    if !r.bytes_by_link_class.is_empty() {
        let classes: Vec<String> = r
            .bytes_by_link_class
            .iter()
            .map(|(c, b)| format!("{c} {b}"))
            .collect();
        writeln!(out, "bytes by class  {}", classes.join(", "))?;
    }
    if let Some((l, busiest)) = res
        .links
        .iter()
        .enumerate()
        .max_by(|x, y| x.1.utilisation.total_cmp(&y.1.utilisation))
    {
        writeln!(
            out,
            "busiest link    {}: {:.1}% utilised, {} bytes, peak {} flows",
            if l < topo.links.len() {
                topo.link_name(l as u32)
            } else {
                format!(
                    "{} -> {}",
                    topo.node_name(busiest.from),
                    topo.node_name(busiest.to)
                )
            },
            100.0 * busiest.utilisation,
            busiest.bytes,
            busiest.peak_flows
        )?;
    }
    let (lo, hi) = res
        .rank_finish_s
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &t| {
            (lo.min(t), hi.max(t))
        });
    writeln!(out, "rank finish     {} .. {}", sec(lo), sec(hi))?;
    writeln!(
        out,
        "simulated in    {:.3} s wall ({} events, {} rate solves in {} rounds over {} flows, {} of all flows; {} flow ends moved)",
        r.wall_s,
        r.events,
        res.run.recomputes,
        res.run.rounds,
        res.run.recomputed_flows,
        res.run.full_solves,
        res.run.rescheduled_flows
    )?;
    writeln!(out, "driver          {}", res.run.driver)?;
    if res.run.folded > 1 {
        writeln!(
            out,
            "folded          each simulated rank stood for {} translates (--no-fold to simulate all)",
            res.run.folded
        )?;
    }
    if res.run.by_rank_threads > 0 {
        let tiled = if res.run.by_rank_planes > 0 {
            format!(
                " of one plane each, {} planes (--no-tile for whole sweeps)",
                res.run.by_rank_planes
            )
        } else {
            String::new()
        };
        writeln!(
            out,
            "by rank         no flow shared a link, so ranks ran in turn on {} thread(s), in {} sweeps{tiled} (--no-by-rank to run event by event)",
            res.run.by_rank_threads, res.run.by_rank_sweeps
        )?;
    }
    if r.streamed {
        writeln!(
            out,
            "schedule        streamed: generated op by op, never written out, so not verified here (the test suite checks the generator against the written-out schedule)"
        )?;
    }
    Ok(())
}

fn sweep(
    a: &SimulateArgs,
    topo: &Topology,
    sizes: &[u64],
    engines: &[usize],
    algorithms: &[String],
    mut out: Box<dyn Write>,
) -> Result<i32> {
    // The points run side by side, one per core: each on one thread unless
    // told otherwise (threads that wait for each other at barriers should
    // not outnumber the cores).
    let mut one_thread;
    let a = if a.drivers.threads.is_none() {
        one_thread = a.clone();
        one_thread.drivers.threads = Some(1);
        &one_thread
    } else {
        a
    };
    if a.build.segment.is_some()
        || a.build.lanes.is_some()
        || a.build.radix.is_some()
        || a.build.inter.is_some()
        || a.build.channels.is_some()
        || a.build.protocol.is_some()
    {
        a.build.check_per_algorithm(a.build.collective()?)?;
    }
    // A point is an algorithm and a size: its schedule is built and verified
    // once, and simulated with every engine count. An `auto` point is its
    // choice at one engine count (the choice may differ with it), decided
    // here, one after another, so that each decision priced is kept in the
    // one table file the points share.
    let spread = start_spread(a)?;
    let mut points: Vec<(BuildArgs, Vec<usize>, Option<Chosen>)> = Vec::new();
    for alg in algorithms {
        for &size in sizes {
            let mut b = a.build.for_algorithm(alg);
            b.size = Some(size.to_string());
            if alg == "auto" && a.loaded.is_none() {
                for &e in engines {
                    let (chosen, label) = resolve_auto(a, &b, topo, e)?;
                    points.push((chosen, vec![e], Some((label, None))));
                }
            } else if alg == "nccl" && a.loaded.is_none() {
                let (chosen, label, model_s) = build_nccl(&b, topo)?;
                points.push((chosen, engines.to_vec(), Some((label, Some(model_s)))));
            } else {
                points.push((b, engines.to_vec(), None));
            }
        }
    }
    let bar = ProgressBar::new(points.iter().map(|p| p.1.len() as u64).sum());
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} simulate [{bar:30}] {pos}/{len} {elapsed_precise} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // Point i is process (i mod N)'s ([`Spread::mine`]; the world itself
    // stays on this thread).
    let (rank, ranks) = (spread.rank(), spread.size());
    let results: Vec<Option<Result<Vec<Row>>>> = points
        .par_iter()
        .enumerate()
        .map(|(i, p)| (i % ranks == rank).then_some(p))
        .map(|point| {
            let (b, engines, label) = point?;
            let r = match simulate_point(a, b, topo, engines, false) {
                Ok((_, runs)) => Ok(runs
                    .into_iter()
                    .map(|(mut r, _)| {
                        if let Some((l, model_s)) = label {
                            r.algorithm = l.clone();
                            r.nccl_model_s = *model_s;
                        }
                        Row::Run(Box::new(r))
                    })
                    .collect()),
                // An algorithm that does not apply here is a row saying why,
                // and the sweep goes on.
                Err(e) => match super::unsupported(&e) {
                    Some(reason) => Ok(engines
                        .iter()
                        .map(|&e| Row::Skipped {
                            topology: topo.name.clone(),
                            collective: b.collective_name().unwrap_or("").to_string(),
                            algorithm: b.algorithm_name().unwrap_or("").to_string(),
                            size_bytes: parse_bytes(b.size()).unwrap_or(0),
                            engines: e,
                            skipped: reason.clone(),
                        })
                        .collect()),
                    None => Err(e),
                },
            };
            bar.inc(engines.len() as u64);
            Some(r)
        })
        .collect();
    bar.finish_and_clear();
    if spread.size() > 1 {
        return write_spread(&spread, a.format, results, out);
    }
    let mut rows = Vec::new();
    for r in results.into_iter().flatten() {
        rows.extend(r?);
    }
    if let Some(path) = &a.plot {
        plot_sweep(path, topo, &rows)?;
    }
    match a.format {
        SimFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?,
        SimFormat::JsonCompact => writeln!(out, "{}", serde_json::to_string(&rows)?)?,
        // A sweep's text is its table.
        SimFormat::Csv | SimFormat::Text => write_csv(&mut out, &rows)?,
    }
    out.flush()?;
    Ok(0)
}

/// A point's label where it is a choice (`auto:…`, `nccl:…`), with
/// NCCL's modelled time (seconds) for NCCL's.
type Chosen = (String, Option<f64>);

/// The processes the sweep's points are spread over: this one, or
/// `mpirun`'s (every process given the same arguments, `--plot` refused:
/// a plot is drawn from rows one process holds). A refusal is rank 0's
/// line; the other processes end quietly.
fn start_spread(a: &SimulateArgs) -> Result<Spread> {
    let s = super::spread::start()?;
    if s.size() > 1 && a.plot.is_some() {
        return Err(super::spread::refused_quietly(
            Error::Invalid(format!(
                "--plot draws one process's rows: run the sweep without mpirun to plot it (here {} processes)",
                s.size()
            ))
            .into(),
        ));
    }
    Ok(s)
}

/// A spread sweep's end: each process sends its points' rows, written as
/// `format` writes them, and rank 0 writes them in point order, as one
/// process writes the sweep (a point that failed ends the sweep with its
/// error, the first in point order, as it does alone).
fn write_spread(
    spread: &Spread,
    format: SimFormat,
    results: Vec<Option<Result<Vec<Row>>>>,
    mut out: Box<dyn Write>,
) -> Result<i32> {
    let points = results.len();
    let mut mine = Vec::new();
    for r in results.into_iter().flatten() {
        mine.push(super::spread::point_bytes(
            r.and_then(|rows| Ok(rows_text(format, &rows)?.into_bytes())),
        ));
    }
    let Some(all) = spread.gather(points, mine)? else {
        return Ok(0);
    };
    let parts: Vec<String> = super::spread::point_results(&all)?
        .into_iter()
        .map(|text| String::from_utf8_lossy(text).into_owned())
        .collect();
    let parts: Vec<&str> = parts
        .iter()
        .map(String::as_str)
        .filter(|p| !p.is_empty())
        .collect();
    match format {
        SimFormat::Json if parts.is_empty() => writeln!(out, "[]")?,
        SimFormat::Json => writeln!(out, "[\n{}\n]", parts.join(",\n"))?,
        SimFormat::JsonCompact => writeln!(out, "[{}]", parts.join(","))?,
        SimFormat::Csv | SimFormat::Text => {
            write_csv(&mut out, &[])?;
            for p in parts {
                out.write_all(p.as_bytes())?;
            }
        }
    }
    out.flush()?;
    Ok(0)
}

/// One point's rows as a sweep writes them among the others': pretty JSON
/// an array's element deep (two spaces in), compact JSON, or CSV lines
/// without the header.
fn rows_text(format: SimFormat, rows: &[Row]) -> Result<String> {
    Ok(match format {
        SimFormat::Json => rows
            .iter()
            .map(|r| {
                serde_json::to_string_pretty(r).map(|t| {
                    t.lines()
                        .map(|l| format!("  {l}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
            })
            .collect::<serde_json::Result<Vec<_>>>()?
            .join(",\n"),
        SimFormat::JsonCompact => rows
            .iter()
            .map(serde_json::to_string)
            .collect::<serde_json::Result<Vec<_>>>()?
            .join(","),
        SimFormat::Csv | SimFormat::Text => {
            let mut text = Vec::new();
            write_csv(&mut text, rows)?;
            let text = String::from_utf8_lossy(&text).into_owned();
            text.split_once('\n')
                .map_or(String::new(), |(_, rest)| rest.to_string())
        }
    })
}

/// `--algorithm auto` at one point: the arguments that build the choice the
/// tuning table (cached, or priced now) makes for this size, network and
/// node model, and the name to report it under.
fn resolve_auto(
    a: &SimulateArgs,
    b: &BuildArgs,
    topo: &Topology,
    engines: usize,
) -> Result<(BuildArgs, String)> {
    let req = b.request(Some(topo))?;
    let problem = tune::Problem {
        collective: req.collective,
        dtype: req.dtype,
        op: req.op,
        topology: topo,
        config: a.config(engines)?,
        engines: vec![engines],
        library: None,
        counts: b.tune_counts(&req)?,
        search: tune::Search::Winner,
    };
    build_auto(&problem, b)
}

/// The sweep's time against size, a line per algorithm and engine count.
fn plot_sweep(path: &str, topo: &Topology, rows: &[Row]) -> Result<()> {
    use crate::reproduce::plot::{chart_file, Scale, Series};
    let mut series: Vec<Series> = Vec::new();
    for row in rows {
        let Row::Run(r) = row else {
            continue;
        };
        let name = format!(
            "{}, {} engine{}",
            r.algorithm,
            r.engines,
            if r.engines == 1 { "" } else { "s" }
        );
        let point = (r.size_bytes as f64, r.time_s);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name,
                points: vec![point],
            }),
        }
    }
    let collective = rows
        .iter()
        .map(|r| match r {
            Row::Run(r) => r.collective.clone(),
            Row::Skipped { collective, .. } => collective.clone(),
        })
        .next()
        .unwrap_or_default();
    chart_file(
        std::path::Path::new(path),
        &format!("{collective} on {}", topo.name),
        ("size (bytes)", Scale::Log),
        ("time (s)", Scale::Log),
        &series,
    )
    .with_context(|| format!("--plot {path}"))
}

/// A row of a sweep: a run, or a point whose algorithm does not apply.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Row {
    Run(Box<Report>),
    Skipped {
        topology: String,
        collective: String,
        algorithm: String,
        size_bytes: u64,
        engines: usize,
        skipped: String,
    },
}

/// The sweep table as CSV.
/// A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a
/// line break, as a topology file's name may.
fn csv_field(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\"")).into()
    } else {
        text.into()
    }
}

pub fn write_csv(out: &mut dyn Write, rows: &[Row]) -> Result<()> {
    writeln!(
        out,
        "topology,collective,algorithm,ranks,size_bytes,engines,time_s,lower_bound_s,ratio,schedule_bound_s,flows,links_shared_fraction,wall_s,skipped"
    )?;
    for row in rows {
        let r = match row {
            Row::Run(r) => r,
            Row::Skipped {
                topology,
                collective,
                algorithm,
                size_bytes,
                engines,
                skipped,
            } => {
                writeln!(
                    out,
                    "{},{collective},{},,{size_bytes},{engines},,,,,,,,{}",
                    csv_field(topology),
                    csv_field(algorithm),
                    csv_field(skipped)
                )?;
                continue;
            }
        };
        let lb = r
            .lower_bound_s
            .map_or(String::new(), |x| format!("{x:.9e}"));
        let ratio = r
            .lower_bound_s
            .filter(|&x| x > 0.0)
            .map_or(String::new(), |x| format!("{:.6}", r.time_s / x));
        let sb = r
            .schedule_bound_s
            .map_or(String::new(), |x| format!("{x:.9e}"));
        writeln!(
            out,
            "{},{},{},{},{},{},{:.9e},{},{},{},{},{:.6},{:.3},",
            csv_field(&r.topology),
            r.collective,
            csv_field(&r.algorithm),
            r.ranks,
            r.size_bytes,
            r.engines,
            r.time_s,
            lb,
            ratio,
            sb,
            r.flows,
            r.links_shared_fraction,
            r.wall_s
        )?;
    }
    Ok(())
}
