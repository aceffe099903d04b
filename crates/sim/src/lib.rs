//! topocoll's simulator.
//!
//! The crate runs a schedule on a topology under a node model (flow-level
//! sharing by events, folding or rank by rank; the packet model of
//! [`packet`]). It knows nothing of how schedules are made: pricing a
//! request (building its schedule, then simulating and bounding it) is
//! `topocoll_optimize::price`, above it. See `DESIGN.md`.
//!
//! # Discrete-event, flow-level simulation of a schedule on a topology
//!
//! Semantics (DESIGN.md, "Simulation semantics"):
//! - A transfer is a flow along its route. Its rate is its max-min fair share
//!   of every directed link it crosses (optionally weighted by 1/route latency,
//!   as SimGrid does), recomputed whenever a flow starts or ends, with an
//!   optional cap per flow; or, under the reservation policy, the bottleneck
//!   bandwidth of its path, booked on each hop from when the message's front
//!   reaches it, at the earliest start that fits (`calendar`).
//! - Time of a transfer = start-up latency (per-message overhead `o` on the
//!   sender's CPU, plus the route's summed link latencies) + bytes at the
//!   allocated rate. Routes are cut-through: during the bandwidth phase the
//!   flow holds every link of its route at once. The latency elapses before
//!   the flow takes bandwidth (as in SimGrid).
//! - Nodes: `engines` transfers driven at once per rank; a rank's ready sends
//!   go to free engines in program order; an engine is busy from the moment it
//!   takes a send until the data has arrived. One CPU per rank runs
//!   per-message overhead, combine operations (bytes / compute bandwidth) and
//!   compute operations one at a time, uninterrupted: the overhead of a send
//!   that holds an engine first, otherwise the waiting task first in program
//!   order (tasks ready at one instant are all queued first). Messages are eager: a transfer does not wait for its
//!   receive to be posted; the receive completes when it is posted and the data
//!   has arrived (plus the combine, for a combining receive). Local copies are free.
//!   Under `rendezvous` (SimGrid's mailbox matching) a send that has an engine
//!   waits, holding it, until its receive is posted; then its latency phase starts.
//! - Events at the same instant (within a relative 1e-12) are handled together
//!   and the rates are recomputed once for the batch, so symmetric patterns
//!   cost one recomputation per wave rather than one per flow.
//! - The run is deterministic: the same inputs give the same result, bit for bit.
//! - A run that is the same on every translate of a torus is simulated on one
//!   slice of ranks (`fold`), with the same results to rounding.
//!
//! Where things are: this file holds the entry points ([`simulate`],
//! [`simulate_source`]), the one choice of driver (`run`) and the event
//! driver (`Sim`: one event queue, the network's flows, the alone-flow
//! bypass of the solver, reservation bookings). The node model is `node`,
//! the by-rank driver `by_rank`, folding `fold`, max-min sharing
//! `fairshare`, reservation sharing `calendar`, the queues `queue`, what a
//! run is asked `config` and what it reports `result`; `packet` is the
//! packet-level model.

mod by_rank;
pub mod calendar;
mod config;
pub mod error;
mod fairshare;
mod fold;
mod node;
pub mod packet;
mod profiles;
mod queue;
mod result;
mod routes;
mod sharing;
pub mod simgrid;
mod trace;

pub use config::{Fairness, Sharing, SimConfig, Skew};
pub use error::{Error, Result, SimKind};
pub use fairshare::{reference_maxmin, MaxMin, Reschedule, SolveStart, LEVEL_TOLERANCE};
pub use result::{bytes_by_class, LinkSample, LinkStats, RunStats, SimResult, Span};
use result::{results, Totals};
pub use routes::check_routes;
use routes::send_route;
pub use trace::write_chrome_trace;

use crate::error::fail;
use std::time::Instant;
use topocoll_base::limits::Deadline;
use topocoll_schedule::lookahead::Lookahead;
use topocoll_schedule::{Materialised, Op, OpId, Schedule};
use topocoll_topology::{LinkId, Topology};

