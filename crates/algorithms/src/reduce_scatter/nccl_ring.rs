//! NCCL's ring reduce-scatter (`runRing`, src/device/reduce_scatter.h)
//! over its channels (`crate::nccl`): each rank's chunk of the buffer
//! (the standard split) split into a part a channel, each part in loops
//! of NCCL's chunk (4 steps of 512 KiB with Simple). In a loop the rank at
//! ring position i sends its contribution to the block of the rank before
//! it round the channel's ring, then receives, combines and passes on the
//! blocks of the ranks before that, and last receives and combines its
//! own block, reduced along the ring in the same order on every run.

use crate::error::Result;
use crate::nccl::{self, Pattern};
use crate::{Algorithm, Request};
use topocoll_schedule::{chunk, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::ReduceScatter,
    "nccl_ring",
    "NCCL's ring: per channel (its own ring and NIC) loops of a chunk of every block, combined P-1 steps round the ring",
    build,
)
.channels();

fn build(req: &Request) -> Result<Schedule> {
    let mut w = nccl::Writer::new(req, &ALGORITHM, 1)?;
    let (p, n) = (req.ranks, req.count);
    if p == 1 {
        return Ok(w.finish());
    }
    // Blocks of the standard split; the channels part the longest.
    let widest = n.div_ceil(p as u64);
    let steps = nccl::chunks(req, &w.ch, widest, |len| {
        nccl::chunk_elems(req, &w.ch, Pattern::Ring, len, p as u64)
    });
    nccl::check_ops(req, &ALGORITHM, steps * (p * 2 * p) as u128)?;
    for c in 0..w.ch.count() {
        let ring = w.ch.ring(c);
        let (off, len) = nccl::part(widest, req.dtype.size(), w.ch.count(), c);
        let step = nccl::chunk_elems(req, &w.ch, Pattern::Ring, len, p as u64);
        let tag = c as u32;
        let mut at = 0;
        while at < len {
            let k = step.min(len - at);
            let block = |b: usize| {
                let (start, blen) = chunk(n, p as u64, b as u64);
                let from = (off + at).min(blen);
                Region::output(start + from, k.min(blen - from))
            };
            for (pos, &me) in ring.iter().enumerate() {
                let next = ring[(pos + 1) % p];
                let prev = ring[(pos + p - 1) % p] as u32;
                let owner = |j: usize| ring[(pos + p - j) % p];
                w.send((c, c), (me, next), block(owner(1)), &[]);
                for j in 2..p {
                    w.push(me, c, Op::recv_combine(prev, tag, block(owner(j))), &[]);
                    w.send((c, c), (me, next), block(owner(j)), &[]);
                }
                w.push(me, c, Op::recv_combine(prev, tag, block(me)), &[]);
            }
            at += step;
        }
    }
    Ok(w.finish())
}
