//! NCCL's ring reduce (src/device/reduce.h) over its channels: a
//! channel's part in chunks of NCCL's pipeline chunk (one 512 KiB step
//! with Simple), from the rank after the root round the channel's ring
//! (its own order and NIC, `crate::nccl`) to the root, each rank combining
//! its own into a chunk as it arrives and passing it on.

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Reduce,
    "nccl_ring",
    "NCCL's ring: per channel (its own ring and NIC) chunks pipelined round the ring into the root",
    build,
)
.channels();

fn build(req: &Request) -> Result<Schedule> {
    crate::bcast::nccl_ring::pipeline(req, &ALGORITHM, true)
}
