//! Folding a run that is the same on every translate of the network.
//!
//! Many all-to-all schedules on a torus (A2A, A2AND, A2AT) do the same thing
//! on rank r and on rank r + s, where adding s is a translation of the torus:
//! one step along its last dimension, or a few steps (the shortest that
//! works; Dragon and pairwise on a power-of-two torus only under the half
//! turn). Their runs are then the same on every translate: rank r + k·s does
//! at every instant what rank r does, shifted. Max-min sharing keeps that:
//! its allocation is unique, so it is invariant under every symmetry of the
//! problem.
//!
//! The simulator then runs only ranks 0..s. A transfer from rank r to rank
//! q = q₀ + k·s (q₀ < s) is delivered to rank q₀, at the receive where the
//! same send of rank r − k·s lands (its translate), and its route is mapped
//! link by link onto each link's representative: the member of its orbit
//! that leaves a node below s. A representative stands for the `copies`
//! links of its orbit, which all carry the same load, so a flow that crosses
//! the orbit c times takes c times its rate from the representative (the
//! max-min solver accepts a route that lists a link more than once). Counts
//! (flows, bytes) are multiplied back by `copies`; per-link statistics are
//! read from each link's representative; the solver's statistics and the
//! event count are the folded run's own.
//!
//! The fold is used only where it is proven, by [`detect`]: the node model
//! (no skew, no trace, max-min sharing) is the same on every rank; the
//! translation maps links onto links of the same bandwidth and latency; and
//! for every rank r ≥ s, op by op, rank r's program is rank r − s's shifted:
//! the same kinds, sizes, tags, dependencies and successors, peers shifted
//! by s, and routes that are the translates of rank r − s's. (Data offsets
//! may differ: the simulator does not read them. So may the order of
//! receives that wait for nothing, have no successors and do not combine:
//! they only complete.) By induction every translate then behaves like its
//! representative. The results agree with the unfolded run to rounding
//! (tests/suite/sim/fold.rs); on chaotic runs, where rounding decides which of two
//! flows ends first, they may differ as much as any 1e-12 change of the
//! inputs would change them.

use super::{Sharing, SimConfig, Skew};
use topocoll_schedule::lookahead::Lookahead;
use topocoll_schedule::{Op, OpId};
use topocoll_topology::{LinkId, Topology};

/// Schedules with more ops than this are not checked for symmetry. The check
/// reads every op and routes every send twice, which costs less than the
/// unfolded run it may save (A2AT on a 64×64 torus, 33.5 M ops: 29 s folded,
/// most of it the check, against 115 s unfolded), and it stops at the first
/// op that differs (the generated pipelines, hundreds of millions of ops,
/// are rooted trees and differ at once).
const CHECK_LIMIT: u64 = 1 << 32;

/// A proven fold: ranks 0..stride stand for all; adding stride to a rank is
/// a translation of the torus along its last dimension (one or more steps).
pub(super) struct Fold {
    pub stride: usize,
    /// Ranks (and links) each simulated one stands for.
    pub copies: usize,
    /// Each network link's representative.
    pub canon: Vec<LinkId>,
}

/// The fold of this run, if it has one (see the module doc for the proof
/// obligations, all checked here).
pub(super) fn detect<P: Lookahead>(src: &P, topo: &Topology, cfg: &SimConfig) -> Option<Fold> {
    if !cfg.fold || cfg.trace || cfg.sharing != Sharing::MaxMin || !matches!(cfg.skew, Skew::None) {
        return None;
    }
    // A network that changes is not the same on every translate.
    if topo.profiles.is_some() {
        return None;
    }
    // A flow's route back is not folded onto the slice's links.
    if cfg.simgrid.as_ref().is_some_and(|m| m.crosstraffic) {
        return None;
    }
    // A path is the same links whichever rank names it, never a
    // translate: a schedule with paths runs in full.
    if !src.header().paths.is_empty() {
        return None;
    }
    let (step, image_step) = topo.shift_symmetry()?;
    let ranks = src.header().ranks;
    if ranks != topo.num_nodes
        || !ranks.is_multiple_of(step)
        || topo
            .rank_node
            .iter()
            .enumerate()
            .any(|(r, &n)| n as usize != r)
    {
        return None;
    }
    let same_link = |l: usize| {
        let (a, b) = (&topo.links[l], &topo.links[image_step[l] as usize]);
        a.bandwidth == b.bandwidth && a.latency == b.latency
    };
    let total: u64 = (0..ranks).map(|r| src.len(r)).sum();
    if total > CHECK_LIMIT || !(0..topo.links.len()).all(same_link) {
        return None;
    }
    // The shortest shift, in steps, under which the programs are invariant
    // (A2AT's rank-parity flip on some tori is invariant under two steps only).
    let steps = ranks / step;
    let mut image = image_step.clone();
    let mut stride = step;
    loop {
        if stride == ranks {
            return None;
        }
        if steps.is_multiple_of(stride / step)
            && (stride..ranks).all(|r| shifted(src, topo, &image, r, stride))
        {
            break;
        }
        image = image.iter().map(|&l| image_step[l as usize]).collect();
        stride += step;
    }
    let copies = ranks / stride;
    let mut canon = vec![LinkId::MAX; topo.links.len()];
    for l0 in 0..topo.links.len() {
        if (topo.links[l0].from as usize) < stride {
            let mut l = l0;
            for _ in 0..copies {
                canon[l] = l0 as LinkId;
                l = image[l] as usize;
            }
        }
    }
    debug_assert!(canon.iter().all(|&c| c != LinkId::MAX));
    Some(Fold {
        stride,
        copies,
        canon,
    })
}

