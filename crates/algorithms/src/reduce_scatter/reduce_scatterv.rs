//! SMPI's default reduce_scatter: a linear reduce of the whole buffer to
//! rank 0 (every rank sends it straight to rank 0, which receives them all
//! at once and combines them in rank order, as [`reduce::linear`]), then
//! rank 0 sends each rank its chunk (the standard split), all at once, as
//! SMPI's nonblocking scatterv does. A rank receives its chunk once its
//! own buffer has gone.

use crate::error::Result;
use crate::{reduce, Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{chunk, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::ReduceScatter,
    "reduce_scatterv",
    "a linear reduce to rank 0, which then sends each rank its chunk, all at once",
    build,
);

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let n = req.count;
    let whole = Region::output(0, n);
    let part = |r: usize| {
        let (at, len) = chunk(n, p as u64, r as u64);
        Region::output(at, len)
    };
    for (r, prog) in s.programs.iter_mut().enumerate() {
        if r != 0 {
            let sent = prog.push(Op::send(0, 0, whole), &[]);
            prog.push(Op::recv(0, 1, part(r)), &[sent]);
            continue;
        }
        let reduced: Vec<_> = reduce::linear::gather_and_combine(prog, p, 0, n)
            .into_iter()
            .collect();
        for dst in 1..p {
            prog.push(Op::send(dst as u32, 1, part(dst)), &reduced);
        }
    }
    Ok(s)
}
