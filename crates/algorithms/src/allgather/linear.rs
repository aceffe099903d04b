//! Linear allgather (SMPI's default, its nonblocking `iallgather`): rank r
//! copies its block into place, then posts a send of its block to every
//! other rank and a receive of every other rank's block, all at once, in
//! rank order.

use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

// Open MPI's and MPICH's allgathers all go in steps; none posts every
// message at once: no counterpart.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allgather,
    "linear",
    "every rank sends its block straight to every rank, all at once",
    build,
)
.ops(OpCount::PerPair);

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let c = req.count;
    let block = |b: usize| Region::output(b as u64 * c, c);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.push(Op::copy(Region::input(0, c), block(r)), &[]);
        for other in (0..p).filter(|&q| q != r) {
            prog.push(Op::send(other as u32, 0, Region::input(0, c)), &[]);
            prog.push(Op::recv(other as u32, 0, block(other)), &[]);
        }
    }
    Ok(s)
}
