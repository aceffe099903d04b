//! Node-aware allreduce, for ranks that share nodes (`algorithms::compose`).
//! `node_aware`: each node reduces to its leader (its lowest rank) down a
//! binomial tree, the leaders allreduce with the `--inter` algorithm
//! (default rabenseifner), and each leader broadcasts the result inside its
//! node (HAN's and MPICH's SMP allreduce). `node_aware_multi`, for nodes of
//! K ranks each: every rank of a node leads 1/K of the buffer: a ring
//! reduce-scatter inside each node, K allreduces side by side among the
//! nodes' ranks of the same local index (`--inter`), and a ring allgather of
//! the slices inside each node.

use crate::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::{Algorithm, Applies, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{chunk, Buf, Collective, CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "node_aware", "reduce to each node's leader, allreduce among leaders (--inter, default rabenseifner), bcast inside each node", build).applies(Applies::nodes(NodeNeed::Shared))
.composes(INTER);

pub const MULTI: Algorithm = Algorithm {
    collective: CollectiveKind::Allreduce,
    name: "node_aware_multi",
    summary: "ring reduce_scatter in each node, K allreduces of 1/K among same-index ranks (--inter), ring allgather in each node",
    build: build_multi,
    applies: Applies::nodes(NodeNeed::Equal),
    ..ALGORITHM
};

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::rabenseifner::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &ALGORITHM)?;
    let leaders = nodes.leaders(None);
    let n = req.count;
    let mut c = Composer::new(req, &ALGORITHM);
    each_node(&nodes, &leaders, |m, lead| {
        let up = Collective::Reduce { root: lead as u32 };
        let sub = compose::phase(req, &crate::reduce::binomial::ALGORITHM, up, m.len(), n)?;
        c.embed(&sub, m, Frame::SAME)
    })?;
    c.next_phase()?;
    let sub = compose::phase(req, inter, Collective::Allreduce, nodes.count(), n)?;
    c.embed(&sub, &leaders, Frame::SAME)?;
    c.next_phase()?;
    each_node(&nodes, &leaders, |m, lead| {
        let down = Collective::Bcast { root: lead as u32 };
        let sub = compose::phase(req, &crate::bcast::binomial::ALGORITHM, down, m.len(), n)?;
        c.embed(&sub, m, Frame::SAME)
    })?;
    Ok(c.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let (k, n) = (nodes.per_node(), req.count);
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
    for t in 0..k {
        let (o, l) = chunk(n, k as u64, t as u64);
        let group: Vec<usize> = nodes.members.iter().map(|m| m[t]).collect();
        let sub = compose::phase(req, inter, Collective::Allreduce, nodes.count(), l)?;
        let frame = Frame {
            output: (Buf::Output, o),
            ..Frame::SAME
        };
        c.embed(&sub, &group, frame)?;
    }
    c.next_phase()?;
    compose::ring_slices(&mut c, &nodes, n)?;
    Ok(c.finish())
}
