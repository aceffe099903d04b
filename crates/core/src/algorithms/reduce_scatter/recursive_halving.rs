//! Recursive-halving reduce-scatter (the first half of Rabenseifner's
//! allreduce, MPICH's reduce-scatter for commutative operators), for any P.
//! With p2 the largest power of two ≤ P and rem = P − p2, the first 2·rem
//! ranks pair up: each even one hands its buffer to the odd one above it,
//! which combines it and takes part for both. The p2 participants (new rank
//! q, standing for a group of one or two consecutive ranks and so for their
//! chunks, a contiguous range) halve: for mask = p2/2, …, 1, q keeps the half
//! of its range of groups on its side of bit `mask`, sends the other half to
//! q ⊕ mask, and combines in the partner's copy of the kept half. q then
//! holds its group's chunks reduced, and hands the even rank of a pair its
//! chunk. The order of every combination is fixed by the schedule.

use crate::algorithms::allreduce::rabenseifner::halve;
use crate::algorithms::allreduce::recursive_doubling::Fold;
use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{chunk, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "reduce_scatter",
    name: "recursive_halving",
    summary:
        "halve the range held with rank xor 2^k, log2 P steps (pairs fold for non-powers of two)",
    build,
    stream: None,
    segmented: false,
    lanes: false,
};

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let n = req.count;
    if p == 1 {
        return Ok(s);
    }
    let fold = Fold::new(p);
    let p2 = fold.p2;
    let steps = fold.steps();
    let last = 1 + steps;
    let own = |r: usize| chunk(n, p as u64, r as u64);
    // Where group g's chunks start (g = p2: the end of the buffer).
    let start = |g: usize| {
        if g >= p2 {
            n
        } else {
            own(if g < fold.rem { 2 * g } else { g + fold.rem }).0
        }
    };
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let Some(q) = fold.newrank(r) else {
            // Even rank of a pair: hand over the buffer, get its chunk back.
            let peer = r as u32 + 1;
            let send = prog.push(Op::send(peer, 0, Region::output(0, n)), &[]);
            let (at, len) = own(r);
            if len > 0 {
                prog.push(Op::recv(peer, last, Region::output(at, len)), &[send]);
            }
            continue;
        };
        prog.scratch = n;
        let mut deps = fold.absorb(prog, r, n);
        halve(prog, &fold, q, &start, &mut deps);
        if r < 2 * fold.rem {
            let (at, len) = own(r - 1);
            if len > 0 {
                prog.push(Op::send(r as u32 - 1, last, Region::output(at, len)), &deps);
            }
        }
    }
    Ok(s)
}
