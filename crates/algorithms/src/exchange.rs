//! The multi-leader all-to-all, shared by alltoall's and alltoallv's
//! `node_aware_multi` (`algorithms::compose`), for nodes of K ranks each.
//! Every rank of a node leads the traffic to the ranks of its own local
//! index on every node, in two phases:
//!
//! 1. inside each node, an all-to-all (`linear`) after which local rank t
//!    holds every block its node's ranks send to the ranks t of all nodes;
//! 2. K all-to-alls side by side, rank t's among the nodes' ranks t
//!    (`--inter`), node i's block for node j holding the K blocks from i's
//!    ranks to j's rank t, which lands each block at its destination.
//!
//! Why this form: every block between two nodes crosses the network once
//! (phase 2, from the sender's node's rank t to its destination itself)
//! and moves at most once inside the sending node (phase 1, not at all when
//! its sender is rank t), and the K ranks of a node send at once, each a
//! K-th of the node's traffic. Assigning destination *nodes* to the local
//! ranks instead would also cross the network once, but needs a third
//! phase inside the destination node to hand each rank its blocks, one more
//! hop for every byte. Blocks inside a node never leave it (phase 2's block
//! from a node to itself is a local copy).
//!
//! The buffers are re-ordered with local copies, runs that stay together
//! in one copy. Rank (i, u) (node i, local index u) sends phase 1 from
//! `[t][j]` (the block for node j's rank t): its input itself where the
//! nodes are placed cyclically, else a copy into scratch area X. Phase 1
//! leaves `[u][j]` in area Y (from local source u, for node j), copied to
//! `[j][u]` in X for phase 2, which brings `[i][u]` (from node i's rank u):
//! the output itself where node i holds ranks iK..iK+K−1 (a block
//! placement), else area Y, copied to the output in source rank order.
//! Each area is as long as the longest of these buffers on any rank.

use super::compose::{self, Composer, Frame, Nodes};
use super::{Algorithm, Request};
use crate::error::Result;
use topocoll_base::param;
use topocoll_schedule::{Buf, Collective, Op, Region, Schedule, Sizes};

/// The blocks being exchanged: each `count` elements (alltoall), or the
/// request's counts per pair (alltoallv).
#[derive(Clone, Copy)]
pub(crate) enum Blocks<'a> {
    Equal(u64),
    Sized(&'a Sizes),
}

impl Blocks<'_> {
    fn block(&self, s: usize, d: usize) -> u64 {
        match self {
            Blocks::Equal(c) => *c,
            Blocks::Sized(v) => v.block(s, d),
        }
    }

    /// Where `s`'s block for `d` lies in `s`'s input.
    fn send_at(&self, s: usize, d: usize) -> u64 {
        match self {
            Blocks::Equal(c) => d as u64 * c,
            Blocks::Sized(v) => v.send_at(s, d),
        }
    }

    /// Where `d` receives `s`'s block in its output.
    fn recv_at(&self, d: usize, s: usize) -> u64 {
        match self {
            Blocks::Equal(c) => s as u64 * c,
            Blocks::Sized(v) => v.recv_at(d, s),
        }
    }
}

/// The all-to-all inside a node (phase 1), of equal blocks or sized ones.
const INTRA: &Algorithm = &crate::alltoall::linear::ALGORITHM;
const INTRA_SIZED: &Algorithm = &crate::alltoallv::linear::ALGORITHM;

/// Builds the multi-leader all-to-all `alg` of `req` on `nodes` (K ranks
/// on every node, checked by the caller) with `inter` among the ranks t
/// (an all-to-all for equal blocks, an alltoallv for sized ones).
pub(crate) fn build(
    req: &Request,
    alg: &Algorithm,
    nodes: &Nodes,
    inter: &'static Algorithm,
    blocks: Blocks,
) -> Result<Schedule> {
    let (k, n, p) = (nodes.per_node(), nodes.count(), req.ranks);
    let m = &nodes.members;
    let mut local = vec![0; p];
    for node in m {
        for (u, &r) in node.iter().enumerate() {
            local[r] = u;
        }
    }
    let area = area(req, nodes, blocks)?;
    let (x, y, base) = (0, area, 2 * area);
    // Phase 1's input in place where [t][j] is rank order (cyclic), its
    // output in place where [i][u] is (block).
    let cyclic = compose::Sliced::new(nodes).direct;
    let block = nodes.contiguous();
    let mut c = Composer::new(req, alg);
    for r in 0..p {
        c.reserve(r, base);
    }
    if !cyclic {
        for r in 0..p {
            c.step(r, &to_phase1(nodes, blocks, r, x));
        }
    }
    let frame = Frame {
        input: if cyclic {
            (Buf::Input, 0)
        } else {
            (Buf::Scratch, x)
        },
        output: (Buf::Scratch, y),
        scratch: base,
    };
    let equal = match blocks {
        Blocks::Equal(b) => Some(compose::phase(
            req,
            INTRA,
            Collective::Alltoall,
            k,
            n as u64 * b,
        )?),
        Blocks::Sized(_) => None,
    };
    for node in m {
        let sized;
        let sub = match &equal {
            Some(s) => s,
            None => {
                let counts = (0..k)
                    .flat_map(|u| (0..k).map(move |t| (u, t)))
                    .map(|(u, t)| m.iter().map(|o| blocks.block(node[u], o[t])).sum())
                    .collect();
                let sizes = Sizes::per_pair(k, counts)?;
                sized = compose::phase_sized(req, INTRA_SIZED, Collective::Alltoallv, sizes)?;
                &sized
            }
        };
        c.embed(sub, node, frame)?;
    }
    c.next_phase()?;
    for (r, &t) in local.iter().enumerate() {
        c.step(r, &to_phase2(nodes, blocks, r, t, x, y));
    }
    let frame = Frame {
        input: (Buf::Scratch, x),
        output: if block {
            (Buf::Output, 0)
        } else {
            (Buf::Scratch, y)
        },
        scratch: base,
    };
    let equal = match blocks {
        Blocks::Equal(b) => Some(compose::phase(
            req,
            inter,
            Collective::Alltoall,
            n,
            k as u64 * b,
        )?),
        Blocks::Sized(_) => None,
    };
    for t in 0..k {
        let group: Vec<usize> = m.iter().map(|node| node[t]).collect();
        let sized;
        let sub = match &equal {
            Some(s) => s,
            None => {
                let counts = (0..n)
                    .flat_map(|i| (0..n).map(move |j| (i, j)))
                    .map(|(i, j)| (0..k).map(|u| blocks.block(m[i][u], m[j][t])).sum())
                    .collect();
                let sizes = Sizes::per_pair(n, counts)?;
                sized = compose::phase_sized(req, inter, Collective::Alltoallv, sizes)?;
                &sized
            }
        };
        c.embed(sub, &group, frame)?;
    }
    c.next_phase()?;
    if !block {
        for r in 0..p {
            c.step(r, &to_output(nodes, blocks, r, y));
        }
    }
    Ok(c.finish())
}

