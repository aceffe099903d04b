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
//! Scratch holds tmp (P blocks), the packed send buffer and the packed receive
//! buffer (each as large as the largest step). Blocks with bit k set come in
//! runs of 2^k, so packing and unpacking copy whole runs. Every operation
//! waits for exactly what it needs: a pack for the last write of its slots and
//! for the previous step's send (which read the pack buffer); a receive for the
//! previous step's unpacks (which read the receive buffer); an unpack for the
//! receive and for this step's pack of the same slots. Tag = step.

use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "alltoall",
    name: "bruck",
    summary: "Bruck: log2(P) steps of packed blocks to rank+2^k, for small blocks (any P)",
    build,
};

/// The runs [lo, hi) of indices in 0..p with bit `k` set.
fn runs(p: usize, k: u32) -> Vec<(usize, usize)> {
    let pof2 = 1usize << k;
    (pof2..p)
        .step_by(2 * pof2)
        .map(|lo| (lo, (lo + pof2).min(p)))
        .collect()
}

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let b = req.count;
    let steps: Vec<u32> = (0..usize::BITS).take_while(|&k| (1usize << k) < p).collect();
    let step_runs: Vec<Vec<(usize, usize)>> = steps.iter().map(|&k| runs(p, k)).collect();
    let most = step_runs
        .iter()
        .map(|rs| rs.iter().map(|(lo, hi)| hi - lo).sum::<usize>())
        .max()
        .unwrap_or(0) as u64;
    let pu = p as u64;
    let tmp = |i: usize, n: usize| Region::scratch(i as u64 * b, n as u64 * b);
    let pack = |j: u64, n: u64| Region::scratch((pu + j) * b, n * b);
    let rbuf = |j: u64, n: u64| Region::scratch((pu + most + j) * b, n * b);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.scratch = (pu + 2 * most) * b;
        // 1. Rotation: two contiguous copies.
        let head = p - r;
        let c1 = prog.push(
            Op::Copy {
                src: Region::input(r as u64 * b, head as u64 * b),
                dst: tmp(0, head),
            },
            &[],
        );
        let mut last_write: Vec<OpId> = vec![c1; p];
        if r > 0 {
            let c2 = prog.push(
                Op::Copy {
                    src: Region::input(0, r as u64 * b),
                    dst: tmp(head, r),
                },
                &[],
            );
            last_write[head..].fill(c2);
        }
        // 2. The log steps.
        let mut prev_send: Option<OpId> = None;
        let mut prev_unpacks: Vec<OpId> = Vec::new();
        for (&k, rs) in steps.iter().zip(&step_runs) {
            let pof2 = 1usize << k;
            let mut packs: Vec<OpId> = Vec::with_capacity(rs.len());
            let mut j = 0u64;
            for &(lo, hi) in rs {
                let mut deps: Vec<OpId> = last_write[lo..hi].to_vec();
                deps.sort_unstable();
                deps.dedup();
                deps.extend(prev_send);
                let n = (hi - lo) as u64;
                packs.push(prog.push(
                    Op::Copy {
                        src: tmp(lo, hi - lo),
                        dst: pack(j, n),
                    },
                    &deps,
                ));
                j += n;
            }
            let total = j;
            let send = prog.push(
                Op::Send {
                    peer: ((r + pof2) % p) as u32,
                    tag: k,
                    region: pack(0, total),
                    route: 0,
                },
                &packs,
            );
            let recv = prog.push(
                Op::Recv {
                    peer: ((r + p - pof2) % p) as u32,
                    tag: k,
                    region: rbuf(0, total),
                    combine: false,
                },
                &prev_unpacks,
            );
            prev_unpacks.clear();
            let mut j = 0u64;
            for (&(lo, hi), &pk) in rs.iter().zip(&packs) {
                let n = (hi - lo) as u64;
                let u = prog.push(
                    Op::Copy {
                        src: rbuf(j, n),
                        dst: tmp(lo, hi - lo),
                    },
                    &[recv, pk],
                );
                last_write[lo..hi].fill(u);
                prev_unpacks.push(u);
                j += n;
            }
            prev_send = Some(send);
        }
        // 3. Inverse rotation.
        for (i, &w) in last_write.iter().enumerate() {
            let from = (r + p - i) % p;
            prog.push(
                Op::Copy {
                    src: tmp(i, 1),
                    dst: Region::output(from as u64 * b, b),
                },
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
                let from_runs: Vec<usize> = runs(p, k).iter().flat_map(|&(lo, hi)| lo..hi).collect();
                let direct: Vec<usize> = (0..p).filter(|i| i & (1 << k) != 0).collect();
                assert_eq!(from_runs, direct);
            }
        }
    }
}
