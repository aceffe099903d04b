//! Binary-tree broadcast (LAM/MPI's): with relative rank v = (r − root)
//! mod P, a rank receives from (v − 1) / 2, then sends to 2v + 1 and 2v + 2
//! when they are ranks. The sends only wait for the receive; the engines
//! serialise them.

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

// Open MPI's binary_tree is not in heap order (rank 1's children are
// 3 and 5, not 3 and 4): another tree over the ranks.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Bcast,
    "binary",
    "binary tree in heap order (LAM/MPI's): receive from (v-1)/2, send to 2v+1 and 2v+2",
    build,
);

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let root = req.collective.root().unwrap_or(0) as usize;
    let all = Region::output(0, req.count);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        let mut deps = Vec::new();
        if v != 0 {
            let parent = ((v - 1) / 2 + root) % p;
            deps.push(prog.push(Op::recv(parent as u32, 0, all), &[]));
        }
        for child in [2 * v + 1, 2 * v + 2] {
            if child < p {
                prog.push(Op::send(((child + root) % p) as u32, 0, all), &deps);
            }
        }
    }
    Ok(s)
}
