//! Bine allgather (De Sensi et al., SC 2025): the Bine trees' butterfly
//! run as an allgather, each rank swapping all it holds with r ± ρ(s) from
//! the farthest peer (s = S−1) to the nearest, the blocks gathered in
//! Scratch in the butterfly's block order (one contiguous run a message)
//! and copied out in rank order. On a power of two this is the schedule of
//! `allgather::swing` (both papers' allgathers send the same messages),
//! and on other counts too: an even P takes ⌈log2 P⌉ steps with the peers
//! taken mod P, each block handed on at the latest step that reaches it
//! (the reference code's `allgather_bine_block_by_block_any_even`,
//! HLC-Lab/pico `libbine/libbine_allgather.c`), and an odd P folds its last
//! rank into the one before (`algorithms::butterfly`).

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allgather, "bine", "Bine: swap all blocks held with rank ± ρ(s), farthest first, ⌈log2 P⌉ steps (odd P: one rank folds in)", build);

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    super::swing::ring(req, &ALGORITHM)
}
