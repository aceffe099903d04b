//! `topocoll reproduce`: the papers' experiments, written into a directory.

use crate::reproduce;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use topocoll_base::Error;

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper: a2at, trinaryx3, treebcast, multilane, dragonnet or swing.
    #[arg(value_enum)]
    pub paper: Paper,
    /// Directory for the tables and plots (written into it).
    #[arg(long, short = 'o', default_value = "out")]
    pub out: PathBuf,
    /// A smaller, faster run. a2at: Figure 7 on a 16x16 torus, skew on 8x8
    /// (about 8 s); trinaryx3: 12x6x8 and 6x6x4 tori, messages up to
    /// 16 MiB (about 1 s); treebcast: the smallest network of each family
    /// (star of 8, 2x4, 2x2x2, 2x2x(1+1); under a second); multilane: three
    /// sizes; dragonnet: 16 and 64 nodes; swing: 4x4 and 2x2x2 tori, three
    /// sizes (under a second).
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

/// The papers whose experiments are reproduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Paper {
    A2at,
    Trinaryx3,
    Treebcast,
    Multilane,
    Dragonnet,
    Swing,
}

pub fn run(a: ReproduceArgs) -> Result<i32> {
    if a.time_limit.is_some() && a.paper != Paper::Treebcast {
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
    if a.full_sweep && a.paper != Paper::Trinaryx3 {
        return Err(Error::Invalid(
            "--full-sweep is an option of 'reproduce trinaryx3' (its segment sweep)".into(),
        )
        .into());
    }
    // The output directory must be writable before minutes of simulation.
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
    let summary = match a.paper {
        Paper::A2at => reproduce::a2at::run(&dir, &reproduce::a2at::Options { quick: a.quick })?,
        Paper::Trinaryx3 => reproduce::trinaryx3::run(
            &dir,
            &reproduce::trinaryx3::Options {
                quick: a.quick,
                full_sweep: a.full_sweep,
            },
        )?,
        Paper::Treebcast => reproduce::treebcast::run(
            &dir,
            &reproduce::treebcast::Settings {
                quick: a.quick,
                time_limit_s: time_limit,
            },
        )?,
        Paper::Multilane => {
            reproduce::multilane::run(&dir, &reproduce::multilane::Settings { quick: a.quick })?
        }
        Paper::Dragonnet => {
            reproduce::dragonnet::run(&dir, &reproduce::dragonnet::Settings { quick: a.quick })?
        }
        Paper::Swing => {
            reproduce::swing::run(&dir, &reproduce::swing::Settings { quick: a.quick })?
        }
    };
    out!("{summary}");
    outln!("written to {}", dir.display());
    Ok(0)
}