/// Rank r's copies from its input to `[t][j]` (its block for node j's rank
/// t) at `x`: what it sends inside its node.
fn to_phase1(nodes: &Nodes, blocks: Blocks, r: usize, x: u64) -> Vec<Op> {
    let mut moves = Vec::with_capacity(nodes.node_of.len());
    let mut at = x;
    for t in 0..nodes.per_node() {
        for node in &nodes.members {
            let (d, l) = (node[t], blocks.block(r, node[t]));
            let from = Region::input(blocks.send_at(r, d), l);
            moves.push((from, Region::scratch(at, l)));
            at += l;
        }
    }
    compose::joined_copies(moves)
}

/// Rank r's (node i's rank t's) copies from what its node's ranks sent it,
/// `[u][j]` at `y`, to `[j][u]` at `x`: its blocks for the ranks t in node
/// order, as the exchange among the ranks t sends them.
fn to_phase2(nodes: &Nodes, blocks: Blocks, r: usize, t: usize, x: u64, y: u64) -> Vec<Op> {
    let (k, n, m) = (nodes.per_node(), nodes.count(), &nodes.members);
    let i = nodes.node_of[r];
    let mut from = Vec::with_capacity(n * k);
    let mut at = y;
    for u in 0..k {
        for node in m {
            let l = blocks.block(m[i][u], node[t]);
            from.push(Region::scratch(at, l));
            at += l;
        }
    }
    let mut moves = Vec::with_capacity(n * k);
    let mut at = x;
    for j in 0..n {
        for u in 0..k {
            let src = from[u * n + j];
            moves.push((src, Region::scratch(at, src.count)));
            at += src.count;
        }
    }
    compose::joined_copies(moves)
}

/// Rank r's copies from what the exchange brought, `[i][u]` at `y` (from
/// node i's rank u), to its output in source rank order.
fn to_output(nodes: &Nodes, blocks: Blocks, r: usize, y: u64) -> Vec<Op> {
    let mut moves = Vec::with_capacity(nodes.node_of.len());
    let mut at = y;
    for node in &nodes.members {
        for &s in node {
            let l = blocks.block(s, r);
            let to = Region::output(blocks.recv_at(r, s), l);
            moves.push((Region::scratch(at, l), to));
            at += l;
        }
    }
    compose::joined_copies(moves)
}

/// The length of each scratch area: the longest of a rank's input, output
/// and what it leads (every block from its node to the ranks of its local
/// index), over every rank; with room for two areas and the phases' own
/// scratch after them.
fn area(req: &Request, nodes: &Nodes, blocks: Blocks) -> Result<u64> {
    let too_large = || {
        param!(
            "size",
            ": the blocks to and from {} ranks overflow a rank's buffer",
            req.ranks
        )
    };
    let (k, p) = (nodes.per_node(), req.ranks as u64);
    let longest = match blocks {
        // Every buffer is P blocks.
        Blocks::Equal(c) => p.checked_mul(c).ok_or_else(too_large)?,
        // No sum overflows: an alltoallv's counts are checked to stay
        // below 2^61 elements over a node's rows or columns
        // (`Sizes::check`), which bound each of these.
        Blocks::Sized(v) => {
            let mut most = 0u64;
            for node in &nodes.members {
                for t in 0..k {
                    let led: u64 = node
                        .iter()
                        .flat_map(|&s| nodes.members.iter().map(move |o| (s, o[t])))
                        .map(|(s, d)| v.block(s, d))
                        .sum();
                    let r = node[t];
                    most = most.max(led).max(v.input_len(r)).max(v.output_len(r));
                }
            }
            most
        }
    };
    longest
        .checked_mul(3)
        .map(|_| longest)
        .ok_or_else(too_large)
}
