//! Node-aware gather, for nodes of K ranks each (`algorithms::compose`):
//! each node gathers its K blocks to its leader (the root in its node, the
//! lowest rank in the others), and the leaders gather blocks of K to the
//! root (`--inter`, default binomial). Where node j does not hold ranks
//! jK..jK+K−1 the root gathers into scratch and puts the blocks in rank
//! order.
//!
//! `node_aware_multi`: every rank of a node leads a slice. K gathers side
//! by side, rank t's of the blocks of the nodes' ranks t to the root's
//! node's rank t (`--inter`), leave that rank slice t of the buffer in
//! [`compose::slice_order`] (N blocks), and the root's node's ranks hand
//! the root their slices. So all K ranks of a node send across the network
//! at once, and each block crosses it once. With a cyclic placement slice
//! order is rank order and the slices land in the root's output; otherwise
//! the root receives them in scratch and copies each block to its place.

use crate::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::{Algorithm, Applies, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{Buf, Collective, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Gather, "node_aware", "gather to each node's leader, then gather among leaders to the root (--inter, default binomial)", build).applies(Applies::nodes(NodeNeed::Equal))
.composes(INTER);

pub const MULTI: Algorithm = Algorithm {
    name: "node_aware_multi",
    summary: "K gathers among same-index ranks to the root's node (--inter, default binomial), then its ranks hand the root their slices",
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
    each_node(&nodes, &leaders, |m, lead| {
        let up = Collective::Gather { root: lead as u32 };
        let sub = compose::phase(req, &super::linear::ALGORITHM, up, m.len(), c)?;
        let frame = Frame {
            input: (Buf::Input, 0),
            output: (Buf::Scratch, 0),
            scratch: base,
        };
        cp.embed(&sub, m, frame)
    })?;
    cp.next_phase()?;
    let top = Collective::Gather {
        root: nodes.node_of[root] as u32,
    };
    let sub = compose::phase(req, inter, top, nodes.count(), node_blocks)?;
    let frame = Frame {
        input: (Buf::Scratch, 0),
        output: if direct {
            (Buf::Output, 0)
        } else {
            (Buf::Scratch, node_blocks)
        },
        scratch: base,
    };
    cp.embed(&sub, &leaders, frame)?;
    for &l in &leaders {
        cp.reserve(l, node_blocks);
    }
    if !direct {
        cp.reserve(root, base);
        let ops = crate::allgather::node_aware::to_rank_order(&nodes, c, node_blocks);
        cp.step(root, &ops);
    }
    Ok(cp.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let (k, c, p) = (nodes.per_node(), req.count, req.ranks as u64);
    let (n, home) = (nodes.count(), nodes.node_of[root]);
    let order = compose::slice_order(&nodes);
    let direct = order.iter().enumerate().all(|(i, &r)| i == r);
    // Slice t (N blocks) at the root: its output, or scratch in slice
    // order; at the root's node's other ranks, scratch from 0.
    let slice = n as u64 * c;
    let at_root = |t: usize| {
        let buf = if direct { Buf::Output } else { Buf::Scratch };
        (buf, t as u64 * slice)
    };
    let base = p * c;
    let mut cp = Composer::new(req, &MULTI);
    let top = Collective::Gather { root: home as u32 };
    let sub = compose::phase(req, inter, top, n, c)?;
    for t in 0..k {
        let group: Vec<usize> = nodes.members.iter().map(|m| m[t]).collect();
        let lead = group[home];
        let frame = Frame {
            input: (Buf::Input, 0),
            output: if lead == root {
                at_root(t)
            } else {
                (Buf::Scratch, 0)
            },
            scratch: base,
        };
        cp.reserve(lead, base);
        cp.embed(&sub, &group, frame)?;
    }
    cp.next_phase()?;
    let tag = cp.tag();
    let mut hand = Vec::new();
    for (t, &r) in nodes.members[home].iter().enumerate() {
        if r != root && slice > 0 {
            cp.step(r, &[Op::send(root as u32, tag, Region::scratch(0, slice))]);
            let (buf, o) = at_root(t);
            hand.push(Op::recv(r as u32, tag, Region::new(buf, o, slice)));
        }
    }
    cp.step(root, &hand);
    if !direct {
        let moves = compose::slice_moves(&order, c, Buf::Scratch, Buf::Output);
        cp.step(root, &compose::joined_copies(moves));
    }
    Ok(cp.finish())
}
