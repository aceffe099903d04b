//! Ring reduce-scatter, the ring allgather reversed. The buffer is split in
//! P chunks (the standard split); in step t (0..P−1) rank r sends chunk
//! (r + 1 + t) mod P to r − 1 and receive-combines chunk (r + 2 + t) mod P
//! from r + 1, each step waiting for the one before. Chunk b starts on rank
//! b − 1 and travels down the ring, combined on each rank in the same order
//! on every run, and ends on rank b fully reduced.

use crate::error::Result;
use crate::OpCount;
use crate::{allgather, Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

// MPICH's pairwise sends each rank its chunk straight from the input and
// combines P-1 of them there; the ring passes partial sums on.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::ReduceScatter,
    "ring",
    "P-1 steps around the ring, each combining the chunk received into the rank's own",
    build,
)
.ops(OpCount::PerPair);

fn build(req: &Request) -> Result<Schedule> {
    super::reversed_allgather(req, &ALGORITHM, allgather::ring::ALGORITHM.build)
}