use node::{OpWindow, RankState, CPU_IDLE};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum EvKind {
    /// A rank starts (after its skew).
    Start,
    /// The CPU paid a send's overhead: its latency phase begins.
    OverheadDone,
    /// The CPU finished a combine, compute or combining receive: the op completes.
    TaskDone,
    /// A transfer's latency has elapsed: its bandwidth phase starts.
    FlowStart,
    /// A reservation-sharing transfer's bandwidth phase ends (max-min flows
    /// end through the completion queue).
    FlowEnd,
    /// A zero-byte or self transfer arrives.
    Arrive,
}

#[derive(Clone, Copy, Debug)]
struct Event {
    time: f64,
    kind: EvKind,
    a: u32,
    b: u32,
}

/// A transfer's links.
type Route = smallvec::SmallVec<[LinkId; 6]>;

/// A transfer in progress.
#[derive(Clone, Debug, Default)]
struct Transfer {
    src: u32,
    send_op: OpId,
    dst: u32,
    recv_op: OpId,
    bytes: f64,
    /// Inline for short routes: one cache line less per transfer.
    route: Route,
    dispatched: f64,
    /// Set while the flow is alone on its links and kept out of the solver.
    alone: Option<Alone>,
    /// Its bound besides its cap under SimGrid's model on a network that
    /// changes: its slowest link's bandwidth when it started (`profiles`).
    bound: f64,
}

/// A max-min flow that started with no other flow in the solver and none on
/// its links, and has been alone since. The solver would give it its
/// bottleneck capacity and change nothing else, so it is not entered: in a
/// pipeline whose flows never meet (Trinaryx3's edge-disjoint trees) that is
/// every flow, and the solver's bookkeeping is a fifth of the run. It enters
/// the solver, as the solves would have left it, when any flow must
/// (`Sim::begin_bandwidth`).
#[derive(Clone, Copy, Debug)]
struct Alone {
    /// When it started, then (once `solved`) the instant whose solve would
    /// have set its rate: the solver's `since`.
    since: f64,
    cap: f64,
    rate: f64,
    /// Whether the end of its first instant has passed (its completion is
    /// queued, as the solve at that instant would have queued it).
    solved: bool,
    /// Its place in `Sim::alone`.
    index: u32,
}

/// What the simulator counts on one link, in one place (a flow updates all
/// of it at once; separate arrays cost a cache miss each on large networks).
#[derive(Clone, Copy, Default)]
struct LinkUse {
    /// Bytes carried.
    bytes: f64,
    /// Seconds with at least one flow, up to `since`.
    busy: f64,
    /// When the link last went from no flows to one.
    since: f64,
    /// Flows on the link now, and the most at once.
    count: u32,
    peak: u32,
}

/// A flow's cap: `--flow-cap`, and `--tcp-window` over twice its route's
/// latency (asked for only under a window).
fn flow_cap(cfg: &SimConfig, route_latency: impl FnOnce() -> f64) -> f64 {
    let mut cap = cfg.flow_cap.unwrap_or(f64::INFINITY);
    if let Some(w) = cfg.tcp_window {
        let lat = route_latency();
        if lat > 0.0 {
            cap = cap.min(w / (2.0 * lat));
        }
    }
    cap
}

/// Simulates `s` on `topo`. The schedule should have passed the verifier;
/// the simulator still returns an error (never hangs) if it cannot complete.
pub fn simulate(s: &Schedule, topo: &Topology, cfg: &SimConfig) -> Result<SimResult> {
    let wall = Instant::now();
    check(s, topo, cfg)?;
    // Unmatched messages are the verifier's finding; here (a schedule
    // simulated without it) they are bad input.
    let src = Materialised::new(s).map_err(|e| match e {
        topocoll_schedule::Error::Verify(v) => {
            fail!(Sim, Schedule, "the schedule's messages do not match: {v}")
        }
        other => other.into(),
    })?;
    run(&src, topo, cfg, wall)
}

