//! `topocoll run` and `topocoll bench`: execute schedules on real buffers.

use super::{tune, BuildArgs};
use crate::error::Error;
use crate::runtime::{self, kernel_bench, threads, Elem, Fault, Options, Plan, RankBuffers};
use crate::schedule::{self, Dtype, Schedule};
use crate::units::{format_bytes, parse_bytes, parse_size_list};
use crate::with_dtype;
use anyhow::Result;
use clap::Args;
use std::time::{Duration, Instant};

/// Flags shared by `run` and `bench`.
#[derive(Args, Clone, Debug)]
pub struct ExecArgs {
    /// Sends each rank keeps in flight (the node's engines) [default: 4].
    #[arg(long)]
    pub engines: Option<usize>,
    /// threads (P ranks in this process) or mpi (one rank per MPI process,
    /// under mpirun; needs a build with --features mpi). `bench` takes a
    /// list, e.g. threads,mpi [default: threads].
    #[arg(long)]
    pub backend: Option<String>,
    /// Fail (every rank, with an error) when one execution of the schedule
    /// (one iteration) takes longer than this, in seconds; building,
    /// verifying and filling buffers are not counted [default: 600].
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub timeout: Option<f64>,
    /// Skip the verifier (an unverified schedule may fail, never corrupts memory).
    #[arg(long)]
    pub no_verify: bool,
    /// Threads backend: 1 runs the replay on the calling thread alone, N ≥ 2 the task pool with N workers (default: the replay with one thread per core; where a schedule has no replay, the task pool, on one worker with 1).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Testing: make rank R fail when its operation OP becomes ready (R:OP).
    #[arg(long, hide = true)]
    pub fault: Option<String>,
}

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub exec: ExecArgs,
    /// Times to run the collective (inputs are refilled before each).
    #[arg(long, default_value_t = 1)]
    pub iterations: usize,
    /// Compare every output element with the references (see docs/runtime.md).
    #[arg(long)]
    pub check: bool,
    /// Execute a schedule read from a file instead of building one: JSON
    /// (as `topocoll schedule --format json` or `topocoll optimize
    /// --schedule-out` write it), which fixes the collective, size and
    /// type, or MSCCL XML, sized by --size, --dtype and --op.
    #[arg(long)]
    pub schedule: Option<String>,
}

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
    #[arg(long)]
    pub baseline: Option<String>,
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
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Write the table here instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<String>,
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

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Backend {
    Threads,
    Mpi,
}

/// The refusal of `flag` by a build without the MPI backend.
fn without_mpi(flag: &str) -> anyhow::Error {
    Error::Invalid(format!(
        "{flag}: this topocoll was built without MPI (cargo build --release --features mpi)"
    ))
    .into()
}

pub(super) fn backends(text: &str) -> Result<Vec<Backend>> {
    text.split(',')
        .map(|b| match b.trim() {
            "threads" => Ok(Backend::Threads),
            "mpi" => {
                if cfg!(feature = "mpi") {
                    Ok(Backend::Mpi)
                } else {
                    Err(without_mpi("--backend mpi"))
                }
            }
            other => {
                Err(Error::Invalid(format!("unknown --backend '{other}' (threads or mpi)")).into())
            }
        })
        .collect()
}

/// More worker threads than this are refused: the system may not start
/// them, and two per core already keep every core busy.
const MAX_WORKERS: usize = 1024;

impl ExecArgs {
    fn backend(&self) -> &str {
        self.backend.as_deref().unwrap_or("threads")
    }

