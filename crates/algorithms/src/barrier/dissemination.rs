//! Dissemination barrier (Hensgen, Finkel and Manber 1988): in round k every
//! rank sends a zero-byte message to rank + 2^k and receives one from
//! rank − 2^k (mod P), ⌈log2 P⌉ rounds, each round waiting on the previous
//! one's send and receive. After round k a rank has heard, directly or not,
//! from the 2^(k+1) − 1 ranks below it, so after the last from all of them.
//! Open MPI's `bruck` barrier and MPICH's dissemination barrier send these
//! messages.

use super::NOTHING;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, OpId, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Barrier,
    "dissemination",
    "round k: zero-byte message to rank+2^k, from rank-2^k (mod P), ceil(log2 P) rounds",
    build,
)
.ompi(4, "bruck", "bruck")
.mpich("MPIR_Barrier_intra_dissemination");

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let members: Vec<usize> = (0..req.ranks).collect();
    let after = vec![Vec::new(); req.ranks];
    disseminate(&mut s, &members, 0, &after);
    Ok(s)
}

/// Dissemination among `members` (ranks, in their order), round k tagged
/// `tag0 + k`; member i's first round waits on `after[i]`. Returns each
/// member's last operations (its last round's send and receive, or
/// `after[i]` when there is one member).
pub(crate) fn disseminate(
    s: &mut Schedule,
    members: &[usize],
    tag0: u32,
    after: &[Vec<OpId>],
) -> Vec<Vec<OpId>> {
    let n = members.len();
    let mut last: Vec<Vec<OpId>> = after.to_vec();
    let mut dist = 1;
    let mut round = 0;
    while dist < n {
        for (i, &me) in members.iter().enumerate() {
            let to = members[(i + dist) % n] as u32;
            let from = members[(i + n - dist) % n] as u32;
            let prog = &mut s.programs[me];
            let snd = prog.push(Op::send(to, tag0 + round, NOTHING), &last[i]);
            let rcv = prog.push(Op::recv(from, tag0 + round, NOTHING), &last[i]);
            last[i] = vec![snd, rcv];
        }
        dist *= 2;
        round += 1;
    }
    last
}
