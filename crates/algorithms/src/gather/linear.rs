//! Linear gather (what MPI libraries do for small counts), the linear
//! scatter reversed: every rank sends its block to the root, which receives
//! them from root−1, root−2, … and copies its own last.

use crate::error::Result;
use crate::{scatter, Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Gather,
    "linear",
    "every rank sends its block straight to the root",
    build,
)
.ompi(1, "basic_linear", "basic_linear");

fn build(req: &Request) -> Result<Schedule> {
    super::reversed_scatter(req, &ALGORITHM, scatter::linear::ALGORITHM.build)
}
