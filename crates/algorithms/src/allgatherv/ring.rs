//! Ring allgatherv, Open MPI's `ring`: rank r copies its block into place,
//! then in step s = 0..P−2 sends block (r − s) mod P to r + 1 and receives
//! block (r − 1 − s) mod P from r − 1, each step waiting for the one before
//! (a sendrecv; tag = step). An empty block still goes round as an empty
//! message, as in Open MPI, so the steps stay in lockstep.

use super::{block, own_copy};
use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allgatherv,
    "ring",
    "P-1 steps around the ring r -> r+1, each passing on the block received last",
    build,
)
.ops(OpCount::PerPair)
// MPICH's ring cuts large blocks into pipeline chunks.
.ompi(3, "ring", "ring");

fn build(req: &Request) -> Result<Schedule> {
    let v = req.sizes()?;
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let mut deps: Vec<u32> = own_copy(prog, v, r).into_iter().collect();
        let (next, prev) = (((r + 1) % p) as u32, ((r + p - 1) % p) as u32);
        for step in 0..p.saturating_sub(1) {
            let out = block(v, r, (r + p - step) % p);
            let send = prog.push(Op::send(next, step as u32, out), &deps);
            let into = block(v, r, (r + 2 * p - 1 - step) % p);
            let recv = prog.push(Op::recv(prev, step as u32, into), &deps);
            deps = vec![send, recv];
        }
    }
    Ok(s)
}
