//! Bucket allreduce (Jain and Sabharwal, ICS 2010) on a mesh or torus: the
//! bucket reduce-scatter, dimension by dimension, then the bucket
//! allgather back, in 2D parts with rotated dimension orders both ways so
//! that every link of a rank is busy. Each chunk is reduced once, in a
//! fixed order, then copied: every rank gets the same bits. The builder is
//! `allgather::bucket`'s.

use crate::allgather::bucket::{bucket, Mode, APPLIES};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "bucket", "bucket reduce-scatter then bucket allgather: dimension-wise rings on a mesh or torus, every port busy", build).applies(APPLIES);

fn build(req: &Request) -> Result<Schedule> {
    bucket(req, &ALGORITHM, Mode::Allreduce)
}
