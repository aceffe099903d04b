//! Linear allgatherv: rank r copies its block into place, then posts a
//! receive of every other rank's block and a send of its own to every
//! other rank, all at once (tag 0), from its input. Empty blocks are
//! neither sent nor received.

use super::{block, own_copy};
use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

// Open MPI's default (1) is a decision, not an algorithm; its basic
// module gathers to rank 0 and broadcasts.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allgatherv,
    "linear",
    "every rank sends its block straight to every rank, all at once (empty blocks skipped)",
    build,
)
.ops(OpCount::PerPair);

fn build(req: &Request) -> Result<Schedule> {
    let v = req.sizes()?;
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        own_copy(prog, v, r);
        for q in (0..p).filter(|&q| q != r && v.block(q, r) > 0) {
            prog.push(Op::recv(q as u32, 0, block(v, r, q)), &[]);
        }
        let mine = v.block(r, r);
        if mine > 0 {
            for q in (0..p).filter(|&q| q != r) {
                prog.push(Op::send(q as u32, 0, Region::input(0, mine)), &[]);
            }
        }
    }
    Ok(s)
}
