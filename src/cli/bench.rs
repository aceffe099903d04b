//! `topocoll bench`: time schedules (and the MPI library's own
//! collectives) over a range of sizes; or the reduction kernels.

use super::args::{
    backends, build_for_run, check_count, load_for_run, stop_all_on_error, without_mpi, BuildArgs,
    ExecArgs, Given, OutputFile, TableFormat,
};
use crate::optimize::machine::MachineProblem;
use crate::runtime::job::{Backend, Job};
use crate::runtime::{self, kernel_bench, Options, Plan};
use crate::schedule::{Collective, Dtype, FileFormat, ReduceOp, Schedule, ScheduleFile};
use crate::units::{format_bytes, parse_bytes, parse_size_list};
use crate::with_dtype;
use anyhow::Result;
use clap::{Args, ValueEnum};
use topocoll_base::Error;

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub exec: ExecArgs,
    /// Sizes: a range (8B..64MiB: 8B, 16B, 32B, ... doubling up to at most 64MiB) or a list (1KiB,1MiB) [default: 8B..1MiB].
    #[arg(long)]
    pub sizes: Option<String>,
    /// Timed iterations per size (default: 200 up to 64 KiB, 50 up to 4 MiB, 10 above).
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Untimed iterations first (default: a tenth of the timed ones, at least 1).
    #[arg(long)]
    pub warmup: Option<usize>,
    /// `native`: also time the MPI library's own collective (under mpirun;
    /// with --backend threads alone rank 0 runs the threads rows).
    #[arg(long, value_enum)]
    pub baseline: Option<Baseline>,
    /// Also give each row the time the simulator predicts for its schedule
    /// on this machine (the node model `topocoll tune --calibrate` keeps;
    /// on --topology's network when given).
    #[arg(long)]
    pub predict: bool,
    /// Benchmark the reduction kernels against a STREAM-add-like loop instead.
    #[arg(long)]
    pub kernels: bool,
    /// Kernel benchmark: bytes per array [default: 64MiB, 8 M elements of f64].
    #[arg(long)]
    pub kernel_bytes: Option<String>,
    /// Time a schedule read from a file instead of building one: JSON (its
    /// size and collective are the file's: no --sizes or --collective), or
    /// MSCCL XML (`.xml`: one --sizes value sizes its chunks).
    #[arg(long)]
    pub schedule: Option<String>,
    /// text (aligned columns), csv or json.
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// Write the table here instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<String>,
}

/// `--baseline`'s values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Baseline {
    /// The MPI library's own collective.
    Native,
}

/// One row of `bench`: a schedule timed on a backend (or the MPI library's
/// own collective), or an algorithm that does not apply at a size.
#[derive(serde::Serialize)]
struct BenchRow {
    size_bytes: u64,
    algorithm: String,
    backend: String,
    avg_s: Option<f64>,
    min_s: Option<f64>,
    max_s: Option<f64>,
    bandwidth_mbs: Option<f64>,
    bus_bandwidth_mbs: Option<f64>,
    /// The native collective's average over this row's.
    #[serde(skip_serializing_if = "Option::is_none")]
    speedup: Option<f64>,
    /// The simulator's time for this row's schedule (`--predict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    predicted_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<String>,
}

struct Summary {
    avg: f64,
    min: f64,
    max: f64,
}

fn summarize(times: &[f64]) -> Summary {
    let n = times.len().max(1) as f64;
    Summary {
        avg: times.iter().sum::<f64>() / n,
        min: times.iter().cloned().fold(f64::INFINITY, f64::min),
        max: times.iter().cloned().fold(0.0, f64::max),
    }
}

fn default_iterations(bytes: u64) -> usize {
    if bytes <= 64 << 10 {
        200
    } else if bytes <= 4 << 20 {
        50
    } else {
        10
    }
}

