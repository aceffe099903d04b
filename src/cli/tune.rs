//! `topocoll tune` and `--algorithm auto`: the algorithm the simulator
//! predicts fastest, per size, on a network or on this machine.
//!
//! On a `--topology` the node model is the one `simulate` takes (the same
//! flags). Without one, the network is the machine the runtime runs on: one
//! host with the ranks on it, its link inside shared by all of them, priced
//! with the parameters `tune --calibrate` measured ([`Machine`]).

use super::simulate::SimulateArgs;
use super::{BuildArgs, OutputFile};
use crate::error::Error;
use crate::optimize::tune::{self, Cache, Decision, Problem, Table};
use crate::schedule::{Collective, Dtype, ReduceOp};
use crate::sim::SimConfig;
use crate::topology::{self, Topology};
use crate::units::{format_bytes, format_seconds, parse_size_list};
use anyhow::{Context, Result};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args)]
pub struct TuneArgs {
    #[command(flatten)]
    pub sim: SimulateArgs,
    /// Sizes to decide at: a range (8B..1GiB: 8B, 16B, ... doubling) or a
    /// list (1KiB,1MiB); sizes are as --size's [default: 8B..1GiB].
    #[arg(long)]
    pub sizes: Option<String>,
    /// Where decision tables and the calibration are kept [default:
    /// $TOPOCOLL_CACHE, $XDG_CACHE_HOME/topocoll or ~/.cache/topocoll].
    #[arg(long)]
    pub cache_dir: Option<String>,
    /// Price every size again, ignoring (and replacing) the cached table.
    #[arg(long)]
    pub no_cache: bool,
    /// Also write the table as an Open MPI coll/tuned dynamic rules file.
    #[arg(long)]
    pub export_ompi: Option<String>,
    /// Also write the table as MPICH's collective selection JSON.
    #[arg(long)]
    pub export_mpich: Option<String>,
    /// --export-mpich: the selection file to put the rules in, replacing its
    /// rules for the collective (MPICH needs a rule for every collective a
    /// program calls: start from MPICH's own, see docs/tuning.md).
    #[arg(long)]
    pub mpich_base: Option<String>,
    /// Measure this machine's node parameters on the runtime instead
    /// (see docs/tuning.md) and keep them for tuning without --topology.
    #[arg(long)]
    pub calibrate: bool,
    /// --calibrate: threads or mpi (under mpirun) [default: threads].
    #[arg(long)]
    pub backend: Option<String>,
}

/// This machine as the simulator prices it: one host whose ranks share a
/// link inside it, each message costing the sender `overhead_s` and taking
/// `latency_s` to arrive.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    /// How the figures were obtained.
    pub source: String,
    /// Seconds of CPU per message on the sender.
    pub overhead_s: f64,
    /// Seconds from a message's send to its arrival, beyond the sender's
    /// overhead and the bytes' time (the link inside the host's latency).
    #[serde(default)]
    pub latency_s: f64,
    /// Bytes/s of one message alone (one flow's cap).
    pub pair_bandwidth: f64,
    /// Bytes/s of the host's ranks' messages together (the link inside it).
    pub node_bandwidth: f64,
    /// Bytes/s one rank combines.
    pub compute_bandwidth: f64,
}

impl Machine {
    /// Figures of a typical shared-memory node, used until `tune
    /// --calibrate` has measured this one.
    pub fn typical() -> Machine {
        Machine {
            source: "typical figures (topocoll tune --calibrate measures this machine's)".into(),
            overhead_s: 2e-6,
            latency_s: 1e-6,
            pair_bandwidth: 5e9,
            node_bandwidth: 10e9,
            compute_bandwidth: 4e9,
        }
    }

    fn path(dir: &std::path::Path) -> PathBuf {
        dir.join("machine.json")
    }

    /// Keeps the calibration in `dir`, whole or not at all (a file of its
    /// own, renamed over the old one); returns the file.
    pub fn store(&self, dir: &std::path::Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create '{}'", dir.display()))?;
        let path = Self::path(dir);
        let tmp = dir.join(format!("machine.json.{}.tmp", std::process::id()));
        std::fs::write(&tmp, serde_json::to_string_pretty(self)?)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .with_context(|| format!("writing '{}'", path.display()))?;
        Ok(path)
    }

    /// The calibration kept in `dir`, or the typical figures.
    pub fn load(dir: Option<&std::path::Path>) -> Machine {
        dir.and_then(|d| std::fs::read_to_string(Self::path(d)).ok())
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(Machine::typical)
    }