/// Whether rank r's program is rank r − stride's, shifted by stride.
fn shifted<P: Lookahead>(
    src: &P,
    topo: &Topology,
    image: &[LinkId],
    r: usize,
    stride: usize,
) -> bool {
    let ranks = src.header().ranks;
    let q = r - stride;
    let shift = |peer: u32| ((peer as usize + stride) % ranks) as u32;
    if src.len(r) != src.len(q) {
        return false;
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    src.initial(r, &mut a);
    src.initial(q, &mut b);
    if a != b {
        return false;
    }
    let (mut route_r, mut route_q) = (Vec::new(), Vec::new());
    for i in 0..src.len(r) as OpId {
        // Dependencies and successors first: the receive rule below reads them.
        let deps = src.dep_count(r, i);
        a.clear();
        b.clear();
        src.successors(r, i, |j| a.push(j));
        src.successors(q, i, |j| b.push(j));
        if deps != src.dep_count(q, i) || a != b {
            return false;
        }
        let (op_r, op_q) = (src.op(r, i), src.op(q, i));
        let same = match (op_r, op_q) {
            (
                Op::Send {
                    peer: p,
                    tag: t,
                    region: x,
                    route: k,
                },
                Op::Send {
                    peer: pq,
                    tag: tq,
                    region: xq,
                    route: kq,
                },
            ) => {
                p == shift(pq)
                    && t == tq
                    && x.count == xq.count
                    && k == kq
                    && same_route(
                        src,
                        topo,
                        image,
                        (r, p),
                        (q, pq),
                        k,
                        &mut route_r,
                        &mut route_q,
                    )
            }
            (
                Op::Recv {
                    peer: p,
                    tag: t,
                    region: x,
                    combine: c,
                },
                Op::Recv {
                    peer: pq,
                    tag: tq,
                    region: xq,
                    combine: cq,
                },
            ) => {
                // A receive that waits for nothing, that nothing waits for
                // and that does not combine only completes: its place in the
                // program does not matter (A2AND posts its receives in
                // absolute rank order, for one).
                let free = deps == 0 && a.is_empty() && !c && !cq;
                free || (p == shift(pq) && t == tq && x.count == xq.count && c == cq)
            }
            (Op::Copy { .. }, Op::Copy { .. }) => true,
            (Op::Combine { src: x, .. }, Op::Combine { src: xq, .. }) => x.count == xq.count,
            (Op::Compute { seconds: s }, Op::Compute { seconds: sq }) => s == sq,
            _ => false,
        };
        if !same {
            return false;
        }
    }
    true
}

/// Whether the route of rank r's send to p is the translate of rank q's to pq.
#[allow(clippy::too_many_arguments)]
fn same_route<P: Lookahead>(
    src: &P,
    topo: &Topology,
    image: &[LinkId],
    (r, p): (usize, u32),
    (q, pq): (usize, u32),
    route: u32,
    route_r: &mut Vec<LinkId>,
    route_q: &mut Vec<LinkId>,
) -> bool {
    route_r.clear();
    route_q.clear();
    if p as usize == r {
        return pq as usize == q;
    }
    if route == 0 {
        topo.route(r, p as usize, route_r);
        topo.route(q, pq as usize, route_q);
    } else {
        let offset = &src.header().offsets[route as usize - 1];
        if topo.route_offset(r, offset, route_r).is_err()
            || topo.route_offset(q, offset, route_q).is_err()
        {
            return false;
        }
    }
    route_r.len() == route_q.len()
        && route_r
            .iter()
            .zip(route_q.iter())
            .all(|(&a, &b)| a == image[b as usize])
}