pub fn run(a: BenchArgs, given: &Given) -> Result<i32> {
    if let Some(n) = a.iterations {
        check_count("--iterations", n, 1)?;
    }
    if let Some(n) = a.warmup {
        check_count("--warmup", n, 0)?;
    }
    if a.kernels {
        return bench_kernels(&a, given);
    }
    if a.kernel_bytes.is_some() {
        return Err(
            Error::Invalid("--kernel-bytes sizes the arrays of bench --kernels".into()).into(),
        );
    }
    let bk = backends(&a.exec.backend)?;
    let opts = a.exec.options()?;
    let native = match a.baseline {
        None => false,
        Some(Baseline::Native) => {
            if !Backend::Mpi.available() {
                return Err(without_mpi("--baseline native"));
            }
            true
        }
    };
    if a.build.size.is_some() {
        return Err(Error::Invalid("bench takes its sizes from --sizes, not --size".into()).into());
    }
    // An MSCCL file counts in chunks: one size (of --sizes) sizes them.
    // (A file that cannot be opened is reported when it is read.)
    let msccl = a.schedule.as_deref().is_some_and(|p| {
        ScheduleFile::open(std::path::Path::new(p)).is_ok_and(|f| f.format() == FileFormat::Msccl)
    });
    let mut build = a.build.clone();
    if let (Some(_), Some(sizes)) = (&a.schedule, &a.sizes) {
        if !msccl {
            return Err(Error::Invalid(
                "--sizes cannot be given with --schedule: the schedule file fixes the size".into(),
            )
            .into());
        }
        if sizes.contains(',') || sizes.contains("..") {
            return Err(Error::Invalid(
                "--sizes with an MSCCL --schedule is one size: the file's chunks' total".into(),
            )
            .into());
        }
        build.size = Some(sizes.clone());
    }
    // Fail on an output path before the runs, not after them.
    let output = a.output.as_deref().map(OutputFile::open).transpose()?;
    let job = Job::new(&bk, native)?;
    let result = (|| {
        let file = match &a.schedule {
            Some(path) => Some(load_for_run(&job, &build, path, !a.exec.no_verify)?),
            None => None,
        };
        let (sizes, algs) = match &file {
            Some(s) => (vec![s.count * s.elem_bytes()], vec![s.algorithm.clone()]),
            None => (
                parse_size_list(a.sizes.as_deref().unwrap_or("8B..1MiB"))
                    .map_err(|e| Error::Invalid(format!("--sizes: {e}")))?,
                a.build
                    .algorithm_list()?
                    .names()
                    .map(String::from)
                    .collect(),
            ),
        };
        bench_inner(&job, &a, &bk, &opts, native, &sizes, &algs, file, output)
    })();
    stop_all_on_error(&job, result)
}

#[allow(clippy::too_many_arguments)]
fn bench_inner(
    job: &Job,
    a: &BenchArgs,
    bk: &[Backend],
    opts: &Options,
    native: bool,
    sizes: &[u64],
    algs: &[String],
    file: Option<Schedule>,
    output: Option<OutputFile>,
) -> Result<i32> {
    if file.is_none()
        && (a.build.segment.is_some()
            || a.build.lanes.is_some()
            || a.build.radix.is_some()
            || a.build.inter.is_some()
            || a.build.channels.is_some()
            || a.build.protocol.is_some())
    {
        a.build.check_per_algorithm(a.build.collective()?)?;
    }
    let mut table: Vec<BenchRow> = Vec::new();
    let mut shape_seen = None;
    let mut machine = None;
    for &size in sizes {
        let mut rows: Vec<BenchRow> = Vec::new();
        let mut shape = None;
        for alg in algs {
            let s = match &file {
                Some(s) => s.clone(),
                None => {
                    let mut b = a.build.for_algorithm(alg);
                    b.size = Some(size.to_string());
                    match build_for_run(job, &b, !a.exec.no_verify, opts.engines) {
                        Ok(s) => s,
                        Err(e) => {
                            if let Some(reason) = super::unsupported(&e) {
                                rows.push(BenchRow {
                                    size_bytes: size,
                                    algorithm: alg.clone(),
                                    backend: String::new(),
                                    avg_s: None,
                                    min_s: None,
                                    max_s: None,
                                    bandwidth_mbs: None,
                                    bus_bandwidth_mbs: None,
                                    speedup: None,
                                    predicted_s: None,
                                    skipped: Some(reason.clone()),
                                });
                                continue;
                            }
                            return Err(e.context(format!("--sizes at {size} bytes")));
                        }
                    }
                }
            };
            let plan = Plan::new(&s)?;
            let predicted = if a.predict {
                // The model, read once: every row has the same ranks and collective.
                if machine.is_none() {
                    let topo = a.build.topology()?;
                    let reduction = s.collective.is_reduction();
                    machine = Some(MachineProblem::new(topo, s.ranks, reduction)?);
                }
                Some(
                    machine
                        .as_ref()
                        .expect("made above")
                        .predict(&s, opts.engines)?,
                )
            } else {
                None
            };
            let bytes = runtime::data_bytes(&s);
            let iters = a.iterations.unwrap_or_else(|| default_iterations(bytes));
            let warm = a.warmup.unwrap_or((iters / 10).max(1));
            for &backend in bk {
                let times = with_dtype!(s.dtype, T => {
                    match backend {
                        // Under mpirun the threads backend runs on rank 0
                        // alone while the others wait, so the two backends
                        // are compared on the same machine in one run.
                        Backend::Threads if job.size().is_some() => {
                            let t = if job.lead() {
                                let mut bufs = job.fresh::<T>(backend, &s)?;
                                job.time_runs(backend, &plan, &mut bufs, opts, warm, iters, false)
                            } else {
                                Ok(Vec::new())
                            };
                            job.sleepy_barrier();
                            t?
                        }
                        _ => {
                            let mut bufs = job.fresh::<T>(backend, &s)?;
                            job.time_runs(backend, &plan, &mut bufs, opts, warm, iters, false)?
                        }
                    }
                });
                let name = backend.name();
                let mut row = timed_row(
                    size,
                    if alg == "auto" { &s.algorithm } else { alg },
                    name,
                    &summarize(&times),
                    bytes as f64,
                    runtime::bus_factor(s.collective, s.ranks),
                );
                row.predicted_s = predicted;
                rows.push(row);
            }
            shape.get_or_insert((s.collective, s.ranks, s.dtype, s.op, bytes, iters, warm));
        }
        #[cfg(feature = "mpi")]
        if native {
            if let Some((c, p, dtype, op, bytes, iters, warm)) = shape {
                let s = Schedule::new(c, p, size / dtype.size(), dtype, op, "native");
                let (times, call) = with_dtype!(dtype, T => job.time_native::<T>(&s, warm, iters)?);
                rows.push(timed_row(
                    size,
                    "native",
                    &format!("mpi:{call}"),
                    &summarize(&times),
                    bytes as f64,
                    runtime::bus_factor(c, p),
                ));
            }
        }
        #[cfg(not(feature = "mpi"))]
        let _ = native;
        let native_avg = rows
            .iter()
            .find(|r| r.algorithm == "native")
            .and_then(|r| r.avg_s);
        for r in &mut rows {
            r.speedup = native_avg.zip(r.avg_s).map(|(n, t)| n / t);
        }
        shape_seen = shape_seen.or(shape);
        table.extend(rows);
    }
    if !job.lead() {
        return Ok(0);
    }
    write_table(a, &table, shape_seen, opts.engines, native, output)
}

