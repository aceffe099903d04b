//! Bine reduce-scatter (De Sensi et al., SC 2025): the Bine trees'
//! butterfly run as a reduce-scatter, each rank handing r ± ρ(s) the half
//! it keeps from the nearest peer (s = 0) to the farthest, in the
//! butterfly's block order (one contiguous run a message). On a power of
//! two this is the schedule of `reduce_scatter::swing`, and on other
//! counts too: an even P takes ⌈log2 P⌉ steps with the peers taken mod P,
//! each block handed on at the latest step that reaches it (the reference
//! code's `reduce_scatter_bine_block_by_block_any_even`, HLC-Lab/pico
//! `libbine/libbine_reduce_scatter.c`), and an odd P folds its last rank
//! into the one before (`algorithms::butterfly`).

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::ReduceScatter, "bine", "Bine: hand rank ± ρ(s) the half it keeps, nearest first, ⌈log2 P⌉ steps (odd P: one rank folds in)", build);

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    super::swing::ring(req, &ALGORITHM)
}
