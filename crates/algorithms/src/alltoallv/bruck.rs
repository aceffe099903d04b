//! Bruck's all-to-all (Bruck, Ho, Kipnis, Upfal, Weathersby 1997) with a
//! count per pair, as in the Bruck alltoallv of Fan et al. (2022): any P,
//! ⌈log2 P⌉ steps. Slot i of rank r starts as r's block for r + i; in step
//! k every slot whose index has bit k set goes, packed with the others, to
//! r + 2^k, and the same slots arrive from r − 2^k. After the steps of the
//! bits of i below 2^K, slot i of rank r holds the block that rank
//! r − (i mod 2^K) owes rank r − (i mod 2^K) + i; at the end, the block
//! r − i owes r, which a last copy puts at its place in the output.
//!
//! Every rank knows the whole matrix (the schedule is built from it, as a
//! Bruck alltoallv's first phase exchanges the counts), so both sides of a
//! step know its packed size, the sum of its slots' sizes: a step that
//! would move nothing is left out on both sides, empty slots are neither
//! packed nor copied, and a step of one non-empty slot sends it from where
//! it lies, unpacked.
//!
//! Each step has its own packed send buffer and receive buffer in scratch
//! (every buffer is written once, so nothing waits for a reader), and a
//! received slot is read where it landed, never unpacked: a slot is a
//! region that moves from the input into receive buffers. Scratch is the
//! two buffers of every step, about the rank's data times log2 P. Tag = step.

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, OpId, Region, Schedule, Sizes};

// log2 P messages a rank, fewer ops than a send per pair.
// Neither library has a Bruck alltoallv.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Alltoallv,
    "bruck",
    "Bruck: log2(P) steps of packed blocks to rank+2^k, packed sizes the sums (any P)",
    build,
);

/// The size of slot `i` of rank `r` once the steps of the bits below
/// `2^k` have run.
fn slot_size(v: &Sizes, p: usize, r: usize, i: usize, k: u32) -> u64 {
    let moved = i & ((1usize << k) - 1);
    let src = (r + p - moved % p) % p;
    v.block(src, (src + i) % p)
}

fn build(req: &Request) -> Result<Schedule> {
    let v = req.sizes()?;
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let steps: Vec<u32> = (0..usize::BITS)
        .take_while(|&k| (1usize << k) < p)
        .collect();
    for (r, prog) in s.programs.iter_mut().enumerate() {
        // Where each slot lies now, and the op that wrote it there.
        let mut at: Vec<Region> = (0..p)
            .map(|i| {
                let to = (r + i) % p;
                Region::input(v.send_at(r, to), v.block(r, to))
            })
            .collect();
        let mut written: Vec<Option<OpId>> = vec![None; p];
        let mut scratch = 0u64;
        for &k in &steps {
            let pof2 = 1usize << k;
            let (to, from) = ((r + pof2) % p, (r + p - pof2) % p);
            let slots: Vec<usize> = (pof2..p).filter(|i| i & pof2 != 0).collect();
            let full: Vec<usize> = slots.iter().copied().filter(|&i| at[i].count > 0).collect();
            // Send: the one slot where it lies, or every slot packed.
            if let [i] = full[..] {
                let deps: Vec<OpId> = written[i].into_iter().collect();
                prog.push(Op::send(to as u32, k, at[i]), &deps);
            } else if !full.is_empty() {
                let start = scratch;
                let mut packs = Vec::with_capacity(full.len());
                for &i in &full {
                    let dst = Region::scratch(scratch, at[i].count);
                    let deps: Vec<OpId> = written[i].into_iter().collect();
                    packs.push(prog.push(Op::copy(at[i], dst), &deps));
                    scratch += at[i].count;
                }
                prog.push(
                    Op::send(to as u32, k, Region::scratch(start, scratch - start)),
                    &packs,
                );
            }
            // Receive: the same slots of `from`, as they are after this step.
            let sizes: Vec<u64> = slots
                .iter()
                .map(|&i| slot_size(v, p, r, i, k + 1))
                .collect();
            let total: u64 = sizes.iter().sum();
            let mut recv = None;
            if total > 0 {
                let region = Region::scratch(scratch, total);
                recv = Some(prog.push(Op::recv(from as u32, k, region), &[]));
            }
            for (&i, &n) in slots.iter().zip(&sizes) {
                at[i] = Region::scratch(scratch, n);
                written[i] = recv.filter(|_| n > 0);
                scratch += n;
            }
        }
        prog.scratch = scratch;
        // Each slot's block to its place: slot i holds what r − i owes r.
        for i in 0..p {
            if at[i].count == 0 {
                continue;
            }
            let src = (r + p - i) % p;
            let deps: Vec<OpId> = written[i].into_iter().collect();
            prog.push(
                Op::copy(at[i], Region::output(v.recv_at(r, src), at[i].count)),
                &deps,
            );
        }
    }
    Ok(s)
}
