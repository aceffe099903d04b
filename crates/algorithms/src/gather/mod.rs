//! Gather algorithms: each is its scatter from the same root reversed
//! (`schedule::reverse`), so that each block travels the scatter's path
//! backwards; the reversal is proven by the verifier before it is used.

pub mod bine;
pub mod binomial;
pub mod hierarchical;
pub mod knomial;
pub mod linear;
pub mod multilane;
pub mod node_aware;

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{reverse, Collective, Schedule};

/// The gather `alg` for a request: the schedule `scatter` builds for the
/// scatter from the same root, reversed and verified.
fn reversed_scatter(
    req: &Request,
    alg: &Algorithm,
    scatter: fn(&Request) -> Result<Schedule>,
) -> Result<Schedule> {
    let root = req.collective.root().unwrap_or(0);
    let mut from = req.clone();
    from.collective = Collective::Scatter { root };
    Ok(reverse(&scatter(&from)?, req.schedule(alg))?)
}
