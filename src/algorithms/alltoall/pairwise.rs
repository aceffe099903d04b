//! Pairwise exchange, exactly SimGrid's alltoall `pair`
//! (`alltoall-pair.cpp`): P must be a power of two; in step i = 0..P−1 rank r
//! does a send-receive with partner r XOR i (send its block for the partner,
//! receive the partner's block for it). Step 0 is the self block, a local copy
//! that costs nothing in SimGrid (it does not hold step 1 back here either).
//! Each step's send and receive start together (isend + irecv) and the next
//! step waits for both (waitall); there is no barrier. Tag = step.

use super::self_copy;
use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "alltoall",
    name: "pairwise",
    summary: "SimGrid's pair: step i = 1..P-1 send-receive with rank XOR i (P a power of two)",
    build,
};

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    if !p.is_power_of_two() {
        // SimGrid throws "alltoall pair algorithm can't be used with non power
        // of two number of processes!" and has no fallback.
        return Err(req.unsupported(
            ALGORITHM.name,
            format!("partners are rank XOR step, which needs a power-of-two rank count, not {p} (as in SimGrid)"),
        ));
    }
    let mut s = req.schedule(ALGORITHM.name);
    let b = req.count;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.ops.reserve(2 * p - 1);
        self_copy(prog, r, b);
        let mut deps: Vec<u32> = Vec::new();
        for step in 1..p {
            let partner = (r ^ step) as u64;
            let send = prog.push(
                Op::Send {
                    peer: partner as u32,
                    tag: step as u32,
                    region: Region::input(partner * b, b),
                    route: 0,
                },
                &deps,
            );
            let recv = prog.push(
                Op::Recv {
                    peer: partner as u32,
                    tag: step as u32,
                    region: Region::output(partner * b, b),
                    combine: false,
                },
                &deps,
            );
            deps = vec![send, recv];
        }
    }
    Ok(s)
}
