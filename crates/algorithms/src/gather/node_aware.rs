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

use crate::compose::{self, Composer, Frame, NodeNeed, RootSlices, Toward};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{Buf, CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Gather,
    "gather to each node's leader, then gather among leaders to the root (--inter, default binomial)",
    build,
    NodeNeed::Equal,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "K gathers among same-index ranks to the root's node (--inter, default binomial), then its ranks hand the root their slices",
    build_multi,
    NodeNeed::Equal,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::binomial::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let (lead, at, mut cp) = compose::rooted_blocks(req, &ALGORITHM)?;
    let (root, c) = (req.collective.root().unwrap_or(0) as usize, req.count);
    let linear = &super::linear::ALGORITHM;
    lead.within_nodes(&mut cp, req, linear, c, at.ranks_to_leader())?;
    cp.next_phase()?;
    lead.among(&mut cp, req, at.node, at.node_to_all())?;
    lead.reserve(&mut cp, at.node);
    if !at.direct {
        cp.reserve(root, at.base);
        cp.step(root, &compose::to_rank_order(&lead.nodes, c, at.node));
    }
    Ok(cp.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let slices = RootSlices::new(req, &nodes, Buf::Output);
    let mut cp = Composer::new(req, &MULTI);
    slices.among(&mut cp, req, &nodes, inter, |held| Frame {
        output: held,
        scratch: slices.base,
        ..Frame::SAME
    })?;
    cp.next_phase()?;
    slices.hand(&mut cp, &nodes, Toward::Root);
    if !slices.sliced.direct {
        let copies = compose::joined_copies(slices.moves());
        cp.step(slices.root, &copies);
    }
    Ok(cp.finish())
}
