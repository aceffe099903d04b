//! Two-tree allreduce (NCCL's double binary tree; Sanders, Speck and Träff
//! 2009): the two-tree broadcast's complementary binary trees
//! (`bcast::two_tree`) from rank 0, each carrying half of the buffer up,
//! combined on the way, and back down as soon as rank 0 has a segment
//! reduced, in `--segment` pieces (default 64 KiB). Each segment is reduced
//! once, in a fixed order, then copied: every rank gets the same bits.

use crate::bcast::two_tree::plan;
use crate::error::Result;
use crate::pipelined::Phases;
use crate::OpCount;
use crate::{Algorithm, Request, Stream};
use topocoll_schedule::{CollectiveKind, Schedule};

// No two-tree allreduce in Open MPI 4.1 or MPICH 4.0 (NCCL has one).
pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "two_tree", "double binary tree: two complementary binary trees, half the buffer each, up and down in segments (default 64 KiB)", build).stream(stream).segmented().ops(OpCount::Generated);

fn build(req: &Request) -> Result<Schedule> {
    plan(req, &ALGORITHM, Phases::Allreduce)?.materialise()
}

fn stream(req: &Request) -> Result<Stream> {
    Ok(Stream::Pipeline(
        plan(req, &ALGORITHM, Phases::Allreduce)?.stream()?,
    ))
}
