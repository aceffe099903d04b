//! Trinaryx3 broadcast (the allreduce paper, §4.1): the buffer split in three
//! (two on a 2D torus; one part per dimension of size > 1), each part pipelined
//! in segments down its own edge-disjoint spanning tree of the torus (see
//! `algorithms::trees`). Every hop is between torus neighbours and the trees
//! share no link, so the three streams never collide. A node forwards each
//! segment to its children deepest subtree first (the reverse of the reduction
//! order, §4.2). Segments: `--segment`, default 64 KiB.

use crate::algorithms::{pipelined, Algorithm, Request, Stream};
use crate::algorithms::{Applies, Counterparts, OpCount, RankNeed, RootNeed, TopologyNeed};
use crate::error::Result;
use crate::schedule::CollectiveKind;
use crate::schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Bcast,
    name: "trinaryx3",
    summary: "Trinaryx3: 3 edge-disjoint torus trees (2 on 2D), message split in 3, pipelined in segments",
    build,
    stream: Some(stream),
    segmented: true,
    lanes: false,
    applies: Applies { topology: TopologyNeed::Torus, ranks: RankNeed::Any, root: RootNeed::Any },
    ops: OpCount::Generated,
    mpi: Counterparts::NONE,
};

fn build(req: &Request) -> Result<Schedule> {
    plan(req)?.materialise()
}

fn stream(req: &Request) -> Result<Stream> {
    Ok(Stream::Pipeline(plan(req)?.stream()?))
}

fn plan(req: &Request) -> Result<pipelined::Plan> {
    let root = req.collective.root().unwrap_or(0) as usize;
    pipelined::trinaryx3(req, ALGORITHM.name, root, false, true)
}
