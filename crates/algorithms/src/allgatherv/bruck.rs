//! Bruck's allgather (Bruck et al. 1997) with a count per rank, any P,
//! ⌈log2 P⌉ steps: after step k rank r holds the blocks of ranks r .. r +
//! 2^(k+1) − 1 (mod P). In step k, with d = 2^k, rank r sends the blocks of
//! r .. r + n − 1 to r − d and receives those of r + d .. r + d + n − 1 from
//! r + d, n = min(d, P − d). Blocks lie in their final places in the output
//! (no rotation, no scratch); a run of blocks that wraps past rank P − 1 is
//! two regions, so such a step sends two messages (tags 2k and 2k + 1) where
//! Open MPI's bruck sends one of an indexed datatype. Empty runs are not
//! sent.

use super::{block, own_copy};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, OpId, Region, Schedule, Sizes};

// log2 P messages a rank, fewer ops than a send per pair.
// Open MPI's bruck (2) sends a wrapping run as one indexed message.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allgatherv,
    "bruck",
    "Bruck: log2(P) steps, the blocks held so far to rank-2^k (any P)",
    build,
);

/// The output regions (at most two, in rank order of the run) of the blocks
/// of ranks `first .. first + n` (mod P) on rank r, empty ones left out.
fn run(v: &Sizes, p: usize, r: usize, first: usize, n: usize) -> Vec<Region> {
    let region = |lo: usize, hi: usize| {
        let start = block(v, r, lo).offset;
        let end = if hi == p {
            v.output_len(r)
        } else {
            block(v, r, hi).offset
        };
        Region::output(start, end - start)
    };
    let parts = if first + n <= p {
        vec![region(first, first + n)]
    } else {
        vec![region(first, p), region(0, first + n - p)]
    };
    parts.into_iter().filter(|g| g.count > 0).collect()
}

fn build(req: &Request) -> Result<Schedule> {
    let v = req.sizes()?;
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        // The ops that wrote the blocks this rank holds so far.
        let mut writes: Vec<OpId> = own_copy(prog, v, r).into_iter().collect();
        let mut k = 0u32;
        while (1usize << k) < p {
            let d = 1usize << k;
            let n = d.min(p - d);
            let (to, from) = ((r + p - d) % p, (r + d) % p);
            for (j, g) in run(v, p, r, r, n).into_iter().enumerate() {
                prog.push(Op::send(to as u32, 2 * k + j as u32, g), &writes);
            }
            let mut received = Vec::new();
            // Tags by the sender's split of the same run.
            for (j, g) in run(v, p, r, from, n).into_iter().enumerate() {
                received.push(prog.push(Op::recv(from as u32, 2 * k + j as u32, g), &[]));
            }
            writes.extend(received);
            k += 1;
        }
    }
    Ok(s)
}
