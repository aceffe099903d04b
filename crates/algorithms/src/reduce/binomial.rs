//! Binomial-tree reduce (as in MPICH): with v = (r − root) mod P, a rank
//! combines its children v + 1, v + 2, v + 4, … (lower subtree first, a fixed
//! order), then sends to v − lowbit(v). The whole buffer moves in one message
//! unless `--segment` asks for a pipeline.

use crate::pipelined::{self, Phases, Trees};
use crate::Algorithm;
use crate::OpCount;
use topocoll_schedule::CollectiveKind;

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Reduce,
    "binomial",
    "binomial tree: combine children smallest subtree first, then send to the parent",
    build,
)
.stream(stream)
.segmented()
.ops(OpCount::Generated)
.ompi(5, "binomial", "binomial")
.mpich("MPIR_Reduce_intra_binomial");

// A binomial tree to the root, the buffer combined on its way up.
pipelined::algorithm!(Trees::Binomial(None), Phases::Reduce);
