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

use crate::compose::{self, Composer, Frame, NodeNeed, RootSlices, Toward};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{Buf, CollectiveKind, Op, Schedule};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Scatter,
    "scatter among node leaders (--inter, default binomial), then scatter inside each node",
    build,
    NodeNeed::Equal,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "root hands rank t of its node slice t, K scatters among same-index ranks (--inter, default binomial)",
    build_multi,
    NodeNeed::Equal,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::binomial::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let (lead, at, mut cp) = compose::rooted_blocks(req, &ALGORITHM)?;
    let (root, c) = (req.collective.root().unwrap_or(0) as usize, req.count);
    if !at.direct {
        let ops: Vec<Op> = compose::node_moves(&lead.nodes, c, at.node, Buf::Input)
            .into_iter()
            .map(|(node, ranked)| Op::copy(ranked, node))
            .collect();
        cp.reserve(root, at.base);
        cp.step(root, &ops);
    }
    lead.among(&mut cp, req, at.node, at.all_to_node())?;
    lead.reserve(&mut cp, at.node);
    cp.next_phase()?;
    let linear = &super::linear::ALGORITHM;
    lead.within_nodes(&mut cp, req, linear, c, at.leader_to_ranks())?;
    Ok(cp.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let slices = RootSlices::new(req, &nodes, Buf::Input);
    let mut cp = Composer::new(req, &MULTI);
    if !slices.sliced.direct {
        let moves = slices.moves();
        let copies = moves.into_iter().map(|(sliced, ranked)| (ranked, sliced));
        cp.step(slices.root, &compose::joined_copies(copies.collect()));
    }
    slices.hand(&mut cp, &nodes, Toward::Ranks);
    cp.next_phase()?;
    slices.among(&mut cp, req, &nodes, inter, |held| Frame {
        input: held,
        scratch: slices.base,
        ..Frame::SAME
    })?;
    Ok(cp.finish())
}
