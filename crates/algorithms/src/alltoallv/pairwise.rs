//! Pairwise alltoallv, Open MPI's `pairwise`: after the copy of its own
//! block, in step s = 1..P−1 rank r sends its block for r + s and receives
//! the block of r − s (mod P), the two started together and the next step
//! waiting for both (a sendrecv; tag = step). Any P. An empty block is still
//! sent, as an empty message, as Open MPI's sendrecv does: the steps stay
//! in lockstep whatever the sizes.

use super::self_copy;
use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Alltoallv,
    "pairwise",
    "P-1 steps: send to rank+s, receive from rank-s, each step after the last (any P)",
    build,
)
.ops(OpCount::PerPair)
// MPICH's pairwise alltoallv is its in-place sendrecv_replace.
.ompi(2, "pairwise", "pairwise");

fn build(req: &Request) -> Result<Schedule> {
    let v = req.sizes()?;
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.ops.reserve(2 * p - 1);
        self_copy(prog, v, r);
        let mut deps: Vec<u32> = Vec::new();
        for step in 1..p {
            let (to, from) = ((r + step) % p, (r + p - step) % p);
            let send = prog.push(
                Op::send(
                    to as u32,
                    step as u32,
                    Region::input(v.send_at(r, to), v.block(r, to)),
                ),
                &deps,
            );
            let recv = prog.push(
                Op::recv(
                    from as u32,
                    step as u32,
                    Region::output(v.recv_at(r, from), v.block(from, r)),
                ),
                &deps,
            );
            deps = vec![send, recv];
        }
    }
    Ok(s)
}
