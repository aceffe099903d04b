//! Node-aware allreduce, for ranks that share nodes (`algorithms::compose`).
//! `node_aware`: each node reduces to its leader (its lowest rank) down a
//! binomial tree, the leaders allreduce with the `--inter` algorithm
//! (default rabenseifner), and each leader broadcasts the result inside its
//! node (HAN's and MPICH's SMP allreduce). `node_aware_multi`, for nodes of
//! K ranks each: every rank of a node leads 1/K of the buffer: a ring
//! reduce-scatter inside each node, K allreduces side by side among the
//! nodes' ranks of the same local index (`--inter`), and a ring allgather of
//! the slices inside each node.
//!
//! Both are the broadcast's compositions with the reduce's before them
//! (`bcast::node_aware`, [`Phases::Allreduce`]).

use crate::bcast::node_aware::{composed, composed_multi};
use crate::compose::{self, NodeNeed};
use crate::error::Result;
use crate::pipelined::Phases;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Allreduce,
    "reduce to each node's leader, allreduce among leaders (--inter, default rabenseifner), bcast inside each node",
    build,
    NodeNeed::Shared,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "ring reduce_scatter in each node, K allreduces of 1/K among same-index ranks (--inter), ring allgather in each node",
    build_multi,
    NodeNeed::Equal,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::rabenseifner::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    composed(req, &ALGORITHM, Phases::Allreduce)
}

fn build_multi(req: &Request) -> Result<Schedule> {
    composed_multi(req, &MULTI, Phases::Allreduce)
}
