//! `railfat:SERVERS,GPUS`: a rail-optimised two-level fat tree, as GPU
//! clusters are cabled. Each of SERVERS servers has GPUS NICs; host
//! s·GPUS + i is NIC i of server s. NIC i of every server is on rail i:
//! rail i has ⌈SERVERS / D⌉ leaf switches of D = min(SERVERS, 32) NIC
//! ports each (leaf k of rail i holds servers k·D .. k·D + D − 1), and
//! D spine switches join the rails: every leaf has one cable to every
//! spine, as many uplinks as NIC ports (1:1, non-blocking; a leaf has
//! 2·D ≤ 64 ports, a spine one per leaf).
//!
//! Routes: a NIC to its leaf; to a NIC of the same leaf straight down;
//! else up to spine (destination server mod D), d-mod-k by destination,
//! down to the destination's leaf and NIC: 2 or 4 links, minimal.

use super::{back, Cabling};
use crate::error::Result;
use crate::{Graph, LinkId, NodeId, NodeKind, PairRouter};
use std::sync::Arc;

/// The most NIC ports a leaf has (its uplinks as many).
const LEAF_DOWN_PORTS: usize = 32;

/// The rail-optimised fat tree `railfat:SHAPE` names (`SERVERS,GPUS`).
pub(crate) fn railfat(spec: &str, shape: &str) -> Result<Graph> {
    let v = super::numbers(spec, shape, ',', &["SERVERS", "GPUS (NICs per server)"])?;
    let (servers, gpus) = (v[0], v[1]);
    let d = servers.min(LEAF_DOWN_PORTS);
    let per_rail = servers.div_ceil(d);
    let hosts = servers.checked_mul(gpus);
    let leaves = per_rail.checked_mul(gpus);
    let nodes = hosts.and_then(|h| leaves.and_then(|l| h.checked_add(l)?.checked_add(d)));
    let cables = hosts.and_then(|h| leaves.and_then(|l| h.checked_add(l.checked_mul(d)?)));
    let what = format!("topology '{spec}'");
    let mut c = Cabling::new(&what, nodes, cables)?;
    let (hosts, leaves) = (servers * gpus, per_rail * gpus);
    for x in 0..hosts {
        c.node(format!("host-{x}"), NodeKind::Host);
    }
    for l in 0..leaves {
        c.node(
            format!("leaf-{}-{}", l / per_rail, l % per_rail),
            NodeKind::Switch,
        );
    }
    for k in 0..d {
        c.node(format!("spine-{k}"), NodeKind::Switch);
    }
    let leaf_of = |x: usize| (x % gpus) * per_rail + (x / gpus) / d;
    let up: Vec<LinkId> = (0..hosts)
        .map(|x| c.cable(x as NodeId, (hosts + leaf_of(x)) as NodeId))
        .collect();
    // to_spine[leaf·D + k]: the leaf's link up to spine k.
    let mut to_spine = Vec::with_capacity(leaves * d);
    for l in 0..leaves {
        for k in 0..d {
            to_spine.push(c.cable((hosts + l) as NodeId, (hosts + leaves + k) as NodeId));
        }
    }
    let router = Router {
        gpus,
        d,
        per_rail,
        up,
        to_spine,
    };
    c.finish(Arc::new(router))
}

struct Router {
    gpus: usize,
    d: usize,
    per_rail: usize,
    up: Vec<LinkId>,
    to_spine: Vec<LinkId>,
}

impl Router {
    fn leaf(&self, x: usize) -> usize {
        (x % self.gpus) * self.per_rail + (x / self.gpus) / self.d
    }
}

impl PairRouter for Router {
    fn route(&self, x: NodeId, y: NodeId, out: &mut Vec<LinkId>) -> Result<()> {
        let (x, y) = (x as usize, y as usize);
        out.push(self.up[x]);
        let (lx, ly) = (self.leaf(x), self.leaf(y));
        if lx != ly {
            let spine = (y / self.gpus) % self.d;
            out.push(self.to_spine[lx * self.d + spine]);
            out.push(back(self.to_spine[ly * self.d + spine]));
        }
        out.push(back(self.up[y]));
        Ok(())
    }
}
