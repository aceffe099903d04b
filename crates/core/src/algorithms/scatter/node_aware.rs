//! Node-aware scatter, for nodes of K ranks each (`algorithms::compose`):
//! the root scatters blocks of K to the leaders (`--inter`, default
//! binomial; the root leads its node, the lowest rank the others), and
//! each leader scatters its K blocks inside its node. Where node j does not
//! hold ranks jK..jK+K−1 the root first puts its blocks in node order in
//! scratch.

use crate::algorithms::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::algorithms::{Algorithm, Applies, Counterparts, OpCount, RankNeed, Request};
use crate::algorithms::{RootNeed, TopologyNeed};
use crate::error::Result;
use crate::schedule::{Buf, Collective, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Scatter,
    name: "node_aware",
    summary:
        "scatter among node leaders (--inter, default binomial), then scatter inside each node",
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
    if !direct {
        let mut ops = Vec::new();
        for (j, m) in nodes.members.iter().enumerate() {
            for (t, &r) in m.iter().enumerate() {
                let to = node_blocks + (j * k + t) as u64 * c;
                ops.push(Op::copy(
                    Region::input(r as u64 * c, c),
                    Region::scratch(to, c),
                ));
            }
        }
        cp.reserve(root, base);
        cp.step(root, &ops);
    }
    let top = Collective::Scatter {
        root: nodes.node_of[root] as u32,
    };
    let sub = compose::phase(req, inter.name, top, nodes.count(), node_blocks)?;
    let frame = Frame {
        input: if direct {
            (Buf::Input, 0)
        } else {
            (Buf::Scratch, node_blocks)
        },
        output: (Buf::Scratch, 0),
        scratch: base,
    };
    cp.embed(&sub, &leaders, frame)?;
    for &l in &leaders {
        cp.reserve(l, node_blocks);
    }
    cp.next_phase()?;
    each_node(&nodes, &leaders, |m, lead| {
        let down = Collective::Scatter { root: lead as u32 };
        let sub = compose::phase(req, "linear", down, m.len(), c)?;
        let frame = Frame {
            input: (Buf::Scratch, 0),
            output: (Buf::Output, 0),
            scratch: base,
        };
        cp.embed(&sub, m, frame)
    })?;
    Ok(cp.finish())
}
