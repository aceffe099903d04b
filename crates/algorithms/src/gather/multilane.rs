//! Multi-lane gather across the sites of a grid, the multi-lane scatter
//! reversed (`model::multilane` has its lanes). Each lane's receiving
//! representative, the first rank of its run, collects the run's blocks;
//! the run crosses the WAN as one message to the lane's representative in
//! the root's site, which hands it to the root over the LAN (the root
//! takes its own lanes straight from the WAN; a representative sends its
//! lane's run before its own block); the rest of the root's site sends the
//! root their blocks. `single_lane` is the same with one lane per remote
//! site.

use crate::error::Result;
use crate::{scatter, Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Gather, "multilane", "grid of sites: P runs of blocks per remote site cross the WAN to the root's site at once (--lanes N|auto)", build).lanes().applies(Applies {
        topology: TopologyNeed::Sites,
        ranks: RankNeed::Any,
        root: RootNeed::Any,
    });

pub const SINGLE_LANE: Algorithm = Algorithm::new(
    CollectiveKind::Gather,
    "single_lane",
    "grid of sites: each remote site's blocks cross the WAN to the root's site in one run",
    build_single,
)
.applies(Applies {
    topology: TopologyNeed::Sites,
    ranks: RankNeed::Any,
    root: RootNeed::Any,
});

fn build(req: &Request) -> Result<Schedule> {
    super::reversed_scatter(req, &ALGORITHM, scatter::multilane::ALGORITHM.build)
}

fn build_single(req: &Request) -> Result<Schedule> {
    super::reversed_scatter(req, &SINGLE_LANE, scatter::multilane::SINGLE_LANE.build)
}
