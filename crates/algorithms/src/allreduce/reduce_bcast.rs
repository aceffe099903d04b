//! Reduce + broadcast on a binomial tree rooted at rank 0 (the allreduce
//! paper's §2.2.1 baseline), pipelined in `--segment` pieces (default 64 KiB):
//! a segment is combined up the tree (children smallest subtree first, a fixed
//! order) and starts back down as soon as the root has it.

use crate::pipelined::{self, Phases, Trees, DEFAULT_SEGMENT_BYTES};
use crate::Algorithm;
use crate::OpCount;
use topocoll_schedule::CollectiveKind;

// Open MPI's nonoverlapping runs a reduce and a bcast as Open MPI's own
// rules choose them, not these segmented binomial trees: no counterpart.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allreduce,
    "reduce_bcast",
    "binomial reduce then binomial bcast from rank 0, pipelined in segments",
    build,
)
.stream(stream)
.segmented()
.ops(OpCount::Generated);

// A binomial tree from rank 0: each segment combined up, then sent back down.
pipelined::algorithm!(
    Trees::Binomial(Some(DEFAULT_SEGMENT_BYTES)),
    Phases::Allreduce
);
