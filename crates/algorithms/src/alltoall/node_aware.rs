//! Node-aware all-to-all, for nodes of K ranks each (`algorithms::compose`),
//! as SimGrid SMPI's and MPICH's SMP-aware all-to-alls do: each node
//! gathers its K ranks' whole send buffers (P blocks each) to its leader
//! (its lowest rank), the N leaders exchange the node-to-node blocks of
//! K·K blocks each in an all-to-all (`--inter`, default linear), and each
//! leader scatters to each of its ranks its P received blocks.
//!
//! The leader re-orders the blocks twice with local copies: before the
//! exchange, so that its block for node i holds, per local source t, the K
//! blocks of node i's ranks in their order (`[t][u]`); after it, so that
//! the scatter hands local rank u its P blocks in source rank order. Runs
//! of blocks that stay together (block placement) move in one copy. This
//! holds for any placement with K on every node: the copies name each
//! rank's node and place in it.
//!
//! `node_aware_multi`: every rank of a node leads a K-th of its node's
//! traffic, the blocks to the ranks of its own local index on every node:
//! an all-to-all inside each node, then K all-to-alls side by side among
//! the nodes' ranks of one index (`--inter`), each block crossing the
//! network once (`algorithms::exchange`, which says why this form).

use crate::compose::{self, Composer, Frame, NodeNeed, Nodes};
use crate::error::Result;
use crate::exchange;
use crate::{Algorithm, Request};
use topocoll_base::param;
use topocoll_schedule::{Buf, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Alltoall,
    "gather each node's send buffers to its leader, alltoall of node-to-node blocks among leaders (--inter, default linear), scatter inside each node",
    build,
    NodeNeed::Equal,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "alltoall in each node so rank t holds its node's blocks for the ranks t, K alltoalls among same-index ranks (--inter, default linear)",
    build_multi,
    NodeNeed::Equal,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::linear::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let lead = compose::leaders(req, &ALGORITHM)?;
    let nodes = &lead.nodes;
    let (k, c, p) = (nodes.per_node() as u64, req.count, req.ranks as u64);
    // A leader holds its node's K send buffers of P blocks: K·P·c elements
    // in each of its two areas (A: gathered, then received; B: to send, then
    // to scatter), then the leaders' algorithm's own scratch.
    let area = k
        .checked_mul(p)
        .and_then(|b| b.checked_mul(c))
        .filter(|&b| b.checked_mul(3).is_some())
        .ok_or_else(|| -> crate::error::Error {
            param!(
                "size",
                " {c} elements to each of {p} ranks, {k} to a node, overflows a leader's buffer"
            )
        })?;
    let (a, b) = (0, area);
    let mut cp = Composer::new(req, &ALGORITHM);
    let up = Frame {
        output: (Buf::Scratch, a),
        scratch: 2 * area,
        ..Frame::SAME
    };
    lead.within_nodes(&mut cp, req, &crate::gather::linear::ALGORITHM, p * c, up)?;
    cp.next_phase()?;
    for &l in &lead.ranks {
        cp.reserve(l, 2 * area);
        cp.step(l, &to_send(nodes, c, a, b));
    }
    let frame = Frame {
        input: (Buf::Scratch, b),
        output: (Buf::Scratch, a),
        scratch: 2 * area,
    };
    lead.among(&mut cp, req, k * k * c, frame)?;
    for &l in &lead.ranks {
        cp.step(l, &to_scatter(nodes, c, a, b));
    }
    cp.next_phase()?;
    let down = Frame {
        input: (Buf::Scratch, b),
        output: (Buf::Output, 0),
        scratch: 2 * area,
    };
    lead.within_nodes(
        &mut cp,
        req,
        &crate::scatter::linear::ALGORITHM,
        p * c,
        down,
    )?;
    Ok(cp.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let blocks = exchange::Blocks::Equal(req.count);
    exchange::build(req, &MULTI, &nodes, inter, blocks)
}

/// The leader's copies from the gathered buffers (`[t][d]` at `from`: local
/// source t's block for rank d) to the blocks it sends (`[i][t][u]` at
/// `to`: for node i, local source t's block for i's rank u).
fn to_send(nodes: &Nodes, c: u64, from: u64, to: u64) -> Vec<Op> {
    let (k, p) = (nodes.per_node() as u64, nodes.node_of.len() as u64);
    let mut moves = Vec::new();
    for (i, m) in nodes.members.iter().enumerate() {
        for t in 0..k {
            for (u, &d) in m.iter().enumerate() {
                let src = from + (t * p + d as u64) * c;
                let dst = to + ((i as u64 * k + t) * k + u as u64) * c;
                moves.push((src, dst));
            }
        }
    }
    copies(moves, c)
}

/// The leader's copies from the received blocks (`[j][t][u]` at `from`:
/// from node j's rank t to this node's rank u) to the blocks it scatters
/// (`[u][s]` at `to`: for local rank u, source rank s's block).
fn to_scatter(nodes: &Nodes, c: u64, from: u64, to: u64) -> Vec<Op> {
    let (k, p) = (nodes.per_node() as u64, nodes.node_of.len() as u64);
    let mut moves = Vec::new();
    for u in 0..k {
        for (j, m) in nodes.members.iter().enumerate() {
            for (t, &s) in m.iter().enumerate() {
                let src = from + ((j as u64 * k + t as u64) * k + u) * c;
                let dst = to + (u * p + s as u64) * c;
                moves.push((src, dst));
            }
        }
    }
    copies(moves, c)
}

/// Scratch-to-scratch copies of blocks of `c` elements (source, target
/// offsets), runs that are consecutive on both sides joined into one.
fn copies(mut moves: Vec<(u64, u64)>, c: u64) -> Vec<Op> {
    if c == 0 {
        return Vec::new();
    }
    moves.sort_unstable_by_key(|&(_, dst)| dst);
    let mut ops = Vec::new();
    let mut run: Option<(u64, u64, u64)> = None;
    for (src, dst) in moves {
        run = match run {
            Some((s, d, len)) if s + len == src && d + len == dst => Some((s, d, len + c)),
            Some((s, d, len)) => {
                ops.push(Op::copy(Region::scratch(s, len), Region::scratch(d, len)));
                Some((src, dst, c))
            }
            None => Some((src, dst, c)),
        };
    }
    if let Some((s, d, len)) = run {
        ops.push(Op::copy(Region::scratch(s, len), Region::scratch(d, len)));
    }
    ops
}
