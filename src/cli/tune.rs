//! `topocoll tune` and `--algorithm auto`: the algorithm the simulator
//! predicts fastest, per size, on a network or on this machine.
//!
//! On a `--topology` the node model is the one `simulate` takes (the same
//! flags). Without one, the network is the machine the runtime runs on: one
//! host with the ranks on it, its link inside shared by all of them, priced
//! with the parameters `tune --calibrate` measured ([`Machine`]).

use super::args::{
    check_plot_path, distinct_outputs, parse_engines, warn_notes, Given, OutputFile, TableFormat,
    TuneArgs,
};
use crate::optimize::machine::{cache_dir, Machine};
use crate::optimize::mpi_rules::{self, Library};
use crate::optimize::nccl_tuner;
use crate::optimize::tune::{Cache, Counts, Decision, Notes, Problem, Search, Table};
use crate::units::{format_bytes, format_seconds, parse_size_list};
use anyhow::{Context, Result};
use std::io::Write;
use topocoll_base::Error;

/// `tune`: under `mpirun`, every process refuses what one would (the same
/// arguments, the same cache), and rank 0 alone says why.
pub fn run(a: TuneArgs, given: &Given) -> Result<i32> {
    tune(a, given).map_err(super::spread::refused_quietly)
}

fn tune(a: TuneArgs, given: &Given) -> Result<i32> {
    if let Some(flag) = given.first_of(&["CalibrateArgs"]) {
        return Err(Error::Invalid(format!("{flag} is an option of --calibrate")).into());
    }
    if let Some(flag) = given.first_of(&["one_choice"]) {
        return Err(Error::Invalid(format!(
            "{flag} is not an option of tune (it tries every algorithm and segment at each of --sizes)"
        ))
        .into());
    }
    distinct_outputs(&[
        ("-o", a.output.as_deref()),
        ("--plot", a.plot.as_deref()),
        ("--export-ompi", a.export_ompi.as_deref()),
        ("--export-mpich", a.export_mpich.as_deref()),
        ("--export-nccl", a.export_nccl.as_deref()),
    ])?;
    let sizes = parse_size_list(a.sizes.as_deref().unwrap_or("8B..1GiB"))
        .map_err(|e| Error::Invalid(format!("--sizes: {e}")))?;
    let collective = a.build.collective()?;
    let engines = parse_engines(&a.engines)?;
    let dir = cache_dir(a.cache_dir.as_deref());
    // Without --topology: this machine, with its calibrated model.
    let mut model = None;
    let (topo, config) = if a.build.topology.is_none() {
        let ranks = a
            .build
            .ranks
            .ok_or_else(|| Error::Invalid("give --topology, or --ranks for this machine".into()))?;
        if let Some(flag) = given.first_of(&["NodeModelArgs", "machine_model", "placement"]) {
            return Err(Error::Invalid(format!(
                "{flag}: without --topology the node model is this machine's calibration (tune --calibrate)"
            ))
            .into());
        }
        let m = model.insert(Machine::load(dir.as_deref())?);
        (m.topology(ranks)?, m.config(collective.is_reduction()))
    } else {
        (a.node.topology(&a.build, a.latency)?, a.config(engines[0])?)
    };
    let req = a.build.request(Some(&topo))?;
    let counts = a.build.tune_counts(&req)?;
    // A file's counts are the same at every size: one row, labelled by the
    // largest block.
    let sizes = match (&counts, &a.sizes) {
        (Some(Counts::Fixed(_)), Some(_)) => {
            return Err(Error::Invalid(format!(
            "--sizes: the blocks are {}'s counts, the same at every size; tune prices them once",
            a.build.counts.as_deref().unwrap_or_default()
        ))
            .into())
        }
        (Some(Counts::Fixed(v)), None) => vec![v.max_block() * req.dtype.size()],
        _ => sizes,
    };
    let problem = Problem {
        collective,
        dtype: req.dtype,
        op: req.op,
        topology: &topo,
        config,
        engines,
        library: None,
        counts,
        search: Search::Every,
    };
    // Fail on output paths before the pricing.
    let output = a.output.as_deref().map(OutputFile::open).transpose()?;
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
    if a.export_nccl.is_some() && nccl_tuner::collective_name(collective.kind()).is_none() {
        return Err(Error::Invalid(format!(
            "--export-nccl: NCCL's tuner takes bcast, reduce, allgather, reduce_scatter and allreduce, not {}",
            collective.name()
        ))
        .into());
    }
    let nccl = a.export_nccl.as_deref().map(OutputFile::open).transpose()?;
    check_plot_path(a.plot.as_deref())?;
    let cache = dir.map(|dir| Cache { dir });
    // Under mpirun every process takes its share of each table's sizes,
    // and rank 0 alone writes what one process writes.
    let spread = super::spread::start()?;
    let table = tune_table(&problem, &sizes, cache.as_ref(), a.no_cache, &spread)?;
    // A library's file comes from a table tuned among the algorithms that
    // library runs exactly, so that it runs what was simulated.
    let for_library = |library| -> Result<Option<Table>> {
        let p = Problem {
            library: Some(library),
            config: problem.config.clone(),
            engines: problem.engines.clone(),
            counts: problem.counts.clone(),
            ..problem
        };
        tune_table(&p, &sizes, cache.as_ref(), a.no_cache, &spread)
    };
    let ompi_table = ompi
        .as_ref()
        .map(|_| for_library(Library::Ompi))
        .transpose()?;
    let mpich_table = mpich
        .as_ref()
        .map(|_| for_library(Library::Mpich))
        .transpose()?;
    let Some(table) = table else {
        return Ok(0);
    };
    let rows: Vec<&Decision> = sizes.iter().filter_map(|&s| table.get(s)).collect();
    let show_engines = problem.engines.len() > 1;
    if let Some(path) = &a.plot {
        plot(path, &table, &rows)?;
    }
    let ranks = problem.topology.num_ranks();
    if let (Some(f), Some(Some(t))) = (ompi, ompi_table) {
        let rows: Vec<&Decision> = sizes.iter().filter_map(|&s| t.get(s)).collect();
        write_file(f, a.export_ompi.as_deref().unwrap_or_default(), |w| {
            mpi_rules::write_ompi(w, &t, &rows, ranks)
        })?;
    }
    if let (Some(f), Some(Some(t))) = (mpich, mpich_table) {
        let rows: Vec<&Decision> = sizes.iter().filter_map(|&s| t.get(s)).collect();
        write_file(f, a.export_mpich.as_deref().unwrap_or_default(), |w| {
            mpi_rules::write_mpich(w, &t, &rows, ranks, base.as_deref())
        })?;
    }
    if let Some(f) = nccl {
        let picks = nccl_tuner::tune(
            collective,
            req.dtype,
            req.op,
            &topo,
            &problem.config,
            &sizes,
            None,
        )?;
        let nodes = crate::algorithms::nccl::Channels::new(&req)?.servers.len();
        let lines = nccl_tuner::lines(collective, &picks, nodes, ranks);
        write_file(f, a.export_nccl.as_deref().unwrap_or_default(), |w| {
            writeln!(
                w,
                "# NCCL tuner configuration (the example plugin's CSV format), tuned by topocoll on {}"
            , topo.name)?;
            writeln!(w, "# collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff")?;
            for l in &lines {
                writeln!(w, "{}", l.text())?;
            }
            Ok(())
        })?;
    }
    write_table(
        &a,
        &table,
        &rows,
        model.as_ref(),
        cache.as_ref(),
        show_engines,
        output,
    )
}

