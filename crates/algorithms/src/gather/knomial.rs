//! K-nomial-tree gather (`--radix K`, default 4), the k-nomial scatter
//! reversed: each rank collects, in relative order, its own block and its
//! children's subtrees in Scratch, then sends the whole of its subtree to
//! its parent (v less its lowest non-zero base-K digit).

use crate::error::Result;
use crate::{scatter, Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

// Open MPI 4.1 gathers linearly or down a binomial tree, MPICH 4.0 down
// a binomial tree: no k-nomial gather.
pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Gather, "knomial", "k-nomial tree (--radix K, default 4): each rank collects its children's subtrees and sends its own to its parent", build).radix();

fn build(req: &Request) -> Result<Schedule> {
    super::reversed_scatter(req, &ALGORITHM, scatter::knomial::ALGORITHM.build)
}
