//! Node-aware allgatherv (`algorithms::compose`), for nodes of any sizes:
//! each node's ranks send their blocks to its leader (its lowest rank), a
//! gatherv that packs them in the node's rank order; the N leaders run an
//! allgatherv of the nodes' packed blocks, node j's count the sum of its
//! ranks' (`--inter`, default ring); and each leader broadcasts the whole
//! output inside its node down a binomial tree.
//!
//! Where every node holds a run of consecutive ranks (a block placement),
//! the nodes' packed blocks in node order are the output in rank order and
//! the leaders' allgatherv writes the output; otherwise it writes scratch
//! and the leader copies each rank's block to its place.
//!
//! `node_aware_multi`, for nodes of K ranks each: every rank of a node
//! leads a slice, as the allgather's multi-leader form does
//! (`allgather::node_aware`). Rank t of each node allgathervs the blocks
//! of the nodes' ranks t among them (K allgathervs side by side,
//! `--inter`), so that it holds slice t, those ranks' blocks in node order,
//! of the buffer in [`compose::slice_order`]; a ring allgather of the K
//! slices inside each node, each step a slice of its own length, completes
//! it. With a cyclic placement that order is rank order and the slices land
//! in the output; otherwise they are built in scratch and each rank copies
//! the blocks to rank order. Skewed counts make the slices unequal, and the
//! ring's steps wait for the longest slice they carry.

use crate::compose::{self, Composer, Frame, Leaders, NodeNeed, Nodes, Packed, Sliced};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{Buf, Collective, CollectiveKind, Op, Region, Schedule, Sizes};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Allgatherv,
    "gatherv to each node's leader, allgatherv of the nodes' packed blocks among leaders (--inter, default ring), bcast inside each node",
    build,
    NodeNeed::Shared,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "K allgathervs among same-index ranks of the nodes (--inter, default ring), ring allgather of the K slices in each node (nodes of equal size)",
    build_multi,
    NodeNeed::Equal,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::ring::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let lead = compose::leaders(req, &ALGORITHM)?;
    let v = req.sizes()?;
    // Each rank's offset in its node's packed blocks, and each node's total
    // (no sum passes the output's length, which the sizes bound).
    let mut within = vec![0u64; req.ranks];
    let totals: Vec<u64> = lead
        .nodes
        .members
        .iter()
        .map(|m| {
            m.iter().fold(0, |at, &r| {
                within[r] = at;
                at + v.block(r, r)
            })
        })
        .collect();
    let all = v.output_len(0);
    // Scratch: the node's packed blocks [0, most), then where nodes are not
    // runs of ranks in order, every node's in node order [most, most + all).
    let most = totals.iter().copied().max().unwrap_or(0);
    let at = Packed::new(most, all, lead.nodes.in_rank_order());
    let mut cp = Composer::new(req, &ALGORITHM);
    gather(&mut cp, &lead, v, &within);
    cp.next_phase()?;
    let sizes = Sizes::per_rank(totals.clone())?;
    let sub = compose::phase_sized(req, lead.inter, Collective::Allgatherv, sizes)?;
    cp.embed(&sub, &lead.ranks, at.node_to_all())?;
    for &l in &lead.ranks {
        cp.reserve(l, at.base);
        if !at.direct {
            cp.step(l, &to_rank_order(&lead.nodes, v, &within, &totals, most));
        }
    }
    cp.next_phase()?;
    let down = &crate::bcast::binomial::ALGORITHM;
    lead.within_nodes(&mut cp, req, down, all, Frame::SAME)?;
    Ok(cp.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let v = req.sizes()?;
    let k = nodes.per_node();
    let sl = Sliced::new(&nodes);
    // Slice t's offset and length in the buffer in slice order (no sum
    // passes the output's length, which the sizes bound).
    let mut slices = Vec::with_capacity(k);
    let mut at = 0u64;
    for t in 0..k {
        let len: u64 = nodes.members.iter().map(|m| v.block(m[t], m[t])).sum();
        slices.push((at, len));
        at += len;
    }
    let all = at;
    // The buffer in slice order: the output, or scratch [0, all).
    let (buf, base) = (sl.buf(Buf::Output), sl.base(all));
    let region = |o: u64, l: u64| Region::new(buf, o, l);
    let mut cp = Composer::new(req, &MULTI);
    for (t, &(off, _)) in slices.iter().enumerate() {
        let group = nodes.index(t);
        let counts = group.iter().map(|&r| v.block(r, r)).collect();
        let sub =
            compose::phase_sized(req, inter, Collective::Allgatherv, Sizes::per_rank(counts)?)?;
        let frame = Frame {
            output: (buf, off),
            scratch: base,
            ..Frame::SAME
        };
        cp.embed(&sub, &group, frame)?;
    }
    cp.next_phase()?;
    // The ring of slices inside each node: at step s rank t sends slice
    // t − s on and receives slice t − s − 1.
    let tag = cp.tag();
    for m in &nodes.members {
        for s in 0..k.saturating_sub(1) {
            for (t, &r) in m.iter().enumerate() {
                let (next, prev) = (m[(t + 1) % k], m[(t + k - 1) % k]);
                let (so, sl) = slices[(t + k - s) % k];
                let (ro, rl) = slices[(t + 2 * k - s - 1) % k];
                cp.step(
                    r,
                    &[
                        Op::send(next as u32, tag, region(so, sl)),
                        Op::recv(prev as u32, tag, region(ro, rl)),
                    ],
                );
            }
        }
    }
    cp.next_phase()?;
    if !sl.direct {
        let mut moves = Vec::with_capacity(req.ranks);
        let mut from = 0u64;
        for &r in &sl.order {
            let n = v.block(r, r);
            moves.push((Region::scratch(from, n), Region::output(v.recv_at(0, r), n)));
            from += n;
        }
        cp.step_all(all, &compose::joined_copies(moves));
    }
    Ok(cp.finish())
}

/// The gatherv inside each node: every rank but the leader sends its block
/// (when it has one) to the leader, which receives it at the rank's place
/// in the node's packed blocks (scratch from 0) and copies its own there.
fn gather(cp: &mut Composer, lead: &Leaders, v: &Sizes, within: &[u64]) {
    let tag = cp.tag();
    for (j, m) in lead.nodes.members.iter().enumerate() {
        let l = lead.ranks[j];
        let mut at_leader = Vec::new();
        for &r in m {
            let n = v.block(r, r);
            if n == 0 {
                continue;
            }
            let place = Region::scratch(within[r], n);
            if r == l {
                at_leader.push(Op::copy(Region::input(0, n), place));
            } else {
                cp.step(r, &[Op::send(l as u32, tag, Region::input(0, n))]);
                at_leader.push(Op::recv(r as u32, tag, place));
            }
        }
        cp.step(l, &at_leader);
    }
}

/// The leader's copies of every rank's block from the nodes' packed blocks
/// in node order (scratch from `at`) to its place in the output.
fn to_rank_order(nodes: &Nodes, v: &Sizes, within: &[u64], totals: &[u64], at: u64) -> Vec<Op> {
    let mut moves = Vec::new();
    let mut node_at = at;
    for (j, m) in nodes.members.iter().enumerate() {
        for &r in m {
            let n = v.block(r, r);
            moves.push((
                Region::scratch(node_at + within[r], n),
                Region::output(v.recv_at(0, r), n),
            ));
        }
        node_at += totals[j];
    }
    compose::joined_copies(moves)
}
