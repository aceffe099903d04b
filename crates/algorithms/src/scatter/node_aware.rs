//! Node-aware scatter, for nodes of K ranks each (`algorithms::compose`):
//! the root scatters blocks of K to the leaders (`--inter`, default
//! binomial; the root leads its node, the lowest rank the others), and
//! each leader scatters its K blocks inside its node. Where node j does not
//! hold ranks jK..jK+K−1 the root first puts its blocks in node order in
//! scratch.
//!
//! `node_aware_multi`: every rank of a node leads a slice. The root hands
//! its node's rank t slice t of the buffer in [`compose::slice_order`] (the
//! N blocks of the nodes' ranks t), and K scatters side by side, rank t's
//! of the root's node among the nodes' ranks t (`--inter`), deliver the
//! blocks: all K ranks of the root's node send across the network at once,
//! and each block crosses it once. With a cyclic placement slice order is
//! rank order and the slices are the root's input as it is; otherwise the
//! root first copies its blocks to slice order in scratch.

use crate::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::{Algorithm, Applies, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{Buf, Collective, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Scatter,
    "node_aware",
    "scatter among node leaders (--inter, default binomial), then scatter inside each node",
    build,
)
.applies(Applies::nodes(NodeNeed::Equal))
.composes(INTER);

pub const MULTI: Algorithm = Algorithm {
    name: "node_aware_multi",
    summary: "root hands rank t of its node slice t, K scatters among same-index ranks (--inter, default binomial)",
    build: build_multi,
    ..ALGORITHM
};

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::binomial::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &ALGORITHM)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let leaders = nodes.leaders(Some(root));
    let (k, c, p) = (nodes.per_node(), req.count, req.ranks);
    let direct = nodes.contiguous();
    let node_blocks = k as u64 * c;
    let base = node_blocks + if direct { 0 } else { p as u64 * c };
    let mut cp = Composer::new(req, &ALGORITHM);
    if !direct {
        let mut ops = Vec::new();
        for (j, m) in nodes.members.iter().enumerate() {
            for (t, &r) in m.iter().enumerate() {
                let to = node_blocks + (j * k + t) as u64 * c;
                ops.push(Op::copy(
                    Region::input(r as u64 * c, c),
                    Region::scratch(to, c),
                ));
            }
        }
        cp.reserve(root, base);
        cp.step(root, &ops);
    }
    let top = Collective::Scatter {
        root: nodes.node_of[root] as u32,
    };
    let sub = compose::phase(req, inter, top, nodes.count(), node_blocks)?;
    let frame = Frame {
        input: if direct {
            (Buf::Input, 0)
        } else {
            (Buf::Scratch, node_blocks)
        },
        output: (Buf::Scratch, 0),
        scratch: base,
    };
    cp.embed(&sub, &leaders, frame)?;
    for &l in &leaders {
        cp.reserve(l, node_blocks);
    }
    cp.next_phase()?;
    each_node(&nodes, &leaders, |m, lead| {
        let down = Collective::Scatter { root: lead as u32 };
        let sub = compose::phase(req, &super::linear::ALGORITHM, down, m.len(), c)?;
        let frame = Frame {
            input: (Buf::Scratch, 0),
            output: (Buf::Output, 0),
            scratch: base,
        };
        cp.embed(&sub, m, frame)
    })?;
    Ok(cp.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let (k, c, p) = (nodes.per_node(), req.count, req.ranks as u64);
    let (n, home) = (nodes.count(), nodes.node_of[root]);
    let order = compose::slice_order(&nodes);
    let direct = order.iter().enumerate().all(|(i, &r)| i == r);
    // Slice t (N blocks) at the root: its input, or scratch in slice
    // order; at the root's node's other ranks, scratch from 0.
    let slice = n as u64 * c;
    let at_root = |t: usize| {
        let buf = if direct { Buf::Input } else { Buf::Scratch };
        (buf, t as u64 * slice)
    };
    let base = p * c;
    let mut cp = Composer::new(req, &MULTI);
    if !direct {
        let moves = compose::slice_moves(&order, c, Buf::Scratch, Buf::Input)
            .into_iter()
            .map(|(sliced, ranked)| (ranked, sliced))
            .collect();
        cp.step(root, &compose::joined_copies(moves));
    }
    let tag = cp.tag();
    let mut hand = Vec::new();
    for (t, &r) in nodes.members[home].iter().enumerate() {
        if r != root && slice > 0 {
            let (buf, o) = at_root(t);
            hand.push(Op::send(r as u32, tag, Region::new(buf, o, slice)));
            cp.step(r, &[Op::recv(root as u32, tag, Region::scratch(0, slice))]);
        }
    }
    cp.step(root, &hand);
    cp.next_phase()?;
    let top = Collective::Scatter { root: home as u32 };
    let sub = compose::phase(req, inter, top, n, c)?;
    for t in 0..k {
        let group: Vec<usize> = nodes.members.iter().map(|m| m[t]).collect();
        let lead = group[home];
        let frame = Frame {
            input: if lead == root {
                at_root(t)
            } else {
                (Buf::Scratch, 0)
            },
            output: (Buf::Output, 0),
            scratch: base,
        };
        cp.reserve(lead, base);
        cp.embed(&sub, &group, frame)?;
    }
    Ok(cp.finish())
}