    fn options(&self) -> Result<Options> {
        let engines = self.engines.unwrap_or(4);
        let timeout = self.timeout.unwrap_or(600.0);
        if engines == 0 {
            return Err(Error::Invalid("--engines must be at least 1".into()).into());
        }
        // Up to 10^9 s (32 years): a deadline past that overflows the clock.
        if !(timeout.is_finite() && timeout > 0.0 && timeout <= 1e9) {
            return Err(Error::Invalid(format!(
                "--timeout {timeout} must be a positive number of seconds, at most 1e9"
            ))
            .into());
        }
        if let Some(w) = self.workers {
            if !(1..=MAX_WORKERS).contains(&w) {
                return Err(Error::Invalid(format!(
                    "--workers {w} must be from 1 to {MAX_WORKERS}"
                ))
                .into());
            }
        }
        let fault = match &self.fault {
            None => None,
            Some(f) => {
                let (r, o) = f
                    .split_once(':')
                    .ok_or_else(|| Error::Invalid("--fault takes RANK:OP".into()))?;
                Some(Fault {
                    rank: r
                        .parse()
                        .map_err(|_| Error::Invalid("--fault: bad rank".into()))?,
                    op: o
                        .parse()
                        .map_err(|_| Error::Invalid("--fault: bad op".into()))?,
                })
            }
        };
        Ok(Options {
            engines,
            timeout: Some(Duration::from_secs_f64(timeout)),
            fault,
            workers: self.workers.unwrap_or(0),
        })
    }
}

/// The process's MPI world, when a backend needs it.
pub(super) struct Ctx {
    #[cfg(feature = "mpi")]
    mpi: Option<runtime::mpi::World>,
}

impl Ctx {
    /// Under mpirun, a process whose part failed prints its error, naming
    /// its rank, and stops every process with exit status 2 (the others may
    /// be waiting for it); otherwise the result is returned as it is.
    pub(super) fn stop_all_on_error(&self, result: Result<i32>) -> Result<i32> {
        if let Err(e) = &result {
            if self.size().is_some() {
                let msg = format!("{e:#}").replace('\n', " ");
                eprintln!("topocoll: rank {}: {msg}", self.rank());
                #[cfg(feature = "mpi")]
                runtime::mpi::exit_all(2);
            }
        }
        result
    }

    /// MPI is started when a backend in `backends` is mpi or `mpi` asks for
    /// it (bench's native baseline).
    pub(super) fn new(backends: &[Backend], mpi: bool) -> Result<Ctx> {
        #[cfg(feature = "mpi")]
        {
            let mpi = if mpi || backends.contains(&Backend::Mpi) {
                Some(runtime::mpi::World::init()?)
            } else {
                None
            };
            Ok(Ctx { mpi })
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = (backends, mpi);
            Ok(Ctx {})
        }
    }

    /// This process's rank among the MPI processes (0 without MPI).
    pub(super) fn rank(&self) -> usize {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.mpi {
            return w.rank();
        }
        0
    }

    pub(super) fn size(&self) -> Option<usize> {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.mpi {
            return Some(w.size());
        }
        None
    }

    /// Waits for every process, sleeping (not spinning) meanwhile.
    fn sleepy_barrier(&self) {
        #[cfg(feature = "mpi")]
        if let Some(w) = &self.mpi {
            w.sleepy_barrier();
        }
    }

    /// Rank 0 prints.
    pub(super) fn lead(&self) -> bool {
        self.rank() == 0
    }
}

/// Builds (and verifies) a schedule; under MPI the rank count is the world's.
/// `--algorithm auto` builds the tuning table's choice for this machine
/// (see [`resolve_auto`]), named `auto:<choice>`.
fn build(ctx: &Ctx, b: &BuildArgs, verify: bool, engines: usize) -> Result<Schedule> {
    let mut b = b.clone();
    if let Some(p) = ctx.size() {
        match b.ranks {
            Some(r) if r != p && b.topology.is_none() => {
                return Err(
                    Error::Invalid(format!("--ranks {r} but mpirun started {p} processes")).into(),
                )
            }
            _ => b.ranks = Some(p),
        }
    }
    let mut label = None;
    if b.algorithm.as_deref() == Some("auto") {
        let (chosen, l) = resolve_auto(&b, engines)?;
        b = chosen;
        label = Some(l);
    }
    let topo = b.topology()?;
    if verify {
        schedule::check_ranks_fit(b.request(topo.as_ref())?.ranks)?;
    }
    let mut s = b.build(topo.as_ref())?;
    if let Some(l) = label {
        s.algorithm = l;
    }
    fits_world(ctx, s, verify)
}

