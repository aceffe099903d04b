//! `topocoll list`: the topologies, collectives and algorithms topocoll knows.

use crate::algorithms::ALGORITHMS;
use crate::schedule;
use anyhow::Result;
use std::io::Write;

pub fn run() -> Result<i32> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "Topologies (--topology):")?;
    for (spec, what) in [
        ("torus:32x32", "torus of any dimension count; dimension-order routing, shortest way round, ties +"),
        ("mesh:8x8", "mesh of any dimension count; dimension-order routing"),
        ("hypercube:4", "binary n-cube; e-cube routing, lowest bit first"),
        ("tofu:4x3x4", "Tofu 6D (X,Y,Z,a,b,c = 2x3x2) as its virtual 3D torus (8x9x8 here)"),
        ("dragonnet:16", "Dragon net: indirect binary n-cube of 2x2 switch elements (--model packet)"),
        ("FILE.toml", "any of the above, a tree of hosts and switches, a grid of sites, or a graph (see examples/)"),
        ("FILE.xml", "a SimGrid platform: TORUS, FAT_TREE, DRAGONFLY or flat cluster, or hosts, links, routes"),
    ] {
        writeln!(out, "  {spec:<14} {what}")?;
    }
    writeln!(out, "\nCollectives (--collective):")?;
    for (name, what) in schedule::collective_names() {
        writeln!(out, "  {name:<14} {what}")?;
    }
    writeln!(
        out,
        "\nAlgorithms (--collective NAME --algorithm NAME; [stream]: can be generated op by op, see simulate --stream):"
    )?;
    for a in ALGORITHMS {
        let stream = if a.stream.is_some() { " [stream]" } else { "" };
        writeln!(
            out,
            "  {:<14} {:<18} {}{stream}",
            a.collective, a.name, a.summary
        )?;
    }
    Ok(0)
}