/// Simulates a schedule read op by op (a generated pipeline, say), with the
/// same semantics and the same result as [`simulate`] on its materialised form.
pub fn simulate_source<P: Lookahead + Sync>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
) -> Result<SimResult> {
    let wall = Instant::now();
    let header = src.header();
    // Paths are checked on the header's programs: a source that names
    // paths must hold every op there.
    if !header.paths.is_empty() {
        let ops: u64 = (0..header.ranks).map(|r| src.len(r)).sum();
        if ops != header.num_ops() as u64 {
            return Err(fail!(Sim, Schedule,
                "a schedule generated op by op cannot name per-send paths (its header holds {} ops of {ops})",
                header.num_ops()
            ));
        }
    }
    check(header, topo, cfg)?;
    run(src, topo, cfg, wall)
}

/// The one place that chooses the driver: folded (event by event on one
/// slice of ranks) if the run folds; else rank by rank if the node model
/// and network allow it (`by_rank::lookahead` says why not) and no flow
/// would share a link (the by-rank driver stops at the first that would,
/// and the run starts again); else event by event. The result names the
/// driver and, for the event driver, why the by-rank one did not run.
fn run<P: Lookahead + Sync>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
    wall: Instant,
) -> Result<SimResult> {
    let fold = fold::detect(src, topo, cfg);
    let why_not = if let Some(f) = &fold {
        format!("folded ({} copies)", f.copies)
    } else if !cfg.by_rank {
        "(--no-by-rank)".to_string()
    } else {
        match by_rank::lookahead(src, topo, cfg) {
            Ok(lookahead) => match by_rank::simulate(src, topo, cfg, lookahead, wall) {
                // The by-rank driver has no one clock to stop at: its
                // result is held against `stop_past` whole.
                Some(result) => {
                    let mut r = result?;
                    past_stop(&r, cfg)?;
                    r.run.driver = "by rank".into();
                    return Ok(r);
                }
                None => "(by rank stopped: a flow would share a link)".to_string(),
            },
            Err(why) => format!("(by rank does not take {why})"),
        }
    };
    let mut r = Sim::new(src, topo, cfg, fold).run(wall)?;
    past_stop(&r, cfg)?;
    r.run.driver = if r.run.folded > 1 {
        format!("event, {why_not}")
    } else {
        format!("event {why_not}")
    };
    Ok(r)
}

/// [`Error::PastStop`] for a run that ended past `SimConfig::stop_past`
/// (a folded run's end comes after its clock's last event).
fn past_stop(r: &SimResult, cfg: &SimConfig) -> Result<()> {
    match cfg.stop_past {
        Some(past_s) if r.time_s > past_s => Err(Error::PastStop { past_s }),
        _ => Ok(()),
    }
}

fn check(s: &Schedule, topo: &Topology, cfg: &SimConfig) -> Result<()> {
    cfg.check(s.ranks)?;
    if topo.profiles.is_some() && cfg.sharing == Sharing::Reservation {
        return Err(fail!(Sim, Config,
            "the network's profiles change its links over time; reservation sharing books them as they are at the start (use max-min sharing)"
        ));
    }
    if topo.num_ranks() != s.ranks {
        return Err(fail!(
            Sim,
            Schedule,
            "the schedule has {} ranks but topology {} has {}",
            s.ranks,
            topo.name,
            topo.num_ranks()
        ));
    }
    check_routes(s, topo)
}

