//! `topocoll reproduce`: the papers' experiments, written into a directory.

use crate::error::Error;
use crate::reproduce;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ReproduceArgs {
    /// Which paper: a2at or trinaryx3.
    pub paper: String,
    /// Directory for the tables and plots.
    #[arg(long, short = 'o', default_value = "out")]
    pub out: PathBuf,
    /// A smaller, faster run (smaller tori).
    #[arg(long)]
    pub quick: bool,
}

pub fn run(a: ReproduceArgs) -> Result<i32> {
    let dir = a.out.join(&a.paper);
    let summary = match a.paper.as_str() {
        "a2at" => reproduce::a2at::run(&dir, &reproduce::a2at::Options { quick: a.quick })?,
        "trinaryx3" => {
            reproduce::trinaryx3::run(&dir, &reproduce::trinaryx3::Options { quick: a.quick })?
        }
        other => {
            return Err(Error::Invalid(format!(
                "nothing to reproduce for '{other}' (a2at or trinaryx3)"
            ))
            .into())
        }
    };
    print!("{summary}");
    println!("written to {}", dir.display());
    Ok(0)
}