    /// One host with `ranks` ranks on it.
    pub fn topology(&self, ranks: usize) -> Result<Topology> {
        let mut t = topology::parse_spec("torus:1")?;
        t.place_ranks(
            ranks,
            &topology::RankMap::Block,
            self.node_bandwidth,
            self.latency_s,
        )?;
        t.name = format!("this machine ({ranks} ranks)");
        Ok(t)
    }

    /// The node model.
    pub fn config(&self, reduction: bool) -> SimConfig {
        SimConfig {
            overhead_s: self.overhead_s,
            compute_bandwidth: reduction.then_some(self.compute_bandwidth),
            flow_cap: Some(self.pair_bandwidth),
            ..SimConfig::default()
        }
    }
}

/// The cache directory: `--cache-dir`, or the default.
pub fn cache_dir(flag: Option<&str>) -> Option<PathBuf> {
    flag.map(PathBuf::from).or_else(tune::default_cache_dir)
}

/// `--algorithm auto` does not take `--segment`: its choice includes one.
pub fn refuse_segment(b: &BuildArgs) -> Result<()> {
    if b.segment.is_some() {
        return Err(Error::Invalid(
            "--segment: --algorithm auto chooses the segment (topocoll tune shows its choices)"
                .into(),
        )
        .into());
    }
    Ok(())
}

/// `--algorithm auto` at `b`'s size: the arguments that build the choice
/// of `problem`'s table (from the default cache, or priced now and kept
/// there), with its segment, and the name the run is reported under
/// (`auto:ring`, `auto:pipeline/32KiB`).
pub fn build_auto(problem: &Problem, b: &BuildArgs) -> Result<(BuildArgs, String)> {
    refuse_segment(b)?;
    let size = crate::units::parse_bytes(b.size())?;
    let cache = cache_dir(None).map(|dir| Cache { dir });
    let (table, unkept) = problem.tune(&[size], cache.as_ref(), |_| {})?;
    warn_unkept(unkept);
    let choice = &table
        .get(size)
        .expect("tune decides every size asked for")
        .choice;
    let mut chosen = b.for_algorithm(&choice.algorithm);
    chosen.segment = choice.segment_bytes.map(|s| s.to_string());
    Ok((chosen, format!("auto:{}", choice.label(false))))
}

/// A cache that could not be written costs a pricing next time, nothing
/// else: said on stderr, and the run goes on.
fn warn_unkept(unkept: Option<crate::error::Error>) {
    if let Some(e) = unkept {
        eprintln!("topocoll: warning: {e}; the table is not kept");
    }
}

/// The runtime's network and node model: `ranks` ranks on this machine,
/// or `topo` when given, with the calibration in the default cache.
pub struct MachineProblem {
    pub topology: Topology,
    pub config: SimConfig,
}

impl MachineProblem {
    pub fn new(topo: Option<Topology>, ranks: usize, reduction: bool) -> Result<Self> {
        let m = Machine::load(cache_dir(None).as_deref());
        let topology = match topo {
            Some(t) => t,
            None => m.topology(ranks)?,
        };
        Ok(MachineProblem {
            topology,
            config: m.config(reduction),
        })
    }

    pub fn problem(
        &self,
        collective: Collective,
        dtype: Dtype,
        op: ReduceOp,
        engines: Vec<usize>,
    ) -> Problem<'_> {
        Problem {
            collective,
            dtype,
            op,
            topology: &self.topology,
            config: self.config.clone(),
            engines,
        }
    }
}

