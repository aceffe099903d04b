//! `topocoll run`: execute a schedule on real buffers and check its result.

use super::args::{
    backends, build_for_run, check_count, load_for_run, stop_all_on_error, BuildArgs, ExecArgs,
};
use crate::runtime::job::{Backend, Job};
use crate::runtime::{self, Elem, Options, Plan};
use crate::schedule;
use crate::units::format_bytes;
use crate::with_dtype;
use anyhow::Result;
use clap::Args;
use topocoll_base::Error;

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

pub fn run(a: RunArgs) -> Result<i32> {
    let bk = backends(&a.exec.backend)?;
    if bk.len() != 1 {
        return Err(Error::Invalid("run takes one --backend".into()).into());
    }
    let backend = bk[0];
    let opts = a.exec.options()?;
    check_count("--iterations", a.iterations, 1)?;
    let job = Job::new(&bk, false)?;
    let result = (|| -> Result<i32> {
        let s = match &a.schedule {
            Some(path) => load_for_run(&job, &a.build, path, !a.exec.no_verify)?,
            None => build_for_run(&job, &a.build, !a.exec.no_verify, opts.engines)?,
        };
        let plan = Plan::new(&s)?;
        with_dtype!(s.dtype, T => run_typed::<T>(&job, backend, &plan, &opts, &a))
    })();
    stop_all_on_error(&job, result)
}

fn run_typed<T: Elem>(
    job: &Job,
    backend: Backend,
    plan: &Plan,
    opts: &Options,
    a: &RunArgs,
) -> Result<i32> {
    let s = plan.schedule;
    let mut bufs = job.fresh::<T>(backend, s)?;
    let times = job.time_runs(backend, plan, &mut bufs, opts, 0, a.iterations, true)?;
    let check = if a.check {
        Some(job.check(backend, s, &bufs)?)
    } else {
        None
    };
    if job.lead() {
        let n = times.len().max(1) as f64;
        let avg = times.iter().sum::<f64>() / n;
        let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = times.iter().cloned().fold(0.0, f64::max);
        let bytes = runtime::data_bytes(s);
        let alg = bytes as f64 / avg;
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
            backend.name(),
            opts.engines,
            times.len(),
            avg * 1e3,
            min * 1e3,
            max * 1e3,
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
