//! NCCL's ring broadcast (src/device/broadcast.h) over its channels: a
//! channel's part in chunks of NCCL's pipeline chunk (one 512 KiB step
//! with Simple), passed from the root round the channel's ring (its own
//! order and NIC, `crate::nccl`) to the rank before the root, each rank
//! passing a chunk on as it arrives.

use crate::error::Result;
use crate::nccl::{self, Pattern};
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Bcast,
    "nccl_ring",
    "NCCL's ring: per channel (its own ring and NIC) chunks pipelined from the root round the ring",
    build,
)
.channels();

fn build(req: &Request) -> Result<Schedule> {
    pipeline(req, &ALGORITHM, false)
}

/// NCCL's ring pipelines: from the root round the ring (`reduce` false),
/// or from the rank after the root round to the root, combining
/// (`reduce`: src/device/reduce.h).
pub(crate) fn pipeline(req: &Request, alg: &Algorithm, reduce: bool) -> Result<Schedule> {
    let mut w = nccl::Writer::new(req, alg, 1)?;
    let (p, n) = (req.ranks, req.count);
    let root = req.collective.root().unwrap_or(0) as usize;
    if p == 1 {
        return Ok(w.finish());
    }
    let steps = nccl::chunks(req, &w.ch, n, |len| {
        nccl::chunk_elems(req, &w.ch, Pattern::Pipeline, len, 1)
    });
    nccl::check_ops(req, alg, steps * 2 * p as u128)?;
    for c in 0..w.ch.count() {
        let ring = w.ch.ring(c);
        let at_root = ring.iter().position(|&r| r == root).unwrap_or(0);
        // The ranks in the order the chunks visit them.
        let order: Vec<usize> = if reduce {
            (1..=p).map(|k| ring[(at_root + k) % p]).collect()
        } else {
            (0..p).map(|k| ring[(at_root + k) % p]).collect()
        };
        let (off, len) = nccl::part(n, req.dtype.size(), w.ch.count(), c);
        let chunk = nccl::chunk_elems(req, &w.ch, Pattern::Pipeline, len, 1);
        let tag = c as u32;
        let mut at = 0;
        while at < len {
            let region = Region::output(off + at, chunk.min(len - at));
            for k in 0..p {
                let me = order[k];
                if k > 0 {
                    let prev = order[k - 1] as u32;
                    w.push(me, c, Op::recv_with(prev, tag, region, reduce), &[]);
                }
                if k + 1 < p {
                    w.send((c, c), (me, order[k + 1]), region, &[]);
                }
            }
            at += chunk;
        }
    }
    Ok(w.finish())
}
