//! K-nomial-tree scatter, the binomial scatter with radix K (`--radix`,
//! default 4; K = 2 is `binomial`): with relative rank v = (r − root) mod P
//! written in base K, a rank receives from v less its lowest non-zero digit
//! the blocks of its subtree, relative ranks v … v + K^t − 1 (t its
//! trailing zero digits, cut at P), into Scratch in relative order, then
//! sends each child v + j·K^i (i < t, 1 ≤ j < K; highest i first, lower j
//! first) the blocks of the child's subtree, and keeps its own. A larger K
//! makes the tree shallower (⌈log_K P⌉ rounds) and the root's fan-out
//! wider ((K − 1)·⌈log_K P⌉ sends).

use crate::error::Result;
use crate::{Algorithm, Request, DEFAULT_RADIX};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

// Neither Open MPI 4.1 (binomial, linear, linear_nb) nor MPICH 4.0
// (binomial) scatters down a k-nomial tree.
pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Scatter, "knomial", "k-nomial tree (--radix K, default 4): each rank receives its subtree's blocks and passes on its children's", build).radix();

fn build(req: &Request) -> Result<Schedule> {
    let k = req.radix.unwrap_or(DEFAULT_RADIX);
    super::binomial::build_radix(req, &ALGORITHM, k)
}
