//! Node-aware gather, for nodes of K ranks each (`algorithms::compose`):
//! each node gathers its K blocks to its leader (the root in its node, the
//! lowest rank in the others), and the leaders gather blocks of K to the
//! root (`--inter`, default binomial). Where node j does not hold ranks
//! jK..jK+K−1 the root gathers into scratch and puts the blocks in rank
//! order.

use crate::algorithms::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::algorithms::{Algorithm, Applies, Counterparts, OpCount, RankNeed, Request};
use crate::algorithms::{RootNeed, TopologyNeed};
use crate::error::Result;
use crate::schedule::{Buf, Collective, CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Gather,
    name: "node_aware",
    summary: "gather to each node's leader, then gather among leaders to the root (--inter, default binomial)",
    build,
    stream: None,
    segmented: false,
    lanes: false,
    radix: false,
    applies: Applies {
        topology: TopologyNeed::Nodes(NodeNeed::Equal),
        ranks: RankNeed::Any,
        root: RootNeed::Any,
    },
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

/// The leaders' default algorithm.
pub const INTER: &str = "binomial";

fn build(req: &Request) -> Result<Schedule> {
    let nodes = compose::nodes(req, ALGORITHM.name, NodeNeed::Equal)?;
    let inter = compose::inter(req, INTER)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let leaders = nodes.leaders(Some(root));
    let (k, c, p) = (nodes.per_node(), req.count, req.ranks);
    let direct = nodes.contiguous();
    let node_blocks = k as u64 * c;
    let base = node_blocks + if direct { 0 } else { p as u64 * c };
    let mut cp = Composer::new(req, ALGORITHM.name);
    each_node(&nodes, &leaders, |m, lead| {
        let up = Collective::Gather { root: lead as u32 };
        let sub = compose::phase(req, "linear", up, m.len(), c)?;
        let frame = Frame {
            input: (Buf::Input, 0),
            output: (Buf::Scratch, 0),
            scratch: base,
        };
        cp.embed(&sub, m, frame)
    })?;
    cp.next_phase()?;
    let top = Collective::Gather {
        root: nodes.node_of[root] as u32,
    };
    let sub = compose::phase(req, inter.name, top, nodes.count(), node_blocks)?;
    let frame = Frame {
        input: (Buf::Scratch, 0),
        output: if direct {
            (Buf::Output, 0)
        } else {
            (Buf::Scratch, node_blocks)
        },
        scratch: base,
    };
    cp.embed(&sub, &leaders, frame)?;
    for &l in &leaders {
        cp.reserve(l, node_blocks);
    }
    if !direct {
        cp.reserve(root, base);
        let ops = crate::algorithms::allgather::node_aware::to_rank_order(&nodes, c, node_blocks);
        cp.step(root, &ops);
    }
    Ok(cp.finish())
}
