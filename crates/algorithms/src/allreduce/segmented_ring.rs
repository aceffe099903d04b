//! Segmented ring allreduce (Open MPI's `segmented_ring`): the ring
//! reduce-scatter run once per phase on a slice of every block, then one
//! ring allgather of the whole blocks. The buffer is cut in P blocks (the
//! standard split) and each block in `phases` slices (the standard split
//! again), where with s = `--segment` elements (default 64 KiB) phases =
//! ⌊n / (P·s)⌋, one more when the rest is at least P and over half of P·s,
//! and one phase (the plain ring) when n < P·s, as Open MPI counts them.
//!
//! In phase φ, step j (0 … P−2), rank r sends slice φ of block (r − j) mod
//! P to r + 1 and receive-combines slice φ of block (r − j − 1) mod P from
//! r − 1; the send of a step waits for the step before's receive (whose
//! slice it forwards) and send, a receive for the step before's send (the
//! order Open MPI's blocking sends and one-ahead receives give). After the
//! last phase rank r holds block r + 1 reduced, and in allgather step k
//! sends block (r + 1 − k) mod P to r + 1 and receives block (r − k) mod P
//! from r − 1. Each block is reduced once along the ring, in a fixed
//! order, then copied: every rank gets the same bits.

use crate::error::Result;
use crate::pipelined::{DEFAULT_SEGMENT_BYTES, MAX_MATERIALISED_OPS};
use crate::{Algorithm, Request};
use topocoll_schedule::{chunk, CollectiveKind, Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "segmented_ring", "ring reduce-scatter once per phase on a slice of each block (--segment, default 64 KiB), then a ring allgather", build).segmented()
// The same blocks, phases, partners and order as Open MPI 4.1's
// ompi_coll_base_allreduce_intra_ring_segmented, but for counts below
// P, where Open MPI's ring hands over to recursive doubling.
.ompi(5, "segmented_ring", "ring_segmented");

/// Open MPI's phase count for `n` elements on `p` ranks in segments of
/// `seg` elements.
fn phases(n: u64, p: u64, seg: u64) -> u64 {
    let seg = seg.min(n).max(1);
    let round = p * seg;
    if n < round {
        return 1;
    }
    let rest = n % round;
    n / round + u64::from(rest >= p && rest > round / 2)
}

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let (p, n) = (req.ranks, req.count);
    if p == 1 || n == 0 {
        return Ok(s);
    }
    let seg = (req.segment_bytes.unwrap_or(DEFAULT_SEGMENT_BYTES) / req.dtype.size()).max(1);
    let np = phases(n, p as u64, seg);
    let steps = p as u64 - 1;
    // Checked before the work it bounds: 2 ops a step, (np + 1)(P − 1)
    // steps a rank.
    let ops = (np + 1)
        .checked_mul(2 * steps * p as u64)
        .filter(|&ops| ops <= MAX_MATERIALISED_OPS);
    if ops.is_none() {
        return Err(topocoll_base::param!(
            "segment",
            ": {np} phases on {p} ranks are too many operations to write out (at most {MAX_MATERIALISED_OPS}); use larger segments"
        ));
    }
    let block = |b: usize| chunk(n, p as u64, b as u64);
    let slice = |b: usize, phase: u64| {
        let (at, len) = block(b);
        let (off, k) = chunk(len, np, phase);
        Region::output(at + off, k)
    };
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let (next, prev) = (((r + 1) % p) as u32, ((r + p - 1) % p) as u32);
        let mut last: Vec<OpId> = Vec::new();
        for phase in 0..np {
            let mut send_prev: Option<OpId> = None;
            let mut recv_prev: Option<OpId> = None;
            for j in 0..p - 1 {
                let tag = (phase * steps + j as u64) as u32;
                let (send_deps, recv_deps): (Vec<OpId>, Vec<OpId>) = match (send_prev, recv_prev) {
                    (Some(sp), Some(rp)) => (vec![rp, sp], vec![sp]),
                    _ => (last.clone(), last.clone()),
                };
                let send = prog.push(
                    Op::send(next, tag, slice((r + p - j) % p, phase)),
                    &send_deps,
                );
                let recv = prog.push(
                    Op::recv_combine(prev, tag, slice((r + 2 * p - j - 1) % p, phase)),
                    &recv_deps,
                );
                (send_prev, recv_prev) = (Some(send), Some(recv));
            }
            last = vec![send_prev.unwrap(), recv_prev.unwrap()];
        }
        let region = |b: usize| {
            let (at, len) = block(b);
            Region::output(at, len)
        };
        for k in 0..p - 1 {
            let tag = (np * steps + k as u64) as u32;
            let send = prog.push(Op::send(next, tag, region((r + 1 + p - k) % p)), &last);
            let recv = prog.push(Op::recv(prev, tag, region((r + p - k) % p)), &last);
            last = vec![send, recv];
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    #[test]
    fn phases_are_counted_as_open_mpi_counts_them() {
        use super::phases;
        // Below one round: the plain ring.
        assert_eq!(phases(100, 4, 64), 1);
        // 4 ranks, segments of 10: rounds of 40 elements.
        assert_eq!(phases(80, 4, 10), 2);
        // 20 left: not over half a round; 25 left: over it.
        assert_eq!(phases(100, 4, 10), 2);
        assert_eq!(phases(105, 4, 10), 3);
    }
}
