//! Binary n-cubes with e-cube routing (lowest differing bit first).

use super::{Link, LinkId, NodeId};
use crate::error::fail;
use crate::error::Result;

#[derive(Clone, Debug)]
pub struct Hypercube {
    pub dim: usize,
    pub bandwidth: f64,
    pub latency: f64,
}

impl Hypercube {
    pub fn new(dim: usize, bandwidth: f64, latency: f64) -> Result<Hypercube> {
        if dim > 20 {
            return Err(fail!(
                Topology,
                Shape,
                "hypercube: dimension {dim} is too large (at most 20)"
            ));
        }
        super::check_bandwidth("hypercube", bandwidth)?;
        super::check_latency("hypercube", latency)?;
        Ok(Hypercube {
            dim,
            bandwidth,
            latency,
        })
    }

    pub fn num_nodes(&self) -> usize {
        1 << self.dim
    }

    /// Link from `n` across bit `bit` has id `n * dim + bit`.
    pub fn links(&self) -> Vec<Link> {
        (0..self.num_nodes())
            .flat_map(|n| {
                (0..self.dim).map(move |b| Link {
                    from: n as NodeId,
                    to: (n ^ (1 << b)) as NodeId,
                    bandwidth: self.bandwidth,
                    latency: self.latency,
                })
            })
            .collect()
    }

    pub fn route_nodes(&self, a: NodeId, b: NodeId, out: &mut Vec<LinkId>) {
        let mut cur = a;
        for bit in 0..self.dim {
            if (cur ^ b) & (1 << bit) != 0 {
                out.push(cur * self.dim as u32 + bit as u32);
                cur ^= 1 << bit;
            }
        }
    }
}
