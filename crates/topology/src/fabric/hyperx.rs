//! `hyperx:S1xS2[xS3]`: HyperX (Ahn, Binkert, Davis, McLaren and
//! Schreiber, SC 2009) of one host per switch. The switches sit on an
//! S1 × S2 (× S3) grid, switch s at coordinates dimension 0 fastest (as
//! a mesh's nodes), and each is joined to every switch that differs from
//! it in one coordinate (all to all along each dimension). Host i sits
//! on switch i. Routes are dimension-order minimal: host to its switch,
//! then one hop per dimension in which the two switches differ, lowest
//! dimension first, then to the host: 2 + (dimensions that differ) links.

use super::{back, Cabling};
use crate::error::fail;
use crate::error::Result;
use crate::{Graph, LinkId, NodeId, NodeKind, PairRouter};
use std::sync::Arc;

/// The HyperX `hyperx:SHAPE` names (`shape` is `S1xS2` or `S1xS2xS3`).
pub(crate) fn hyperx(spec: &str, shape: &str) -> Result<Graph> {
    let dims = shape.split('x').count();
    if !(1..=3).contains(&dims) {
        return Err(fail!(
            Topology,
            Shape,
            "topology '{spec}': HyperX takes one to three sizes, like hyperx:8x8 or hyperx:4x4x4"
        ));
    }
    let names = ["S1", "S2", "S3"];
    let sizes = super::numbers(spec, shape, 'x', &names[..dims])?;
    let n = sizes.iter().try_fold(1usize, |a, &s| a.checked_mul(s));
    // Cables: a host's each, and n·(S−1)/2 along each dimension.
    let cables = n.and_then(|n| {
        sizes.iter().try_fold(n, |sum, &s| {
            n.checked_mul(s - 1).and_then(|x| sum.checked_add(x / 2))
        })
    });
    let what = format!("topology '{spec}'");
    let mut c = Cabling::new(&what, n.and_then(|n| n.checked_mul(2)), cables)?;
    let n = n.unwrap_or(0);
    let stride: Vec<usize> = (0..dims).map(|d| sizes[..d].iter().product()).collect();
    let coord = |s: usize, d: usize| (s / stride[d]) % sizes[d];
    for i in 0..n {
        c.node(format!("host-{i}"), NodeKind::Host);
    }
    for s in 0..n {
        let at: Vec<String> = (0..dims).map(|d| coord(s, d).to_string()).collect();
        c.node(format!("switch-({})", at.join(",")), NodeKind::Switch);
    }
    let up: Vec<LinkId> = (0..n)
        .map(|i| c.cable(i as NodeId, (n + i) as NodeId))
        .collect();
    // along[s·Σ + offset[d] + v]: the link from switch s to the switch
    // like it but for coordinate v in dimension d.
    let total: usize = sizes.iter().sum();
    let offset: Vec<usize> = (0..dims).map(|d| sizes[..d].iter().sum()).collect();
    let mut along = vec![LinkId::MAX; n * total];
    for (d, &size) in sizes.iter().enumerate() {
        for s in 0..n {
            let mine = coord(s, d);
            for v in mine + 1..size {
                let t = s + (v - mine) * stride[d];
                let l = c.cable((n + s) as NodeId, (n + t) as NodeId);
                along[s * total + offset[d] + v] = l;
                along[t * total + offset[d] + mine] = back(l);
            }
        }
    }
    let router = Router {
        sizes,
        stride,
        offset,
        total,
        up,
        along,
    };
    c.finish(Arc::new(router))
}

struct Router {
    sizes: Vec<usize>,
    stride: Vec<usize>,
    offset: Vec<usize>,
    total: usize,
    up: Vec<LinkId>,
    along: Vec<LinkId>,
}

impl PairRouter for Router {
    fn route(&self, x: NodeId, y: NodeId, out: &mut Vec<LinkId>) -> Result<()> {
        let (x, y) = (x as usize, y as usize);
        out.push(self.up[x]);
        let mut s = x;
        for d in 0..self.sizes.len() {
            let (a, b) = (
                (s / self.stride[d]) % self.sizes[d],
                (y / self.stride[d]) % self.sizes[d],
            );
            if a != b {
                out.push(self.along[s * self.total + self.offset[d] + b]);
                s = s + b * self.stride[d] - a * self.stride[d];
            }
        }
        out.push(back(self.up[y]));
        Ok(())
    }
}