struct Sim<'a, P: Lookahead> {
    src: &'a P,
    topo: &'a Topology,
    cfg: &'a SimConfig,
    ranks: Vec<RankState>,
    /// Pending events by (time, order of scheduling): a tie goes to the one
    /// scheduled first. The value is (`seq`, kind, a, b).
    events: queue::RadixQueue<(u64, EvKind, u32, u32)>,
    seq: u64,
    transfers: Vec<Transfer>,
    free_transfers: Vec<u32>,
    /// How the links are shared, and its state (`sharing`).
    links: sharing::Links,
    /// Latency of every link: the network's, then (if configured) one
    /// injection and one ejection link per node.
    latency: Vec<f64>,
    inj_base: Option<usize>,
    ej_base: Option<usize>,
    /// Statistics of every link (network and node links).
    link_use: Vec<LinkUse>,
    flows: u64,
    network_bytes: f64,
    handled: u64,
    /// The event count at which to publish progress next (never without
    /// `SimConfig::progress`).
    next_report: u64,
    spans: Vec<Span>,
    /// With `trace`: when each op of each rank completed.
    op_done: Vec<Vec<f64>>,
    /// Ops that became ready at the current instant, handled before time moves.
    ready_now: Vec<(u32, OpId)>,
    /// Rendezvous: sends holding an engine until their receive is posted,
    /// keyed by (receiving rank, receive op).
    parked: std::collections::HashMap<(u32, OpId), (u32, OpId)>,
    /// Ranks that may have sends to give to engines. Dispatch waits until
    /// everything that becomes ready at this instant is queued, so engines
    /// take sends in program order.
    to_dispatch: Vec<u32>,
    dispatch_pending: Vec<bool>,
    /// Scratch for routing a transfer.
    route_buf: Vec<LinkId>,
    /// Each rank's last topology route (`Op::Send::route` 0): its peer, its
    /// summed latency and its links (as `Sim::route_links` gives them). A
    /// ring's rank sends to one peer thousands of times, and computing a
    /// route divides its way through the coordinates.
    last_route: Vec<(u32, f64, Route)>,
    /// When set, only ranks 0..stride are simulated (see `fold`).
    fold: Option<fold::Fold>,
    /// Per-stream rate tables b(P) of the network's links that have one
    /// (WAN links; `Topology::stream_tables`), empty when none has.
    stream: Vec<Option<&'a [f64]>>,
    /// With `trace`: every change of a network link's flow count.
    link_samples: Vec<LinkSample>,
    /// The network's next changes (`profiles`), each rank's host's speed
    /// profile, and each link's bandwidth now (both empty on a network
    /// that does not change).
    changes: profiles::Changes,
    rank_speed: Vec<Option<&'a topocoll_topology::profile::Profile>>,
    bandwidth: Vec<f64>,
    /// Which network links are off now (empty when no link has a state
    /// profile).
    link_off: Vec<bool>,
}

