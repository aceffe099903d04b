//! Node-aware reduce-scatter, for nodes of K ranks each
//! (`algorithms::compose`): each node reduces to its leader (its lowest
//! rank) down a binomial tree, the leaders reduce-scatter (`--inter`,
//! default ring) so that each holds its node's ranks' chunks, and each
//! leader sends every rank of its node its chunk. The leaders' chunks must
//! be their nodes' (each node's ranks' chunks make up the chunk the
//! leaders' reduce-scatter gives it: so whenever the ranks divide the
//! count). Where node j does not hold ranks jK..jK+K−1 the leaders put the
//! chunks in node order in scratch first.
//!
//! `node_aware_multi`: every rank of a node leads a slice. The buffer is
//! taken in [`compose::slice_order`] (rank t of node 0, of node 1, …, then
//! the ranks t+1), so that slice t of K holds the chunks of the nodes'
//! ranks t; a ring reduce-scatter inside each node leaves rank t with
//! slice t summed over its node, and K reduce-scatters side by side, slice
//! t among the nodes' ranks t (`--inter`), leave each rank its own chunk.
//! With a cyclic placement that order is rank order and all of it happens
//! in the output; otherwise each rank copies its data to scratch in that
//! order first and its chunk back at the end. The chunks must line up:
//! always so when the ranks divide the count.

use crate::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::{Algorithm, Applies, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{chunk, Buf, Collective, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::ReduceScatter, "node_aware", "reduce to each node's leader, reduce_scatter among leaders (--inter, default ring), chunks sent inside each node", build).applies(Applies::nodes(NodeNeed::EqualChunks))
.composes(INTER);

pub const MULTI: Algorithm = Algorithm {
    name: "node_aware_multi",
    summary: "ring reduce_scatter in each node, K reduce_scatters of its slice among same-index ranks of the nodes (--inter, default ring)",
    build: build_multi,
    applies: Applies::nodes(NodeNeed::SliceChunks),
    ..ALGORITHM
};

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::ring::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &ALGORITHM)?;
    let leaders = nodes.leaders(None);
    let (n, p) = (req.count, req.ranks as u64);
    let direct = nodes.contiguous();
    // Where each rank's chunk lies among the leaders' data: the output in
    // rank order, or scratch in node order.
    let mut at = vec![0u64; req.ranks];
    let mut next = 0;
    for m in &nodes.members {
        for &r in m {
            at[r] = if direct {
                chunk(n, p, r as u64).0
            } else {
                next
            };
            next += chunk(n, p, r as u64).1;
        }
    }
    let held = |r: usize| {
        let len = chunk(n, p, r as u64).1;
        if direct {
            Region::output(at[r], len)
        } else {
            Region::scratch(at[r], len)
        }
    };
    let mut c = Composer::new(req, &ALGORITHM);
    each_node(&nodes, &leaders, |m, lead| {
        let up = Collective::Reduce { root: lead as u32 };
        let sub = compose::phase(req, &crate::reduce::binomial::ALGORITHM, up, m.len(), n)?;
        c.embed(&sub, m, Frame::SAME)
    })?;
    c.next_phase()?;
    if !direct {
        for &l in &leaders {
            let ops: Vec<Op> = (0..req.ranks)
                .map(|r| {
                    Op::copy(
                        Region::output(chunk(n, p, r as u64).0, held(r).count),
                        held(r),
                    )
                })
                .collect();
            c.step(l, &ops);
        }
    }
    let sub = compose::phase(req, inter, Collective::ReduceScatter, nodes.count(), n)?;
    let base = if direct { 0 } else { n };
    let frame = Frame {
        output: if direct {
            (Buf::Output, 0)
        } else {
            (Buf::Scratch, 0)
        },
        scratch: base,
        ..Frame::SAME
    };
    c.embed(&sub, &leaders, frame)?;
    c.next_phase()?;
    let tag = c.tag();
    for (j, m) in nodes.members.iter().enumerate() {
        let lead = leaders[j];
        let mut hand = Vec::new();
        for &r in m {
            let mine = Region::output(chunk(n, p, r as u64).0, held(r).count);
            if r != lead {
                hand.push(Op::send(r as u32, tag, held(r)));
                c.step(r, &[Op::recv(lead as u32, tag, mine)]);
            } else if !direct {
                hand.push(Op::copy(held(r), mine));
            }
        }
        if !direct {
            c.reserve(lead, base);
        }
        c.step(lead, &hand);
    }
    Ok(c.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let (k, n, p) = (nodes.per_node(), req.count, req.ranks as u64);
    let order = compose::slice_order(&nodes);
    let direct = order.iter().enumerate().all(|(i, &r)| i == r);
    // Each rank's chunk in slice order, and the buffer that order is in
    // (the output, or scratch [0, n)).
    let mut at = vec![0u64; req.ranks];
    let mut next = 0;
    for &r in &order {
        at[r] = next;
        next += chunk(n, p, r as u64).1;
    }
    let (buf, base) = if direct {
        (Buf::Output, 0)
    } else {
        (Buf::Scratch, n)
    };
    let moves: Vec<(Region, Region)> = (0..req.ranks)
        .map(|r| {
            let (o, l) = chunk(n, p, r as u64);
            (Region::output(o, l), Region::scratch(at[r], l))
        })
        .collect();
    let to_order = compose::joined_copies(moves);
    let mut c = Composer::new(req, &MULTI);
    if !direct {
        for r in 0..req.ranks {
            c.reserve(r, base);
            c.step(r, &to_order);
        }
    }
    let frame = Frame {
        output: (buf, 0),
        scratch: base,
        ..Frame::SAME
    };
    let sub = compose::phase(
        req,
        &super::ring::ALGORITHM,
        Collective::ReduceScatter,
        k,
        n,
    )?;
    for m in &nodes.members {
        c.embed(&sub, m, frame)?;
    }
    c.next_phase()?;
    for t in 0..k {
        let (o, l) = chunk(n, k as u64, t as u64);
        let group: Vec<usize> = nodes.members.iter().map(|m| m[t]).collect();
        let sub = compose::phase(req, inter, Collective::ReduceScatter, nodes.count(), l)?;
        let frame = Frame {
            output: (buf, o),
            scratch: base,
            ..Frame::SAME
        };
        c.embed(&sub, &group, frame)?;
    }
    if !direct {
        for (r, &held) in at.iter().enumerate() {
            let (o, l) = chunk(n, p, r as u64);
            let back = Op::copy(Region::scratch(held, l), Region::output(o, l));
            c.step(r, &[back]);
        }
    }
    Ok(c.finish())
}
