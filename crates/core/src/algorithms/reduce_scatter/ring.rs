//! Ring reduce-scatter: the first half of the ring allreduce. The buffer is
//! split in P chunks (the standard split); in step s (0..P−1) rank r sends
//! chunk (r − 1 − s) mod P to r + 1 and receive-combines chunk (r − 2 − s)
//! mod P from r − 1, each step waiting for the one before. Chunk r travels
//! from rank r + 1 round the ring, combined in the same order on every run,
//! and ends on rank r fully reduced.

use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{chunk, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "reduce_scatter",
    name: "ring",
    summary: "P-1 steps around the ring, each combining the chunk received into the rank's own",
    build,
    stream: None,
    segmented: false,
    lanes: false,
};

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let n = req.count;
    let part = |i: usize| {
        let (start, len) = chunk(n, p as u64, i as u64);
        Region::output(start, len)
    };
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let (next, prev) = (((r + 1) % p) as u32, ((r + p - 1) % p) as u32);
        let mut deps = Vec::new();
        for step in 0..p.saturating_sub(1) {
            let send = prog.push(
                Op::send(next, step as u32, part((r + 2 * p - 1 - step) % p)),
                &deps,
            );
            let recv = prog.push(
                Op::recv_combine(prev, step as u32, part((r + 2 * p - 2 - step) % p)),
                &deps,
            );
            deps = vec![send, recv];
        }
    }
    Ok(s)
}
