//! Linear reduce (SMPI's default reduce, its nonblocking `ireduce`): every
//! rank sends its whole buffer straight to the root, which posts all its
//! receives at once, each into a slot of its own, and combines them into its
//! own buffer in rank order as they arrive.

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, OpId, Program, Region, Schedule};

// Open MPI's basic_linear receives one message after another (a blocking
// receive each, from the last rank down), not all at once: no counterpart.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Reduce,
    "linear",
    "every rank sends its buffer straight to the root, which receives them all at once",
    build,
);

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let (p, c) = (req.ranks, req.count);
    let root = req.collective.root().unwrap_or(0) as usize;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        if r == root {
            gather_and_combine(prog, p, root, c);
        } else {
            prog.push(Op::send(root as u32, 0, Region::output(0, c)), &[]);
        }
    }
    Ok(s)
}

/// The root's part of the linear reduce of `c` elements on `p` ranks: a
/// receive (tag 0) from every other rank posted at once, slot k of the
/// scratch holding the k-th sender's buffer, each combined into the
/// output after the one before. Returns the last combine (none on one
/// rank), which the reduced buffer is ready after.
pub(crate) fn gather_and_combine(
    prog: &mut Program,
    p: usize,
    root: usize,
    c: u64,
) -> Option<OpId> {
    prog.scratch = prog.scratch.max((p as u64 - 1).saturating_mul(c));
    let mut last = None;
    for (k, src) in (0..p).filter(|&src| src != root).enumerate() {
        let slot = Region::scratch(k as u64 * c, c);
        let got = prog.push(Op::recv(src as u32, 0, slot), &[]);
        let deps: Vec<_> = std::iter::once(got).chain(last).collect();
        last = Some(prog.push(Op::combine(slot, Region::output(0, c)), &deps));
    }
    last
}