pub fn run(a: TuneArgs) -> Result<i32> {
    if a.calibrate {
        return super::calibrate::run(&a);
    }
    if a.backend.is_some() {
        return Err(Error::Invalid("--backend is an option of --calibrate".into()).into());
    }
    for (flag, given) in [
        ("--size (tune takes --sizes)", a.sim.build.size.is_some()),
        (
            "--algorithm (tune tries them all)",
            a.sim.build.algorithm.is_some(),
        ),
        (
            "--segment (tune tries several)",
            a.sim.build.segment.is_some(),
        ),
        ("--schedule", a.sim.schedule.is_some()),
        ("--sweep", a.sim.sweep),
        ("--trace", a.sim.trace.is_some()),
        ("--stream", a.sim.stream),
    ] {
        if given {
            return Err(Error::Invalid(format!("{flag} is not an option of tune")).into());
        }
    }
    if a.sim.model != "flow" {
        return Err(Error::Invalid("tune prices with the flow model (--model flow)".into()).into());
    }
    if !matches!(a.sim.format.as_str(), "text" | "json" | "csv") {
        return Err(Error::Invalid(format!(
            "--format '{}' is not text, json or csv",
            a.sim.format
        ))
        .into());
    }
    let sizes = parse_size_list(a.sizes.as_deref().unwrap_or("8B..1GiB"))
        .map_err(|e| Error::Invalid(format!("--sizes: {e}")))?;
    let collective = a.sim.build.collective()?;
    let engines = super::simulate::parse_engines(&a.sim.engines)?;
    let dir = cache_dir(a.cache_dir.as_deref());
    // Without --topology: this machine, with its calibrated model.
    let mut model = None;
    let (topo, config) = if a.sim.build.topology.is_none() {
        let ranks =
            a.sim.build.ranks.ok_or_else(|| {
                Error::Invalid("give --topology, or --ranks for this machine".into())
            })?;
        for (flag, given) in [
            ("--bandwidth", a.sim.bandwidth.is_some()),
            ("--latency", a.sim.latency.is_some()),
            ("--overhead", a.sim.overhead != 0.0),
            ("--compute-bandwidth", a.sim.compute_bandwidth.is_some()),
            ("--flow-cap", a.sim.flow_cap.is_some()),
            ("--tcp-window", a.sim.tcp_window.is_some()),
            ("--injection-bandwidth", a.sim.injection_bandwidth.is_some()),
            ("--ejection-bandwidth", a.sim.ejection_bandwidth.is_some()),
            ("--sharing", a.sim.sharing != "maxmin"),
            ("--fairness", a.sim.fairness != "equal"),
            ("--torus-tie", a.sim.torus_tie != "plus"),
            ("--header-bytes", a.sim.header_bytes != 0),
            ("--rendezvous", a.sim.rendezvous),
            ("--skew", a.sim.skew.is_some()),
            ("--ranks-per-node", a.sim.build.ranks_per_node.is_some()),
            ("--map", a.sim.build.map.is_some()),
            ("--node-bandwidth", a.sim.build.node_bandwidth.is_some()),
            ("--node-latency", a.sim.build.node_latency.is_some()),
        ] {
            if given {
                return Err(Error::Invalid(format!(
                    "{flag}: without --topology the node model is this machine's calibration (tune --calibrate)"
                ))
                .into());
            }
        }
        let m = model.insert(Machine::load(dir.as_deref()));
        (m.topology(ranks)?, m.config(collective.is_reduction()))
    } else {
        (a.sim.topology()?, a.sim.config(engines[0])?)
    };
    let req = a.sim.build.request(Some(&topo))?;
    let problem = Problem {
        collective,
        dtype: req.dtype,
        op: req.op,
        topology: &topo,
        config,
        engines,
    };
    // Fail on output paths before the pricing.
    let output = a.sim.output.as_deref().map(OutputFile::open).transpose()?;
    let ompi = a.export_ompi.as_deref().map(OutputFile::open).transpose()?;
    let base = match (&a.mpich_base, &a.export_mpich) {
        (Some(_), None) => {
            return Err(Error::Invalid(
                "--mpich-base is the base of --export-mpich's file: give that too".into(),
            )
            .into())
        }
        (Some(p), Some(_)) => Some(
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read --mpich-base '{p}'"))?,
        ),
        _ => None,
    };
    let mpich = a
        .export_mpich
        .as_deref()
        .map(OutputFile::open)
        .transpose()?;
    if let Some(p) = a
        .sim
        .plot
        .as_deref()
        .filter(|p| !(p.ends_with(".svg") || p.ends_with(".png")))
    {
        return Err(
            Error::Invalid(format!("--plot '{p}': give a file ending in .svg or .png")).into(),
        );
    }
    let cache = dir.map(|dir| Cache { dir });
    if a.no_cache {
        if let Some(c) = &cache {
            let _ = std::fs::remove_file(c.path(collective.name(), &problem.key()));
        }
    }
    let bar = indicatif::ProgressBar::new(sizes.len() as u64);
    let (table, unkept) = problem.tune(&sizes, cache.as_ref(), |s| {
        bar.set_message(format_bytes(s));
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    warn_unkept(unkept);
    let rows: Vec<&Decision> = sizes.iter().filter_map(|&s| table.get(s)).collect();
    let show_engines = problem.engines.len() > 1;
    if let Some(path) = &a.sim.plot {
        plot(path, &table, &rows)?;
    }
    if let Some(f) = ompi {
        write_file(f, a.export_ompi.as_deref().unwrap_or_default(), |w| {
            crate::optimize::mpi_rules::write_ompi(w, &table, &rows, problem.topology.num_ranks())
        })?;
    }
    if let Some(f) = mpich {
        write_file(f, a.export_mpich.as_deref().unwrap_or_default(), |w| {
            crate::optimize::mpi_rules::write_mpich(
                w,
                &table,
                &rows,
                problem.topology.num_ranks(),
                base.as_deref(),
            )
        })?;
    }
    let mut out: Box<dyn Write> = match output {
        Some(f) => Box::new(std::io::BufWriter::new(f)),
        None => Box::new(std::io::stdout()),
    };
    match a.sim.format.as_str() {
        "json" => {
            let mut t = table.clone();
            t.decisions = rows.iter().map(|&d| d.clone()).collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&t)?)?;
        }
        "csv" => {
            writeln!(
                out,
                "size_bytes,algorithm,segment_bytes,engines,predicted_s,chosen"
            )?;
            for d in &rows {
                for p in &d.candidates {
                    let Some(t) = p.time_s else { continue };
                    writeln!(
                        out,
                        "{},{},{},{},{:.9e},{}",
                        d.size_bytes,
                        p.candidate.algorithm,
                        p.candidate
                            .segment_bytes
                            .map_or(String::new(), |s| s.to_string()),
                        p.candidate.engines,
                        t,
                        p.candidate == d.choice
                    )?;
                }
            }
        }
        _ => {
            writeln!(out, "{}", table.description)?;
            if let Some(m) = &model {
                writeln!(out, "node model: {}", m.source)?;
            }
            if let Some(c) = &cache {
                writeln!(
                    out,
                    "table: {}",
                    c.path(&table.collective, &table.key).display()
                )?;
            }
            writeln!(
                out,
                "{:>10}  {:<28} {:>12}  runner-up",
                "size", "choice", "predicted"
            )?;
            for d in &rows {
                let runner = d
                    .candidates
                    .iter()
                    .filter(|p| p.candidate.algorithm != d.choice.algorithm)
                    .filter_map(|p| p.time_s.map(|t| (t, p)))
                    .min_by(|x, y| x.0.total_cmp(&y.0));
                let runner = match runner {
                    Some((t, p)) => format!(
                        "{} (+{:.0}%)",
                        p.candidate.label(show_engines),
                        (t / d.predicted_s - 1.0) * 100.0
                    ),
                    None => "-".into(),
                };
                writeln!(
                    out,
                    "{:>10}  {:<28} {:>12}  {runner}",
                    format_bytes(d.size_bytes),
                    d.choice.label(show_engines),
                    format_seconds(d.predicted_s)
                )?;
            }
        }
    }
    out.flush()?;
    Ok(0)
}

