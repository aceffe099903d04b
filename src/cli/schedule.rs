//! `topocoll schedule`: build a schedule and write it as JSON, GOAL or
//! MSCCL XML.

use super::args::{BuildArgs, OutputFile};
use crate::schedule;
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::io::Write;
use topocoll_base::Error;

#[derive(Args)]
pub struct ScheduleArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// json (topocoll's own), goal (LogGOPSim) or msccl (MSCCL's XML).
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o')]
    output: Option<String>,
    /// GOAL: bytes per second a combine runs at, for its `calc` time (free
    /// without it, as in the simulator).
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    compute_bandwidth: Option<f64>,
    /// MSCCL XML: the message sizes a runtime may choose the algorithm
    /// for, `MIN..MAX` (an end left out: no limit there, `1MiB..`); every
    /// size without it.
    #[arg(long, allow_hyphen_values = true)]
    msccl_sizes: Option<String>,
    /// Convert a schedule read from this file instead of building one:
    /// topocoll's JSON, a forest `optimize --schedule-out` wrote, or MSCCL
    /// XML (sized by --size and --dtype). It is verified before it is
    /// written.
    #[arg(long)]
    schedule: Option<String>,
}

/// `--msccl-sizes MIN..MAX` as the `minBytes` and `maxBytes` to write.
fn msccl_sizes(text: Option<&str>) -> Result<schedule::MscclBytes> {
    let Some(text) = text else {
        return Ok(schedule::MscclBytes::ALWAYS);
    };
    let Some((lo, hi)) = text.split_once("..") else {
        return Err(Error::Invalid(format!(
            "--msccl-sizes {}: give MIN..MAX, either end may be left out",
            crate::units::shorten(text)
        ))
        .into());
    };
    let end = |t: &str| -> Result<Option<u64>> {
        Ok(match t.trim() {
            "" => None,
            t => Some(crate::units::parse_bytes(t)?),
        })
    };
    Ok(schedule::MscclBytes {
        min: end(lo)?.unwrap_or(0),
        max: end(hi)?,
    })
}

/// `--format`'s values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Json,
    Goal,
    Msccl,
}

pub fn run(a: ScheduleArgs) -> Result<i32> {
    let mut out: Box<dyn Write> = match &a.output {
        Some(path) => Box::new(std::io::BufWriter::new(OutputFile::open(path)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let s = match &a.schedule {
        Some(path) => {
            let s = a.build.read_schedule(path)?;
            schedule::verify(&s)?;
            s
        }
        None => a.build.build(a.build.topology()?.as_ref())?,
    };
    if let Some(bw) = a.compute_bandwidth {
        if a.format != Format::Goal {
            return Err(Error::Invalid(
                "--compute-bandwidth times the combines of --format goal".into(),
            )
            .into());
        }
        if !(bw.is_finite() && bw > 0.0) {
            return Err(Error::Invalid(format!(
                "--compute-bandwidth must be a positive number of bytes/s, got {bw}"
            ))
            .into());
        }
    }
    if a.msccl_sizes.is_some() && a.format != Format::Msccl {
        return Err(Error::Invalid("--msccl-sizes is for --format msccl".into()).into());
    }
    let bytes = msccl_sizes(a.msccl_sizes.as_deref())?;
    if a.format == Format::Json {
        schedule::to_json(&s, &mut out)?;
    } else if a.format == Format::Msccl {
        let lost = schedule::to_msccl_xml_for(&s, bytes, &mut out)?;
        for (n, what) in [
            (
                lost.added_waits,
                "ops also wait for the op before them in their threadblock, as MSCCL runs a threadblock's steps in order",
            ),
            (
                lost.lost_routes,
                "sends lose their signed-offset routes or paths (MSCCL has no routes: its runtimes route every message themselves)",
            ),
            (
                lost.lost_compute,
                "compute ops are written as nop steps and lose their time",
            ),
        ] {
            if n > 0 {
                eprintln!("topocoll: warning: MSCCL XML: {n} {what}");
            }
        }
    } else {
        let lost = schedule::to_goal(&s, a.compute_bandwidth, &mut out)?;
        if lost > 0 {
            eprintln!(
                "topocoll: warning: GOAL has no routes: {lost} sends lose their signed-offset routes or paths and take the simulator's own"
            );
        }
    }
    out.flush()?;
    Ok(0)
}
