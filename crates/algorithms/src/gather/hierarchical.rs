//! MagPIe-style hierarchical gather across the sites of a grid, the
//! hierarchical scatter reversed: the WAN is crossed once per remote site.
//! Every site gathers along a binomial tree to its coordinator (its first
//! rank; the root in the root's site), and each coordinator sends its
//! site's blocks to the root in one message.

use crate::error::Result;
use crate::{scatter, Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Gather,
    "hierarchical",
    "grid of sites (MagPIe): binomial trees inside the sites, then one WAN message per remote site",
    build,
)
.applies(Applies {
    topology: TopologyNeed::Sites,
    ranks: RankNeed::Any,
    root: RootNeed::Any,
});

fn build(req: &Request) -> Result<Schedule> {
    super::reversed_scatter(req, &ALGORITHM, scatter::hierarchical::ALGORITHM.build)
}
