//! `topocoll reproduce`: the papers' experiments, written into a directory.

use crate::error::Error;
use crate::reproduce;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper: a2at, trinaryx3, treebcast, multilane or dragonnet.
    pub paper: String,
    /// Directory for the tables and plots (written into it).
    #[arg(long, short = 'o', default_value = "out")]
    pub out: PathBuf,
    /// A smaller, faster run (smaller tori).
    #[arg(long)]
    pub quick: bool,
    /// trinaryx3: run every segment size of the segment sweep (256 KiB down
    /// to 8 KiB, 4 KiB for messages up to 1 MiB) instead of stopping each
    /// message's sweep at the first size slower than the best before it.
    #[arg(long)]
    pub full_sweep: bool,
    /// treebcast: the time limit of each solve, in seconds [default: 60].
    #[arg(long)]
    pub time_limit: Option<f64>,
}

pub fn run(a: ReproduceArgs) -> Result<i32> {
    if a.time_limit.is_some() && a.paper != "treebcast" {
        return Err(Error::Invalid(
            "--time-limit is an option of 'reproduce treebcast' (its solves)".into(),
        )
        .into());
    }
    let time_limit = a.time_limit.unwrap_or(60.0);
    if !(time_limit.is_finite() && time_limit > 0.0) {
        return Err(Error::Invalid(format!(
            "--time-limit must be a positive number of seconds, got {time_limit}"
        ))
        .into());
    }
    // Every paper writes into the directory itself.
    let dir = a.out.clone();
    // The output directory must be writable before minutes of simulation.
    if matches!(
        a.paper.as_str(),
        "a2at" | "trinaryx3" | "treebcast" | "multilane" | "dragonnet"
    ) {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    }
    let summary = match a.paper.as_str() {
        "a2at" | "treebcast" | "multilane" | "dragonnet" if a.full_sweep => {
            return Err(Error::Invalid(
                "--full-sweep is an option of 'reproduce trinaryx3' (its segment sweep)".into(),
            )
            .into())
        }
        "a2at" => reproduce::a2at::run(&dir, &reproduce::a2at::Options { quick: a.quick })?,
        "trinaryx3" => reproduce::trinaryx3::run(
            &dir,
            &reproduce::trinaryx3::Options {
                quick: a.quick,
                full_sweep: a.full_sweep,
            },
        )?,
        "treebcast" => reproduce::treebcast::run(
            &dir,
            &reproduce::treebcast::Settings {
                quick: a.quick,
                time_limit_s: time_limit,
            },
        )?,
        "multilane" => {
            reproduce::multilane::run(&dir, &reproduce::multilane::Settings { quick: a.quick })?
        }
        "dragonnet" => {
            reproduce::dragonnet::run(&dir, &reproduce::dragonnet::Settings { quick: a.quick })?
        }
        other => {
            return Err(Error::Invalid(format!(
                "nothing to reproduce for '{other}' (a2at, trinaryx3, treebcast, multilane or dragonnet)"
            ))
            .into())
        }
    };
    out!("{summary}");
    outln!("written to {}", dir.display());
    Ok(0)
}
