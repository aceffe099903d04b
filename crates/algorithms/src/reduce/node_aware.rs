//! Node-aware reduce, for ranks that share nodes: each node reduces to its
//! leader down a binomial tree (the root leads its own node, the lowest
//! rank the others), then the leaders reduce to the root with the
//! `--inter` algorithm (default binomial) (`algorithms::compose`).
//!
//! `node_aware_multi`, for nodes of K ranks each: every rank of a node
//! leads 1/K of the buffer, so that all K cross the network at once and
//! share the combining. A ring reduce-scatter inside each node leaves rank
//! t with slice t (chunk t of K) summed over its node; K reduces side by
//! side, slice t among the nodes' ranks t (`--inter`), bring slice t's
//! total to rank t of the root's node; and the root receives the other
//! K−1 slices from the ranks of its node (a gather of slices). The combine
//! order is the schedule's, the same on every run and backend: slice t's
//! result is the leaders' reduce (in the `--inter` algorithm's bracketing,
//! over the nodes in node order) of the nodes' partials, each the ring
//! reduce-scatter's fold of its node's K ranks in ring order from rank t+1.
//! Each element is reduced exactly once along one fixed tree, so the
//! root's bits do not depend on timing; no other rank keeps a result.

use crate::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::{Algorithm, Applies, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{chunk, Buf, Collective, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Reduce,
    "node_aware",
    "binomial reduce to each node's leader, then reduce among leaders (--inter, default binomial)",
    build,
)
.applies(Applies::nodes(NodeNeed::Shared))
.composes(INTER);

pub const MULTI: Algorithm = Algorithm {
    collective: CollectiveKind::Reduce,
    name: "node_aware_multi",
    summary: "ring reduce_scatter in each node, K reduces of 1/K among same-index ranks to the root's node (--inter), slices gathered to the root",
    build: build_multi,
    applies: Applies::nodes(NodeNeed::Equal),
    ..ALGORITHM
};

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::binomial::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &ALGORITHM)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let leaders = nodes.leaders(Some(root));
    let n = req.count;
    let mut c = Composer::new(req, &ALGORITHM);
    each_node(&nodes, &leaders, |m, lead| {
        let up = Collective::Reduce { root: lead as u32 };
        let sub = compose::phase(req, &super::binomial::ALGORITHM, up, m.len(), n)?;
        c.embed(&sub, m, Frame::SAME)
    })?;
    c.next_phase()?;
    let top = Collective::Reduce {
        root: nodes.node_of[root] as u32,
    };
    let sub = compose::phase(req, inter, top, nodes.count(), n)?;
    c.embed(&sub, &leaders, Frame::SAME)?;
    Ok(c.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let (k, n, home) = (nodes.per_node(), req.count, nodes.node_of[root]);
    let mut c = Composer::new(req, &MULTI);
    // Rank t of a node ends with slice t (chunk t of K) summed over its node.
    let sub = compose::phase(
        req,
        &crate::reduce_scatter::ring::ALGORITHM,
        Collective::ReduceScatter,
        k,
        n,
    )?;
    for m in &nodes.members {
        c.embed(&sub, m, Frame::SAME)?;
    }
    c.next_phase()?;
    let top = Collective::Reduce { root: home as u32 };
    for t in 0..k {
        let (o, l) = chunk(n, k as u64, t as u64);
        let group: Vec<usize> = nodes.members.iter().map(|m| m[t]).collect();
        let sub = compose::phase(req, inter, top, nodes.count(), l)?;
        let frame = Frame {
            output: (Buf::Output, o),
            ..Frame::SAME
        };
        c.embed(&sub, &group, frame)?;
    }
    c.next_phase()?;
    // The root's node's ranks hand the root their slices.
    let tag = c.tag();
    let mut gather = Vec::new();
    for (t, &r) in nodes.members[home].iter().enumerate() {
        let (o, l) = chunk(n, k as u64, t as u64);
        if r != root && l > 0 {
            c.step(r, &[Op::send(root as u32, tag, Region::output(o, l))]);
            gather.push(Op::recv(r as u32, tag, Region::output(o, l)));
        }
    }
    c.step(root, &gather);
    Ok(c.finish())
}
