//! Linear alltoallv, Open MPI's `basic_linear`: rank r copies its block for
//! itself, posts a receive from every rank 0..P that sends it anything, then
//! a send to every rank 0..P it owes anything, all at once (tag 0). Empty
//! blocks are neither sent nor received. How many transfers run at once is
//! the node's engine count (engines take the sends in program order).

use super::self_copy;
use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Alltoallv,
    "linear",
    "every receive, then every send, posted at once (empty blocks skipped)",
    build,
)
.ops(OpCount::PerPair)
// MPICH's scattered posts a window of receives and sends at a time.
.ompi(1, "basic_linear", "basic_linear");

fn build(req: &Request) -> Result<Schedule> {
    let v = req.sizes()?;
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        self_copy(prog, v, r);
        for from in (0..p).filter(|&q| q != r && v.block(q, r) > 0) {
            let region = Region::output(v.recv_at(r, from), v.block(from, r));
            prog.push(Op::recv(from as u32, 0, region), &[]);
        }
        for to in (0..p).filter(|&q| q != r && v.block(r, q) > 0) {
            let region = Region::input(v.send_at(r, to), v.block(r, to));
            prog.push(Op::send(to as u32, 0, region), &[]);
        }
    }
    Ok(s)
}
