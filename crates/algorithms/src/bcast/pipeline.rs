//! Pipelined chain broadcast: root → root+1 → … → root−1 (mod P), the buffer
//! cut in `--segment` pieces (default 64 KiB) that follow each other down the
//! chain, each rank forwarding a segment as soon as it has it.

use crate::pipelined::{self, Phases, Trees, DEFAULT_SEGMENT_BYTES};
use crate::Algorithm;
use crate::OpCount;
use topocoll_schedule::CollectiveKind;

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Bcast,
    "pipeline",
    "chain root -> root+1 -> ..., pipelined in segments (default 64 KiB)",
    build,
)
.stream(stream)
.segmented()
.ops(OpCount::Generated)
.ompi(3, "pipeline", "pipeline");

// A chain from the root, the buffer going down it.
pipelined::algorithm!(Trees::Chain(Some(DEFAULT_SEGMENT_BYTES)), Phases::Bcast);
