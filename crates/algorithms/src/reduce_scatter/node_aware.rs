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

use crate::compose::{self, Composer, Frame, NodeNeed, Sliced};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{chunk, Buf, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::ReduceScatter,
    "reduce to each node's leader, reduce_scatter among leaders (--inter, default ring), chunks sent inside each node",
    build,
    NodeNeed::EqualChunks,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "ring reduce_scatter in each node, K reduce_scatters of its slice among same-index ranks of the nodes (--inter, default ring)",
    build_multi,
    NodeNeed::SliceChunks,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::ring::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    let lead = compose::leaders(req, &ALGORITHM)?;
    let (n, p) = (req.count, req.ranks as u64);
    let direct = lead.nodes.contiguous();
    // Where each rank's chunk lies among the leaders' data: the output in
    // rank order, or scratch in node order.
    let mut at = vec![0u64; req.ranks];
    let mut next = 0;
    for m in &lead.nodes.members {
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
    let up = &crate::reduce::binomial::ALGORITHM;
    lead.within_nodes(&mut c, req, up, n, Frame::SAME)?;
    c.next_phase()?;
    if !direct {
        for &l in &lead.ranks {
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
    lead.among(&mut c, req, n, frame)?;
    c.next_phase()?;
    let tag = c.tag();
    for (j, m) in lead.nodes.members.iter().enumerate() {
        let l = lead.ranks[j];
        let mut hand = Vec::new();
        for &r in m {
            let mine = Region::output(chunk(n, p, r as u64).0, held(r).count);
            if r != l {
                hand.push(Op::send(r as u32, tag, held(r)));
                c.step(r, &[Op::recv(l as u32, tag, mine)]);
            } else if !direct {
                hand.push(Op::copy(held(r), mine));
            }
        }
        if !direct {
            c.reserve(l, base);
        }
        c.step(l, &hand);
    }
    Ok(c.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let (n, p) = (req.count, req.ranks as u64);
    let sl = Sliced::new(&nodes);
    // Each rank's chunk in slice order, and the buffer that order is in
    // (the output, or scratch [0, n)).
    let mut at = vec![0u64; req.ranks];
    let mut next = 0;
    for &r in &sl.order {
        at[r] = next;
        next += chunk(n, p, r as u64).1;
    }
    let (buf, base) = (sl.buf(Buf::Output), sl.base(n));
    let moves: Vec<(Region, Region)> = (0..req.ranks)
        .map(|r| {
            let (o, l) = chunk(n, p, r as u64);
            (Region::output(o, l), Region::scratch(at[r], l))
        })
        .collect();
    let to_order = compose::joined_copies(moves);
    let mut c = Composer::new(req, &MULTI);
    if !sl.direct {
        c.step_all(base, &to_order);
    }
    let frame = Frame {
        output: (buf, 0),
        scratch: base,
        ..Frame::SAME
    };
    compose::ring_reduce_slices(&mut c, req, &nodes, frame)?;
    c.next_phase()?;
    compose::slices_among(&mut c, req, &nodes, inter, frame)?;
    if !sl.direct {
        for (r, &held) in at.iter().enumerate() {
            let (o, l) = chunk(n, p, r as u64);
            let back = Op::copy(Region::scratch(held, l), Region::output(o, l));
            c.step(r, &[back]);
        }
    }
    Ok(c.finish())
}
