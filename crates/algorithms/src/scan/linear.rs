//! Linear scan: a chain in rank order. Rank 0 sends its data to rank 1;
//! rank r receives in_0 ∘ … ∘ in_(r−1) from rank r − 1, combines its own
//! data into it and sends the result to rank r + 1. P − 1 steps one after
//! the other; the bracketing is ((in_0 ∘ in_1) ∘ in_2) ∘ …, which is
//! Open MPI's `linear` scan and exscan.

use super::Prefix;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Scan,
    "linear",
    "chain 0 -> 1 -> ... -> P-1, each rank combining its data into what it received",
    build,
)
.ompi(1, "linear", "linear");

fn build(req: &Request) -> Result<Schedule> {
    Ok(chain(req, &ALGORITHM, Prefix::Inclusive))
}

/// The chain for scan, or exclusive for exscan: there rank r keeps what it
/// received (in_0 ∘ … ∘ in_(r−1)) and sends on, from Scratch, that
/// combined with its own data; rank 0's output is not written.
pub(crate) fn chain(req: &Request, alg: &Algorithm, prefix: Prefix) -> Schedule {
    let exclusive = prefix == Prefix::Exclusive;
    let (p, n) = (req.ranks, req.count);
    let mut s = req.schedule(alg);
    let (input, output) = (Region::input(0, n), Region::output(0, n));
    for r in 0..p {
        let next = (r + 1 < p).then_some(r as u32 + 1);
        let prog = &mut s.programs[r];
        if r == 0 {
            if exclusive {
                if let Some(q) = next {
                    prog.push(Op::send(q, 0, input), &[]);
                }
            } else {
                let own = prog.push(Op::copy(input, output), &[]);
                if let Some(q) = next {
                    prog.push(Op::send(q, 0, output), &[own]);
                }
            }
            continue;
        }
        let got = prog.push(Op::recv(r as u32 - 1, 0, output), &[]);
        let Some(q) = next else {
            if !exclusive {
                prog.push(Op::combine(input, output), &[got]);
            }
            continue;
        };
        if exclusive {
            prog.scratch = n;
            let tmp = Region::scratch(0, n);
            let c = prog.push(Op::copy(output, tmp), &[got]);
            let c = prog.push(Op::combine(input, tmp), &[c]);
            prog.push(Op::send(q, 0, tmp), &[c]);
        } else {
            let c = prog.push(Op::combine(input, output), &[got]);
            prog.push(Op::send(q, 0, output), &[c]);
        }
    }
    s
}
