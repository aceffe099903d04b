//! How far ahead each rank may run: the lookahead of a run (`Horizon`),
//! from the smallest message and the nearest latency, and how far data from
//! other planes can reach a plane (`reach`, `reach_line`), for tiles and
//! relays.

use super::*;

/// How far ahead of the earliest pending event of all, T, every rank may
/// run: `small`, the shortest bandwidth phase of any cross-rank transfer,
/// or `big`, that of any send not gated (`Lookahead::gated_transfer`), while no
/// gated send can start soon.
///
/// A gated send waits for its gating send to end. Until the gating send
/// has started, it starts at T or later and ends `big` later, so the gated
/// send's data lands after T + `big` + `small`; once it has started, its
/// end E is known and the data lands after max(E, T) + `small`. The
/// driver keeps the ends of the gating sends whose gated ones are not yet
/// done (`Part::gates`); with G the earliest of them, the limit is
/// min(T + `big`, max(G, T) + `small`) (`Horizon::limit`). A pipeline's
/// short last segment then holds the lookahead down only while it is
/// near, where it held all of it down before (the paper's 1 GiB allreduce:
/// 13,867 sweeps instead of 37,547).
///
/// Where the overhead and the nearest link's latency are longer than that
/// shortest phase (small or empty messages: a ring's chunks of a small
/// buffer on thousands of ranks), a send's flow is set when the CPU
/// *starts* its overhead (`flows_at_dispatch`), latency and bandwidth
/// phase alike: its end is then known, so its data lands at least the
/// overhead, the nearest latency and the shortest phase after the instant
/// that dispatched it, and that is the lookahead (the gates' too, each
/// phase that much longer). (Otherwise a send whose overhead or latency is
/// running lands its data a phase after an event already pending: with
/// empty messages and no latency the lookahead was 0 and such runs went
/// event by event.) The flow is the same flow, from the overhead's and the
/// latency's ends: its end differs from the one computed at those instants
/// only by their rounding (an instant can begin a relative
/// `LEVEL_TOLERANCE` before them), as this driver differs from `Sim`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Horizon {
    pub(super) small: f64,
    pub(super) big: f64,
    pub(super) flows_at_dispatch: bool,
}

impl Horizon {
    /// The limit of a sweep from the earliest event of all, `base`, and the
    /// earliest end of a gating send, `gate` (`INFINITY`: none).
    pub(super) fn limit(&self, base: f64, gate: f64) -> f64 {
        // A gated send starts when its rank handles its gate's end, at an
        // instant that may begin a relative `LEVEL_TOLERANCE` before it
        // (`Part::end_send` keeps the end lowered by twice that); when
        // `small` is within such roundings, only `small` holds.
        if self.big <= self.small || self.small <= 4.0 * LEVEL_TOLERANCE * (base.abs() + self.big) {
            return base + self.small;
        }
        (base + self.big).min(gate.max(base) + self.small)
    }
}

/// For each plane of a tiled run, the earliest any event of it can be: its
/// own earliest pending one (`from`), or one that data from another plane
/// sets off. Data from a plane whose events are at or after T lands next
/// door at or after the lookahead's limit from T, and so on around the
/// ring of planes: shortest paths, the limit standing for a step's length.
pub(super) fn reach(from: &[f64], la: Horizon, gate: f64, reach: &mut Vec<f64>) {
    reach.clear();
    reach.extend_from_slice(from);
    let m = reach.len();
    loop {
        let mut lowered = false;
        for i in (0..m).chain((0..m).rev()) {
            let beside = reach[(i + m - 1) % m].min(reach[(i + 1) % m]);
            let by = la.limit(beside, gate);
            if by < reach[i] {
                reach[i] = by;
                lowered = true;
            }
        }
        if !lowered {
            return;
        }
    }
}

