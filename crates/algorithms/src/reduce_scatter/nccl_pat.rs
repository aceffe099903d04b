//! NCCL's PAT reduce-scatter (Parallel Aggregated Trees, NCCL 2.23:
//! `PatRSAlgorithm`, src/include/collectives.h) over its channels
//! (`crate::nccl`): every rank's block is reduced up a binomial tree of its
//! own, the trees shifted copies of one another. A rank at distance s
//! from a block's owner (s = 1 .. P − 1) sends its partial of that block
//! to the rank 2^b nearer, b the lowest set bit of s (NCCL's send peer
//! rank + 2^d, receive peer rank − 2^d, mod P), once it has combined the
//! partials of the ranks s + 2^k (k < b) away. Steps go from the farthest
//! distance down: at step t (the power of two at or above P, less one,
//! down to 1) a rank sends its own contribution at distance t when t is
//! odd, receives and combines the partial from distance t, and then, t
//! odd, passes on the partial at distance t − 1, now complete. A
//! channel's part goes in chunks (NCCL's PAT chunk: one 512 KiB step with
//! Simple, halved while 16 chunks a channel would exceed its bytes, down
//! to 64 KiB). PAT's aggregation of several steps into one message when
//! chunks are small is left out (docs/machines.md).

use crate::error::Result;
use crate::nccl::{self, Pattern};
use crate::{Algorithm, Request};
use topocoll_schedule::{chunk, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::ReduceScatter,
    "nccl_pat",
    "NCCL's PAT: per channel and chunk, every block reduced up its own binomial tree, farthest first",
    build,
)
.channels();

fn build(req: &Request) -> Result<Schedule> {
    let mut w = nccl::Writer::new(req, &ALGORITHM, 1)?;
    let (p, n) = (req.ranks, req.count);
    let pow2 = p.next_power_of_two();
    let widest = n.div_ceil(p as u64);
    let steps = nccl::chunks(req, &w.ch, widest, |len| {
        nccl::chunk_elems(req, &w.ch, Pattern::PatReduceScatter, len, p as u64)
    });
    nccl::check_ops(req, &ALGORITHM, steps * (p * 2 * p) as u128)?;
    for c in 0..w.ch.count() {
        let (off, len) = nccl::part(widest, req.dtype.size(), w.ch.count(), c);
        let step = nccl::chunk_elems(req, &w.ch, Pattern::PatReduceScatter, len, p as u64);
        let tag = c as u32;
        let mut at = 0;
        while at < len {
            let k = step.min(len - at);
            let block = |b: usize| {
                let (start, blen) = chunk(n, p as u64, (b % p) as u64);
                let from = (off + at).min(blen);
                Region::output(start + from, k.min(blen - from))
            };
            for me in 0..p {
                let send = |w: &mut nccl::Writer, dist: usize| {
                    let d = 1 << dist.trailing_zeros();
                    w.send((c, c), (me, (me + d) % p), block(me + dist), &[]);
                };
                for t in (1..pow2).rev() {
                    if t % 2 == 1 && t < p {
                        send(&mut w, t);
                    }
                    if t < p {
                        let d = 1 << t.trailing_zeros();
                        let from = (me + p - d % p) % p;
                        w.push(
                            me,
                            c,
                            Op::recv_combine(from as u32, tag, block(me + t - d)),
                            &[],
                        );
                    }
                    if t % 2 == 1 && t > 1 && t - 1 < p {
                        send(&mut w, t - 1);
                    }
                }
            }
            at += step;
        }
    }
    Ok(w.finish())
}
