//! Ring exchange, exactly SimGrid's alltoall `ring` (`alltoall-ring.cpp`), any
//! P: in step i = 0..P−1 rank r does a send-receive, sending its block for
//! (r+i) mod P there and receiving the block of (r−i) mod P from it. Step 0
//! is the self block, a local copy that costs nothing in SimGrid (it does not
//! hold step 1 back here either). Each step's send and receive start together
//! and the next step waits for both; there is no barrier. Tag = step.

use super::self_copy;
use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "alltoall",
    name: "ring",
    summary: "SimGrid's ring: step i = 1..P-1 send to r+i, receive from r-i, one step at a time",
    build,
};

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    let mut s = req.schedule(ALGORITHM.name);
    let b = req.count;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.ops.reserve(2 * p - 1);
        self_copy(prog, r, b);
        let mut deps: Vec<u32> = Vec::new();
        for step in 1..p {
            let dst = ((r + step) % p) as u64;
            let src = ((r + p - step) % p) as u64;
            let send = prog.push(
                Op::Send {
                    peer: dst as u32,
                    tag: step as u32,
                    region: Region::input(dst * b, b),
                    route: 0,
                },
                &deps,
            );
            let recv = prog.push(
                Op::Recv {
                    peer: src as u32,
                    tag: step as u32,
                    region: Region::output(src * b, b),
                    combine: false,
                },
                &deps,
            );
            deps = vec![send, recv];
        }
    }
    Ok(s)
}
