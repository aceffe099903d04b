//! Direct scan (SMPI's, its `colls::scan`): every rank sends its data
//! straight to every higher rank and receives every lower rank's, all at
//! once, each into a slot of its own, then combines them into its own data
//! from the next lower rank down. One step of up to P − 1 messages a rank,
//! where the linear scan's chain takes P − 1 steps.

use super::Prefix;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, OpId, Region, Schedule};

// Open MPI's and MPICH's scans go in steps (a chain, recursive doubling):
// no counterpart.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Scan,
    "direct",
    "every rank sends its data straight to every higher rank, all at once",
    build,
);

fn build(req: &Request) -> Result<Schedule> {
    Ok(direct(req, &ALGORITHM, Prefix::Inclusive))
}

/// The direct scan, or exclusive for exscan: there rank r's output is the
/// lower ranks' data alone (rank 0's is not written).
pub(crate) fn direct(req: &Request, alg: &Algorithm, prefix: Prefix) -> Schedule {
    let exclusive = prefix == Prefix::Exclusive;
    let (p, n) = (req.ranks, req.count);
    let mut s = req.schedule(alg);
    let (input, output) = (Region::input(0, n), Region::output(0, n));
    for (r, prog) in s.programs.iter_mut().enumerate() {
        for q in r + 1..p {
            prog.push(Op::send(q as u32, 0, input), &[]);
        }
        prog.scratch = (r as u64).saturating_mul(n);
        let slot = |o: usize| Region::scratch(o as u64 * n, n);
        let got: Vec<OpId> = (0..r)
            .map(|o| prog.push(Op::recv(o as u32, 0, slot(o)), &[]))
            .collect();
        // The rank's own data first (scan), or the next lower rank's
        // (exscan), then each lower rank's down to rank 0: every combine
        // joins the run so far with the rank just below it.
        let (mut last, below) = match (exclusive, got.last()) {
            (false, _) => (prog.push(Op::copy(input, output), &[]), r),
            (true, Some(&next)) => (prog.push(Op::copy(slot(r - 1), output), &[next]), r - 1),
            (true, None) => continue,
        };
        for o in (0..below).rev() {
            last = prog.push(Op::combine(slot(o), output), &[got[o], last]);
        }
    }
    s
}