/// What every row of a table shares: the collective, ranks, element type,
/// operator, bytes, iterations and warm-ups.
type Shape = (Collective, usize, Dtype, ReduceOp, u64, usize, usize);

/// The bench table as `--format` says, to `output` or standard output.
fn write_table(
    a: &BenchArgs,
    table: &[BenchRow],
    shape_seen: Option<Shape>,
    engines: usize,
    native: bool,
    output: Option<OutputFile>,
) -> Result<i32> {
    let mut out: Box<dyn std::io::Write> = match output {
        Some(f) => Box::new(std::io::BufWriter::new(f)),
        None => Box::new(std::io::stdout()),
    };
    match a.format {
        TableFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&table)?)?,
        TableFormat::Csv => {
            writeln!(out, "size_bytes,algorithm,backend,avg_s,min_s,max_s,bandwidth_mbs,bus_bandwidth_mbs,speedup,skipped{}", if a.predict { ",predicted_s" } else { "" })?;
            let f = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.6e}"));
            for r in table {
                write!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{}",
                    r.size_bytes,
                    r.algorithm,
                    r.backend,
                    f(r.avg_s),
                    f(r.min_s),
                    f(r.max_s),
                    f(r.bandwidth_mbs),
                    f(r.bus_bandwidth_mbs),
                    f(r.speedup),
                    r.skipped
                        .as_deref()
                        .map_or(String::new(), |s| format!("\"{}\"", s.replace('"', "\"\"")))
                )?;
                if a.predict {
                    write!(out, ",{}", f(r.predicted_s))?;
                }
                writeln!(out)?;
            }
        }
        _ => {
            if let Some((c, p, dtype, op, _, _, _)) = shape_seen {
                writeln!(
                    out,
                    "# topocoll bench: {} on {p} ranks, {} {}, engines {}{}",
                    c.name(),
                    dtype.name(),
                    op.name(),
                    engines,
                    if c.size_is_block() {
                        "; size = block per peer, bytes = P blocks"
                    } else {
                        ""
                    }
                )?;
                writeln!(out, "# latency: per iteration, slowest rank; avg/min/max over iterations; MB/s = 10^6 bytes/s")?;
                if native {
                    writeln!(
                        out,
                        "# Speedup: the native MPI collective's average latency over this row's"
                    )?;
                }
            }
            write_bench_text(&mut out, table, native, a.predict)?;
        }
    }
    out.flush()?;
    Ok(0)
}

fn timed_row(
    size: u64,
    alg: &str,
    backend: &str,
    t: &Summary,
    bytes: f64,
    factor: f64,
) -> BenchRow {
    let bw = bytes / t.avg / 1e6;
    BenchRow {
        size_bytes: size,
        algorithm: alg.to_string(),
        backend: backend.to_string(),
        avg_s: Some(t.avg),
        min_s: Some(t.min),
        max_s: Some(t.max),
        bandwidth_mbs: Some(bw),
        bus_bandwidth_mbs: Some(bw * factor),
        speedup: None,
        predicted_s: None,
        skipped: None,
    }
}

