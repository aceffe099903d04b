//! Node-aware broadcast, for ranks that share nodes: the leaders (the root
//! in its node, the lowest rank in the others) broadcast among themselves
//! with the `--inter` algorithm (default binomial), then each leader
//! broadcasts inside its node down a binomial tree (`algorithms::compose`).
//! `node_aware_multi` cuts the buffer into K slices for nodes of K ranks:
//! the root hands slice t to its node's rank t, rank t of every node
//! broadcasts slice t among the nodes' ranks t, and each node gathers its
//! slices round a ring, so that all K ranks of a node cross the network.
//!
//! The node-aware reduce and allreduce are the same compositions with a
//! reduction on the way up in place of (or before) the broadcast down
//! ([`composed`], [`composed_multi`], by their [`Phases`]), as the
//! k-nomial and two-tree ones share their plans.

use crate::compose::{self, Composer, Frame, NodeNeed, Toward};
use crate::error::Result;
use crate::pipelined::Phases;
use crate::{Algorithm, Request};
use topocoll_schedule::{chunk, CollectiveKind, Region, Schedule};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Bcast,
    "bcast among node leaders (--inter, default binomial), then binomial inside each node",
    build,
    NodeNeed::Shared,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "root's node splits the buffer in K slices, rank t of each node bcasts slice t among nodes (--inter), ring allgather inside each node",
    build_multi,
    NodeNeed::Equal,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::binomial::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    composed(req, &ALGORITHM, Phases::Bcast)
}

fn build_multi(req: &Request) -> Result<Schedule> {
    composed_multi(req, &MULTI, Phases::Bcast)
}

/// The single-leader composition of a bcast, reduce or allreduce of the
/// whole buffer (`phases`): where it reduces, a binomial reduce to each
/// node's leader; the leaders' collective (`--inter`); where it
/// broadcasts, a binomial bcast from each leader inside its node.
pub(crate) fn composed(req: &Request, alg: &'static Algorithm, phases: Phases) -> Result<Schedule> {
    let lead = compose::leaders(req, alg)?;
    let n = req.count;
    let mut c = Composer::new(req, alg);
    if phases.reduces() {
        let up = &crate::reduce::binomial::ALGORITHM;
        lead.within_nodes(&mut c, req, up, n, Frame::SAME)?;
        c.next_phase()?;
    }
    lead.among(&mut c, req, n, Frame::SAME)?;
    if phases.bcasts() {
        c.next_phase()?;
        lead.within_nodes(&mut c, req, &super::binomial::ALGORITHM, n, Frame::SAME)?;
    }
    Ok(c.finish())
}

/// The multi-leader composition of a bcast, reduce or allreduce (nodes of
/// K ranks each), the buffer cut into K slices, slice t led by the nodes'
/// ranks t: each node reduces the slices onto their leaders round a ring
/// where it reduces, else the root hands them to its node's ranks; K runs
/// of the leaders' collective side by side (`--inter`); then each node
/// passes the slices round a ring where it broadcasts, else the root's
/// node's ranks hand the root theirs.
pub(crate) fn composed_multi(
    req: &Request,
    alg: &'static Algorithm,
    phases: Phases,
) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, alg)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let (k, n) = (nodes.per_node() as u64, req.count);
    // Slice t, where rank t of the root's node and the root keep it.
    let slice = |t: usize| {
        let (o, l) = chunk(n, k, t as u64);
        (Region::output(o, l), Region::output(o, l))
    };
    let mut c = Composer::new(req, alg);
    if phases.reduces() {
        compose::ring_reduce_slices(&mut c, req, &nodes, Frame::SAME)?;
    } else {
        compose::hand(&mut c, &nodes, root, Toward::Ranks, |t| Some(slice(t)));
    }
    c.next_phase()?;
    compose::slices_among(&mut c, req, &nodes, inter, Frame::SAME)?;
    c.next_phase()?;
    if phases.bcasts() {
        compose::ring_slices(&mut c, &nodes, n)?;
    } else {
        // An empty slice takes no message.
        let part = |t| Some(slice(t)).filter(|(theirs, _)| theirs.count > 0);
        compose::hand(&mut c, &nodes, root, Toward::Root, part);
    }
    Ok(c.finish())
}
