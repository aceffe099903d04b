//! A2A, MPICH's "SimpleSpread": rank r sends its block for (r+i) mod P, for
//! i = 1..P−1, in that order, and posts every receive at once. Nothing waits on
//! anything: how many transfers really run at once is the node's engine count
//! (engines take the sends in program order).

use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Alltoall,
    "linear",
    "A2A / SimpleSpread: rank r sends to (r+i) mod P for i = 1..P-1, all at once",
    build,
)
.ops(OpCount::PerPair)
// MPICH's scattered sends to r-i, 32 messages at a time.
.ompi(1, "linear", "basic_linear");

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let b = req.count;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.ops.reserve(2 * p - 1);
        prog.push(
            Op::copy(
                Region::input(r as u64 * b, b),
                Region::output(r as u64 * b, b),
            ),
            &[],
        );
        for i in 1..p {
            let to = (r + i) % p;
            let from = (r + p - i) % p;
            prog.push(Op::send(to as u32, 0, Region::input(to as u64 * b, b)), &[]);
            prog.push(
                Op::recv(from as u32, 0, Region::output(from as u64 * b, b)),
                &[],
            );
        }
    }
    Ok(s)
}
