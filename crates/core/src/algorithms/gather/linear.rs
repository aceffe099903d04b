//! Linear gather (what MPI libraries do for small counts): every rank sends
//! its block to the root, which receives them from root+1, root+2, … and
//! copies its own.

use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "gather",
    name: "linear",
    summary: "every rank sends its block straight to the root",
    build,
    stream: None,
    segmented: false,
    lanes: false,
};

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let c = req.count;
    let root = req.collective.root().unwrap_or(0) as usize;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        if r == root {
            prog.push(
                Op::copy(Region::input(0, c), Region::output(r as u64 * c, c)),
                &[],
            );
            for k in 1..p {
                let peer = (root + k) % p;
                prog.push(
                    Op::recv(peer as u32, 0, Region::output(peer as u64 * c, c)),
                    &[],
                );
            }
        } else {
            prog.push(Op::send(root as u32, 0, Region::input(0, c)), &[]);
        }
    }
    Ok(s)
}
