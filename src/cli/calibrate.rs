//! `topocoll tune --calibrate`: this machine's node parameters, fitted from
//! a few collectives timed on the runtime, kept for `tune` and `auto`.
//!
//! The simulator prices a host as ranks that pay `overhead_s` of CPU per
//! message and share one link inside the host (`node_bandwidth`), each
//! message alone at most at `pair_bandwidth`, reductions combining at
//! `compute_bandwidth`. Each figure comes from the run that isolates it:
//!
//! - overhead and latency: an 8-byte recursive-doubling allreduce (R
//!   rounds of exchanges, each waiting for the one before: R(o + L), R =
//!   log2 P, and 2 more to fold other rank counts) and a linear scatter of
//!   8-byte blocks sent all at once ((P-1)o + L), solved for o and L (on 2
//!   ranks, where the two are one, all of it is latency). A dependent
//!   exchange is what small collectives are made of, and it is measured as
//!   the collectives are: from each rank's own start, on ranks that may
//!   share cores;
//! - pair bandwidth: the one-engine scatter with large blocks, less the
//!   overheads and latencies;
//! - node bandwidth: a linear all-to-all of large blocks, every message at
//!   once, its P(P-1) blocks over its time less the root's overheads;
//! - compute bandwidth: the runtime's own reduction kernel (f64 sum in
//!   place), bytes of the buffer combined per second.

use super::run::{backends, fresh, time_runs, Backend, Ctx};
use super::tune::{cache_dir, Machine, TuneArgs};
use super::BuildArgs;
use crate::error::Error;
use crate::runtime::{kernel_bench, Options, Plan};
use crate::schedule::{Dtype, ReduceOp};
use crate::units::{format_bytes, format_seconds};
use anyhow::Result;
use std::time::Duration;

/// Large blocks: long enough that per-message costs are a small part.
const LARGE: u64 = 16 << 20;

pub fn run(a: &TuneArgs) -> Result<i32> {
    let b = &a.sim.build;
    for (flag, given) in [
        ("--topology", b.topology.is_some()),
        ("--collective", b.collective.is_some()),
        ("--algorithm", b.algorithm.is_some()),
        ("--size", b.size.is_some()),
        ("--sizes", a.sizes.is_some()),
        ("--export-ompi", a.export_ompi.is_some()),
        ("--export-mpich", a.export_mpich.is_some()),
        ("--plot", a.sim.plot.is_some()),
    ] {
        if given {
            return Err(Error::Invalid(format!(
                "tune --calibrate measures this machine: {flag} does not apply (it takes --ranks, --backend, --cache-dir)"
            ))
            .into());
        }
    }
    let bk = backends(a.backend.as_deref().unwrap_or("threads"))?;
    if bk.len() != 1 {
        return Err(Error::Invalid("--calibrate takes one --backend".into()).into());
    }
    let backend = bk[0];
    let ctx = Ctx::new(&bk, false)?;
    let result = measure(a, &ctx, backend);
    ctx.stop_all_on_error(result)
}

/// The measurements, on every process under mpirun; the lead prints and
/// keeps the model.
fn measure(a: &TuneArgs, ctx: &Ctx, backend: Backend) -> Result<i32> {
    let b = &a.sim.build;
    let ranks = match (ctx.size(), b.ranks) {
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
    let p = ranks as f64;
    let time = |coll: &str, alg: &str, size: u64, engines: usize| -> Result<f64> {
        let build = BuildArgs {
            ranks: Some(ranks),
            collective: Some(coll.into()),
            algorithm: Some(alg.into()),
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
            let mut bufs = fresh::<T>(ctx, backend, &s)?;
            time_runs(ctx, backend, &plan, &mut bufs, &opts, iters / 10, iters, false)?
        });
        // The median iteration: what a run typically meets (the fastest
        // is a lucky one on a node whose ranks share cores).
        let mut t = times;
        t.sort_by(f64::total_cmp);
        Ok(t[t.len() / 2])
    };
    let small = time("allreduce", "recursive_doubling", 8, ranks)?;
    let at_once = time("scatter", "linear", 8, ranks - 1)?;
    let pof2 = ranks.next_power_of_two();
    let rounds = f64::from(pof2.trailing_zeros()) + if pof2 == ranks { 0.0 } else { 2.0 };
    let step = small / rounds;
    let overhead_s = if ranks > 2 {
        ((at_once - step) / (p - 2.0)).clamp(0.0, step)
    } else {
        0.0
    };
    let latency_s = step - overhead_s;
    let seq = time("scatter", "linear", LARGE, 1)?;
    let pair_bandwidth =
        (p - 1.0) * LARGE as f64 / (seq - (p - 1.0) * (overhead_s + latency_s)).max(1e-9);
    let all = time("alltoall", "linear", LARGE, ranks)?;
    let node_bandwidth = (p * (p - 1.0) * LARGE as f64
        / (all - (p - 1.0) * overhead_s - latency_s).max(1e-9))
    .max(pair_bandwidth);
    let mut compute = 0.0f64;
    if ctx.lead() {
        kernel_bench::run(LARGE, 3, Some(Dtype::F64), &mut |r| {
            if r.in_place && r.op == ReduceOp::Sum {
                // gbs counts two reads and a write per element.
                compute = compute.max(r.gbs * 1e9 / 3.0);
            }
            Ok(())
        })?;
    }
    if !ctx.lead() {
        return Ok(0);
    }
    let m = Machine {
        source: format!(
            "calibrated on the {} backend with {ranks} ranks",
            if backend == Backend::Mpi {
                "mpi"
            } else {
                "threads"
            }
        ),
        overhead_s,
        latency_s,
        pair_bandwidth,
        node_bandwidth,
        compute_bandwidth: compute,
    };
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
