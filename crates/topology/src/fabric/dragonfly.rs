//! `dragonfly:A,P,H,G`: Kim, Dally, Scott and Abts' dragonfly (ISCA
//! 2008). G groups of A routers; the routers of a group are joined all
//! to all (local cables); each router has P hosts and H global ports,
//! and the groups are joined pairwise by global cables, so G ≤ A·H + 1.
//!
//! Global cables: every pair of groups is joined by m = ⌊A·H / (G−1)⌋
//! cables (one where G = A·H + 1, the balanced case's count). Group g
//! numbers its other groups 0..G−1 in order, skipping itself (group t is
//! index t where t < g, t − 1 where t > g); copy c of its cable to the
//! group of index i leaves from its global port c·(G−1) + i, which is
//! port (that mod H) of router (that / H): the consecutive arrangement,
//! ports filled router by router. Ports past m·(G−1) stay unused.
//!
//! Routes are minimal (local, global, local; Kim et al.'s MIN): host to
//! its router; within a group straight to the target router; to another
//! group over one global cable, the copy of fewest local hops (a copy at
//! the source router saves the first, one landing at the target router
//! the second), ties to the first from copy (source router + target
//! router) mod m, so that router pairs spread over the copies; then to
//! the target's host. At most 5 links.

use super::{back, Cabling};
use crate::error::fail;
use crate::error::Result;
use crate::{Graph, LinkId, NodeId, NodeKind, PairRouter};
use std::sync::Arc;

/// The dragonfly `dragonfly:SHAPE` names (`shape` is `A,P,H,G`).
pub(crate) fn dragonfly(spec: &str, shape: &str) -> Result<Graph> {
    let v = super::numbers(
        spec,
        shape,
        ',',
        &[
            "A (routers per group)",
            "P (hosts per router)",
            "H (global ports per router)",
            "G (groups)",
        ],
    )?;
    let (a, p, h, g) = (v[0], v[1], v[2], v[3]);
    let ports = a.checked_mul(h).ok_or_else(|| {
        fail!(
            Topology,
            Shape,
            "topology '{spec}': A·H global ports is too many"
        )
    })?;
    if g > ports + 1 {
        return Err(fail!(Topology, Shape,
            "topology '{spec}': {g} groups cannot be joined pairwise by {a} routers of {h} global ports each (at most A·H + 1 = {} groups)",
            ports + 1
        ));
    }
    let m = if g > 1 { ports / (g - 1) } else { 0 };
    let routers = g.checked_mul(a);
    let hosts = routers.and_then(|r| r.checked_mul(p));
    let cables = [
        hosts,
        a.checked_mul(a - 1).and_then(|x| g.checked_mul(x / 2)),
        g.checked_mul(g - 1).and_then(|x| (x / 2).checked_mul(m)),
    ]
    .iter()
    .try_fold(0usize, |s, x| x.and_then(|x| s.checked_add(x)));
    let nodes = hosts.and_then(|x| routers.and_then(|r| x.checked_add(r)));
    let what = format!("topology '{spec}'");
    let mut c = Cabling::new(&what, nodes, cables)?;
    let (routers, hosts) = (g * a, g * a * p);
    for x in 0..hosts {
        c.node(format!("host-{x}"), NodeKind::Host);
    }
    for r in 0..routers {
        c.node(format!("router-{}-{}", r / a, r % a), NodeKind::Switch);
    }
    let node = |r: usize| (hosts + r) as NodeId;
    let up: Vec<LinkId> = (0..hosts)
        .map(|x| c.cable(x as NodeId, node(x / p)))
        .collect();
    // local[(group·A + i)·A + j]: router i to router j of the group.
    let mut local = vec![LinkId::MAX; routers * a];
    for grp in 0..g {
        for i in 0..a {
            for j in i + 1..a {
                let l = c.cable(node(grp * a + i), node(grp * a + j));
                local[(grp * a + i) * a + j] = l;
                local[(grp * a + j) * a + i] = back(l);
            }
        }
    }
    // global[group·m(G−1) + port]: the link leaving that port.
    let used = m * g.saturating_sub(1);
    let mut global = vec![LinkId::MAX; g * used];
    let index = |from: usize, to: usize| if to < from { to } else { to - 1 };
    for s in 0..g {
        for t in s + 1..g {
            for copy in 0..m {
                let ps = copy * (g - 1) + index(s, t);
                let pt = copy * (g - 1) + index(t, s);
                let l = c.cable(node(s * a + ps / h), node(t * a + pt / h));
                global[s * used + ps] = l;
                global[t * used + pt] = back(l);
            }
        }
    }
    let router = Router {
        a,
        p,
        h,
        g,
        m,
        up,
        local,
        global,
    };
    c.finish(Arc::new(router))
}

/// The dragonfly's links by where they leave, for its routes.
struct Router {
    a: usize,
    p: usize,
    h: usize,
    g: usize,
    m: usize,
    /// Each host's link to its router (its back link: router to host).
    up: Vec<LinkId>,
    local: Vec<LinkId>,
    global: Vec<LinkId>,
}

impl PairRouter for Router {
    fn route(&self, x: NodeId, y: NodeId, out: &mut Vec<LinkId>) -> Result<()> {
        let (a, g) = (self.a, self.g);
        let (x, y) = (x as usize, y as usize);
        let (rs, rt) = (x / self.p, y / self.p);
        out.push(self.up[x]);
        let hop = |out: &mut Vec<LinkId>, from: usize, to: usize| {
            if from != to {
                out.push(self.local[from * a + to % a]);
            }
        };
        let (gs, gt) = (rs / a, rt / a);
        if gs == gt {
            hop(out, rs, rt);
        } else {
            let used = self.m * (g - 1);
            let index = |from: usize, to: usize| if to < from { to } else { to - 1 };
            let (is, it) = (index(gs, gt), index(gt, gs));
            let cost = |copy: usize| {
                let gw = gs * a + (copy * (g - 1) + is) / self.h;
                let land = gt * a + (copy * (g - 1) + it) / self.h;
                (
                    usize::from(gw != rs) + usize::from(land != rt),
                    gw,
                    land,
                    copy,
                )
            };
            let first = (rs % a + rt % a) % self.m;
            let (_, gw, land, copy) = (0..self.m)
                .map(|k| cost((first + k) % self.m))
                .min_by_key(|&(hops, ..)| hops)
                .expect("groups apart are joined by at least one cable");
            hop(out, rs, gw);
            out.push(self.global[gs * used + copy * (g - 1) + is]);
            hop(out, land, rt);
        }
        out.push(back(self.up[y]));
        Ok(())
    }
}
