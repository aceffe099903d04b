//! Node-aware reduce, for ranks that share nodes: each node reduces to its
//! leader down a binomial tree (the root leads its own node, the lowest
//! rank the others), then the leaders reduce to the root with the
//! `--inter` algorithm (default binomial) (`algorithms::compose`).
//!
//! `node_aware_multi`, for nodes of K ranks each: every rank of a node
//! leads 1/K of the buffer, so that all K cross the network at once and
//! share the combining. A ring reduce-scatter inside each node leaves rank
//! t with slice t (chunk t of K) summed over its node; K reduces side by
//! side, slice t among the nodes' ranks t (`--inter`), bring slice t's
//! total to rank t of the root's node; and the root receives the other
//! K−1 slices from the ranks of its node (a gather of slices). The combine
//! order is the schedule's, the same on every run and backend: slice t's
//! result is the leaders' reduce (in the `--inter` algorithm's bracketing,
//! over the nodes in node order) of the nodes' partials, each the ring
//! reduce-scatter's fold of its node's K ranks in ring order from rank t+1.
//! Each element is reduced exactly once along one fixed tree, so the
//! root's bits do not depend on timing; no other rank keeps a result.
//!
//! Both are the broadcast's compositions run up instead of down
//! (`bcast::node_aware`, [`Phases::Reduce`]).

use crate::bcast::node_aware::{composed, composed_multi};
use crate::compose::{self, NodeNeed};
use crate::error::Result;
use crate::pipelined::Phases;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Reduce,
    "binomial reduce to each node's leader, then reduce among leaders (--inter, default binomial)",
    build,
    NodeNeed::Shared,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "ring reduce_scatter in each node, K reduces of 1/K among same-index ranks to the root's node (--inter), slices gathered to the root",
    build_multi,
    NodeNeed::Equal,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::binomial::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    composed(req, &ALGORITHM, Phases::Reduce)
}

fn build_multi(req: &Request) -> Result<Schedule> {
    composed_multi(req, &MULTI, Phases::Reduce)
}
