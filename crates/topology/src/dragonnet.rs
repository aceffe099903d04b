//! The Dragon net (Noguchi, Take, Yokota): an indirect binary n-cube, the
//! multistage network of n stages of N/2 two-by-two switch elements joining
//! N = 2^n nodes (Omega-like).
//!
//! Positions are n-bit numbers. Stage i's switch elements pair the positions
//! that differ in bit i: element j of stage i holds positions p and
//! p | 2^i, where p is j with a zero bit inserted at bit i. A packet enters
//! stage 0 at its source's position and leaves stage i with bit i set to its
//! destination's, so it leaves the last stage at its destination. Link
//! level ℓ (0..=n) at position p has id ℓ·N + p: level 0 joins node p to
//! stage 0, level ℓ (1..n−1) joins stage ℓ−1 to stage ℓ, level n joins the
//! last stage to node p. In XOR phase s every source v sits at position
//! v ⊕ (s mod 2^ℓ) on level ℓ, a different position for every v: no two
//! packets of one phase ever want one link, and every link is used.

use super::{Link, LinkId, NodeId};
use crate::error::fail;
use crate::error::Result;

#[derive(Clone, Debug)]
pub struct DragonNet {
    /// Stages n; N = 2^n nodes.
    pub stages: u32,
    pub bandwidth: f64,
    pub latency: f64,
}

impl DragonNet {
    pub fn new(nodes: usize, bandwidth: f64, latency: f64) -> Result<DragonNet> {
        if nodes < 2 || !nodes.is_power_of_two() {
            return Err(fail!(
                Topology,
                Shape,
                "dragonnet: {nodes} nodes; the network joins N = 2^n nodes, n ≥ 1 (2, 4, 8, ...)"
            ));
        }
        if nodes > 1 << 16 {
            return Err(fail!(
                Topology,
                Shape,
                "dragonnet: {nodes} nodes is more than the 65,536 supported"
            ));
        }
        super::check_bandwidth("dragonnet", bandwidth)?;
        super::check_latency("dragonnet", latency)?;
        Ok(DragonNet {
            stages: nodes.trailing_zeros(),
            bandwidth,
            latency,
        })
    }

    /// N, the nodes.
    pub fn nodes(&self) -> usize {
        1 << self.stages
    }

    /// Nodes and switch elements: N + n·N/2.
    pub fn num_nodes(&self) -> usize {
        self.nodes() + self.stages as usize * self.nodes() / 2
    }

    /// The graph node of switch element `j` of stage `i`.
    pub fn element(&self, stage: u32, j: usize) -> NodeId {
        (self.nodes() + stage as usize * self.nodes() / 2 + j) as NodeId
    }

    /// The element of stage `i` that holds position `p`: p without bit i.
    pub fn element_of(&self, stage: u32, p: usize) -> usize {
        let low = p & ((1 << stage) - 1);
        ((p >> (stage + 1)) << stage) | low
    }

    /// Links by level and position (see the module doc).
    pub fn links(&self) -> Vec<Link> {
        let (n, nodes) = (self.stages, self.nodes());
        let mut links = Vec::with_capacity((n as usize + 1) * nodes);
        for level in 0..=n {
            for p in 0..nodes {
                let from = if level == 0 {
                    p as NodeId
                } else {
                    self.element(level - 1, self.element_of(level - 1, p))
                };
                let to = if level == n {
                    p as NodeId
                } else {
                    self.element(level, self.element_of(level, p))
                };
                links.push(Link {
                    from,
                    to,
                    bandwidth: self.bandwidth,
                    latency: self.latency,
                });
            }
        }
        links
    }

    /// The position on link level `level` of a packet from `src` to `dst`:
    /// bits below `level` from the destination, the rest from the source.
    pub fn position(src: usize, dst: usize, level: u32) -> usize {
        let low = (1usize << level) - 1;
        (dst & low) | (src & !low)
    }

    /// The n + 1 links from node `a` to node `b` (none to itself).
    pub fn route_nodes(&self, a: NodeId, b: NodeId, out: &mut Vec<LinkId>) {
        if a == b {
            return;
        }
        let nodes = self.nodes();
        for level in 0..=self.stages {
            let p = Self::position(a as usize, b as usize, level);
            out.push((level as usize * nodes + p) as LinkId);
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "Dragon net of {} nodes: {} stages of {} switch elements",
            self.nodes(),
            self.stages,
            self.nodes() / 2
        )
    }
}
