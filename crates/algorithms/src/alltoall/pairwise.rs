//! Pairwise exchange, exactly SimGrid's alltoall `pair`
//! (`alltoall-pair.cpp`): P must be a power of two; in step i = 0..P−1 rank r
//! does a send-receive with partner r XOR i (send its block for the partner,
//! receive the partner's block for it). Step 0 is the self block, a local copy
//! that costs nothing in SimGrid (it does not hold step 1 back here either).
//! Each step's send and receive start together (isend + irecv) and the next
//! step waits for both (waitall); there is no barrier. Tag = step.

use super::stepped_exchange;
use crate::error::Result;
use crate::{Algorithm, Request};
use crate::{Applies, OpCount, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Alltoall, "pairwise", "SimGrid's pair: step i = 1..P-1 send-receive with rank XOR i (P a power of two)", build).applies(Applies { topology: TopologyNeed::Any, ranks: RankNeed::PowerOfTwo("partners are rank XOR step, which needs a power-of-two rank count, not {p} (as in SimGrid)"), root: RootNeed::Any }).ops(OpCount::PerPair)
// MPICH's pairwise exchanges with rank xor step on 2^k ranks (topocoll's
// pairwise) and with rank ± step otherwise (topocoll's ring).
.mpich("MPIR_Alltoall_intra_pairwise");

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    if !p.is_power_of_two() {
        // SimGrid throws "alltoall pair algorithm can't be used with non power
        // of two number of processes!" and has no fallback.
        return Err(req.unsupported(
            &ALGORITHM,
            format!("partners are rank XOR step, which needs a power-of-two rank count, not {p} (as in SimGrid)"),
        ));
    }
    Ok(stepped_exchange(req, &ALGORITHM, |r, step| {
        (r ^ step, r ^ step)
    }))
}
