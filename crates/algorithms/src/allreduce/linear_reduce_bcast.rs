//! SMPI's default allreduce: a linear reduce to rank 0 (every rank sends its
//! buffer straight to rank 0, which receives them all at once and combines
//! them, [`reduce::linear`]) and then a binomial bcast of the result from
//! rank 0 ([`bcast::binomial`]), each rank's bcast after its reduce.

use crate::compose::{phase, Composer, Frame};
use crate::error::Result;
use crate::{bcast, reduce, Algorithm, Request};
use topocoll_schedule::{Collective, CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allreduce,
    "linear_reduce_bcast",
    "every rank sends to rank 0, which combines them all and broadcasts on a binomial tree",
    build,
);

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    let all: Vec<usize> = (0..p).collect();
    let mut c = Composer::new(req, &ALGORITHM);
    let up = phase(
        req,
        &reduce::linear::ALGORITHM,
        Collective::Reduce { root: 0 },
        p,
        req.count,
    )?;
    c.embed(&up, &all, Frame::SAME)?;
    c.next_phase()?;
    let down = phase(
        req,
        &bcast::binomial::ALGORITHM,
        Collective::Bcast { root: 0 },
        p,
        req.count,
    )?;
    c.embed(&down, &all, Frame::SAME)?;
    Ok(c.s)
}
