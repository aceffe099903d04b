//! Linear gather (what MPI libraries do for small counts), the linear
//! scatter reversed: every rank sends its block to the root, which receives
//! them from root−1, root−2, … and copies its own last.

use crate::{scatter, Algorithm, Request};
use crate::{Applies, Counterparts, Ompi, OpCount};
use topocoll_base::error::Result;
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Gather,
    name: "linear",
    summary: "every rank sends its block straight to the root",
    build,
    stream: None,
    segmented: false,
    lanes: false,
    radix: false,
    applies: Applies::ANYWHERE,
    ops: OpCount::Unbounded,
    mpi: Counterparts {
        ompi: Some(Ompi {
            id: 1,
            name: "basic_linear",
            function: "basic_linear",
        }),
        mpich: None,
    },
};

fn build(req: &Request) -> Result<Schedule> {
    super::reversed_scatter(req, ALGORITHM.name, scatter::linear::ALGORITHM.build)
}