/// `problem`'s table at `sizes`, from `cache` where it holds them (unless
/// `no_cache`), priced with a progress bar where it does not, and kept
/// there; what the tuning noted is said on stderr. Spread over `mpirun`'s
/// processes, each prices the sizes the cache lacks that
/// [`Spread::mine`](crate::runtime::spread::Spread::mine) gives it, and
/// rank 0 gathers them into the table and keeps it: `None` on the others.
fn tune_table(
    problem: &Problem,
    sizes: &[u64],
    cache: Option<&Cache>,
    no_cache: bool,
    spread: &crate::runtime::spread::Spread,
) -> Result<Option<Table>> {
    if let (true, Some(c)) = (no_cache, cache) {
        let _ = std::fs::remove_file(c.path(problem.collective.name(), &problem.key()));
    }
    // The sizes are --sizes'.
    let sizes_param = |e| match e {
        crate::optimize::Error::Base(Error::Param {
            param: "size",
            message,
        }) => crate::optimize::Error::Base(Error::Param {
            param: "sizes",
            message,
        }),
        e => e,
    };
    let mut notes = Notes::default();
    let (mut table, changed) = problem.cached(cache, &mut notes);
    let missing = problem.missing(&table, sizes).map_err(sizes_param)?;
    let bar = indicatif::ProgressBar::new(missing.len() as u64);
    // Once a point fails, this process's later points are not priced:
    // rank 0 ends at the first failure in point order.
    let mut failed: Option<Vec<u8>> = None;
    let mut mine = Vec::new();
    for (i, &size) in missing.iter().enumerate() {
        if !spread.mine(i) {
            continue;
        }
        let bytes = failed.clone().unwrap_or_else(|| {
            bar.set_message(format_bytes(size));
            bar.inc(1);
            let r = problem
                .decide(size, |_| {})
                .map_err(sizes_param)
                .map_err(anyhow::Error::from)
                .and_then(|d| Ok(serde_json::to_vec(&d)?));
            let bytes = super::spread::point_bytes(r);
            if bytes.first() == Some(&b'E') {
                failed = Some(bytes.clone());
            }
            bytes
        });
        mine.push(bytes);
    }
    bar.finish_and_clear();
    let Some(all) = spread.gather(missing.len(), mine)? else {
        return Ok(None);
    };
    let decisions = super::spread::point_results(&all)?
        .into_iter()
        .map(serde_json::from_slice)
        .collect::<std::result::Result<Vec<Decision>, _>>()?;
    problem.keep(&mut table, decisions, changed, cache, &mut notes);
    warn_notes(notes);
    Ok(Some(table))
}

/// The table as `--format` says, to `output` or standard output.
fn write_table(
    a: &TuneArgs,
    table: &Table,
    rows: &[&Decision],
    model: Option<&Machine>,
    cache: Option<&Cache>,
    show_engines: bool,
    output: Option<OutputFile>,
) -> Result<i32> {
    let mut out: Box<dyn Write> = match output {
        Some(f) => Box::new(std::io::BufWriter::new(f)),
        None => Box::new(std::io::stdout()),
    };
    match a.format {
        TableFormat::Json => {
            let mut t = table.clone();
            t.decisions = rows.iter().map(|&d| d.clone()).collect();
            writeln!(out, "{}", serde_json::to_string_pretty(&t)?)?;
        }
        TableFormat::Csv => {
            writeln!(
                out,
                "size_bytes,algorithm,segment_bytes,engines,predicted_s,chosen"
            )?;
            for d in rows {
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
        TableFormat::Text => {
            writeln!(out, "{}", table.description)?;
            if let Some(m) = model {
                writeln!(out, "node model: {}", m.source)?;
            }
            if let Some(c) = cache {
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
            for d in rows {
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