/// The simulator's time for `s` on `machine` with `engines`.
fn predict(machine: &tune::MachineProblem, s: &Schedule, engines: usize) -> Result<f64> {
    let mut cfg = machine.config.clone();
    cfg.engines = engines;
    let priced = crate::price::price_schedule(s.clone(), &machine.topology, &[cfg])?;
    Ok(priced.runs[0].time_s)
}

/// `--algorithm auto` on the runtime: the arguments that build the choice
/// of the tuning table for this collective and size on this machine (one
/// host with the ranks on it, its calibrated node model; on --topology's
/// network when given), with the engine count the run uses; and the name
/// the run is reported under.
fn resolve_auto(b: &BuildArgs, engines: usize) -> Result<(BuildArgs, String)> {
    tune::refuse_segment(b)?;
    let collective = b.collective()?;
    let topo = b.topology()?;
    let ranks = b.request(topo.as_ref())?.ranks;
    let machine = tune::MachineProblem::new(topo, ranks, collective.is_reduction())?;
    let req = b.request(Some(&machine.topology))?;
    let problem = machine.problem(collective, req.dtype, req.op, vec![engines]);
    tune::build_auto(&problem, b)
}

/// Reads (and verifies) a schedule from a file; under MPI it must have as
/// many ranks as mpirun started.
fn loaded(ctx: &Ctx, b: &BuildArgs, path: &str, verify: bool) -> Result<Schedule> {
    if b.topology.is_some() {
        return Err(Error::Invalid(
            "--topology cannot be given with run --schedule: the schedule file fixes the ranks and routes".into(),
        )
        .into());
    }
    fits_world(ctx, b.read_schedule(path)?, verify)
}

/// The schedule, once it has as many ranks as mpirun started (under MPI)
/// and, with `verify`, is proven correct.
fn fits_world(ctx: &Ctx, s: Schedule, verify: bool) -> Result<Schedule> {
    if let Some(p) = ctx.size() {
        if s.ranks != p {
            return Err(Error::Invalid(format!(
                "the schedule has {} ranks but mpirun started {p} processes",
                s.ranks
            ))
            .into());
        }
    }
    if verify {
        schedule::verify(&s)?;
    }
    Ok(s)
}

/// Runs `iters` timed iterations after `warmup` untimed ones; returns each
/// timed iteration's seconds (for MPI the slowest rank's). With `reset`,
/// inputs are refilled before each iteration (outside the timing).
#[allow(clippy::too_many_arguments)]
pub(super) fn time_runs<T: Elem>(
    ctx: &Ctx,
    backend: Backend,
    plan: &Plan,
    bufs: &mut [RankBuffers<T>],
    opts: &Options,
    warmup: usize,
    iters: usize,
    reset: bool,
) -> Result<Vec<f64>> {
    let s = plan.schedule;
    let mut times = Vec::with_capacity(iters);
    for it in 0..warmup + iters {
        if reset && it > 0 {
            match backend {
                Backend::Threads => {
                    for (r, b) in bufs.iter_mut().enumerate() {
                        runtime::reset_buffers(s, r, b);
                    }
                }
                Backend::Mpi => runtime::reset_buffers(s, ctx.rank(), &mut bufs[0]),
            }
        }
        let dt = match backend {
            Backend::Threads => {
                let t0 = Instant::now();
                threads::run(plan, bufs, opts)?;
                t0.elapsed().as_secs_f64()
            }
            Backend::Mpi => {
                #[cfg(feature = "mpi")]
                {
                    let w = ctx.mpi.as_ref().expect("MPI initialised");
                    w.barrier();
                    let t0 = Instant::now();
                    runtime::mpi::run_rank(w, plan, &mut bufs[0], opts)?;
                    t0.elapsed().as_secs_f64()
                }
                #[cfg(not(feature = "mpi"))]
                unreachable!()
            }
        };
        if it >= warmup {
            times.push(dt);
        }
    }
    #[cfg(feature = "mpi")]
    if backend == Backend::Mpi {
        ctx.mpi.as_ref().expect("MPI").max_in_place(&mut times);
    }
    Ok(times)
}

