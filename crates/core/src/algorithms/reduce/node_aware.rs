//! Node-aware reduce, for ranks that share nodes: each node reduces to its
//! leader down a binomial tree (the root leads its own node, the lowest
//! rank the others), then the leaders reduce to the root with the
//! `--inter` algorithm (default binomial) (`algorithms::compose`).

use crate::algorithms::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::algorithms::{Algorithm, Applies, Counterparts, OpCount, RankNeed, Request};
use crate::algorithms::{RootNeed, TopologyNeed};
use crate::error::Result;
use crate::schedule::{Collective, CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Reduce,
    name: "node_aware",
    summary: "binomial reduce to each node's leader, then reduce among leaders (--inter, default binomial)",
    build,
    stream: None,
    segmented: false,
    lanes: false,
    radix: false,
    applies: Applies {
        topology: TopologyNeed::Nodes(NodeNeed::Shared),
        ranks: RankNeed::Any,
        root: RootNeed::Any,
    },
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

/// The leaders' default algorithm.
pub const INTER: &str = "binomial";

fn build(req: &Request) -> Result<Schedule> {
    let nodes = compose::nodes(req, ALGORITHM.name, NodeNeed::Shared)?;
    let inter = compose::inter(req, INTER)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let leaders = nodes.leaders(Some(root));
    let n = req.count;
    let mut c = Composer::new(req, ALGORITHM.name);
    each_node(&nodes, &leaders, |m, lead| {
        let up = Collective::Reduce { root: lead as u32 };
        let sub = compose::phase(req, "binomial", up, m.len(), n)?;
        c.embed(&sub, m, Frame::SAME)
    })?;
    c.next_phase()?;
    let top = Collective::Reduce {
        root: nodes.node_of[root] as u32,
    };
    let sub = compose::phase(req, inter.name, top, nodes.count(), n)?;
    c.embed(&sub, &leaders, Frame::SAME)?;
    Ok(c.finish())
}
