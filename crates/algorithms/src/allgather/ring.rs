//! Ring allgather: rank r copies its block into place, then in step s
//! (0..P−1) sends block (r − s) mod P to r + 1 and receives block
//! (r − 1 − s) mod P from r − 1, each step waiting for the one before.

use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allgather,
    "ring",
    "P-1 steps around the ring r -> r+1, each passing on the block received last",
    build,
)
.ops(OpCount::PerPair)
.ompi(4, "ring", "ring")
.mpich("MPIR_Allgather_intra_ring");

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let c = req.count;
    let block = |b: usize| Region::output(b as u64 * c, c);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let mut deps = vec![prog.push(Op::copy(Region::input(0, c), block(r)), &[])];
        let (next, prev) = (((r + 1) % p) as u32, ((r + p - 1) % p) as u32);
        for step in 0..p - 1 {
            let send = prog.push(
                Op::send(next, step as u32, block((r + p - step) % p)),
                &deps,
            );
            let recv = prog.push(
                Op::recv(prev, step as u32, block((r + 2 * p - 1 - step) % p)),
                &deps,
            );
            deps = vec![send, recv];
        }
    }
    Ok(s)
}
