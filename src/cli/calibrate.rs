//! `topocoll tune --calibrate`: this machine's node parameters, fitted from
//! a few collectives timed on the runtime, kept for `tune` and `auto`.
//!
//! What each timed run isolates and how the figures are fitted:
//! `optimize::machine` ([`CALIBRATION_RUNS`], [`Calibration::fit`]).

use super::args::{backends, stop_all_on_error, BuildArgs, Given, TuneArgs};
use crate::optimize::machine::{cache_dir, Calibration, CALIBRATION_RUNS, LARGE};
use crate::runtime::job::{Backend, Job};
use crate::runtime::{kernel_bench, Options, Plan};
use crate::schedule::{Dtype, ReduceOp};
use crate::units::{format_bytes, format_seconds};
use anyhow::Result;
use std::time::Duration;
use topocoll_base::Error;

pub fn run(a: TuneArgs, given: &Given) -> Result<i32> {
    if let Some(flag) = given.first_except(&["--calibrate", "--backend", "--ranks", "--cache-dir"])
    {
        return Err(Error::Invalid(format!(
            "tune --calibrate measures this machine: {flag} does not apply (it takes --ranks, --backend, --cache-dir)"
        ))
        .into());
    }
    let bk = backends(a.calibrate.backend.as_slice())?;
    let backend = bk[0];
    let job = Job::new(&bk, false)?;
    let result = measure(&a, &job, backend);
    stop_all_on_error(&job, result)
}

/// The measurements, on every process under mpirun; the lead prints and
/// keeps the model.
fn measure(a: &TuneArgs, job: &Job, backend: Backend) -> Result<i32> {
    let ranks = match (job.size(), a.build.ranks) {
        (Some(p), Some(r)) if r != p => {
            return Err(
                Error::Invalid(format!("--ranks {r} but mpirun started {p} processes")).into(),
            )
        }
        (Some(p), _) => p,
        (None, r) => r.unwrap_or(4),
    };
    if ranks < 2 {
        return Err(Error::Invalid("--calibrate needs at least 2 ranks".into()).into());
    }
    let time = |coll: &str, alg: &str, size: u64, engines: usize| -> Result<f64> {
        let build = BuildArgs {
            ranks: Some(ranks),
            collective: Some(coll.into()),
            algorithm: Some(super::args::AlgorithmList::one(alg)),
            size: Some(size.to_string()),
            ..BuildArgs::default()
        };
        let s = build.build(None)?;
        crate::schedule::verify(&s)?;
        let plan = Plan::new(&s)?;
        let opts = Options {
            engines,
            timeout: Some(Duration::from_secs(120)),
            fault: None,
            workers: 0,
        };
        let iters = if size <= 64 << 10 { 200 } else { 10 };
        let times = crate::with_dtype!(s.dtype, T => {
            let mut bufs = job.fresh::<T>(backend, &s)?;
            job.time_runs(backend, &plan, &mut bufs, &opts, iters / 10, iters, false)?
        });
        // The median iteration: what a run typically meets (the fastest
        // is a lucky one on a node whose ranks share cores).
        let mut t = times;
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    };
    let mut times_s = [0.0; 4];
    for (t, run) in times_s.iter_mut().zip(&CALIBRATION_RUNS) {
        *t = time(
            run.collective,
            run.algorithm,
            run.size_bytes,
            (run.engines)(ranks),
        )?;
    }
    let mut compute = 0.0f64;
    if job.lead() {
        kernel_bench::run(LARGE, 3, Some(Dtype::F64), &mut |r| {
            if r.in_place && r.op == ReduceOp::Sum {
                // gbs counts two reads and a write per element.
                compute = compute.max(r.gbs * 1e9 / 3.0);
            }
            Ok(())
        })?;
    }
    if !job.lead() {
        return Ok(0);
    }
    let [small, at_once, seq, all] = times_s;
    let m = Calibration {
        ranks,
        times_s,
        compute_bandwidth: compute,
    }
    .fit(format!(
        "calibrated on the {} backend with {ranks} ranks",
        backend.name()
    ))?;
    let (overhead_s, latency_s, pair_bandwidth, node_bandwidth) = (
        m.overhead_s,
        m.latency_s,
        m.pair_bandwidth,
        m.node_bandwidth,
    );
    outln!("{}", m.source);
    outln!(
        "overhead          {} per message   (8 B recursive-doubling allreduce: {})",
        format_seconds(overhead_s),
        format_seconds(small)
    );
    outln!(
        "latency           {} per message   (scatter of 8 B, all at once: {})",
        format_seconds(latency_s),
        format_seconds(at_once)
    );
    outln!(
        "pair bandwidth    {:.3} GB/s           (scatter of {}: {})",
        pair_bandwidth / 1e9,
        format_bytes(LARGE),
        format_seconds(seq)
    );
    outln!(
        "node bandwidth    {:.3} GB/s           (all-to-all of {}: {})",
        node_bandwidth / 1e9,
        format_bytes(LARGE),
        format_seconds(all)
    );
    outln!(
        "compute bandwidth {:.3} GB/s           (f64 sum in place)",
        compute / 1e9
    );
    let dir = cache_dir(a.cache_dir.as_deref())
        .ok_or_else(|| Error::Invalid("no cache directory: give --cache-dir (no HOME)".into()))?;
    outln!("kept in {}", m.store(&dir)?.display());
    Ok(0)
}
