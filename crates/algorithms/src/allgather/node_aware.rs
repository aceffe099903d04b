//! Node-aware allgather, for nodes of K ranks each (`algorithms::compose`):
//! each node gathers its K blocks to its leader (its lowest rank), the
//! leaders allgather blocks of K (`--inter`, default ring), and each leader
//! broadcasts the whole buffer inside its node down a binomial tree. Where
//! node j does not hold ranks jK..jK+K−1 (a cyclic or file placement) the
//! leaders gather into scratch and put the blocks in rank order.
//!
//! `node_aware_multi`: every rank of a node leads a slice. Rank t of each
//! node allgathers the blocks of the nodes' ranks t among them (K
//! allgathers side by side, `--inter`), so that it holds slice t of the
//! buffer in [`compose::slice_order`], and a ring allgather of the K slices
//! inside each node completes it. With a cyclic placement that order is
//! rank order and the slices land in the output; otherwise they are built
//! in scratch and each rank copies the blocks to rank order.

use crate::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::{Algorithm, Applies, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{Buf, Collective, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allgather, "node_aware", "gather to each node's leader, allgather among leaders (--inter, default ring), bcast inside each node", build).applies(Applies::nodes(NodeNeed::Equal))
.composes(INTER);

pub const MULTI: Algorithm = Algorithm {
    name: "node_aware_multi",
    summary: "K allgathers among same-index ranks of the nodes (--inter, default ring), ring allgather of the K slices in each node",
    build: build_multi,
    ..ALGORITHM
};

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::ring::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &ALGORITHM)?;
    let leaders = nodes.leaders(None);
    let (k, c, p) = (nodes.per_node(), req.count, req.ranks);
    // Scratch: the node's blocks [0, Kc), and where blocks are not in rank
    // order, every block in node order [Kc, Kc + Pc).
    let direct = nodes.contiguous();
    let node_blocks = k as u64 * c;
    let base = node_blocks + if direct { 0 } else { p as u64 * c };
    let mut cp = Composer::new(req, &ALGORITHM);
    each_node(&nodes, &leaders, |m, lead| {
        let up = Collective::Gather { root: lead as u32 };
        let sub = compose::phase(req, &crate::gather::linear::ALGORITHM, up, m.len(), c)?;
        let frame = Frame {
            input: (Buf::Input, 0),
            output: (Buf::Scratch, 0),
            scratch: base,
        };
        cp.embed(&sub, m, frame)
    })?;
    cp.next_phase()?;
    let sub = compose::phase(
        req,
        inter,
        Collective::Allgather,
        nodes.count(),
        node_blocks,
    )?;
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
        cp.reserve(l, base);
        if !direct {
            cp.step(l, &to_rank_order(&nodes, c, node_blocks));
        }
    }
    cp.next_phase()?;
    each_node(&nodes, &leaders, |m, lead| {
        let down = Collective::Bcast { root: lead as u32 };
        let sub = compose::phase(
            req,
            &crate::bcast::binomial::ALGORITHM,
            down,
            m.len(),
            p as u64 * c,
        )?;
        cp.embed(&sub, m, Frame::SAME)
    })?;
    Ok(cp.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let (n, c, p) = (nodes.count() as u64, req.count, req.ranks as u64);
    let order = compose::slice_order(&nodes);
    let direct = order.iter().enumerate().all(|(i, &r)| i == r);
    // The buffer in slice order: the output, or scratch [0, Pc).
    let (buf, base) = if direct {
        (Buf::Output, 0)
    } else {
        (Buf::Scratch, p * c)
    };
    let mut cp = Composer::new(req, &MULTI);
    for t in 0..nodes.per_node() {
        let group: Vec<usize> = nodes.members.iter().map(|m| m[t]).collect();
        let sub = compose::phase(req, inter, Collective::Allgather, nodes.count(), c)?;
        let frame = Frame {
            input: (Buf::Input, 0),
            output: (buf, t as u64 * n * c),
            scratch: base,
        };
        cp.embed(&sub, &group, frame)?;
    }
    cp.next_phase()?;
    compose::ring_slices_in(&mut cp, &nodes, p * c, (!direct).then_some(0))?;
    if !direct {
        let moves = compose::slice_moves(&order, c, Buf::Scratch, Buf::Output);
        let ops = compose::joined_copies(moves);
        for r in 0..req.ranks {
            cp.reserve(r, p * c);
            cp.step(r, &ops);
        }
    }
    Ok(cp.finish())
}

/// Copies of the blocks in node order (scratch from `at`) to rank order in
/// the output.
pub(crate) fn to_rank_order(nodes: &compose::Nodes, c: u64, at: u64) -> Vec<Op> {
    let k = nodes.per_node() as u64;
    let mut ops = Vec::new();
    for (j, m) in nodes.members.iter().enumerate() {
        for (t, &r) in m.iter().enumerate() {
            let from = at + (j as u64 * k + t as u64) * c;
            ops.push(Op::copy(
                Region::scratch(from, c),
                Region::output(r as u64 * c, c),
            ));
        }
    }
    ops
}
