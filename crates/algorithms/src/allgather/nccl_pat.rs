//! NCCL's PAT allgather (Parallel Aggregated Trees, NCCL 2.23:
//! `PatAGAlgorithm`, src/include/collectives.h) over its channels
//! (`crate::nccl`): every rank's block goes down a binomial tree of its
//! own, the trees shifted copies of one another, so that each step is one
//! message a rank. A channel's part goes in chunks (NCCL's PAT chunk: one
//! 512 KiB step with Simple, halved while 32 chunks a channel would
//! exceed its bytes, down to 64 KiB); for each chunk, at step t = 1, 2,
//! .. (t < P, up to the power of two at or above P), rank r sends block
//! r + t − 2^b to r − 2^b and receives block r + t from r + 2^b, b the
//! lowest set bit of t (NCCL's send peer rank − 2^d, receive peer
//! rank + 2^d, mod P): block r + t has come to r by then from the rank
//! 2^b' nearer it. PAT's aggregation of several steps into one message
//! when chunks are small is left out (docs/machines.md).

use crate::error::Result;
use crate::nccl::{self, Pattern};
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allgather,
    "nccl_pat",
    "NCCL's PAT: per channel and chunk, every block down its own binomial tree, a step at distance 2^b",
    build,
)
.channels();

fn build(req: &Request) -> Result<Schedule> {
    let mut w = nccl::Writer::new(req, &ALGORITHM, 1)?;
    let (p, n) = (req.ranks, req.count);
    let pow2 = p.next_power_of_two();
    let steps = nccl::chunks(req, &w.ch, n, |len| {
        nccl::chunk_elems(req, &w.ch, Pattern::PatAllgather, len, p as u64)
    });
    nccl::check_ops(req, &ALGORITHM, steps * (p * 2 * p) as u128)?;
    for c in 0..w.ch.count() {
        let (off, len) = nccl::part(n, req.dtype.size(), w.ch.count(), c);
        let chunk = nccl::chunk_elems(req, &w.ch, Pattern::PatAllgather, len, p as u64);
        let tag = c as u32;
        let mut at = 0;
        while at < len {
            let k = chunk.min(len - at);
            let block = |b: usize| Region::output((b % p) as u64 * n + off + at, k);
            for me in 0..p {
                w.push(me, c, Op::copy(Region::input(off + at, k), block(me)), &[]);
                for t in (1..pow2).filter(|&t| t < p) {
                    let d = 1 << t.trailing_zeros();
                    let to = (me + p - d % p) % p;
                    w.send((c, c), (me, to), block(me + t - d), &[]);
                    let from = (me + d) % p;
                    w.push(me, c, Op::recv(from as u32, tag, block(me + t)), &[]);
                }
            }
            at += chunk;
        }
    }
    Ok(w.finish())
}
