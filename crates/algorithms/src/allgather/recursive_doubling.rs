//! Recursive-doubling allgather (MPICH's), for any P. With p2 the largest
//! power of two ≤ P and rem = P − p2, the first 2·rem ranks pair up: each
//! even one hands its block to the odd one above it (tag 0), which takes part
//! for both, and gets the whole result back at the end. The p2 participants
//! (new rank q, standing for a group of one or two consecutive ranks) then
//! swap with q ⊕ 2^k, for k = 0, 1, …, the blocks of the 2^k groups they
//! hold: a contiguous run of ranks, so a contiguous region of the output.

use crate::allreduce::recursive_doubling::Fold;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allgather,
    "recursive_doubling",
    "swap all blocks held with rank xor 2^k, log2 P steps (pairs fold for non-powers of two)",
    build,
)
.ompi(3, "recursive_doubling", "recursivedoubling")
.mpich("MPIR_Allgather_intra_recursive_doubling");

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let c = req.count;
    let fold = Fold::new(p);
    let steps = fold.steps();
    let last = 1 + steps;
    // The first rank of group g (g = p2: one past the last rank).
    let first = |g: usize| if g < fold.rem { 2 * g } else { g + fold.rem } as u64;
    let groups = |a: usize, b: usize| Region::output(first(a) * c, (first(b) - first(a)) * c);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let Some(q) = fold.newrank(r) else {
            // Even rank of a pair: hand over the block, get everything back.
            let peer = r as u32 + 1;
            prog.push(Op::send(peer, 0, Region::input(0, c)), &[]);
            prog.push(Op::recv(peer, last, Region::output(0, p as u64 * c)), &[]);
            continue;
        };
        let mut deps: Vec<OpId> = vec![prog.push(
            Op::copy(Region::input(0, c), Region::output(r as u64 * c, c)),
            &[],
        )];
        if r < 2 * fold.rem {
            deps.push(prog.push(
                Op::recv(r as u32 - 1, 0, Region::output((r as u64 - 1) * c, c)),
                &[],
            ));
        }
        for k in 0..steps {
            let mask = 1usize << k;
            let peer = fold.real(q ^ mask);
            let mine = q & !(mask - 1);
            let theirs = mine ^ mask;
            let send = prog.push(Op::send(peer, 1 + k, groups(mine, mine + mask)), &deps);
            let recv = prog.push(Op::recv(peer, 1 + k, groups(theirs, theirs + mask)), &deps);
            deps = vec![send, recv];
        }
        if r < 2 * fold.rem {
            prog.push(
                Op::send(r as u32 - 1, last, Region::output(0, p as u64 * c)),
                &deps,
            );
        }
    }
    Ok(s)
}
