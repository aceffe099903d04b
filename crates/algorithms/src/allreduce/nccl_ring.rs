//! NCCL's ring allreduce (`runRing`, src/device/all_reduce.h) over its
//! channels (`crate::nccl`): the buffer split into a part a channel, each
//! part in loops of P chunks of NCCL's chunk size (`calcCollChunking`: 4
//! steps of 512 KiB with Simple). In a loop the rank at ring index i
//! (its distance from rank 0 round the channel's ring) sends chunk i − 1,
//! receives, combines and passes on chunks i − 2 .. i − P + 1, combines
//! chunk i, its own, and passes it on, then receives and passes on the
//! reduced chunks i − 1 .. i − P + 2 and receives chunk i + 1 last. A
//! channel's steps run one after another; the channels run side by side.
//! Each chunk is reduced once, along the ring, then copied: every rank
//! gets the same bits.

use crate::error::Result;
use crate::nccl::{self, Pattern};
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allreduce,
    "nccl_ring",
    "NCCL's ring: per channel (its own ring and NIC) loops of P chunks, reduce-scatter then allgather round the ring",
    build,
)
.channels();

fn build(req: &Request) -> Result<Schedule> {
    let mut w = nccl::Writer::new(req, &ALGORITHM, 1)?;
    let (p, n) = (req.ranks, req.count);
    if p == 1 {
        return Ok(w.finish());
    }
    let loops = nccl::chunks(req, &w.ch, n, |len| {
        p as u64 * nccl::chunk_elems(req, &w.ch, Pattern::Ring, len, 1)
    });
    nccl::check_ops(req, &ALGORITHM, loops * (p * 4 * (p - 1)) as u128)?;
    let align = (16 / req.dtype.size()).max(1);
    for c in 0..w.ch.count() {
        let ring = w.ch.ring(c);
        let zero = ring.iter().position(|&r| r == 0).unwrap_or(0);
        let (off, len) = nccl::part(n, req.dtype.size(), w.ch.count(), c);
        if len == 0 {
            continue;
        }
        let chunk = nccl::chunk_elems(req, &w.ch, Pattern::Ring, len, 1);
        let mut done = 0;
        while done < len {
            let rem = len - done;
            let cc = if rem < p as u64 * chunk {
                rem.div_ceil(p as u64).div_ceil(align) * align
            } else {
                chunk
            };
            let region = |k: usize| {
                let start = (k as u64 * cc).min(rem);
                Region::output(off + done + start, cc.min(rem - start))
            };
            for (pos, &me) in ring.iter().enumerate() {
                let i = (pos + p - zero) % p;
                let next = ring[(pos + 1) % p];
                let prev = ring[(pos + p - 1) % p];
                let at = |j: usize| (i + p - j % p) % p;
                let tag = c as u32;
                w.send((c, c), (me, next), region(at(1)), &[]);
                for j in 2..=p {
                    w.push(
                        me,
                        c,
                        Op::recv_combine(prev as u32, tag, region(at(j))),
                        &[],
                    );
                    w.send((c, c), (me, next), region(at(j)), &[]);
                }
                for j in 1..p - 1 {
                    w.push(me, c, Op::recv(prev as u32, tag, region(at(j))), &[]);
                    w.send((c, c), (me, next), region(at(j)), &[]);
                }
                w.push(me, c, Op::recv(prev as u32, tag, region((i + 1) % p)), &[]);
            }
            done += (p as u64 * cc).min(rem);
        }
    }
    Ok(w.finish())
}
