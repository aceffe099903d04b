//! K-nomial-tree reduce (`--radix K`, default 4; K = 2 is `binomial`): the
//! k-nomial broadcast's tree (`bcast::knomial`), the buffer combined on its
//! way up: a rank combines its children in a fixed order (lower subtree
//! first), then sends to its parent, whole or in `--segment` pieces.

use crate::bcast::knomial::knomial_plan;
use crate::error::Result;
use crate::pipelined::Phases;
use crate::OpCount;
use crate::{Algorithm, Request, Stream};
use topocoll_schedule::{CollectiveKind, Schedule};

// Open MPI has a k-nomial reduce from 5.0 on, not in 4.1; MPICH 4.0's
// blocking reduce is binomial (its k-nomial trees are the
// non-blocking ones').
pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Reduce, "knomial", "k-nomial tree (--radix K, default 4): combine children, then send to the parent, whole or in --segment pieces", build).stream(stream).segmented().radix().ops(OpCount::Generated);

fn build(req: &Request) -> Result<Schedule> {
    knomial_plan(req, &ALGORITHM, Phases::Reduce)?.materialise()
}

fn stream(req: &Request) -> Result<Stream> {
    Ok(Stream::Pipeline(
        knomial_plan(req, &ALGORITHM, Phases::Reduce)?.stream()?,
    ))
}
