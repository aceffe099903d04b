//! Bine-tree gather (De Sensi et al., SC 2025): the Bine scatter
//! (`scatter::bine`) reversed, so that each rank collects its children's
//! subtrees, nearest first, into one run of Scratch in the butterfly's
//! block order and sends it to its parent; the root copies the blocks out
//! in rank order. P must be a power of two.

use crate::algorithms::{bcast, scatter, Algorithm, Request};
use crate::algorithms::{Counterparts, OpCount};
use crate::error::Result;
use crate::schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Gather,
    name: "bine",
    summary: "Bine tree: the Bine scatter reversed, nearest subtrees first (P a power of two)",
    build,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: bcast::bine::POWER_OF_TWO,
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    super::reversed_scatter(req, ALGORITHM.name, scatter::bine::ALGORITHM.build)
}
