//! Binomial-tree gather (MPICH's), the binomial scatter reversed: with
//! relative rank v = (r − root) mod P, a rank collects in Scratch, in
//! relative order, its own block and its children's subtrees (child v + m
//! for m = 1, 2, 4, … below lowbit(v), smallest first), then sends the
//! whole of its subtree to v − lowbit(v). The root copies the collected
//! blocks into its output rotated back (it collects straight into its
//! output when it is rank 0).

use crate::error::Result;
use crate::{scatter, Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Gather, "binomial", "binomial tree: each rank collects its children's subtrees, smallest first, and sends its own to its parent", build).ompi(2, "binomial", "binomial");

fn build(req: &Request) -> Result<Schedule> {
    super::reversed_scatter(req, &ALGORITHM, scatter::binomial::ALGORITHM.build)
}
