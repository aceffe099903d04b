//! Two-tree reduce (Sanders, Speck and Träff 2009): the two-tree
//! broadcast's complementary binary trees (`bcast::two_tree`), each
//! combining its half of the buffer on the way up to the root in
//! `--segment` pieces (default 64 KiB), children in a fixed order.

use crate::bcast::two_tree::plan;
use crate::error::Result;
use crate::pipelined::Phases;
use crate::OpCount;
use crate::{Algorithm, Request, Stream};
use topocoll_schedule::{CollectiveKind, Schedule};

// No two-tree reduce in Open MPI 4.1 or MPICH 4.0.
pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Reduce, "two_tree", "two complementary binary trees, half the buffer each, combined up in segments (default 64 KiB)", build).stream(stream).segmented().ops(OpCount::Generated);

fn build(req: &Request) -> Result<Schedule> {
    plan(req, &ALGORITHM, Phases::Reduce)?.materialise()
}

fn stream(req: &Request) -> Result<Stream> {
    Ok(Stream::Pipeline(
        plan(req, &ALGORITHM, Phases::Reduce)?.stream()?,
    ))
}
