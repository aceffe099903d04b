//! Linear scatter (what MPI libraries do for small counts): the root sends
//! block r of its buffer to rank r for r = root+1, root+2, … in turn (its
//! engines take them in that order) and copies its own block.

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Scatter,
    "linear",
    "the root sends each rank its block in turn",
    build,
)
.ompi(1, "basic_linear", "basic_linear");

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let c = req.count;
    let root = req.collective.root().unwrap_or(0) as usize;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        if r == root {
            prog.push(
                Op::copy(Region::input(r as u64 * c, c), Region::output(0, c)),
                &[],
            );
            for k in 1..p {
                let peer = (root + k) % p;
                prog.push(
                    Op::send(peer as u32, 0, Region::input(peer as u64 * c, c)),
                    &[],
                );
            }
        } else {
            prog.push(Op::recv(root as u32, 0, Region::output(0, c)), &[]);
        }
    }
    Ok(s)
}
