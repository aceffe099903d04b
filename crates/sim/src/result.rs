//! What a simulation reports: `SimResult` (times, flows, per-link
//! statistics, the driver that ran and its counts), trace spans and link
//! samples, and how a driver's totals become one.

use super::{fold, LinkUse};
use serde::Serialize;
use std::time::Instant;
use topocoll_topology::{LinkId, Topology};

/// What happened on one directed link.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LinkStats {
    pub from: u32,
    pub to: u32,
    /// Bytes carried.
    pub bytes: f64,
    /// Seconds during which at least one flow was on the link.
    pub busy_s: f64,
    /// bytes / (bandwidth × completion time).
    pub utilisation: f64,
    /// Most flows on the link at once.
    pub peak_flows: u32,
}

/// One span of a rank's timeline (for traces).
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub rank: u32,
    pub name: String,
    pub start_s: f64,
    pub end_s: f64,
}

/// The outcome of a simulation.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimResult {
    /// Completion time: when the last operation of any rank completed (s).
    pub time_s: f64,
    /// When each rank's last operation completed (its start if it has none).
    pub rank_finish_s: Vec<f64>,
    /// Point-to-point transfers simulated.
    pub flows: u64,
    /// Bytes moved over the network (not counting self-sends).
    pub network_bytes: f64,
    /// Network links (injection/ejection links excluded).
    pub links: Vec<LinkStats>,
    /// Share of the network's directed links that ever carried two or more flows at once.
    pub links_shared_fraction: f64,
    /// Share of links that carried anything.
    pub links_used_fraction: f64,
    /// How the run was driven, and the work it took (the same results may
    /// come from several drivers): flattened into the JSON.
    #[serde(flatten)]
    pub run: RunStats,
    #[serde(skip)]
    pub spans: Vec<Span>,
    /// With `trace`: when each op of each rank completed (s), by rank and
    /// op index.
    #[serde(skip)]
    pub op_done_s: Vec<Vec<f64>>,
    /// With `trace`: the flows on each network link, sampled whenever they
    /// change (the trace's per-link counters).
    #[serde(skip)]
    pub link_samples: Vec<LinkSample>,
}

/// How a simulation ran, apart from what it found: its driver and the work
/// the driver did.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct RunStats {
    /// Events handled and flows whose rate was recomputed (solver work).
    pub events: u64,
    pub recomputes: u64,
    /// Solve rounds (a recomputation takes more than one when its affected set grows).
    pub rounds: u64,
    /// Recomputations that solved every active flow.
    pub full_solves: u64,
    pub recomputed_flows: u64,
    /// Flows whose end a recomputation moved (the least work any exact
    /// solver must do).
    pub rescheduled_flows: u64,
    /// Wall time of the simulation itself (s).
    pub wall_s: f64,
    /// Ranks each simulated rank stood for: above 1 when the run was folded
    /// (`SimConfig::fold`); `events` and the solver counts are then the
    /// folded run's.
    pub folded: u64,
    /// The driver that ran the simulation and, for the event driver, why
    /// the by-rank one did not: "by rank", "event, folded (N copies)" or
    /// "event (REASON)".
    pub driver: String,
    /// Whether the run went rank by rank (`SimConfig::by_rank`), and on
    /// how many threads (0 when it went event by event).
    pub by_rank_threads: usize,
    /// Sweeps the by-rank driver ran (the most of any thread): each
    /// runs every rank with events due up to the lookahead (`sim::by_rank`).
    pub by_rank_sweeps: u64,
    /// Planes a tiled rank-by-rank run cut the ranks into (0: not tiled;
    /// `sim::by_rank`'s `Tiles`): its sweeps then run one plane each.
    pub by_rank_planes: usize,
}

/// A link's number of flows from `time_s` on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSample {
    pub time_s: f64,
    pub link: LinkId,
    pub flows: u32,
}

/// A run's counts, before folding multiplies them back.
pub(super) struct Totals {
    pub(super) flows: u64,
    pub(super) network_bytes: f64,
    pub(super) events: u64,
    pub(super) recomputes: u64,
    pub(super) rounds: u64,
    pub(super) full_solves: u64,
    pub(super) recomputed_flows: u64,
    pub(super) rescheduled_flows: u64,
}

/// The result of a finished run from each simulated rank's finish time and
/// each link's statistics.
pub(super) fn results(
    topo: &Topology,
    fold: Option<&fold::Fold>,
    finish: &[f64],
    link_use: &[LinkUse],
    totals: Totals,
    wall: Instant,
    spans: Vec<Span>,
) -> SimResult {
    let copies = fold.map_or(1, |f| f.copies);
    let simulated = finish.len();
    let rank_finish_s: Vec<f64> = (0..simulated * copies)
        .map(|r| finish[r % simulated])
        .collect();
    let time_s = rank_finish_s.iter().copied().fold(0.0, f64::max);
    let n = topo.links.len();
    let links: Vec<LinkStats> = topo.links[..n]
        .iter()
        .enumerate()
        .map(|(l, link)| {
            let u = &link_use[fold.map_or(l, |f| f.canon[l] as usize)];
            LinkStats {
                from: link.from,
                to: link.to,
                bytes: u.bytes,
                busy_s: u.busy,
                utilisation: if time_s > 0.0 {
                    u.bytes / (link.bandwidth * time_s)
                } else {
                    0.0
                },
                peak_flows: u.peak,
            }
        })
        .collect();
    let shared = links.iter().filter(|l| l.peak_flows >= 2).count();
    let used = links.iter().filter(|l| l.peak_flows >= 1).count();
    let frac = |k: usize| if n == 0 { 0.0 } else { k as f64 / n as f64 };
    SimResult {
        time_s,
        rank_finish_s,
        flows: totals.flows * copies as u64,
        network_bytes: totals.network_bytes * copies as f64,
        links_shared_fraction: frac(shared),
        links_used_fraction: frac(used),
        links,
        run: RunStats {
            events: totals.events,
            recomputes: totals.recomputes,
            rounds: totals.rounds,
            full_solves: totals.full_solves,
            recomputed_flows: totals.recomputed_flows,
            rescheduled_flows: totals.rescheduled_flows,
            wall_s: wall.elapsed().as_secs_f64(),
            folded: copies as u64,
            driver: String::new(),
            by_rank_threads: 0,
            by_rank_sweeps: 0,
            by_rank_planes: 0,
        },
        spans,
        op_done_s: Vec::new(),
        link_samples: Vec::new(),
    }
}

/// Bytes carried by each class of link (`Topology::link_class`: a
/// dragonfly's cable colours, a fat tree's levels), summed over both
/// directions, in the order the classes first appear; empty where the
/// network has no classes.
pub fn bytes_by_class(topo: &Topology, links: &[LinkStats]) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for (l, stats) in links.iter().enumerate().take(topo.links.len()) {
        let Some(class) = topo.link_class(l as LinkId) else {
            continue;
        };
        match out.iter_mut().find(|(c, _)| *c == class) {
            Some((_, bytes)) => *bytes += stats.bytes,
            None => out.push((class, stats.bytes)),
        }
    }
    out
}