fn write_file(
    f: OutputFile,
    path: &str,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let mut w = std::io::BufWriter::new(f);
    body(&mut w)
        .and_then(|()| w.flush())
        .with_context(|| format!("writing '{path}'"))
}

/// Predicted time against size, a line per algorithm (its best segment and
/// engine count at each size), the choice marked.
fn plot(path: &str, table: &Table, rows: &[&Decision]) -> Result<()> {
    use crate::reproduce::plot::{chart_file_marked, Scale, Series};
    let mut series: Vec<Series> = Vec::new();
    for d in rows {
        let mut best: Vec<(&str, f64)> = Vec::new();
        for p in &d.candidates {
            let Some(t) = p.time_s else { continue };
            match best.iter_mut().find(|b| b.0 == p.candidate.algorithm) {
                Some(b) => b.1 = b.1.min(t),
                None => best.push((&p.candidate.algorithm, t)),
            }
        }
        for (alg, t) in best {
            let point = (d.size_bytes as f64, t);
            match series.iter_mut().find(|s| s.name == alg) {
                Some(s) => s.points.push(point),
                None => series.push(Series {
                    name: alg.to_string(),
                    points: vec![point],
                }),
            }
        }
    }
    let chosen = Series {
        name: "chosen".into(),
        points: rows
            .iter()
            .map(|d| (d.size_bytes as f64, d.predicted_s))
            .collect(),
    };
    chart_file_marked(
        std::path::Path::new(path),
        &table.description,
        ("size (bytes)", Scale::Log),
        ("predicted time (s)", Scale::Log),
        &series,
        Some(&chosen),
    )
    .with_context(|| format!("--plot {path}"))
}
