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

use crate::compose::{self, Composer, Frame, NodeNeed, Packed, Sliced};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{Buf, Collective, CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Allgather,
    "gather to each node's leader, allgather among leaders (--inter, default ring), bcast inside each node",
    build,
    NodeNeed::Equal,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "K allgathers among same-index ranks of the nodes (--inter, default ring), ring allgather of the K slices in each node",
    build_multi,
    NodeNeed::Equal,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::ring::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let lead = compose::leaders(req, &ALGORITHM)?;
    let (c, p) = (req.count, req.ranks as u64);
    // Scratch: the node's blocks [0, Kc), and where blocks are not in rank
    // order, every block in node order [Kc, Kc + Pc).
    let at = Packed::blocks(&lead.nodes, c);
    let mut cp = Composer::new(req, &ALGORITHM);
    let up = &crate::gather::linear::ALGORITHM;
    lead.within_nodes(&mut cp, req, up, c, at.ranks_to_leader())?;
    cp.next_phase()?;
    lead.among(&mut cp, req, at.node, at.node_to_all())?;
    for &l in &lead.ranks {
        cp.reserve(l, at.base);
        if !at.direct {
            cp.step(l, &compose::to_rank_order(&lead.nodes, c, at.node));
        }
    }
    cp.next_phase()?;
    let down = &crate::bcast::binomial::ALGORITHM;
    lead.within_nodes(&mut cp, req, down, p * c, Frame::SAME)?;
    Ok(cp.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let (n, c, p) = (nodes.count() as u64, req.count, req.ranks as u64);
    let sl = Sliced::new(&nodes);
    // The buffer in slice order: the output, or scratch [0, Pc).
    let (buf, base) = (sl.buf(Buf::Output), sl.base(p * c));
    let mut cp = Composer::new(req, &MULTI);
    for t in 0..nodes.per_node() {
        let sub = compose::phase(req, inter, Collective::Allgather, nodes.count(), c)?;
        let frame = Frame {
            output: (buf, t as u64 * n * c),
            scratch: base,
            ..Frame::SAME
        };
        cp.embed(&sub, &nodes.index(t), frame)?;
    }
    cp.next_phase()?;
    compose::ring_slices_in(&mut cp, &nodes, p * c, (!sl.direct).then_some(0))?;
    if !sl.direct {
        let moves = compose::slice_moves(&sl.order, c, Buf::Scratch, Buf::Output);
        cp.step_all(p * c, &compose::joined_copies(moves));
    }
    Ok(cp.finish())
}
