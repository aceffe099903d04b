//! Bine allreduce (De Sensi et al., SC 2025): the Bine reduce-scatter then
//! the Bine allgather, with the buffer's chunks in the butterfly's block
//! order so that no block is copied. On a power of two this is the
//! schedule of `swing_bw` (the Bine paper's bandwidth-optimal allreduce
//! is built on Swing's butterfly); Bine's takes only powers of two, as its
//! reference implementation does. Each chunk is combined on one rank, then
//! copied: every rank gets the same bits.

use crate::algorithms::{bcast, Algorithm, Request};
use crate::algorithms::{Counterparts, OpCount};
use crate::error::Result;
use crate::schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Allreduce,
    name: "bine",
    summary: "Bine: reduce-scatter then allgather on rank ± ρ(s), one contiguous run a step (P a power of two)",
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
    super::swing_bw::ring(req, ALGORITHM.name)
}
