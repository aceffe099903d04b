//! `topocoll list`: the topologies, collectives and algorithms topocoll
//! knows; with `--links --topology T`, T's links by index (the numbers a
//! schedule's paths name).

use super::args::{BuildArgs, Given};
use crate::algorithms::ALGORITHMS;
use crate::schedule;
use crate::topology::Topology;
use anyhow::Result;
use clap::Args;
use std::io::Write;
use topocoll_base::Error;

#[derive(Args)]
pub struct ListArgs {
    /// List the --topology's directed links instead: index (as a schedule's `paths` name
    /// them), ends, name, bandwidth, latency, and whether data crosses it both ways. Takes
    /// the topology's own flags (--fail, --ranks-per-node, ...), which change the links.
    #[arg(long)]
    links: bool,
    #[command(flatten)]
    build: BuildArgs,
}

/// The flags `list --links` reads: the topology's.
const LINK_FLAGS: &[&str] = &[
    "--links",
    "--topology",
    "--ranks-per-node",
    "--map",
    "--node-bandwidth",
    "--node-latency",
    "--fail",
    "--seed",
];

pub fn run(a: ListArgs, given: &Given) -> Result<i32> {
    if let Some(flag) = given.first_except(if a.links { LINK_FLAGS } else { &[] }) {
        return Err(Error::Invalid(if a.links {
            format!("list --links takes the topology's flags only, not {flag}")
        } else {
            format!("list takes no {flag} (list --links --topology T lists T's links)")
        })
        .into());
    }
    if a.links {
        let Some(topo) = a.build.topology()? else {
            return Err(
                Error::Invalid("list --links lists a --topology's links: give one".into()).into(),
            );
        };
        return links(&topo);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "Topologies (--topology):")?;
    for (spec, what) in [
        ("torus:32x32", "torus of any dimension count; dimension-order routing, shortest way round, ties +"),
        ("mesh:8x8", "mesh of any dimension count; dimension-order routing"),
        ("hypercube:4", "binary n-cube; e-cube routing, lowest bit first"),
        ("tofu:4x3x4", "Tofu 6D (X,Y,Z,a,b,c = 2x3x2) as its virtual 3D torus (8x9x8 here)"),
        ("dragonnet:16", "Dragon net: indirect binary n-cube of 2x2 switch elements (--model packet)"),
        ("fattree:16", "three-level fat tree of K-port switches (K^3/4 hosts; fattree:K:R oversubscribed R:1); d-mod-k routing"),
        ("dragonfly:8,4,4,32", "dragonfly of A routers a group, P hosts a router, H global links a router, G groups; minimal routing"),
        ("railfat:128,8", "rail-optimised two-level fat tree: NIC i of every server on rail i (hosts are the NIC ports)"),
        ("hyperx:8x8", "HyperX: switches fully joined along each dimension, a host each; dimension-order routing"),
        ("FILE.toml", "any of the above, a tree of hosts and switches, a grid of sites, or a graph (see examples/)"),
        ("FILE.xml", "a SimGrid platform: TORUS, FAT_TREE, DRAGONFLY or flat cluster, or hosts, links, routes"),
        ("FILE.xml", "an NCCL topology file (root <system>): a GPU server; a cluster of them in a TOML file"),
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

/// One line per directed link of `topo`, by index.
fn links(topo: &Topology) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    if (0..topo.links.len()).any(|l| topo.link_ends(l as u32).is_none()) {
        writeln!(
            out,
            "Links of {}; its routes are the platform's, host pair by host pair: its links join no nodes, and a schedule's paths cannot name them:",
            topo.describe()
        )?;
    } else {
        writeln!(
            out,
            "Links of {}; a schedule's paths name them by index:",
            topo.describe()
        )?;
    }
    writeln!(
        out,
        "{:>7}  {:<16} {:<16} {:>10} {:>10}  {:<9}  name",
        "index", "from", "to", "bytes/s", "latency s", "carries"
    )?;
    for (l, link) in topo.links.iter().enumerate() {
        // A platform routed by its zones: its links join no nodes, and
        // carry what the routes put on them, either way.
        let (from, to, ways) = match topo.link_ends(l as u32) {
            None => ("-".to_string(), "-".to_string(), "by routes"),
            Some((a, b)) => (
                topo.node_name(a),
                topo.node_name(b),
                if topo.both_ways(l as u32) {
                    "both ways"
                } else {
                    "one way"
                },
            ),
        };
        writeln!(
            out,
            "{l:>7}  {from:<16} {to:<16} {:>10} {:>10}  {ways:<9}  {}",
            format!("{:e}", link.bandwidth),
            format!("{:e}", link.latency),
            topo.link_name(l as u32)
        )?;
    }
    Ok(0)
}
