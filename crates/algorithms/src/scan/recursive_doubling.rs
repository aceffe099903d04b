//! Recursive-doubling scan (Hillis and Steele's prefix sum as MPICH runs
//! it): each rank keeps a partial result, the reduction of its aligned
//! block of 2^k ranks. In step k it exchanges that partial with rank
//! r ⊕ 2^k (when that is a rank), receives into Scratch and combines what it
//! received into its partial; a rank above its partner also combines it
//! into its result. ⌈log2 P⌉ steps; the bracketing joins aligned blocks:
//! rank r's result is built from its own data outwards, one lower block per
//! step. MPICH's and Open MPI's recursive-doubling scan and exscan send
//! these messages.

use super::Prefix;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Scan,
    "recursive_doubling",
    "exchange partial reductions with rank xor 2^k, ceil(log2 P) steps (Hillis-Steele)",
    build,
)
.ompi(2, "recursive_doubling", "recursivedoubling")
.mpich("MPIR_Scan_intra_recursive_doubling");

fn build(req: &Request) -> Result<Schedule> {
    Ok(doubling(req, &ALGORITHM, Prefix::Inclusive))
}

/// Recursive doubling for scan, or exclusive for exscan: there the result
/// starts empty (the first block received is copied into it) and rank 0's
/// output is not written.
pub(crate) fn doubling(req: &Request, alg: &Algorithm, prefix: Prefix) -> Schedule {
    let exclusive = prefix == Prefix::Exclusive;
    let (p, n) = (req.ranks, req.count);
    let mut s = req.schedule(alg);
    let (input, output) = (Region::input(0, n), Region::output(0, n));
    let (partial, tmp) = (Region::scratch(0, n), Region::scratch(n, n));
    for r in 0..p {
        let prog = &mut s.programs[r];
        prog.scratch = 2 * n;
        let mut partial_at = prog.push(Op::copy(input, partial), &[]);
        // The last op that wrote the result, and the ops that read Scratch's tmp.
        let mut result_at = (!exclusive).then(|| prog.push(Op::copy(input, output), &[]));
        let mut tmp_read: Vec<OpId> = Vec::new();
        let mut mask = 1usize;
        let mut step = 0u32;
        while mask < p {
            let dst = r ^ mask;
            if dst < p {
                let snd = prog.push(Op::send(dst as u32, step, partial), &[partial_at]);
                let rcv = prog.push(Op::recv(dst as u32, step, tmp), &tmp_read);
                partial_at = prog.push(Op::combine(tmp, partial), &[snd, rcv]);
                tmp_read = vec![partial_at];
                if r > dst {
                    let into = match result_at {
                        Some(w) => prog.push(Op::combine(tmp, output), &[rcv, w]),
                        None => prog.push(Op::copy(tmp, output), &[rcv]),
                    };
                    result_at = Some(into);
                    tmp_read.push(into);
                }
            }
            mask <<= 1;
            step += 1;
        }
    }
    s
}
