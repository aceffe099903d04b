//! Bine-tree reduce (De Sensi et al., SC 2025): the Bine broadcast
//! (`bcast::bine`) reversed (`schedule::reverse`), so that the leaves send
//! first to their nearest peers and each rank combines its children's
//! buffers, the nearest subtree first, before sending to its parent: the
//! distances grow towards the root. On P = 2^S + e ranks the first 2e
//! relative ranks pair up, the odd one of a pair handing its buffer to its
//! neighbour first.

use crate::error::Result;
use crate::{bcast, Algorithm, Request};
use topocoll_schedule::{reverse, Collective, CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Reduce, "bine", "Bine tree: the Bine broadcast reversed, nearest children first, distances growing (P not a power of two: neighbours pair up, one combined first)", build);

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    let root = req.collective.root().unwrap_or(0);
    let mut from = req.clone();
    from.collective = Collective::Bcast { root };
    Ok(reverse(
        &(bcast::bine::ALGORITHM.build)(&from)?,
        req.schedule(&ALGORITHM),
    )?)
}
