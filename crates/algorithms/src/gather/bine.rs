//! Bine-tree gather (De Sensi et al., SC 2025): the Bine scatter
//! (`scatter::bine`) reversed, so that each rank collects its children's
//! subtrees, nearest first, into one run of Scratch in the butterfly's
//! block order and sends it to its parent; the root copies the blocks out
//! in rank order. On P = 2^S + e ranks the first 2e relative ranks pair
//! up, the odd one of a pair handing its block to its neighbour first.

use crate::error::Result;
use crate::{scatter, Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Gather, "bine", "Bine tree: the Bine scatter reversed, nearest subtrees first (P not a power of two: neighbours pair up, one hands its block in first)", build);

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    super::reversed_scatter(req, &ALGORITHM, scatter::bine::ALGORITHM.build)
}
