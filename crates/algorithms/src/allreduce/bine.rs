//! Bine allreduce (De Sensi et al., SC 2025): the Bine reduce-scatter then
//! the Bine allgather, with the buffer's chunks in the butterfly's block
//! order so that no block is copied. On a power of two this is the
//! schedule of `swing_bw` (the Bine paper's bandwidth-optimal allreduce
//! is built on Swing's butterfly), and on other counts too: an even P
//! takes ⌈log2 P⌉ steps with the peers taken mod P (the reference code's
//! `allreduce_bine_block_by_block_any_even`, HLC-Lab/pico
//! `libbine/libbine_allreduce.c`), an odd P folds its last rank into the
//! one before. Each chunk is combined on one rank, then copied: every rank
//! gets the same bits.

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "bine", "Bine: reduce-scatter then allgather on rank ± ρ(s), one message a step, ⌈log2 P⌉ steps (odd P: one rank folds in)", build);

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    super::swing_bw::ring(req, &ALGORITHM)
}
