//! Bine allgather (De Sensi et al., SC 2025): the Bine trees' butterfly
//! run as an allgather, each rank swapping all it holds with r ± ρ(s) from
//! the farthest peer (s = S−1) to the nearest, the blocks gathered in
//! Scratch in the butterfly's block order (one contiguous run a message)
//! and copied out in rank order. On a power of two this is the schedule of
//! `allgather::swing` (both papers' allgathers send the same messages);
//! Bine's takes only powers of two, as its reference implementation does.

use crate::algorithms::{bcast, Algorithm, Request};
use crate::algorithms::{Counterparts, OpCount};
use crate::error::Result;
use crate::schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Allgather,
    name: "bine",
    summary: "Bine: swap all blocks held with rank ± ρ(s), farthest first, log2 P steps (P a power of two)",
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
    super::swing::ring(req, ALGORITHM.name)
}
