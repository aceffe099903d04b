//! Bine reduce-scatter (De Sensi et al., SC 2025): the Bine trees'
//! butterfly run as a reduce-scatter, each rank handing r ± ρ(s) the half
//! it keeps from the nearest peer (s = 0) to the farthest, in the
//! butterfly's block order (one contiguous run a message). On a power of
//! two this is the schedule of `reduce_scatter::swing`; Bine's takes only
//! powers of two, as its reference implementation does.

use crate::algorithms::{bcast, Algorithm, Request};
use crate::algorithms::{Counterparts, OpCount};
use crate::error::Result;
use crate::schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::ReduceScatter,
    name: "bine",
    summary:
        "Bine: hand rank ± ρ(s) the half it keeps, nearest first, log2 P steps (P a power of two)",
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
