//! Recursive-doubling allreduce (MPICH's short-message algorithm, the
//! allreduce paper's §2.2.2), for any P. With p2 the largest power of two ≤ P
//! and rem = P − p2, the first 2·rem ranks fold: each even one sends its buffer
//! to the odd one above it, which combines it (tag 0) and takes part for both.
//! Then the p2 remaining ranks (new rank q) exchange whole buffers with
//! q ⊕ 2^k for k = 0, 1, …, each receiving into Scratch and combining in place
//! after its own send has read the buffer. Finally each odd folded rank sends
//! the result back to its even partner.
//!
//! Every step combines the same two operands on both partners (a ∘ b on one,
//! b ∘ a on the other, equal bits for the commutative operators): all ranks end
//! with identical bits.

use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "allreduce",
    name: "recursive_doubling",
    summary: "exchange whole buffers with rank xor 2^k, log2 P steps (fold for non-powers of two)",
    build,
};

/// The fold of P ranks onto a power of two, shared with Rabenseifner's algorithm.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fold {
    /// Largest power of two ≤ P.
    pub p2: usize,
    /// P − p2: ranks 0..2·rem pair up, the even one of each pair sitting out.
    pub rem: usize,
}

impl Fold {
    pub fn new(p: usize) -> Fold {
        let p2 = 1 << p.ilog2();
        Fold { p2, rem: p - p2 }
    }

    /// The rank's index among the p2 that take part, or None if it sits out.
    pub fn newrank(&self, r: usize) -> Option<usize> {
        if r < 2 * self.rem {
            (r % 2 == 1).then_some(r / 2)
        } else {
            Some(r - self.rem)
        }
    }

    /// The real rank of participant q.
    pub fn real(&self, q: usize) -> u32 {
        (if q < self.rem {
            2 * q + 1
        } else {
            q + self.rem
        }) as u32
    }

    /// log2(p2).
    pub fn steps(&self) -> u32 {
        self.p2.trailing_zeros()
    }
}

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let n = req.count;
    if p == 1 || n == 0 {
        return Ok(s);
    }
    let fold = Fold::new(p);
    let last_tag = 1 + fold.steps();
    let all = Region::output(0, n);
    let tmp = Region::scratch(0, n);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let Some(q) = fold.newrank(r) else {
            // An even folded rank: hand over, get the result back.
            let peer = r as u32 + 1;
            let send = prog.push(
                Op::Send {
                    peer,
                    tag: 0,
                    region: all,
                    route: 0,
                },
                &[],
            );
            prog.push(
                Op::Recv {
                    peer,
                    tag: last_tag,
                    region: all,
                    combine: false,
                },
                &[send],
            );
            continue;
        };
        prog.scratch = n;
        let mut deps: Vec<u32> = Vec::new();
        if r < 2 * fold.rem {
            let peer = r as u32 - 1;
            let recv = prog.push(
                Op::Recv {
                    peer,
                    tag: 0,
                    region: tmp,
                    combine: false,
                },
                &[],
            );
            deps = vec![prog.push(Op::Combine { src: tmp, dst: all }, &[recv])];
        }
        for k in 0..fold.steps() {
            let peer = fold.real(q ^ (1 << k));
            let tag = 1 + k;
            let send = prog.push(
                Op::Send {
                    peer,
                    tag,
                    region: all,
                    route: 0,
                },
                &deps,
            );
            let recv = prog.push(
                Op::Recv {
                    peer,
                    tag,
                    region: tmp,
                    combine: false,
                },
                &deps,
            );
            deps = vec![prog.push(Op::Combine { src: tmp, dst: all }, &[send, recv])];
        }
        if r < 2 * fold.rem {
            prog.push(
                Op::Send {
                    peer: r as u32 - 1,
                    tag: last_tag,
                    region: all,
                    route: 0,
                },
                &deps,
            );
        }
    }
    Ok(s)
}
