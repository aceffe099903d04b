//! Bruck's all-to-all for small blocks (Bruck, Ho, Kipnis, Upfal, Weathersby
//! 1997; MPICH's short-message alltoall), any P, ⌈log2 P⌉ steps:
//!
//! 1. local rotation: tmp[i] = input block (r + i) mod P (the block this rank
//!    owes the rank i ahead of it);
//! 2. step k = 0, 1, ... while 2^k < P: pack every tmp[i] whose index has bit
//!    k set into a contiguous buffer, send it to (r + 2^k) mod P, receive the
//!    same set of blocks from (r − 2^k) mod P and unpack them into the same
//!    slots. A block travels i hops forward in total, one power of two at a
//!    time, so after the last step tmp[i] holds the block rank (r − i) mod P
//!    owes r;
//! 3. inverse rotation: output block (r − i) mod P = tmp[i].
//!
//! Scratch holds tmp (P blocks) and, for every step, its own packed send
//! buffer and packed receive buffer (so a step never waits for the buffers of
//! the step before: every receive is posted at once). Blocks with bit k set
//! come in runs of 2^k, so packing and unpacking copy whole runs. A pack waits
//! for the last write of its slots, a send for its packs, an unpack for its
//! receive and for this step's pack of the same slots (which read them); the
//! inverse rotation waits for the last write of each slot. Tag = step. Scratch
//! is P + 2·Σ_k |{i < P : bit k of i set}| blocks, about P·(1 + log2 P).

use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Alltoall,
    "bruck",
    "Bruck: log2(P) steps of packed blocks to rank+2^k, for small blocks (any P)",
    build,
)
.ops(OpCount::PerPair)
.ompi(3, "modified_bruck", "bruck")
.mpich("MPIR_Alltoall_intra_brucks");

/// The runs [lo, hi) of indices in 0..p with bit `k` set.
fn runs(p: usize, k: u32) -> Vec<(usize, usize)> {
    let pof2 = 1usize << k;
    (pof2..p)
        .step_by(2 * pof2)
        .map(|lo| (lo, (lo + pof2).min(p)))
        .collect()
}

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let b = req.count;
    let steps: Vec<u32> = (0..usize::BITS)
        .take_while(|&k| (1usize << k) < p)
        .collect();
    let step_runs: Vec<Vec<(usize, usize)>> = steps.iter().map(|&k| runs(p, k)).collect();
    // Blocks moved in each step, and where its buffers start (in blocks).
    let sizes: Vec<u64> = step_runs
        .iter()
        .map(|rs| rs.iter().map(|(lo, hi)| (hi - lo) as u64).sum())
        .collect();
    let pu = p as u64;
    let mut bufs_at: Vec<u64> = Vec::with_capacity(sizes.len());
    let mut next = pu;
    for &n in &sizes {
        bufs_at.push(next);
        next += 2 * n;
    }
    let scratch_blocks = next;
    let tmp = |i: usize, n: usize| Region::scratch(i as u64 * b, n as u64 * b);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.scratch = scratch_blocks * b;
        // 1. Rotation: two contiguous copies.
        let head = p - r;
        let c1 = prog.push(
            Op::copy(Region::input(r as u64 * b, head as u64 * b), tmp(0, head)),
            &[],
        );
        let mut last_write: Vec<OpId> = vec![c1; p];
        if r > 0 {
            let c2 = prog.push(Op::copy(Region::input(0, r as u64 * b), tmp(head, r)), &[]);
            last_write[head..].fill(c2);
        }
        // 2. The log steps.
        for (step, (&k, rs)) in steps.iter().zip(&step_runs).enumerate() {
            let pof2 = 1usize << k;
            let (total, at) = (sizes[step], bufs_at[step]);
            let packed = |j: u64, n: u64| Region::scratch((at + j) * b, n * b);
            let received = |j: u64, n: u64| Region::scratch((at + total + j) * b, n * b);
            let mut packs: Vec<OpId> = Vec::with_capacity(rs.len());
            let mut j = 0u64;
            for &(lo, hi) in rs {
                let mut deps: Vec<OpId> = last_write[lo..hi].to_vec();
                deps.sort_unstable();
                deps.dedup();
                let n = (hi - lo) as u64;
                packs.push(prog.push(Op::copy(tmp(lo, hi - lo), packed(j, n)), &deps));
                j += n;
            }
            prog.push(
                Op::send(((r + pof2) % p) as u32, k, packed(0, total)),
                &packs,
            );
            let recv = prog.push(
                Op::recv(((r + p - pof2) % p) as u32, k, received(0, total)),
                &[],
            );
            let mut j = 0u64;
            for (&(lo, hi), &pk) in rs.iter().zip(&packs) {
                let n = (hi - lo) as u64;
                let u = prog.push(Op::copy(received(j, n), tmp(lo, hi - lo)), &[recv, pk]);
                last_write[lo..hi].fill(u);
                j += n;
            }
        }
        // 3. Inverse rotation.
        for (i, &w) in last_write.iter().enumerate() {
            let from = (r + p - i) % p;
            prog.push(
                Op::copy(tmp(i, 1), Region::output(from as u64 * b, b)),
                &[w],
            );
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn runs_are_the_bit_k_indices() {
        for p in 1..40usize {
            for k in 0..6u32 {
                let from_runs: Vec<usize> =
                    runs(p, k).iter().flat_map(|&(lo, hi)| lo..hi).collect();
                let direct: Vec<usize> = (0..p).filter(|i| i & (1 << k) != 0).collect();
                assert_eq!(from_runs, direct);
            }
        }
    }
}
