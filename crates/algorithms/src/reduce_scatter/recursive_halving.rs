//! Recursive-halving reduce-scatter (MPICH's for commutative operators), the
//! recursive-doubling allgather reversed, for any P. With p2 the largest
//! power of two ≤ P and rem = P − p2, the first 2·rem ranks pair up: each
//! even one sends its buffer to the odd one above it, which
//! receive-combines it in place and takes part for both. The p2
//! participants (new rank q, standing for a group of one or two
//! consecutive ranks and so for their chunks, a contiguous range) halve:
//! for mask = p2/2, …, 1, q sends the half of its range of groups on the
//! other side of bit `mask` to q ⊕ mask and receive-combines the partner's
//! copy of the half it keeps. q then holds its group's chunks reduced, and
//! hands the even rank of a pair its chunk. The order of every combination
//! is fixed by the schedule.

use crate::error::Result;
use crate::{allgather, Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::ReduceScatter,
    "recursive_halving",
    "halve the range held with rank xor 2^k, log2 P steps (pairs fold for non-powers of two)",
    build,
)
.ompi(3, "recursive_halving", "recursivehalving")
.mpich("MPIR_Reduce_scatter_block_intra_recursive_halving");

fn build(req: &Request) -> Result<Schedule> {
    super::reversed_allgather(
        req,
        &ALGORITHM,
        allgather::recursive_doubling::ALGORITHM.build,
    )
}
