//! Binomial-tree reduce (as in MPICH): with v = (r − root) mod P, a rank
//! combines its children v + 1, v + 2, v + 4, … (lower subtree first, a fixed
//! order), then sends to v − lowbit(v). The whole buffer moves in one message
//! unless `--segment` asks for a pipeline.

use crate::algorithms::trees::binomial_tree;
use crate::algorithms::{pipelined, Algorithm, Request, Stream};
use crate::algorithms::{Applies, Counterparts, Ompi, OpCount};
use crate::error::Result;
use crate::schedule::CollectiveKind;
use crate::schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Reduce,
    name: "binomial",
    summary: "binomial tree: combine children smallest subtree first, then send to the parent",
    build,
    stream: Some(stream),
    segmented: true,
    lanes: false,
    applies: Applies::ANYWHERE,
    ops: OpCount::Generated,
    mpi: Counterparts {
        ompi: Some(Ompi {
            id: 5,
            name: "binomial",
            function: "binomial",
        }),
        mpich: Some("MPIR_Reduce_intra_binomial"),
    },
};

fn build(req: &Request) -> Result<Schedule> {
    plan(req)?.materialise()
}

fn stream(req: &Request) -> Result<Stream> {
    Ok(Stream::Pipeline(plan(req)?.stream()?))
}

fn plan(req: &Request) -> Result<pipelined::Plan> {
    let root = req.collective.root().unwrap_or(0) as usize;
    let tree = binomial_tree(req.ranks, root)?;
    pipelined::single_tree(req, ALGORITHM.name, tree, true, false, None)
}