pub(super) fn fresh<T: Elem>(
    ctx: &Ctx,
    backend: Backend,
    s: &Schedule,
) -> Result<Vec<RankBuffers<T>>> {
    let ranks: Vec<usize> = match backend {
        Backend::Threads => (0..s.ranks).collect(),
        Backend::Mpi => vec![ctx.rank()],
    };
    let bytes = ranks
        .iter()
        .fold(0u64, |a, &r| a.saturating_add(runtime::buffer_bytes(s, r)));
    crate::memory::check(bytes, "the ranks' buffers")?;
    Ok(ranks
        .into_iter()
        .map(|r| runtime::initial_buffers(s, r))
        .collect())
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

pub fn run(a: RunArgs) -> Result<i32> {
    let bk = backends(a.exec.backend())?;
    if bk.len() != 1 {
        return Err(Error::Invalid("run takes one --backend".into()).into());
    }
    let backend = bk[0];
    let opts = a.exec.options()?;
    check_count("--iterations", a.iterations, 1)?;
    let ctx = Ctx::new(&bk, false)?;
    let result = (|| -> Result<i32> {
        let s = match &a.schedule {
            Some(path) => loaded(&ctx, &a.build, path, !a.exec.no_verify)?,
            None => build(&ctx, &a.build, !a.exec.no_verify, opts.engines)?,
        };
        let plan = Plan::new(&s)?;
        with_dtype!(s.dtype, T => run_typed::<T>(&ctx, backend, &plan, &opts, &a))
    })();
    ctx.stop_all_on_error(result)
}

fn run_typed<T: Elem>(
    ctx: &Ctx,
    backend: Backend,
    plan: &Plan,
    opts: &Options,
    a: &RunArgs,
) -> Result<i32> {
    let s = plan.schedule;
    let mut bufs = fresh::<T>(ctx, backend, s)?;
    let times = time_runs(ctx, backend, plan, &mut bufs, opts, 0, a.iterations, true)?;
    let check = if a.check {
        Some(match backend {
            Backend::Threads => runtime::check(s, &bufs)?,
            Backend::Mpi => {
                #[cfg(feature = "mpi")]
                {
                    let w = ctx.mpi.as_ref().expect("MPI");
                    let mine = runtime::check_rank(s, ctx.rank(), &bufs[0]);
                    // Every rank's check must pass, and allreduce outputs agree.
                    let all = w.all_true(mine.is_ok());
                    let mut rep = mine?;
                    if !all {
                        return Err(Error::Runtime("check failed on another rank".into()).into());
                    }
                    rep.ranks_identical = w.all_same(runtime::output_hash(&bufs[0]));
                    rep.elements = w.sum_u64(rep.elements);
                    rep
                }
                #[cfg(not(feature = "mpi"))]
                unreachable!()
            }
        })
    } else {
        None
    };
    if ctx.lead() {
        let t = summarize(&times);
        let bytes = runtime::data_bytes(s);
        let alg = bytes as f64 / t.avg;
        outln!(
            "ok: {} {} on {} ranks, {} of {}{}, backend {} (engines {}): {} iteration(s), avg {:.3} ms (min {:.3}, max {:.3}); {:.1} MB/s, bus {:.1} MB/s",
            s.collective.name(),
            s.algorithm,
            s.ranks,
            format_bytes(s.count * s.elem_bytes()),
            s.dtype.name(),
            // The op only where something is combined.
            if s.collective.is_reduction() {
                format!(" {}", s.op.name())
            } else {
                String::new()
            },
            if backend == Backend::Threads { "threads" } else { "mpi" },
            opts.engines,
            times.len(),
            t.avg * 1e3,
            t.min * 1e3,
            t.max * 1e3,
            alg / 1e6,
            alg * runtime::bus_factor(s.collective, s.ranks) / 1e6,
        );
        if let Some(c) = check {
            let mut line = format!(
                "check: {} output elements bit-identical to the schedule executed in order",
                c.elements
            );
            if s.collective.is_reduction()
                && s.dtype.is_float()
                && matches!(s.op, schedule::ReduceOp::Sum | schedule::ReduceOp::Prod)
            {
                line += &format!(
                    ", within {:.1e} (relative) of the rank-order reduction",
                    c.max_rel_error
                );
            } else {
                line += " and exactly equal to the reference";
            }
            if s.collective == schedule::Collective::Allreduce {
                line += if c.ranks_identical {
                    "; every rank's result has the same bits"
                } else {
                    "; NOTE: ranks' results differ in their bits (the algorithm reduces in a different order on different ranks)"
                };
            }
            outln!("{line}");
        }
    }
    Ok(0)
}

/// Most timed (or warm-up) iterations: each is recorded, and a count near
/// usize::MAX overflowed the record and the loop.
const MAX_ITERATIONS: usize = 10_000_000;

/// An iteration count from `min` to [`MAX_ITERATIONS`].
fn check_count(flag: &str, n: usize, min: usize) -> Result<()> {
    if (min..=MAX_ITERATIONS).contains(&n) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "{flag} must be from {min} to {MAX_ITERATIONS}, not {n}"
        ))
        .into())
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

