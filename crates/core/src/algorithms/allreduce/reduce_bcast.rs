//! Reduce + broadcast on a binomial tree rooted at rank 0 (the allreduce
//! paper's §2.2.1 baseline), pipelined in `--segment` pieces (default 64 KiB):
//! a segment is combined up the tree (children smallest subtree first, a fixed
//! order) and starts back down as soon as the root has it.

use crate::algorithms::pipelined::DEFAULT_SEGMENT_BYTES;
use crate::algorithms::trees::binomial_tree;
use crate::algorithms::{pipelined, Algorithm, Request, Stream};
use crate::algorithms::{Applies, Counterparts, Ompi, OpCount};
use crate::error::Result;
use crate::schedule::CollectiveKind;
use crate::schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Allreduce,
    name: "reduce_bcast",
    summary: "binomial reduce then binomial bcast from rank 0, pipelined in segments",
    build,
    stream: Some(stream),
    segmented: true,
    lanes: false,
    applies: Applies::ANYWHERE,
    ops: OpCount::Generated,
    mpi: Counterparts {
        ompi: Some(Ompi {
            id: 2,
            name: "nonoverlapping",
            function: "nonoverlapping",
        }),
        mpich: None,
    },
};

fn build(req: &Request) -> Result<Schedule> {
    plan(req)?.materialise()
}

fn stream(req: &Request) -> Result<Stream> {
    Ok(Stream::Pipeline(plan(req)?.stream()?))
}

fn plan(req: &Request) -> Result<pipelined::Plan> {
    let tree = binomial_tree(req.ranks, 0)?;
    pipelined::single_tree(
        req,
        ALGORITHM.name,
        tree,
        true,
        true,
        Some(DEFAULT_SEGMENT_BYTES),
    )
}
