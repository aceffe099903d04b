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

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Program, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allreduce,
    "recursive_doubling",
    "exchange whole buffers with rank xor 2^k, log2 P steps (fold for non-powers of two)",
    build,
)
.ompi(3, "recursive_doubling", "recursivedoubling")
.mpich("MPIR_Allreduce_intra_recursive_doubling");

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

    /// A rank that sits out (`newrank` is None): it hands its whole buffer to
    /// its odd neighbour (tag 0) and gets the result back (tag `last_tag`).
    pub fn sit_out(&self, prog: &mut Program, r: usize, n: u64, last_tag: u32) {
        let (peer, all) = (r as u32 + 1, Region::output(0, n));
        let send = prog.push(Op::send(peer, 0, all), &[]);
        prog.push(Op::recv(peer, last_tag, all), &[send]);
    }

    /// A participant whose even neighbour sits out first takes in that
    /// neighbour's buffer (through Scratch[0..n]) and combines it; returns the
    /// ops the rest must wait for (none for other ranks).
    pub fn absorb(&self, prog: &mut Program, r: usize, n: u64) -> Vec<u32> {
        if r >= 2 * self.rem {
            return Vec::new();
        }
        let (whole, all) = (Region::scratch(0, n), Region::output(0, n));
        let recv = prog.push(Op::recv(r as u32 - 1, 0, whole), &[]);
        vec![prog.push(Op::combine(whole, all), &[recv])]
    }

    /// A participant with a neighbour that sat out gives it the result.
    pub fn give_back(&self, prog: &mut Program, r: usize, n: u64, last_tag: u32, deps: &[u32]) {
        if r < 2 * self.rem {
            let region = Region::output(0, n);
            prog.push(Op::send(r as u32 - 1, last_tag, region), deps);
        }
    }
}

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
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
            fold.sit_out(prog, r, n, last_tag);
            continue;
        };
        prog.scratch = n;
        let mut deps = fold.absorb(prog, r, n);
        for k in 0..fold.steps() {
            let peer = fold.real(q ^ (1 << k));
            let tag = 1 + k;
            let send = prog.push(Op::send(peer, tag, all), &deps);
            let recv = prog.push(Op::recv(peer, tag, tmp), &deps);
            deps = vec![prog.push(Op::combine(tmp, all), &[send, recv])];
        }
        fold.give_back(prog, r, n, last_tag, &deps);
    }
    Ok(s)
}