/// As [`reach`], for one thread's run of planes in a tiled run on several
/// threads (`Local::run_relay`): a line, not a ring, whose first plane
/// receives data from the thread before no sooner than `before`, and whose
/// last from the thread after no sooner than `after`.
///
/// On a line a step of the lookahead only ever lengthens a path, so one
/// pass each way finds the shortest paths: the forward pass those from
/// the left, the backward pass those from the right.
pub(super) fn reach_line(
    from: &[f64],
    before: f64,
    after: f64,
    la: Horizon,
    gate: f64,
    reach: &mut Vec<f64>,
) {
    reach.clear();
    reach.extend_from_slice(from);
    let m = reach.len();
    if m == 0 {
        return;
    }
    reach[0] = reach[0].min(before);
    reach[m - 1] = reach[m - 1].min(after);
    for i in 1..m {
        let by = la.limit(reach[i - 1], gate);
        if by < reach[i] {
            reach[i] = by;
        }
    }
    for i in (0..m - 1).rev() {
        let by = la.limit(reach[i + 1], gate);
        if by < reach[i] {
            reach[i] = by;
        }
    }
}

/// The lookahead of a run, or what this driver does not take: the node
/// model must be `Sim`'s alone-flow case (max-min, equal shares, eager, no
/// node links, no trace), ranks on distinct nodes (two ranks on one node
/// exchange data in no time), and a positive lookahead.
pub(crate) fn lookahead<P: Lookahead>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
) -> std::result::Result<Horizon, &'static str> {
    let refused = [
        (cfg.sharing != Sharing::MaxMin, "reservation sharing"),
        (cfg.fairness != Fairness::Equal, "RTT-weighted shares"),
        (cfg.rendezvous, "rendezvous"),
        (cfg.simgrid.is_some(), "SimGrid's flow model"),
        (topo.profiles.is_some(), "a network that changes (profiles)"),
        (cfg.trace, "a trace"),
        (
            cfg.injection_bandwidth.is_some() || cfg.ejection_bandwidth.is_some(),
            "injection or ejection links",
        ),
    ];
    if let Some((_, why)) = refused.iter().find(|(no, _)| *no) {
        return Err(why);
    }
    let mut nodes = topo.rank_node.clone();
    nodes.sort_unstable();
    if nodes.windows(2).any(|w| w[0] == w[1]) {
        return Err("ranks that share a node");
    }
    let Some(elems) = src.min_send_count() else {
        // No rank sends to another: each runs alone to its end.
        return Ok(Horizon {
            small: f64::INFINITY,
            big: f64::INFINITY,
            flows_at_dispatch: false,
        });
    };
    let fastest = topo.links.iter().map(|l| l.bandwidth).fold(0.0, f64::max);
    let nearest = topo
        .links
        .iter()
        .map(|l| l.latency)
        .fold(f64::INFINITY, f64::min);
    // A flow's data lands bytes / rate after its bandwidth phase starts,
    // which is an event of its own (`FlowStart`) once the route has a
    // latency: the latency does not count. A message of no bytes lands its
    // route's latency after the overhead is paid; if there can be such
    // messages, the others carry at least one element.
    let elem = src.header().elem_bytes();
    let phase = |elems: u64| (elems.saturating_mul(elem) + cfg.header_bytes) as f64 / fastest;
    // Flows are set when their overhead starts (above) where the overhead
    // and the nearest latency are longer than the shortest phase: there the
    // lookahead more than doubles, and elsewhere runs keep the bits of the
    // rule after. A gated send's flow is set once its gating send has
    // ended: the gates hold as in that rule, each phase that much longer.
    let ahead = cfg.overhead_s + nearest;
    let flows_at_dispatch = ahead > phase(elems) && ahead.is_finite();
    let (small, big) = if flows_at_dispatch {
        let small = ahead + phase(elems);
        let big = match src.min_ungated_send_count() {
            Some(ungated) => ahead + phase(ungated).max(phase(elems)),
            None => small,
        };
        (small, big)
    } else {
        let small = if phase(elems) > 0.0 {
            phase(elems)
        } else {
            nearest.min(elem as f64 / fastest)
        };
        // Gated sends only where every send's data takes time: a message of
        // no bytes lands its latency after a gate's end, not `small` after
        // it.
        let big = match src.min_ungated_send_count() {
            Some(ungated) if phase(elems) > 0.0 => phase(ungated).max(small),
            _ => small,
        };
        (small, big)
    };
    (small > 0.0 && !small.is_nan() && !big.is_nan())
        .then_some(Horizon {
            small,
            big,
            flows_at_dispatch,
        })
        .ok_or("a lookahead of zero (messages of no time)")
}
