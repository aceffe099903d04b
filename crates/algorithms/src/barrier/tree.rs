//! Tree barrier: a binomial tree rooted at rank 0 (rank r's children are
//! r + 2^k for every 2^k below r's lowest set bit). Fan-in: a rank receives
//! a zero-byte message from each child, in increasing 2^k, then sends one to
//! its parent; release: it receives from its parent, then sends to its
//! children in decreasing 2^k. Each operation waits on the one before it
//! (blocking calls), which is Open MPI's `tree` barrier.

use super::NOTHING;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, OpId, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Barrier,
    "tree",
    "binomial fan-in to rank 0, then binomial release; zero-byte messages",
    build,
)
.ompi(6, "tree", "tree");

/// Fan-in tag; the release is tag 1.
const UP: u32 = 0;
const DOWN: u32 = 1;

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    let mut s = req.schedule(&ALGORITHM);
    // The jumps 2^k < P, smallest first.
    let jumps: Vec<usize> = (0..usize::BITS)
        .map(|k| 1usize << k)
        .take_while(|&j| j < p)
        .collect();
    for r in 0..p {
        // Partners at jump j: ranks whose bits below j are clear.
        let partner = |j: usize| {
            let q = r ^ j;
            (q & (j - 1) == 0 && q < p).then_some(q)
        };
        let prog = &mut s.programs[r];
        let mut prev: Option<OpId> = None;
        let mut push = |prog: &mut topocoll_schedule::Program, op: Op| {
            let deps: Vec<OpId> = prev.into_iter().collect();
            prev = Some(prog.push(op, &deps));
        };
        for &j in &jumps {
            match partner(j) {
                Some(q) if q > r => push(prog, Op::recv(q as u32, UP, NOTHING)),
                Some(q) if q < r => push(prog, Op::send(q as u32, UP, NOTHING)),
                _ => {}
            }
        }
        for &j in jumps.iter().rev() {
            match partner(j) {
                Some(q) if q > r => push(prog, Op::send(q as u32, DOWN, NOTHING)),
                Some(q) if q < r => push(prog, Op::recv(q as u32, DOWN, NOTHING)),
                _ => {}
            }
        }
    }
    Ok(s)
}
