//! Rabenseifner's allreduce (MPICH's long-message algorithm, the allreduce
//! paper's §2.2.3 "reduce scatter + allgather" with recursive halving and
//! doubling), for any P, with the fold of `recursive_doubling` for non-powers
//! of two (the extra ranks hand their buffer to a partner first and get the
//! result back last).
//!
//! Among the p2 participants (new rank q) the buffer is cut in p2 chunks (the
//! standard split). Reduce-scatter, for mask = p2/2, p2/4, …, 1: q keeps the
//! half of its current chunk range on its side of bit `mask` (the lower half if
//! the bit is 0), sends the other half to q ⊕ mask, receives the partner's copy
//! of the kept half into Scratch and combines it in. q then holds chunk q
//! reduced. Allgather, for mask = 1, 2, …, p2/2: swap the ranges held with
//! q ⊕ mask. Each chunk is combined on one rank only, then copied: identical
//! bits everywhere. Empty ranges (count < p2) send nothing.

use super::recursive_doubling::Fold;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{chunk, Op, Program, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "rabenseifner", "recursive-halving reduce-scatter then recursive-doubling allgather (fold for non-powers of two)", build).ompi(6, "rabenseifner", "redscat_allgather").mpich("MPIR_Allreduce_intra_reduce_scatter_allgather");

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let n = req.count;
    if p == 1 || n == 0 {
        return Ok(s);
    }
    let fold = Fold::new(p);
    let p2 = fold.p2;
    let steps = fold.steps();
    let last_tag = 1 + 2 * steps;
    let start = |i: usize| {
        if i >= p2 {
            n
        } else {
            chunk(n, p2 as u64, i as u64).0
        }
    };
    // Chunks a..b of the Output (or the same elements of Scratch).
    let out = |a: usize, b: usize| Region::output(start(a), start(b) - start(a));
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let Some(q) = fold.newrank(r) else {
            fold.sit_out(prog, r, n, last_tag);
            continue;
        };
        prog.scratch = n;
        let mut deps = fold.absorb(prog, r, n);
        // Reduce-scatter by recursive halving.
        let (mut lo, mut hi) = halve(prog, &fold, q, &start, &mut deps);
        // Allgather by recursive doubling.
        for k in 0..steps {
            let mask = 1usize << k;
            let peer = fold.real(q ^ mask);
            let tag = 1 + steps + k;
            let size = hi - lo;
            let theirs = if q & mask == 0 {
                (hi, hi + size)
            } else {
                (lo - size, lo)
            };
            let mut next = Vec::new();
            if start(hi) > start(lo) {
                next.push(prog.push(Op::send(peer, tag, out(lo, hi)), &deps));
            }
            if start(theirs.1) > start(theirs.0) {
                next.push(prog.push(Op::recv(peer, tag, out(theirs.0, theirs.1)), &deps));
            }
            if !next.is_empty() {
                deps = next;
            }
            (lo, hi) = (lo.min(theirs.0), hi.max(theirs.1));
        }
        fold.give_back(prog, r, n, last_tag, &deps);
    }
    Ok(s)
}

/// Recursive halving among the p2 participants of `fold` (participant `q`
/// of program `prog`), over p2 ranges of the Output whose boundaries are
/// `start(0..=p2)`: for mask = p2/2, …, 1, keep the half of the current
/// ranges on q's side of bit `mask`, send the other half to q ⊕ mask (tag
/// 1 + step), receive the partner's copy of the kept half into the same
/// elements of Scratch and combine it in. Empty halves send nothing.
/// Returns the range q then holds reduced, [q, q + 1); `deps` becomes what
/// the next ops wait for.
pub(crate) fn halve(
    prog: &mut Program,
    fold: &Fold,
    q: usize,
    start: &dyn Fn(usize) -> u64,
    deps: &mut Vec<u32>,
) -> (usize, usize) {
    let out = |a: usize, b: usize| Region::output(start(a), start(b) - start(a));
    let tmp = |a: usize, b: usize| Region::scratch(start(a), start(b) - start(a));
    let (mut lo, mut hi) = (0usize, fold.p2);
    for k in 0..fold.steps() {
        let mask = fold.p2 >> (k + 1);
        let peer = fold.real(q ^ mask);
        let tag = 1 + k;
        let mid = (lo + hi) / 2;
        let (keep, give) = if q & mask == 0 {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let mut next = Vec::new();
        if start(give.1) > start(give.0) {
            next.push(prog.push(Op::send(peer, tag, out(give.0, give.1)), deps));
        }
        if start(keep.1) > start(keep.0) {
            let slot = tmp(keep.0, keep.1);
            let recv = prog.push(Op::recv(peer, tag, slot), deps);
            next.push(prog.push(Op::combine(slot, out(keep.0, keep.1)), &[recv]));
        }
        if !next.is_empty() {
            *deps = next;
        }
        (lo, hi) = keep;
    }
    (lo, hi)
}
