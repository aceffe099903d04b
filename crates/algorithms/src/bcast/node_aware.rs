//! Node-aware broadcast, for ranks that share nodes: the leaders (the root
//! in its node, the lowest rank in the others) broadcast among themselves
//! with the `--inter` algorithm (default binomial), then each leader
//! broadcasts inside its node down a binomial tree (`algorithms::compose`).
//! `node_aware_multi` cuts the buffer into K slices for nodes of K ranks:
//! the root hands slice t to its node's rank t, rank t of every node
//! broadcasts slice t among the nodes' ranks t, and each node gathers its
//! slices round a ring, so that all K ranks of a node cross the network.

use crate::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::{Algorithm, Applies, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{chunk, Collective, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Bcast,
    "node_aware",
    "bcast among node leaders (--inter, default binomial), then binomial inside each node",
    build,
)
.applies(Applies::nodes(NodeNeed::Shared))
.composes(INTER);

pub const MULTI: Algorithm = Algorithm {
    collective: CollectiveKind::Bcast,
    name: "node_aware_multi",
    summary: "root's node splits the buffer in K slices, rank t of each node bcasts slice t among nodes (--inter), ring allgather inside each node",
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
    let top = Collective::Bcast {
        root: nodes.node_of[root] as u32,
    };
    let sub = compose::phase(req, inter, top, nodes.count(), n)?;
    c.embed(&sub, &leaders, Frame::SAME)?;
    c.next_phase()?;
    each_node(&nodes, &leaders, |m, lead| {
        let down = Collective::Bcast { root: lead as u32 };
        let sub = compose::phase(req, &super::binomial::ALGORITHM, down, m.len(), n)?;
        c.embed(&sub, m, Frame::SAME)
    })?;
    Ok(c.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let (k, n, home) = (nodes.per_node(), req.count, nodes.node_of[root]);
    let mut c = Composer::new(req, &MULTI);
    // The root hands each rank of its node that rank's slice.
    let tag = c.tag();
    let mut hand = Vec::new();
    for (t, &r) in nodes.members[home].iter().enumerate() {
        let (o, l) = chunk(n, k as u64, t as u64);
        if r != root {
            hand.push(Op::send(r as u32, tag, Region::output(o, l)));
            c.step(r, &[Op::recv(root as u32, tag, Region::output(o, l))]);
        }
    }
    c.step(root, &hand);
    c.next_phase()?;
    for t in 0..k {
        let (o, l) = chunk(n, k as u64, t as u64);
        let group: Vec<usize> = nodes.members.iter().map(|m| m[t]).collect();
        let top = Collective::Bcast { root: home as u32 };
        let sub = compose::phase(req, inter, top, nodes.count(), l)?;
        let frame = Frame {
            output: (topocoll_schedule::Buf::Output, o),
            ..Frame::SAME
        };
        c.embed(&sub, &group, frame)?;
    }
    c.next_phase()?;
    compose::ring_slices(&mut c, &nodes, n)?;
    Ok(c.finish())
}
