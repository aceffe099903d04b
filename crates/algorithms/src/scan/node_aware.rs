//! Node-aware scan and exscan (`algorithms::compose`), for nodes that hold
//! runs of consecutive ranks (a block placement; nodes may hold different
//! counts): a prefix in rank order then splits into a prefix inside each
//! node and one over the nodes, as MPICH's SMP-aware scan does.
//!
//! 1. Each node runs a linear scan (exscan) of its ranks.
//! 2. Each node's last rank, its leader here, holds the node's total: its
//!    scan result (for exscan, its result with its own data combined in).
//!    The leaders run an exscan of the totals (`--inter`, an exscan
//!    algorithm, default recursive_doubling), so node j's leader gets the
//!    reduction of every rank below the node.
//! 3. Each leader but node 0's broadcasts that prefix inside its node down a
//!    binomial tree, and each rank combines it with its node's result
//!    (exscan: the node's first rank takes it as it is).
//!
//! Every combine joins the reductions of two runs of consecutive ranks, so
//! each result is in_0 ∘ … ∘ in_r as the verifier checks; the bracketing is
//! this schedule's one, the same on every backend.

use super::Prefix;
use crate::compose::{self, each_node, Composer, Frame, NodeNeed};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{Buf, Collective, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Scan,
    "scan inside each node, exscan of the node totals among the nodes' last ranks (--inter, default recursive_doubling), prefix bcast and combine inside each node",
    build,
    NodeNeed::Consecutive,
    INTER,
);

/// The leaders' default exscan.
pub const INTER: &Algorithm = &crate::exscan::recursive_doubling::ALGORITHM;

fn build(req: &Request) -> Result<Schedule> {
    composed(req, &ALGORITHM, Prefix::Inclusive)
}

/// The composition for scan, or exclusive for exscan. Scratch: the prefix
/// from the nodes below [0, n), a leader's node total [n, 2n) (exscan), the
/// phases' own scratch from 2n.
pub(crate) fn composed(req: &Request, alg: &'static Algorithm, kind: Prefix) -> Result<Schedule> {
    let exclusive = kind == Prefix::Exclusive;
    let (nodes, inter) = compose::setup(req, alg)?;
    let n = req.count;
    let (prefix, total) = (Region::scratch(0, n), Region::scratch(n, n));
    let (input, output) = (Region::input(0, n), Region::output(0, n));
    let last: Vec<usize> = nodes.members.iter().map(|m| m[m.len() - 1]).collect();
    let (inside, inside_alg) = if exclusive {
        (Collective::Exscan, &crate::exscan::linear::ALGORITHM)
    } else {
        (Collective::Scan, &crate::scan::linear::ALGORITHM)
    };
    let own = Frame {
        scratch: 2 * n,
        ..Frame::SAME
    };
    let mut cp = Composer::new(req, alg);
    each_node(&nodes, &last, |m, _| {
        let sub = compose::phase(req, inside_alg, inside, m.len(), n)?;
        cp.embed(&sub, m, own)
    })?;
    cp.next_phase()?;
    // The node totals: a scan's last rank holds it as its result; an
    // exscan's combines its own data into its result (a node of one rank:
    // its data).
    for (j, &l) in last.iter().enumerate() {
        cp.reserve(l, 2 * n);
        if exclusive && n > 0 {
            if nodes.members[j].len() == 1 {
                cp.step(l, &[Op::copy(input, total)]);
            } else {
                cp.step(l, &[Op::copy(output, total)]);
                cp.step(l, &[Op::combine(input, total)]);
            }
        }
    }
    let sub = compose::phase(req, inter, Collective::Exscan, nodes.count(), n)?;
    let frame = Frame {
        input: if exclusive {
            (Buf::Scratch, n)
        } else {
            (Buf::Output, 0)
        },
        output: (Buf::Scratch, 0),
        scratch: 2 * n,
    };
    cp.embed(&sub, &last, frame)?;
    cp.next_phase()?;
    // Node 0 has nothing below it; every other node's ranks get its prefix.
    for m in nodes.members.iter().skip(1) {
        let root = (m.len() - 1) as u32;
        let down = compose::phase(
            req,
            &crate::bcast::binomial::ALGORITHM,
            Collective::Bcast { root },
            m.len(),
            n,
        )?;
        let frame = Frame {
            output: (Buf::Scratch, 0),
            ..own
        };
        cp.embed(&down, m, frame)?;
        for (t, &r) in m.iter().enumerate() {
            cp.reserve(r, n);
            if n == 0 {
                continue;
            }
            let op = if exclusive && t == 0 {
                Op::copy(prefix, output)
            } else {
                Op::combine(prefix, output)
            };
            cp.step(r, &[op]);
        }
    }
    Ok(cp.finish())
}
