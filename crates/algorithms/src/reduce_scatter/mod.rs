//! Reduce-scatter algorithms: `ring` and `recursive_halving` are an
//! allgather reversed (`schedule::reverse`), every block's path run
//! backwards with the contributions combined on the way; the reversal is
//! proven by the verifier before it is used. `bucket` is built forwards by
//! the bucket allgather's builder.

pub mod bine;
pub mod bucket;
pub mod nccl_pat;
pub mod nccl_ring;
pub mod node_aware;
pub mod recursive_halving;
pub mod reduce_scatterv;
pub mod ring;
pub mod swing;

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{reverse, Collective, Schedule};

/// The reduce_scatter `alg` for a request: the schedule `allgather` builds
/// for an allgather of one element a block, reversed onto the request's
/// chunks and verified.
fn reversed_allgather(
    req: &Request,
    alg: &Algorithm,
    allgather: fn(&Request) -> Result<Schedule>,
) -> Result<Schedule> {
    let mut from = req.clone();
    from.collective = Collective::Allgather;
    from.count = 1;
    Ok(reverse(&allgather(&from)?, req.schedule(alg))?)
}