impl<'a, P: Lookahead> Sim<'a, P> {
    fn new(
        src: &'a P,
        topo: &'a Topology,
        cfg: &'a SimConfig,
        fold: Option<fold::Fold>,
    ) -> Sim<'a, P> {
        let ranks = fold.as_ref().map_or(src.header().ranks, |f| f.stride);
        // A link that does not share (FATPIPE) bounds each flow by its
        // bandwidth (`cap_of`) and the sum of them by nothing.
        let fatpipe = topo.fatpipe();
        let mut capacity: Vec<f64> = topo
            .links
            .iter()
            .enumerate()
            .map(|(l, link)| match fatpipe.get(l) {
                Some(true) => f64::INFINITY,
                _ => link.bandwidth,
            })
            .collect();
        let mut latency: Vec<f64> = topo.links.iter().map(|l| l.latency).collect();
        let mut inj_base = None;
        let mut ej_base = None;
        if let Some(bw) = cfg.injection_bandwidth {
            inj_base = Some(capacity.len());
            capacity.extend(std::iter::repeat_n(bw, topo.num_nodes));
            latency.extend(std::iter::repeat_n(0.0, topo.num_nodes));
        }
        if let Some(bw) = cfg.ejection_bandwidth {
            ej_base = Some(capacity.len());
            capacity.extend(std::iter::repeat_n(bw, topo.num_nodes));
            latency.extend(std::iter::repeat_n(0.0, topo.num_nodes));
        }
        let n = capacity.len();
        let rank_states = (0..ranks)
            .map(|_| RankState {
                ops: OpWindow::default(),
                started: false,
                ready_sends: queue::SortedQueue::default(),
                engines_busy: 0,
                cpu_running: CPU_IDLE,
                cpu_queue: queue::SortedQueue::default(),
                finish: 0.0,
                done: 0,
            })
            .collect();
        Sim {
            src,
            topo,
            cfg,
            ranks: rank_states,
            events: queue::RadixQueue::default(),
            seq: 0,
            transfers: Vec::new(),
            free_transfers: Vec::new(),
            links: sharing::Links::new(cfg, capacity),
            latency,
            inj_base,
            ej_base,
            link_use: vec![LinkUse::default(); n],
            flows: 0,
            network_bytes: 0.0,
            handled: 0,
            next_report: if cfg.progress.is_some() || cfg.deadline != Deadline::NONE {
                0
            } else {
                u64::MAX
            },
            spans: Vec::new(),
            op_done: if cfg.trace {
                (0..ranks)
                    .map(|r| vec![f64::NAN; src.len(r) as usize])
                    .collect()
            } else {
                Vec::new()
            },
            ready_now: Vec::new(),
            parked: std::collections::HashMap::new(),
            to_dispatch: Vec::new(),
            dispatch_pending: vec![false; ranks],
            route_buf: Vec::new(),
            last_route: vec![(u32::MAX, 0.0, Route::new()); ranks],
            fold,
            stream: topo.stream_tables(),
            link_samples: Vec::new(),
            changes: profiles::first_changes(topo),
            rank_speed: profiles::rank_speeds(topo, ranks),
            link_off: profiles::link_states(topo),
            bandwidth: match topo.profiles {
                Some(_) => topo.links.iter().map(|l| l.bandwidth).collect(),
                None => Vec::new(),
            },
        }
    }

    fn elem_bytes(&self) -> u64 {
        self.src.header().elem_bytes()
    }

    /// Whether receive `i` of rank `r` is posted: its dependencies are done,
    /// or it has none and the rank has started.
    fn posted(&mut self, r: u32, i: OpId) -> bool {
        let rank = &mut self.ranks[r as usize];
        let started = rank.started;
        rank.ops.get(self.src, r as usize, i).posted(started)
    }

    fn push(&mut self, time: f64, kind: EvKind, a: u32, b: u32) {
        self.seq += 1;
        self.events.push(time, (self.seq, kind, a, b));
    }

    fn run(mut self, wall: Instant) -> Result<SimResult> {
        for (r, t) in self
            .cfg
            .start_offsets(self.ranks.len())
            .into_iter()
            .enumerate()
        {
            self.ranks[r].finish = t;
            self.push(t, EvKind::Start, r as u32, 0);
        }
        loop {
            let next_event = self.events.peek().map(|(t, _)| t);
            let next_end = self.links.next_end().map(|(t, _)| t);
            let next_change = self.next_change();
            let now = match (next_event, next_end) {
                // Flows held at no rate wait for a change.
                (None, None) => match next_change {
                    Some(c) if self.links.solver().is_some_and(|m| !m.is_idle()) => c,
                    _ => break,
                },
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
            };
            if let Some(c) = next_change.filter(|&c| c <= now) {
                self.apply_changes(c)?;
                self.settle(c);
                continue;
            }
            if let Some(past_s) = self.cfg.stop_past.filter(|&t| now > t) {
                return Err(Error::PastStop { past_s });
            }
            if !now.is_finite() {
                return Err(fail!(Sim, Config,
                    "the simulated time overflowed (an event at {now} s): the overheads, latencies, \
                     bandwidths or sizes given are out of range"
                ));
            }
            if self.handled >= self.next_report {
                self.report_progress()?;
            }
            let horizon = now + now.abs() * LEVEL_TOLERANCE;
            loop {
                node::drain_ready(&mut self, now)?;
                if let Some((t, id)) = self.links.next_end() {
                    if t <= horizon {
                        self.links.take_end(id);
                        self.handled += 1;
                        self.end_bandwidth(t, id);
                        continue;
                    }
                }
                match self.events.peek() {
                    Some((t, _)) if t <= horizon => {
                        let (time, (_, kind, a, b)) = self.events.pop().expect("peeked");
                        self.handle(Event { time, kind, a, b })?;
                        continue;
                    }
                    _ => {}
                }
                if self.to_dispatch.is_empty() {
                    break;
                }
                let mut ranks = std::mem::take(&mut self.to_dispatch);
                ranks.sort_unstable();
                for &r in &ranks {
                    self.dispatch_pending[r as usize] = false;
                    node::dispatch(&mut self, now, r)?;
                }
                // Dispatching can ask for more (a send's overhead queues a
                // CPU task); keep those requests.
                ranks.clear();
                let asked = std::mem::replace(&mut self.to_dispatch, ranks);
                self.to_dispatch.extend(asked);
            }
            self.settle(now);
        }
        self.finish(wall)
    }

    /// Publishes the share of ops completed (see `SimConfig::progress`)
    /// and gives up once `SimConfig::deadline` has passed. Out of line and
    /// cold: the event loop's code stays as it was.
    #[cold]
    #[inline(never)]
    fn report_progress(&mut self) -> Result<()> {
        self.next_report = self.handled + (1 << 16);
        // Both summed here, every 65,536 events (O(ranks) each time),
        // rather than counted in the hot path.
        let share = || {
            let total: u64 = (0..self.ranks.len()).map(|r| self.src.len(r)).sum();
            let completed: u64 = self.ranks.iter().map(|r| r.done as u64).sum();
            (completed, total)
        };
        if let Some(p) = &self.cfg.progress {
            let (completed, total) = share();
            let millionths = completed.saturating_mul(1_000_000) / total.max(1);
            p.store(millionths, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(self.cfg.deadline.check(|| {
            let (completed, total) = share();
            format!("simulating ({completed} of {total} ops done)")
        })?)
    }

    fn handle(&mut self, e: Event) -> Result<()> {
        self.handled += 1;
        let t = e.time;
        match e.kind {
            EvKind::Start => {
                let (r, src) = (e.a, self.src);
                let parked: Vec<OpId> = self
                    .parked
                    .keys()
                    .filter(|&&(pr, pi)| pr == r && src.dep_count(r as usize, pi) == 0)
                    .map(|&(_, pi)| pi)
                    .collect();
                node::start(self, r, parked.into_iter());
            }
            EvKind::OverheadDone => node::task_done(self, t, e.a, e.b, true)?,
            EvKind::TaskDone => node::task_done(self, t, e.a, e.b, false)?,
            EvKind::FlowStart => self.begin_bandwidth(t, e.a),
            // Only reservation-sharing flows end through the event heap.
            EvKind::FlowEnd => self.end_bandwidth(t, e.a),
            EvKind::Arrive => self.arrive(t, e.a),
        }
        Ok(())
    }

    /// Asks for rank r's engines and CPU to be given work at the end of this
    /// instant, once everything that becomes ready at it is queued.
    fn want_dispatch(&mut self, r: u32) {
        if !self.dispatch_pending[r as usize] {
            self.dispatch_pending[r as usize] = true;
            self.to_dispatch.push(r);
        }
    }

    /// The send's overhead is paid: route it and wait out its latency.
    fn begin_latency(&mut self, now: f64, r: u32, i: OpId) -> Result<()> {
        let Op::Send {
            peer,
            region,
            route,
            ..
        } = self.src.op(r as usize, i)
        else {
            unreachable!("only sends start transfers")
        };
        // The simulated rank that receives and its receive. Folded: the
        // peer's representative, at the receive where this send's translate
        // (from rank r − k·stride, to the representative) lands.
        let (dst, recv_op) = match &self.fold {
            None => (peer, self.src.partner(r as usize, i)),
            Some(f) => {
                let ranks = f.stride * f.copies;
                let k = peer as usize / f.stride;
                let sender = (r as usize + ranks - k * f.stride) % ranks;
                (
                    (peer as usize % f.stride) as u32,
                    self.src.partner(sender, i),
                )
            }
        };
        if self.cfg.rendezvous && peer != r && !self.posted(dst, recv_op) {
            self.parked.insert((dst, recv_op), (r, i));
            return Ok(());
        }
        let id = self.free_transfers.pop().unwrap_or_else(|| {
            self.transfers.push(Transfer::default());
            self.transfers.len() as u32 - 1
        });
        let mut path = std::mem::take(&mut self.route_buf);
        path.clear();
        // A topology route is a function of the two ranks: the rank's last
        // one is reused with its latency (the summed latencies miss the
        // cache as often as the route's computation does).
        let topology_route = route == 0 && peer != r;
        let lat: f64 = match &self.last_route[r as usize] {
            (last_peer, lat, last) if topology_route && *last_peer == peer => {
                path.extend_from_slice(last);
                *lat
            }
            _ => {
                if peer != r {
                    self.route_links(r, i, peer, dst, route, &mut path)?;
                }
                let lat = path.iter().map(|&l| self.latency[l as usize]).sum();
                if topology_route {
                    let (last_peer, last_lat, last) = &mut self.last_route[r as usize];
                    *last_peer = peer;
                    *last_lat = lat;
                    last.clear();
                    last.extend_from_slice(&path);
                }
                lat
            }
        };
        if !self.link_off.is_empty() {
            self.check_links_on(now, (r, i), dst, &path)?;
        }
        let bytes = if peer == r {
            0.0
        } else {
            (region.count * self.elem_bytes() + self.cfg.header_bytes) as f64
        };
        // SimGrid's latency factor is of the message's size, header
        // included, as SMPI's message is on the wire.
        let lat = match &self.cfg.simgrid {
            Some(m) if peer != r => lat * m.latency_factor.at(bytes),
            _ => lat,
        };
        let t = &mut self.transfers[id as usize];
        *t = Transfer {
            src: r,
            send_op: i,
            dst,
            recv_op,
            bytes,
            route: std::mem::take(&mut t.route),
            dispatched: now,
            alone: None,
            bound: f64::INFINITY,
        };
        t.route.clear();
        t.route.extend_from_slice(&path);
        self.route_buf = path;
        self.flows += 1;
        if bytes == 0.0 || self.transfers[id as usize].route.is_empty() {
            self.push(now + lat, EvKind::Arrive, id, 0);
        } else {
            self.start_sharing(now, lat, id);
        }
        Ok(())
    }

    /// The links of send `i` of rank r to `peer` (simulated as `dst`): the
    /// topology's route (`route` 0) or the op's offset route, folded onto
    /// the representatives' links, between the injection and ejection links.
    fn route_links(
        &self,
        r: u32,
        i: OpId,
        peer: u32,
        dst: u32,
        route: u32,
        path: &mut Vec<LinkId>,
    ) -> Result<()> {
        send_route(self.topo, self.src.header(), (r, i), peer, route, path)?;
        if let Some(f) = &self.fold {
            for l in path.iter_mut() {
                *l = f.canon[*l as usize];
            }
        }
        if let Some(base) = self.inj_base {
            path.insert(
                0,
                (base + self.topo.rank_node[r as usize] as usize) as LinkId,
            );
        }
        if let Some(base) = self.ej_base {
            path.push((base + self.topo.rank_node[dst as usize] as usize) as LinkId);
        }
        Ok(())
    }

    /// Data of transfer `id` has fully arrived: free the sender's engine,
    /// complete the send, and deliver to the receive.
    fn arrive(&mut self, now: f64, id: u32) {
        let t = &self.transfers[id as usize];
        let (src, send_op, dst, recv_op, start) =
            (t.src, t.send_op, t.dst, t.recv_op, t.dispatched);
        if self.cfg.trace {
            self.spans.push(Span {
                rank: src,
                name: format!("send to {dst}"),
                start_s: start,
                end_s: now,
            });
            self.spans.push(Span {
                rank: dst,
                name: format!("recv from {src}"),
                start_s: start,
                end_s: now,
            });
        }
        self.free_transfers.push(id);
        node::send_done(self, now, src, send_op);
        node::data_arrived(self, now, dst, recv_op);
    }

    fn finish(mut self, wall: Instant) -> Result<SimResult> {
        self.finish_sharing();
        let mut waits = String::new();
        if !self.parked.is_empty() {
            waits += &format!(
                ", {} sends wait for a receive that is never posted",
                self.parked.len()
            );
        }
        check_finished(self.src, self.ranks.iter(), &waits)?;
        let (recomputes, rounds, full_solves, recomputed_flows, rescheduled_flows) =
            self.links.solver_counts();
        let totals = Totals {
            flows: self.flows,
            network_bytes: self.network_bytes,
            events: self.handled,
            recomputes,
            rounds,
            full_solves,
            recomputed_flows,
            rescheduled_flows,
        };
        let finish: Vec<f64> = self.ranks.iter().map(|r| r.finish).collect();
        let mut result = results(
            self.topo,
            self.fold.as_ref(),
            &finish,
            &self.link_use,
            totals,
            wall,
            self.spans,
        );
        result.link_samples = self.link_samples;
        result.op_done_s = self.op_done;
        Ok(result)
    }
}

/// The event driver runs the node model on every rank at once: events go to
/// its one queue, dispatch waits for the end of the instant, and a send that
/// has paid its overhead starts its latency phase on the network.
impl<'a, P: Lookahead> node::Host<'a> for Sim<'a, P> {
    type Src = P;
    type Err = Error;
    fn src(&self) -> &'a P {
        self.src
    }
    fn cfg(&self) -> &'a SimConfig {
        self.cfg
    }
    #[inline(always)]
    fn rank(&mut self, r: u32) -> &mut RankState {
        &mut self.ranks[r as usize]
    }
    #[inline(always)]
    fn rank_and_ready(&mut self, r: u32) -> (&mut RankState, &mut Vec<(u32, OpId)>) {
        (&mut self.ranks[r as usize], &mut self.ready_now)
    }
    #[inline(always)]
    fn next_ready(&mut self) -> Option<(u32, OpId)> {
        self.ready_now.pop()
    }
    fn want_dispatch(&mut self, r: u32) {
        Sim::want_dispatch(self, r)
    }
    fn free_task_done(&mut self, now: f64, r: u32, i: OpId) {
        self.push(now, EvKind::TaskDone, r, i);
    }
    fn task_started(&mut self, now: f64, dur: f64, r: u32, i: OpId, compute: bool) -> Result<()> {
        let kind = if compute {
            EvKind::TaskDone
        } else {
            EvKind::OverheadDone
        };
        let end = if self.rank_speed.is_empty() {
            now + dur
        } else {
            self.task_end(now, dur, r, i)
        };
        self.push(end, kind, r, i);
        Ok(())
    }
    fn begin_latency(&mut self, now: f64, r: u32, i: OpId) -> Result<()> {
        Sim::begin_latency(self, now, r, i)
    }
    fn recv_posted(&mut self, now: f64, r: u32, i: OpId) -> Result<()> {
        // (Only rendezvous parks sends: skip the hashing otherwise.)
        if !self.parked.is_empty() {
            if let Some((sr, si)) = self.parked.remove(&(r, i)) {
                Sim::begin_latency(self, now, sr, si)?;
            }
        }
        Ok(())
    }
    fn trace(&mut self, span: Span) {
        self.spans.push(span);
    }

    fn op_done(&mut self, r: u32, i: OpId, now: f64) {
        if let Some(done) = self.op_done.get_mut(r as usize) {
            done[i as usize] = now;
        }
    }
}

