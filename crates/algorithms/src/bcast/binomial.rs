//! Binomial-tree broadcast (as in MPICH and SimGrid's `binomial_tree`): with
//! relative rank v = (r − root) mod P, a rank receives from v − lowbit(v), then
//! sends to v + m for m = lowbit(v)/2, ..., 2, 1 (largest subtree first) when
//! v + m < P. The sends only wait for the receive; the engines serialise them.

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Bcast,
    "binomial",
    "binomial tree: receive from the parent, then send to children, largest subtree first",
    build,
)
// Open MPI's binomial bcast hangs rank v under v with its highest bit
// cleared (3 under 1), this tree under v with its lowest (3 under 2),
// as MPICH's does.
.mpich("MPIR_Bcast_intra_binomial");

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let root = req.collective.root().unwrap_or(0) as usize;
    let all = Region::output(0, req.count);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        // lowbit(v) for v > 0; the root's "low bit" is the first power of two ≥ P.
        let low = if v == 0 {
            p.next_power_of_two()
        } else {
            1 << v.trailing_zeros()
        };
        let mut deps = Vec::new();
        if v != 0 {
            let parent = (v - low + root) % p;
            deps.push(prog.push(Op::recv(parent as u32, 0, all), &[]));
        }
        let mut m = low >> 1;
        while m > 0 {
            if v + m < p {
                let child = (v + m + root) % p;
                prog.push(Op::send(child as u32, 0, all), &deps);
            }
            m >>= 1;
        }
    }
    Ok(s)
}
