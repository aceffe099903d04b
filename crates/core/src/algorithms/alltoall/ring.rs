//! Ring exchange, exactly SimGrid's alltoall `ring` (`alltoall-ring.cpp`), any
//! P: in step i = 0..P−1 rank r does a send-receive, sending its block for
//! (r+i) mod P there and receiving the block of (r−i) mod P from it. Step 0
//! is the self block, a local copy that costs nothing in SimGrid (it does not
//! hold step 1 back here either). Each step's send and receive start together
//! and the next step waits for both; there is no barrier. Tag = step.

use super::stepped_exchange;
use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "alltoall",
    name: "ring",
    summary: "SimGrid's ring: step i = 1..P-1 send to r+i, receive from r-i, one step at a time",
    build,
    stream: None,
    segmented: false,
    lanes: false,
};

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    Ok(stepped_exchange(req, ALGORITHM.name, |r, step| {
        ((r + step) % p, (r + p - step) % p)
    }))
}
