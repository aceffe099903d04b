//! Trinaryx3 allreduce (the allreduce paper, §4.2): Trinaryx3 reduce to rank 0
//! then Trinaryx3 broadcast from it, over the same three edge-disjoint torus
//! trees and pipelined together: a segment starts down its tree as soon as the
//! root has reduced it. The reduction runs on − links and the broadcast on +
//! links, so the two phases do not collide either. Each segment is reduced once,
//! in a fixed order, then copied: every rank gets identical bits.
//! Segments: `--segment`, default 64 KiB.

use crate::pipelined::{self, Phases, Trees};
use crate::Algorithm;
use topocoll_schedule::CollectiveKind;

pub const ALGORITHM: Algorithm = pipelined::trinaryx3_entry(
    CollectiveKind::Allreduce,
    "Trinaryx3: reduce up then bcast down 3 edge-disjoint torus trees, pipelined in segments",
    build,
    stream,
);

// The torus trees from rank 0: each part combined up its tree, then sent back down.
pipelined::algorithm!(Trees::Torus, Phases::Allreduce);
