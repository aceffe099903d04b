//! Bruck's allgather, for any P: rank r keeps the blocks of ranks r, r+1, …
//! (mod P) in that order in Scratch; in step k it sends the first
//! min(2^k, P − 2^k) of them to r − 2^k and receives as many from r + 2^k
//! after its own 2^k. ⌈log2 P⌉ steps; a final rotation puts every block in
//! its place in the output.

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allgather,
    "bruck",
    "Bruck: ceil(log2 P) steps, step k sending 2^k blocks to rank r-2^k (any P)",
    build,
)
.ompi(2, "bruck", "bruck")
.mpich("MPIR_Allgather_intra_brucks");

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let c = req.count;
    let tmp = |j: usize, k: usize| Region::scratch(j as u64 * c, k as u64 * c);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.scratch = p as u64 * c;
        let mut done: Vec<OpId> = vec![prog.push(Op::copy(Region::input(0, c), tmp(0, 1)), &[])];
        let mut have = 1;
        let mut tag = 0;
        while have < p {
            let k = have.min(p - have);
            prog.push(
                Op::send(((r + p - have % p) % p) as u32, tag, tmp(0, k)),
                &done,
            );
            done.push(prog.push(Op::recv(((r + have) % p) as u32, tag, tmp(have, k)), &[]));
            have += k;
            tag += 1;
        }
        // Block j of Scratch is rank (r + j) mod P's.
        let first = p - r;
        prog.push(
            Op::copy(
                tmp(0, first),
                Region::output(r as u64 * c, first as u64 * c),
            ),
            &done,
        );
        if r > 0 {
            prog.push(
                Op::copy(tmp(first, r), Region::output(0, r as u64 * c)),
                &done,
            );
        }
    }
    Ok(s)
}
