//! Pipelined chain broadcast: root → root+1 → … → root−1 (mod P), the buffer
//! cut in `--segment` pieces (default 64 KiB) that follow each other down the
//! chain, each rank forwarding a segment as soon as it has it.

use crate::algorithms::pipelined::DEFAULT_SEGMENT_BYTES;
use crate::algorithms::trees::chain_tree;
use crate::algorithms::{pipelined, Algorithm, Request, Stream};
use crate::algorithms::{Applies, Counterparts, Ompi, OpCount};
use crate::error::Result;
use crate::schedule::CollectiveKind;
use crate::schedule::Schedule;

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Bcast,
    name: "pipeline",
    summary: "chain root -> root+1 -> ..., pipelined in segments (default 64 KiB)",
    build,
    stream: Some(stream),
    segmented: true,
    lanes: false,
    applies: Applies::ANYWHERE,
    ops: OpCount::Generated,
    mpi: Counterparts {
        ompi: Some(Ompi {
            id: 3,
            name: "pipeline",
            function: "pipeline",
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
    let root = req.collective.root().unwrap_or(0) as usize;
    let tree = chain_tree(req.ranks, root)?;
    pipelined::single_tree(
        req,
        ALGORITHM.name,
        tree,
        false,
        true,
        Some(DEFAULT_SEGMENT_BYTES),
    )
}
