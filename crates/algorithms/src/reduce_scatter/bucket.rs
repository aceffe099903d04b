//! Bucket reduce-scatter (Jain and Sabharwal, ICS 2010), the bucket
//! allgather's dual on a mesh or torus: a ring reduce-scatter along the
//! last dimension of each part's order, then along the one before on the
//! slice of blocks that is left, and so on, 2D parts in rotated dimension
//! orders both ways so that every link of a rank is busy; each block is
//! combined along the rings in a fixed order. The builder is
//! `allgather::bucket`'s.

use crate::allgather::bucket::{bucket, Mode, APPLIES};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::ReduceScatter, "bucket", "dimension-wise ring reduce-scatters on a mesh or torus, 2D parts in rotated dimension orders both ways", build).applies(APPLIES);

fn build(req: &Request) -> Result<Schedule> {
    bucket(req, &ALGORITHM, Mode::ReduceScatter)
}
