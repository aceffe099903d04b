//! Ring allreduce: a reduce-scatter then an allgather around the ring
//! r → r+1, with SimGrid's `lr` partner and chunk pattern. The buffer is split
//! in P chunks (the standard split: the first n mod P chunks one element
//! longer). In reduce-scatter step s (0..P−2) rank r sends chunk (r−1−s) mod P
//! and receive-combines chunk (r−2−s) mod P, after which it holds the full
//! reduction of chunk r; in allgather step s it sends chunk (r−s) mod P and
//! receives chunk (r−1−s) mod P. Each chunk is reduced once, along the ring,
//! then copied: every rank gets identical bits. Each step is a send-receive
//! that waits for both operations of the step before (tag = step).
//!
//! Unlike SimGrid's `lr`, counts that P does not divide are handled by the
//! standard split rather than a trailing reduce+bcast of the remainder.

use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{chunk, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "allreduce",
    name: "ring",
    summary: "ring reduce-scatter then ring allgather, 2(P-1) steps of n/P elements",
    build,
    stream: None,
};

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let n = req.count;
    let part = |c: usize| {
        let (start, len) = chunk(n, p as u64, c as u64);
        Region::output(start, len)
    };
    for (r, prog) in s.programs.iter_mut().enumerate() {
        if p == 1 {
            continue;
        }
        let next = ((r + 1) % p) as u32;
        let prev = ((r + p - 1) % p) as u32;
        let mut deps: Vec<u32> = Vec::new();
        for step in 0..2 * (p - 1) {
            let (send_chunk, recv_chunk, combine) = if step < p - 1 {
                ((r + 2 * p - 1 - step) % p, (r + 2 * p - 2 - step) % p, true)
            } else {
                let s = step - (p - 1);
                ((r + p - s) % p, (r + 2 * p - 1 - s) % p, false)
            };
            let tag = step as u32;
            let send = prog.push(
                Op::Send {
                    peer: next,
                    tag,
                    region: part(send_chunk),
                    route: 0,
                },
                &deps,
            );
            let recv = prog.push(
                Op::Recv {
                    peer: prev,
                    tag,
                    region: part(recv_chunk),
                    combine,
                },
                &deps,
            );
            deps = vec![send, recv];
        }
    }
    Ok(s)
}
