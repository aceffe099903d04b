//! Ring exchange, exactly SimGrid's alltoall `ring` (`alltoall-ring.cpp`), any
//! P: in step i = 0..P−1 rank r does a send-receive, sending its block for
//! (r+i) mod P there and receiving the block of (r−i) mod P from it. Step 0
//! is the self block, a local copy that costs nothing in SimGrid (it does not
//! hold step 1 back here either). Each step's send and receive start together
//! and the next step waits for both; there is no barrier. Tag = step.

use super::stepped_exchange;
use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Alltoall,
    "ring",
    "SimGrid's ring: step i = 1..P-1 send to r+i, receive from r-i, one step at a time",
    build,
)
.ops(OpCount::PerPair)
// Open MPI's pairwise exchanges with rank ± step: topocoll's ring.
// MPICH's pairwise exchanges with rank xor step on 2^k ranks (topocoll's
// pairwise) and with rank ± step otherwise (topocoll's ring).
// MPICH's pairwise exchanges with r XOR i on 2^k ranks.
.ompi(2, "pairwise", "pairwise");

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    Ok(stepped_exchange(req, &ALGORITHM, |r, step| {
        ((r + step) % p, (r + p - step) % p)
    }))
}