pub fn bench(a: BenchArgs) -> Result<i32> {
    if let Some(n) = a.iterations {
        check_count("--iterations", n, 1)?;
    }
    if let Some(n) = a.warmup {
        check_count("--warmup", n, 0)?;
    }
    if a.kernels {
        return bench_kernels(&a);
    }
    if a.kernel_bytes.is_some() {
        return Err(
            Error::Invalid("--kernel-bytes sizes the arrays of bench --kernels".into()).into(),
        );
    }
    let bk = backends(a.exec.backend())?;
    let opts = a.exec.options()?;
    let native = match a.baseline.as_deref() {
        None => false,
        Some("native") => {
            if !cfg!(feature = "mpi") {
                return Err(without_mpi("--baseline native"));
            }
            true
        }
        Some(other) => {
            return Err(Error::Invalid(format!("unknown --baseline '{other}' (native)")).into())
        }
    };
    if a.build.size.is_some() {
        return Err(Error::Invalid("bench takes its sizes from --sizes, not --size".into()).into());
    }
    if !matches!(a.format.as_str(), "text" | "csv" | "json") {
        return Err(
            Error::Invalid(format!("--format '{}' is not text, csv or json", a.format)).into(),
        );
    }
    // An MSCCL file counts in chunks: one size (of --sizes) sizes them.
    // (A file that cannot be opened is reported when it is read.)
    let msccl = a.schedule.as_deref().is_some_and(|p| {
        std::fs::File::open(p).is_ok_and(|f| super::is_msccl(p, &mut std::io::BufReader::new(f)))
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
    let output = a
        .output
        .as_deref()
        .map(super::OutputFile::open)
        .transpose()?;
    let ctx = Ctx::new(&bk, native)?;
    let result = (|| {
        let file = match &a.schedule {
            Some(path) => Some(loaded(&ctx, &build, path, !a.exec.no_verify)?),
            None => None,
        };
        let (sizes, algs) = match &file {
            Some(s) => (vec![s.count * s.elem_bytes()], vec![s.algorithm.clone()]),
            None => (
                parse_size_list(a.sizes.as_deref().unwrap_or("8B..1MiB"))
                    .map_err(|e| Error::Invalid(format!("--sizes: {e}")))?,
                a.build
                    .algorithm_name()?
                    .split(',')
                    .map(|x| x.trim().to_string())
                    .collect(),
            ),
        };
        bench_inner(&ctx, &a, &bk, &opts, native, &sizes, &algs, file, output)
    })();
    ctx.stop_all_on_error(result)
}

#[allow(clippy::too_many_arguments)]
fn bench_inner(
    ctx: &Ctx,
    a: &BenchArgs,
    bk: &[Backend],
    opts: &Options,
    native: bool,
    sizes: &[u64],
    algs: &[String],
    file: Option<Schedule>,
    output: Option<super::OutputFile>,
) -> Result<i32> {
    if file.is_none() && (a.build.segment.is_some() || a.build.lanes.is_some()) {
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
                    match build(ctx, &b, !a.exec.no_verify, opts.engines) {
                        Ok(s) => s,
                        Err(e) => {
                            if let Some(Error::Unsupported { reason, .. }) =
                                e.downcast_ref::<Error>()
                            {
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
                    machine = Some(tune::MachineProblem::new(topo, s.ranks, reduction)?);
                }
                Some(predict(
                    machine.as_ref().expect("made above"),
                    &s,
                    opts.engines,
                )?)
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
                        Backend::Threads if ctx.size().is_some() => {
                            let t = if ctx.lead() {
                                let mut bufs = fresh::<T>(ctx, backend, &s)?;
                                time_runs(ctx, backend, &plan, &mut bufs, opts, warm, iters, false)
                            } else {
                                Ok(Vec::new())
                            };
                            ctx.sleepy_barrier();
                            t?
                        }
                        _ => {
                            let mut bufs = fresh::<T>(ctx, backend, &s)?;
                            time_runs(ctx, backend, &plan, &mut bufs, opts, warm, iters, false)?
                        }
                    }
                });
                let name = if backend == Backend::Threads {
                    "threads"
                } else {
                    "mpi"
                };
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
                let w = ctx.mpi.as_ref().expect("MPI");
                let s = Schedule::new(c, p, size / dtype.size(), dtype, op, "native");
                let times =
                    with_dtype!(dtype, T => runtime::mpi::time_native::<T>(w, &s, warm, iters)?);
                rows.push(timed_row(
                    size,
                    "native",
                    &format!("mpi:{}", runtime::mpi::native_name(c)),
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
    if !ctx.lead() {
        return Ok(0);
    }
    let mut out: Box<dyn std::io::Write> = match output {
        Some(f) => Box::new(std::io::BufWriter::new(f)),
        None => Box::new(std::io::stdout()),
    };
    match a.format.as_str() {
        "json" => writeln!(out, "{}", serde_json::to_string_pretty(&table)?)?,
        "csv" => {
            writeln!(out, "size_bytes,algorithm,backend,avg_s,min_s,max_s,bandwidth_mbs,bus_bandwidth_mbs,speedup,skipped{}", if a.predict { ",predicted_s" } else { "" })?;
            let f = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.6e}"));
            for r in &table {
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
                    opts.engines,
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
            write_bench_text(&mut out, &table, native, a.predict)?;
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
fn bench_kernels(a: &BenchArgs) -> Result<i32> {
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
    let b = &a.build;
    let unused = [
        ("--topology", b.topology.is_some()),
        ("--ranks", b.ranks.is_some()),
        ("--collective", b.collective.is_some()),
        ("--algorithm", b.algorithm.is_some()),
        ("--size", b.size.is_some()),
        ("--root", b.root.is_some()),
        ("--op", b.op.is_some()),
        ("--segment", b.segment.is_some()),
        ("--lanes", b.lanes.is_some()),
        ("--sizes", a.sizes.is_some()),
        ("--warmup", a.warmup.is_some()),
        ("--baseline", a.baseline.is_some()),
        ("--predict", a.predict),
        ("--workers", a.exec.workers.is_some()),
        ("--engines", a.exec.engines.is_some()),
        ("--backend", a.exec.backend.is_some()),
        ("--timeout", a.exec.timeout.is_some()),
        ("--no-verify", a.exec.no_verify),
        ("--schedule", a.schedule.is_some()),
        ("--output", a.output.is_some()),
        ("--format", a.format != "text"),
    ];
    if let Some((name, _)) = unused.iter().find(|(_, given)| *given) {
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
        print(r).map_err(|e| Error::Io(e.to_string()))
    })?;
    Ok(0)
}
