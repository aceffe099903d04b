//! `topocoll verify`: build a schedule (or read one) and prove it
//! implements its collective.

use super::args::BuildArgs;
use crate::schedule;
use crate::units::format_bytes;
use anyhow::Result;
use clap::Args;
use std::time::Instant;
use topocoll_base::Error;

#[derive(Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// Verify a schedule read from a file (JSON as `topocoll schedule --format json` writes, or
    /// MSCCL XML)
    /// instead of building one.
    #[arg(long)]
    schedule: Option<String>,
}

pub fn run(a: VerifyArgs) -> Result<i32> {
    let t0 = Instant::now();
    let b = &a.build;
    let (s, what) = match &a.schedule {
        Some(path) => {
            let s = b.read_schedule(path)?;
            // The verifier does not need a network, but one given must fit,
            // and the paths the schedule names must be its paths.
            if let Some(t) = b.topology()? {
                if t.num_ranks() != s.ranks {
                    return Err(Error::Invalid(format!(
                        "topology {} has {} ranks, but schedule '{path}' has {}",
                        t.name,
                        t.num_ranks(),
                        s.ranks
                    ))
                    .into());
                }
                crate::sim::check_routes(&s, &t)
                    .map_err(|e| Error::Invalid(format!("schedule '{path}': {e}")))?;
            }
            (s, format!("schedule {path}"))
        }
        None => {
            let topo = b.topology()?;
            // Refused before building where the ranks alone cannot fit.
            schedule::check_ranks_fit(b.request(topo.as_ref())?.ranks)?;
            let s = b.build(topo.as_ref())?;
            let on = topo
                .as_ref()
                .map(|t| t.describe())
                .unwrap_or_else(|| format!("{} ranks", s.ranks));
            (
                s,
                format!("{} {} on {on}", b.collective_name()?, b.algorithm_name()?),
            )
        }
    };
    let built = t0.elapsed();
    let t1 = Instant::now();
    let report = schedule::verify(&s)?;
    let checked = t1.elapsed();
    outln!(
        "ok: {what}: {} ops, {} transfers, {} moved, {} element(s) of {} per {}; built in {:.3} s, verified in {:.3} s",
        report.ops,
        report.transfers,
        format_bytes(report.bytes_moved),
        s.count,
        s.dtype.name(),
        if s.sizes().is_some() {
            "largest block"
        } else if s.collective.size_is_block() {
            "block"
        } else {
            "buffer"
        },
        built.as_secs_f64(),
        checked.as_secs_f64()
    );
    Ok(0)
}
