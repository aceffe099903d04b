//! Trinaryx3 reduce (the allreduce paper, §4.2): the Trinaryx3 broadcast's
//! trees reversed. The buffer is split in three (one part per torus dimension
//! of size > 1), each part pipelined in segments up its tree to the root. A
//! node combines its children's segments in a fixed order, children with lower
//! subtree height first, never in arrival order: the first child is
//! receive-combined in place, the others land in Scratch slots and are combined
//! one after the other, each combine waiting for the previous one. So the
//! result's bits do not depend on timing. Segments: `--segment`, default 64 KiB.

use crate::pipelined::{self, Phases, Trees};
use crate::Algorithm;
use topocoll_schedule::CollectiveKind;

pub const ALGORITHM: Algorithm = pipelined::trinaryx3_entry(
    CollectiveKind::Reduce,
    "Trinaryx3: the 3 torus trees reversed, fixed combine order (lower height first), pipelined",
    build,
    stream,
);

// The torus trees to the root, a part of the buffer combined up each.
pipelined::algorithm!(Trees::Torus, Phases::Reduce);