/// The bench table in columns as wide as their widest entry.
fn write_bench_text(
    out: &mut dyn std::io::Write,
    table: &[BenchRow],
    native: bool,
    predict: bool,
) -> Result<()> {
    let mut cells: Vec<Vec<String>> = vec![[
        "# Size",
        "Algorithm",
        "Backend",
        "Avg(us)",
        "Min(us)",
        "Max(us)",
        "BW(MB/s)",
        "BusBW(MB/s)",
    ]
    .iter()
    .map(|h| h.to_string())
    .collect()];
    if native {
        cells[0].push("Speedup".into());
    }
    if predict {
        cells[0].push("Predicted(us)".into());
    }
    let us = |x: Option<f64>| x.map_or(String::new(), |v| format!("{:.2}", v * 1e6));
    let mbs = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.1}"));
    let mut notes = Vec::new();
    for r in table {
        if let Some(why) = &r.skipped {
            notes.push(format!(
                "# {} at {}: {why}",
                r.algorithm,
                format_bytes(r.size_bytes)
            ));
            continue;
        }
        let mut row = vec![
            r.size_bytes.to_string(),
            r.algorithm.clone(),
            r.backend.clone(),
            us(r.avg_s),
            us(r.min_s),
            us(r.max_s),
            mbs(r.bandwidth_mbs),
            mbs(r.bus_bandwidth_mbs),
        ];
        if native {
            row.push(r.speedup.map_or(String::new(), |v| format!("{v:.2}")));
        }
        if predict {
            row.push(us(r.predicted_s));
        }
        cells.push(row);
    }
    let widths: Vec<usize> = (0..cells[0].len())
        .map(|c| {
            cells
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &cells {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| format!("{cell:>w$}"))
            .collect();
        writeln!(out, "{}", line.join("  "))?;
    }
    for n in notes {
        writeln!(out, "{n}")?;
    }
    Ok(())
}

/// `bench --kernels`: the arguments checked and the rows of
/// `runtime::kernel_bench` printed. Arrays of `--kernel-bytes` each (make
/// them larger than the last-level cache).
fn bench_kernels(a: &BenchArgs, given: &Given) -> Result<i32> {
    let bytes = parse_bytes(a.kernel_bytes.as_deref().unwrap_or("64MiB"))
        .map_err(|e| Error::Invalid(format!("--kernel-bytes: {e}")))?;
    if bytes < 1024 || bytes % 8 != 0 {
        return Err(Error::Invalid(
            "--kernel-bytes must be at least 1KiB and a multiple of 8".into(),
        )
        .into());
    }
    if let Some(d) = &a.build.dtype {
        Dtype::parse(d)?;
    }
    // The kernel benchmark runs no schedule: options about one would be
    // silently ignored, so they are refused.
    if let Some(name) =
        given.first_except(&["--kernels", "--dtype", "--iterations", "--kernel-bytes"])
    {
        return Err(Error::Invalid(format!(
            "bench --kernels times the reduction kernels alone: {name} does not apply \
             (it takes --dtype, --iterations and --kernel-bytes)"
        ))
        .into());
    }
    crate::memory::check(bytes.saturating_mul(3), "the three kernel arrays")?;
    let iters = a.iterations.unwrap_or(5).max(1);
    outln!(
        "# topocoll bench --kernels: arrays of {} each; GB/s: best of {iters} runs (10^9 bytes/s, 2 reads + 1 write per element); of stream: median over the {iters} back-to-back pairs",
        format_bytes(bytes)
    );
    outln!(
        "{:>6} {:>6} {:>12} {:>10} {:>14} {:>10}",
        "# type",
        "op",
        "kernel",
        "GB/s",
        "stream GB/s",
        "of stream"
    );
    let only = a.build.dtype.as_deref().map(Dtype::parse).transpose()?;
    let print = |r: &kernel_bench::KernelRow| -> Result<()> {
        outln!(
            "{:>6} {:>6} {:>12} {:>10.2} {:>14.2} {:>9.0}%",
            r.dtype.name(),
            r.op.name(),
            if r.in_place {
                "dst=dst∘src"
            } else {
                "dst=a∘b"
            },
            r.gbs,
            r.stream_gbs,
            100.0 * r.of_stream
        );
        Ok(())
    };
    kernel_bench::run(bytes, iters, only, &mut |r| {
        print(r).map_err(|e| match e.downcast::<std::io::Error>() {
            Ok(io) => crate::runtime::Error::io("writing the table", io),
            Err(other) => crate::runtime::Error::invalid(other.to_string()),
        })
    })?;
    Ok(0)
}
