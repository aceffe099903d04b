//! Linear barrier: every other rank sends rank 0 a zero-byte message and
//! waits for one back; rank 0 receives them all at once, then answers them
//! all at once. Two message latencies whatever the rank count, and P−1
//! messages into and out of rank 0: Open MPI's `basic_linear` barrier, and
//! SMPI's default.

use super::NOTHING;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, OpId, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Barrier,
    "linear",
    "every rank sends to rank 0 and waits; rank 0 answers all once all have come in",
    build,
)
.ompi(1, "linear", "basic_linear");

/// Tag of the messages into rank 0; its answers are tag 1.
const IN: u32 = 0;
const OUT: u32 = 1;

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    let mut s = req.schedule(&ALGORITHM);
    let ins: Vec<OpId> = (1..p)
        .map(|q| s.programs[0].push(Op::recv(q as u32, IN, NOTHING), &[]))
        .collect();
    for q in 1..p {
        s.programs[0].push(Op::send(q as u32, OUT, NOTHING), &ins);
    }
    for r in 1..p {
        let prog = &mut s.programs[r];
        let up = prog.push(Op::send(0, IN, NOTHING), &[]);
        prog.push(Op::recv(0, OUT, NOTHING), &[up]);
    }
    Ok(s)
}