/// An error unless every rank ran every op: counted, and each rank's window
/// retired to its end (the count alone would not see an op completed twice
/// and another never). `waits` says what still waits, if anything.
fn check_finished<'r, P: Lookahead>(
    src: &P,
    ranks: impl Iterator<Item = &'r RankState> + Clone,
    waits: &str,
) -> Result<()> {
    let unfinished = |(r, st): &(usize, &RankState)| {
        (st.done as u64) < src.len(*r) || (st.ops.front() as u64) < src.len(*r)
    };
    let Some((stuck, _)) = ranks.clone().enumerate().find(unfinished) else {
        return Ok(());
    };
    let total: u64 = (0..src.header().ranks).map(|r| src.len(r)).sum();
    let done: u64 = ranks.map(|r| r.done as u64).sum();
    Err(topocoll_schedule::Error::Verify(topocoll_schedule::VerifyError::new(
        topocoll_schedule::VerifyKind::Deadlock,
        format!(
            "simulation stopped with {} of {total} operations never run (first stuck rank: {stuck}{waits}); verify the schedule",
            total.saturating_sub(done).max(1),
        ),
    ))
    .into())
}

#[cfg(test)]
#[test]
fn a_rank_state_is_two_cache_lines() {
    // Nearly every event touches its rank's state; on 9,216 ranks each line
    // of it is a cache miss.
    assert_eq!(std::mem::size_of::<RankState>(), 128);
}
