//! Trinaryx3 broadcast (the allreduce paper, §4.1): the buffer split in three
//! (two on a 2D torus; one part per dimension of size > 1), each part pipelined
//! in segments down its own edge-disjoint spanning tree of the torus (see
//! `algorithms::trees`). Every hop is between torus neighbours and the trees
//! share no link, so the three streams never collide. A node forwards each
//! segment to its children deepest subtree first (the reverse of the reduction
//! order, §4.2). Segments: `--segment`, default 64 KiB.

use crate::pipelined::{self, Phases, Trees};
use crate::Algorithm;
use topocoll_schedule::CollectiveKind;

pub const ALGORITHM: Algorithm = pipelined::trinaryx3_entry(
    CollectiveKind::Bcast,
    "Trinaryx3: 3 edge-disjoint torus trees (2 on 2D), message split in 3, pipelined in segments",
    build,
    stream,
);

// The torus trees from the root, a part of the buffer going down each.
pipelined::algorithm!(Trees::Torus, Phases::Bcast);
