//! Fabrics from spec strings, routed pair by pair (no table of every
//! pair, so memory grows with the cables): the three-level fat tree of
//! K-port switches (`fattree`), Kim et al.'s dragonfly (`dragonfly`), a
//! rail-optimised two-level fat tree (`railfat`) and HyperX (`hyperx`).
//! Each is a [`Graph`] of hosts (nodes 0..H, rank r on host r) and
//! switches joined by full-duplex cables of the default bandwidth and
//! latency, with a [`PairRouter`] that works each route out when asked.

mod dragonfly;
mod fattree;
mod hyperx;
mod railfat;

pub(crate) use dragonfly::dragonfly;
pub(crate) use fattree::fattree;
pub(crate) use hyperx::hyperx;
pub(crate) use railfat::railfat;

use super::graph::check_fabric_size;
use super::{Graph, Link, LinkId, NodeId, NodeKind, NodeSpec, PairRouter};
use crate::error::fail;
use crate::error::Result;
use std::sync::Arc;

/// A fabric's nodes and cables as they are laid, each cable two directed
/// links (there and back, ids `2c` and `2c + 1`).
struct Cabling {
    nodes: Vec<NodeSpec>,
    links: Vec<Link>,
    bandwidth: f64,
    latency: f64,
}

impl Cabling {
    /// Room for `nodes` nodes and `cables` cables, refused (one line)
    /// past what a network routed pair by pair may hold, before anything
    /// is allocated.
    fn new(what: &str, nodes: Option<usize>, cables: Option<usize>) -> Result<Cabling> {
        let links = cables.and_then(|c| c.checked_mul(2)).unwrap_or(usize::MAX);
        check_fabric_size(what, nodes.unwrap_or(usize::MAX), links)?;
        Ok(Cabling {
            nodes: Vec::with_capacity(nodes.unwrap_or(0)),
            links: Vec::with_capacity(links),
            bandwidth: super::DEFAULT_BANDWIDTH,
            latency: super::DEFAULT_LATENCY,
        })
    }

    fn node(&mut self, name: String, kind: NodeKind) -> NodeId {
        self.nodes.push(NodeSpec { name, kind });
        (self.nodes.len() - 1) as NodeId
    }

    /// A cable from `a` to `b`: its a→b link (the b→a one is the next id).
    fn cable(&mut self, a: NodeId, b: NodeId) -> LinkId {
        let id = self.links.len() as LinkId;
        for (from, to) in [(a, b), (b, a)] {
            self.links.push(Link {
                from,
                to,
                bandwidth: self.bandwidth,
                latency: self.latency,
            });
        }
        id
    }

    fn finish(self, router: Arc<dyn PairRouter>) -> Result<Graph> {
        Graph::with_cabled_router(&self.nodes, self.links, Vec::new(), router)
    }
}

/// The class of the link from node `a` to node `b` (`Topology::link_class`)
/// by what the fabrics name their switches: a dragonfly's
/// `router-GROUP-INDEX`, a rail-optimised fat tree's `leaf-RAIL-K` and
/// `spine-K`, HyperX's `switch-(X,Y,Z)`; `None` for any other pair.
pub(crate) fn link_class(names: &[String], a: NodeId, b: NodeId) -> Option<&'static str> {
    let (x, y) = (names.get(a as usize)?, names.get(b as usize)?);
    // A router's group, where the name is router-GROUP-INDEX (SimGrid's
    // DRAGONFLY routers are router-INDEX, and not this).
    let group = |s: &str| {
        let (g, i) = s.strip_prefix("router-")?.split_once('-')?;
        i.parse::<usize>().ok()?;
        g.parse::<usize>().ok()
    };
    let coords = |s: &str| {
        s.strip_prefix("switch-(")?
            .strip_suffix(')')
            .map(str::to_owned)
    };
    let host = |s: &str| s.starts_with("host-");
    match (group(x), group(y)) {
        (Some(g), Some(h)) => return Some(if g == h { "intra-group" } else { "global" }),
        (Some(_), None) if host(y) => return Some("host"),
        (None, Some(_)) if host(x) => return Some("host"),
        _ => {}
    }
    let spine = |s: &str| s.starts_with("spine-");
    let leaf = |s: &str| s.starts_with("leaf-");
    if (leaf(x) && spine(y)) || (spine(x) && leaf(y)) {
        return Some("leaf-spine");
    }
    if (leaf(x) && host(y)) || (host(x) && leaf(y)) {
        return Some("host-leaf");
    }
    match (coords(x), coords(y)) {
        (Some(p), Some(q)) => {
            let d = p.split(',').zip(q.split(',')).position(|(u, v)| u != v)?;
            const DIMENSIONS: [&str; 3] = ["dimension 0", "dimension 1", "dimension 2"];
            DIMENSIONS.get(d).copied()
        }
        (Some(_), None) if host(y) => Some("host"),
        (None, Some(_)) if host(x) => Some("host"),
        _ => None,
    }
}

/// The back link of a cable's link (`Cabling::cable`).
fn back(l: LinkId) -> LinkId {
    l ^ 1
}

/// A spec's parameters: whole numbers ≥ 1 separated by `sep`, `count` of
/// them (or any count in `count`), each named for the refusal.
fn numbers(spec: &str, text: &str, sep: char, names: &[&str]) -> Result<Vec<usize>> {
    let parts: Vec<&str> = text.split(sep).map(str::trim).collect();
    if parts.len() != names.len() {
        return Err(fail!(
            Topology,
            Spec,
            "topology '{spec}': takes {} ({}), separated by '{sep}'",
            names.len(),
            names.join(&sep.to_string())
        ));
    }
    parts
        .iter()
        .zip(names)
        .map(|(p, name)| match p.parse::<usize>() {
            Ok(0) => Err(fail!(
                Topology,
                Spec,
                "topology '{spec}': {name} must be at least 1"
            )),
            Ok(x) => Ok(x),
            Err(_) => Err(fail!(
                Topology,
                Spec,
                "topology '{spec}': {name} '{}' is not a whole number",
                topocoll_base::units::shorten(p)
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests;
