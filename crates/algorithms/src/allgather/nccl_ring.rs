//! NCCL's ring allgather (`runRing`, src/device/all_gather.h) over its
//! channels (`crate::nccl`): each rank's block split into a part a
//! channel, each part in loops of NCCL's chunk (4 steps of 512 KiB with
//! Simple). In a loop a rank copies its own chunk into place and sends it
//! on, then receives and passes on the chunk of the rank before it round
//! the channel's ring, of the one before that, and so on, P − 1 in all.

use crate::error::Result;
use crate::nccl::{self, Pattern};
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allgather,
    "nccl_ring",
    "NCCL's ring: per channel (its own ring and NIC) loops of a chunk of every block, P-1 steps round the ring",
    build,
)
.channels();

fn build(req: &Request) -> Result<Schedule> {
    let mut w = nccl::Writer::new(req, &ALGORITHM, 1)?;
    let (p, n) = (req.ranks, req.count);
    let steps = nccl::chunks(req, &w.ch, n, |len| {
        nccl::chunk_elems(req, &w.ch, Pattern::Ring, len, p as u64)
    });
    nccl::check_ops(req, &ALGORITHM, steps * (p * 2 * p) as u128)?;
    for c in 0..w.ch.count() {
        let ring = w.ch.ring(c);
        let (off, len) = nccl::part(n, req.dtype.size(), w.ch.count(), c);
        let chunk = nccl::chunk_elems(req, &w.ch, Pattern::Ring, len, p as u64);
        let tag = c as u32;
        let mut at = 0;
        while at < len {
            let k = chunk.min(len - at);
            let block = |b: usize| Region::output(b as u64 * n + off + at, k);
            for (pos, &me) in ring.iter().enumerate() {
                let next = ring[(pos + 1) % p];
                let prev = ring[(pos + p - 1) % p] as u32;
                let owner = |j: usize| ring[(pos + p - j) % p];
                w.push(me, c, Op::copy(Region::input(off + at, k), block(me)), &[]);
                if p == 1 {
                    continue;
                }
                w.send((c, c), (me, next), block(me), &[]);
                for j in 1..p - 1 {
                    w.push(me, c, Op::recv(prev, tag, block(owner(j))), &[]);
                    w.send((c, c), (me, next), block(owner(j)), &[]);
                }
                w.push(me, c, Op::recv(prev, tag, block(owner(p - 1))), &[]);
            }
            at += chunk;
        }
    }
    Ok(w.finish())
}
