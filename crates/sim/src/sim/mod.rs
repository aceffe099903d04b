//! Discrete-event, flow-level simulation of a schedule on a topology.
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

mod by_rank;
pub mod calendar;
mod fairshare;
mod fold;
mod node;
pub mod packet;
mod queue;
mod trace;

pub use fairshare::{reference_maxmin, MaxMin, Reschedule, LEVEL_TOLERANCE};
pub use trace::write_chrome_trace;

use crate::error::{Error, Result};
use crate::invalid;
use crate::lookahead::Lookahead;
use crate::schedule::{Materialised, Op, OpId, Schedule};
use crate::topology::{LinkId, Topology};
use serde::Serialize;
use std::time::Instant;

use node::{OpWindow, RankState, CPU_IDLE};

/// How links are shared between flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Sharing {
    #[default]
    MaxMin,
    Reservation,
}

/// How a bottleneck is divided under max-min sharing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fairness {
    /// Every flow gets an equal share.
    #[default]
    Equal,
    /// Shares proportional to 1 / (route latency), as SimGrid's flow models.
    Rtt,
}

/// Per-rank start offsets.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Skew {
    #[default]
    None,
    /// Each rank starts at an offset drawn uniformly from [0, max_s), seeded.
    Random { max_s: f64, seed: u64 },
    /// Rank r starts at offsets[r].
    Fixed(Vec<f64>),
}

/// The node and network model parameters.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Transfers each node drives at once (NCT, RDMA engines). At least 1.
    pub engines: usize,
    /// Per-message software overhead on the sender's CPU (s).
    pub overhead_s: f64,
    /// Bytes per second a CPU combines; `None`: combines are free.
    pub compute_bandwidth: Option<f64>,
    /// Per-node injection / ejection bandwidth (bytes/s); `None`: unlimited.
    pub injection_bandwidth: Option<f64>,
    pub ejection_bandwidth: Option<f64>,
    pub sharing: Sharing,
    pub fairness: Fairness,
    /// Largest rate of any one flow (bytes/s).
    pub flow_cap: Option<f64>,
    /// TCP window (bytes): caps each flow at window / (2 × route latency).
    pub tcp_window: Option<f64>,
    /// Bytes added to every message on the wire (SimGrid's SMPI adds 16).
    pub header_bytes: u64,
    /// A transfer starts only once its receive is posted (SimGrid's mailbox
    /// matching, MPI rendezvous); otherwise messages are eager.
    pub rendezvous: bool,
    pub skew: Skew,
    /// Record spans for a Chrome trace.
    pub trace: bool,
    /// Simulate one slice of ranks when the run is provably the same on every
    /// translate of a torus (`fold`); the results agree to rounding.
    pub fold: bool,
    /// Where to publish how far the run is, in millionths of its ops
    /// completed (updated about every 65,536 events), for a progress display.
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Run rank by rank (`by_rank`) where no flow shares a link; the results
    /// agree with the event-by-event run to rounding.
    pub by_rank: bool,
    /// Threads for a run rank by rank (each takes a block of ranks; the
    /// result does not depend on how many). At least 1.
    pub threads: usize,
    /// Run rank by rank in planes where the ranks allow it (`by_rank`'s
    /// tiles): the same result bit for bit, with fewer cache misses.
    pub tile: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            engines: 1,
            overhead_s: 0.0,
            compute_bandwidth: None,
            injection_bandwidth: None,
            ejection_bandwidth: None,
            sharing: Sharing::MaxMin,
            fairness: Fairness::Equal,
            flow_cap: None,
            tcp_window: None,
            header_bytes: 0,
            rendezvous: false,
            skew: Skew::None,
            trace: false,
            fold: true,
            progress: None,
            by_rank: true,
            threads: 1,
            tile: true,
        }
    }
}

impl SimConfig {
    fn check(&self, ranks: usize) -> Result<()> {
        if self.engines == 0 {
            return Err(invalid!("--engines must be at least 1"));
        }
        if !(1..=by_rank::MAX_THREADS).contains(&self.threads) {
            return Err(invalid!(
                "--threads {} must be from 1 to {}",
                self.threads,
                by_rank::MAX_THREADS
            ));
        }
        if self.header_bytes > crate::schedule::MAX_BUFFER_BYTES {
            return Err(invalid!(
                "--header-bytes {} is more than 2^50 bytes",
                self.header_bytes
            ));
        }
        let most = crate::topology::MAX_LATENCY;
        if !(self.overhead_s.is_finite() && (0.0..=most).contains(&self.overhead_s)) {
            return Err(invalid!(
                "--overhead must be from 0 to {most:e} seconds, got {}",
                self.overhead_s
            ));
        }
        for (name, v) in [
            ("--compute-bandwidth", self.compute_bandwidth),
            ("--injection-bandwidth", self.injection_bandwidth),
            ("--ejection-bandwidth", self.ejection_bandwidth),
            ("--flow-cap", self.flow_cap),
        ] {
            if let Some(v) = v {
                crate::topology::check_bandwidth(name, v)?;
            }
        }
        if let Some(w) = self.tcp_window {
            if !(w.is_finite() && (1.0..=crate::schedule::MAX_BUFFER_BYTES as f64).contains(&w)) {
                return Err(invalid!(
                    "--tcp-window must be from 1 byte to 2^50 bytes, got {w}"
                ));
            }
        }
        match &self.skew {
            // Up to 10^9 s (32 years): beyond, the run's own times vanish
            // in the offsets' rounding.
            Skew::Random { max_s, .. } if !(max_s.is_finite() && (0.0..=1e9).contains(max_s)) => {
                Err(invalid!(
                    "--skew {max_s:e} must be a non-negative number of seconds, at most 1e9"
                ))
            }
            Skew::Fixed(v) if v.len() != ranks => Err(invalid!(
                "skew list has {} offsets for {ranks} ranks",
                v.len()
            )),
            Skew::Fixed(v) if v.iter().any(|x| !(x.is_finite() && *x >= 0.0)) => {
                Err(invalid!("skew offsets must be non-negative seconds"))
            }
            _ => Ok(()),
        }
    }

    /// Each rank's start time.
    pub fn start_offsets(&self, ranks: usize) -> Vec<f64> {
        match &self.skew {
            Skew::None => vec![0.0; ranks],
            // + 0.0 turns a −0.0 into 0.0: event times are ordered by their
            // bits (`queue::RadixQueue`), where −0.0 would come last.
            Skew::Fixed(v) => v.iter().map(|x| x + 0.0).collect(),
            Skew::Random { max_s, seed } => {
                let mut state = *seed;
                (0..ranks)
                    .map(|_| max_s * unit_random(&mut state))
                    .collect()
            }
        }
    }
}

/// SplitMix64 step mapped to [0, 1): deterministic on every platform.
fn unit_random(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

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
    /// Events handled and flows whose rate was recomputed (solver work).
    pub events: u64,
    pub recomputes: u64,
    /// Solve rounds (a recomputation takes more than one when its affected set grows).
    pub rounds: u64,
    /// Recomputations that solved every active flow.
    pub full_solves: u64,
    pub recomputed_flows: u64,
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
    #[serde(skip)]
    pub spans: Vec<Span>,
    /// With `trace`: the flows on each network link, sampled whenever they
    /// change (the trace's per-link counters).
    #[serde(skip)]
    pub link_samples: Vec<LinkSample>,
}

/// A link's number of flows from `time_s` on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSample {
    pub time_s: f64,
    pub link: LinkId,
    pub flows: u32,
}

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

/// Appends to `path` the links of send `i` of rank r to `peer`: the
/// topology's route (`route` 0) or the schedule's offset route `route`
/// (1-based in `offsets`), which must lead to the peer.
fn send_route(
    topo: &Topology,
    offsets: &[Vec<i64>],
    r: u32,
    i: OpId,
    peer: u32,
    route: u32,
    path: &mut Vec<LinkId>,
) -> Result<()> {
    if route == 0 {
        topo.route(r as usize, peer as usize, path);
        return Ok(());
    }
    let offset = &offsets[route as usize - 1];
    let dest = topo.route_offset(r as usize, offset, path)?;
    if dest != peer as usize {
        return Err(Error::Invalid(format!(
            "rank {r} op {i}: offset route {offset:?} leads to rank {dest}, not to its peer {peer}"
        )));
    }
    Ok(())
}

/// Simulates `s` on `topo`. The schedule should have passed the verifier;
/// the simulator still returns an error (never hangs) if it cannot complete.
pub fn simulate(s: &Schedule, topo: &Topology, cfg: &SimConfig) -> Result<SimResult> {
    let wall = Instant::now();
    check(s, topo, cfg)?;
    // Unmatched messages are the verifier's finding; here (a schedule
    // simulated without it) they are bad input.
    let src = Materialised::new(s).map_err(|e| match e {
        crate::error::Error::Verify(m) => invalid!("the schedule's messages do not match: {m}"),
        other => other,
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
    check(src.header(), topo, cfg)?;
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
                Some(result) => {
                    return result.map(|mut r| {
                        r.driver = "by rank".into();
                        r
                    })
                }
                None => "(by rank stopped: a flow would share a link)".to_string(),
            },
            Err(why) => format!("(by rank does not take {why})"),
        }
    };
    let mut r = Sim::new(src, topo, cfg, fold).run(wall)?;
    r.driver = if r.folded > 1 {
        format!("event, {why_not}")
    } else {
        format!("event {why_not}")
    };
    Ok(r)
}

fn check(s: &Schedule, topo: &Topology, cfg: &SimConfig) -> Result<()> {
    cfg.check(s.ranks)?;
    if topo.num_ranks() != s.ranks {
        return Err(invalid!(
            "the schedule has {} ranks but topology {} has {}",
            s.ranks,
            topo.name,
            topo.num_ranks()
        ));
    }
    Ok(())
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
    maxmin: Option<MaxMin>,
    /// Reservation sharing's bookings, and every hop's booked intervals
    /// (for the link statistics, made at the end).
    calendar: Option<calendar::Calendar>,
    booked: Vec<Vec<(f64, f64)>>,
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
    resched: Vec<Reschedule>,
    /// Completion times of flows in their bandwidth phase (max-min sharing).
    ends: queue::EndQueue,
    /// Flows kept out of the max-min solver (`Alone`), and those of them
    /// that started at this instant (queued with the solver's flows at its
    /// end).
    alone: Vec<u32>,
    alone_new: Vec<u32>,
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
}

impl<'a, P: Lookahead> Sim<'a, P> {
    fn new(
        src: &'a P,
        topo: &'a Topology,
        cfg: &'a SimConfig,
        fold: Option<fold::Fold>,
    ) -> Sim<'a, P> {
        let ranks = fold.as_ref().map_or(src.header().ranks, |f| f.stride);
        let mut capacity: Vec<f64> = topo.links.iter().map(|l| l.bandwidth).collect();
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
            maxmin: (cfg.sharing == Sharing::MaxMin).then(|| MaxMin::new(capacity.clone())),
            calendar: (cfg.sharing == Sharing::Reservation)
                .then(|| calendar::Calendar::new(capacity.clone())),
            booked: Vec::new(),
            latency,
            inj_base,
            ej_base,
            link_use: vec![LinkUse::default(); n],
            flows: 0,
            network_bytes: 0.0,
            handled: 0,
            next_report: if cfg.progress.is_some() { 0 } else { u64::MAX },
            spans: Vec::new(),
            ready_now: Vec::new(),
            parked: std::collections::HashMap::new(),
            to_dispatch: Vec::new(),
            dispatch_pending: vec![false; ranks],
            resched: Vec::new(),
            ends: queue::EndQueue::default(),
            alone: Vec::new(),
            alone_new: Vec::new(),
            route_buf: Vec::new(),
            last_route: vec![(u32::MAX, 0.0, Route::new()); ranks],
            fold,
            stream: topo.stream_tables(),
            link_samples: Vec::new(),
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
            let next_end = self.ends.peek().map(|(t, _)| t);
            let now = match (next_event, next_end) {
                (None, None) => break,
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
            };
            if !now.is_finite() {
                return Err(invalid!(
                    "the simulated time overflowed (an event at {now} s): the overheads, latencies, \
                     bandwidths or sizes given are out of range"
                ));
            }
            if self.handled >= self.next_report {
                self.report_progress();
            }
            let horizon = now + now.abs() * LEVEL_TOLERANCE;
            loop {
                node::drain_ready(&mut self, now)?;
                if let Some((t, id)) = self.ends.peek() {
                    if t <= horizon {
                        self.ends.remove(id);
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
            self.update_rates(now);
        }
        self.finish(wall)
    }

    /// Publishes the share of ops completed (see `SimConfig::progress`).
    /// Out of line and cold: the event loop's code stays as it was.
    #[cold]
    #[inline(never)]
    fn report_progress(&mut self) {
        self.next_report = self.handled + (1 << 16);
        if let Some(p) = &self.cfg.progress {
            // Both summed here, every 65,536 events (O(ranks) each time),
            // rather than counted in the hot path.
            let total: u64 = (0..self.ranks.len()).map(|r| self.src.len(r)).sum();
            let completed: u64 = self.ranks.iter().map(|r| r.done as u64).sum();
            let millionths = completed.saturating_mul(1_000_000) / total.max(1);
            p.store(millionths, std::sync::atomic::Ordering::Relaxed);
        }
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
        let bytes = if peer == r {
            0.0
        } else {
            (region.count * self.elem_bytes() + self.cfg.header_bytes) as f64
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
        };
        t.route.clear();
        t.route.extend_from_slice(&path);
        self.route_buf = path;
        self.flows += 1;
        if bytes == 0.0 || self.transfers[id as usize].route.is_empty() {
            self.push(now + lat, EvKind::Arrive, id, 0);
        } else if self.calendar.is_some() {
            self.book(now, id);
        } else if lat == 0.0 {
            // No latency phase: the flow takes bandwidth now rather than
            // through an event later in this instant. Rates are solved once
            // per instant, after every start, so nothing else changes (unless
            // routes mix zero and non-zero latencies, where flows starting at
            // one instant may join the solve in another order).
            self.begin_bandwidth(now, id);
        } else {
            self.push(now + lat, EvKind::FlowStart, id, 0);
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
        send_route(
            self.topo,
            &self.src.header().offsets,
            r,
            i,
            peer,
            route,
            path,
        )?;
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

    /// A flow's cap: `flow_cap`, and on each link with a stream table the
    /// rate b(P) for the P flows on it now (this one included; at least 1).
    fn cap_of(&self, route: &[LinkId]) -> f64 {
        let cap = flow_cap(self.cfg, || {
            route.iter().map(|&l| self.latency[l as usize]).sum()
        });
        if self.stream.is_empty() {
            return cap;
        }
        route.iter().fold(cap, |cap, &l| {
            match self.stream.get(l as usize).copied().flatten() {
                Some(table) => {
                    let p = (self.link_use[l as usize].count as usize).clamp(1, table.len());
                    cap.min(table[p - 1])
                }
                None => cap,
            }
        })
    }

    /// The streams on the table-capped links of `route` take the cap for
    /// their new number (after a flow joined or left them).
    fn recap(&mut self, route: &[LinkId]) {
        let Some(m) = self.maxmin.as_ref() else {
            return;
        };
        let mut flows: Vec<u32> = Vec::new();
        for &l in route {
            if self.stream.get(l as usize).copied().flatten().is_some() {
                flows.extend(m.flows_on(l));
            }
        }
        for f in flows {
            // The flow being started or ended holds its route apart.
            let cap = if self.transfers[f as usize].route.is_empty() {
                self.cap_of(route)
            } else {
                self.cap_of(&self.transfers[f as usize].route)
            };
            self.maxmin.as_mut().expect("checked").set_cap(f, cap);
        }
    }

    fn begin_bandwidth(&mut self, now: f64, id: u32) {
        let route = std::mem::take(&mut self.transfers[id as usize].route);
        let bytes = self.transfers[id as usize].bytes;
        if self.maxmin.is_some() {
            self.occupy(now, &route, bytes);
            let cap = self.cap_of(&route);
            // Alone: nothing in the solver, and each link carries this flow
            // once and nothing else (the counts include it now).
            let alone = self.cfg.fairness == Fairness::Equal
                && self.maxmin.as_ref().is_some_and(MaxMin::is_idle)
                && route.iter().all(|&l| self.link_use[l as usize].count == 1);
            let m = self.maxmin.as_mut().expect("checked");
            if alone {
                let (rate, _) = m.alone(&route, cap);
                self.transfers[id as usize].alone = Some(Alone {
                    since: now,
                    cap,
                    rate,
                    solved: false,
                    index: self.alone.len() as u32,
                });
                self.alone.push(id);
                self.alone_new.push(id);
            } else {
                // The flows kept out enter first, as `add` and the solves
                // would have left them: one that started at this instant is
                // still unsolved.
                for a in self.alone.drain(..) {
                    let t = &mut self.transfers[a as usize];
                    let s = t.alone.take().expect("listed as alone");
                    if s.solved {
                        m.admit(a, s.since, &t.route, t.bytes, s.cap);
                    } else {
                        m.add(a, s.since, &t.route, t.bytes, 1.0, s.cap);
                    }
                }
                let weight = match self.cfg.fairness {
                    Fairness::Equal => 1.0,
                    Fairness::Rtt => {
                        let lat: f64 = route.iter().map(|&l| self.latency[l as usize]).sum();
                        1.0 / lat.max(1e-12)
                    }
                };
                m.add(id, now, &route, bytes, weight, cap);
                if !self.stream.is_empty() {
                    self.recap(&route);
                }
            }
        }
        self.transfers[id as usize].route = route;
    }

    /// Reservation sharing: the transfer books its path's bottleneck rate
    /// on each hop from when its front gets there, at the earliest start
    /// from now that fits, and ends when its last byte arrives.
    fn book(&mut self, now: f64, id: u32) {
        let route = std::mem::take(&mut self.transfers[id as usize].route);
        let bytes = self.transfers[id as usize].bytes;
        let cap = self.cap_of(&route);
        let cal = self.calendar.as_mut().expect("reservation sharing");
        let mut offset = 0.0;
        let hops: Vec<calendar::Hop> = route
            .iter()
            .map(|&l| {
                offset += self.latency[l as usize];
                calendar::Hop {
                    resource: l,
                    offset,
                }
            })
            .collect();
        let rate = route.iter().map(|&l| cal.capacity(l)).fold(cap, f64::min);
        let dur = bytes / rate;
        cal.forget_before_on(&hops, now);
        let t0 = cal.earliest(&hops, rate, dur, now);
        cal.book(&hops, rate, dur, t0);
        if self.booked.is_empty() {
            self.booked = vec![Vec::new(); self.link_use.len()];
        }
        for h in &hops {
            let start = t0 + h.offset;
            self.booked[h.resource as usize].push((start, start + dur));
            self.link_use[h.resource as usize].bytes += bytes;
        }
        self.transfers[id as usize].route = route;
        self.push(t0 + offset + dur, EvKind::FlowEnd, id, 0);
    }

    /// Reservation sharing's link statistics from the booked intervals:
    /// busy is their union, peak the most that overlap.
    fn booked_stats(&mut self) {
        for (l, list) in self.booked.iter_mut().enumerate() {
            let mut starts: Vec<f64> = list.iter().map(|b| b.0).collect();
            let mut ends: Vec<f64> = list.iter().map(|b| b.1).collect();
            starts.sort_by(f64::total_cmp);
            ends.sort_by(f64::total_cmp);
            let u = &mut self.link_use[l];
            let (mut open, mut e, mut since) = (0u32, 0, 0.0);
            for &s in &starts {
                while e < ends.len() && ends[e] <= s + 1e-12 * s.abs().max(1e-9) {
                    open -= 1;
                    if open == 0 {
                        u.busy += ends[e] - since;
                    }
                    e += 1;
                }
                if open == 0 {
                    since = s;
                }
                open += 1;
                u.peak = u.peak.max(open);
            }
            if open > 0 {
                u.busy += ends[ends.len() - 1] - since;
            }
        }
    }

    fn occupy(&mut self, now: f64, route: &[LinkId], bytes: f64) {
        for &l in route {
            let u = &mut self.link_use[l as usize];
            u.bytes += bytes;
            if u.count == 0 {
                u.since = now;
            }
            u.count += 1;
            u.peak = u.peak.max(u.count);
            if self.cfg.trace && (l as usize) < self.topo.links.len() {
                self.link_samples.push(LinkSample {
                    time_s: now,
                    link: l,
                    flows: u.count,
                });
            }
        }
    }

    fn vacate(&mut self, now: f64, route: &[LinkId]) {
        for &l in route {
            let u = &mut self.link_use[l as usize];
            u.count -= 1;
            if u.count == 0 {
                u.busy += now - u.since;
            }
            if self.cfg.trace && (l as usize) < self.topo.links.len() {
                self.link_samples.push(LinkSample {
                    time_s: now,
                    link: l,
                    flows: u.count,
                });
            }
        }
    }

    fn end_bandwidth(&mut self, now: f64, id: u32) {
        let route = std::mem::take(&mut self.transfers[id as usize].route);
        if self.calendar.is_none() {
            self.vacate(now, &route);
        }
        if let Some(a) = self.transfers[id as usize].alone.take() {
            self.alone.swap_remove(a.index as usize);
            if let Some(&moved) = self.alone.get(a.index as usize) {
                if let Some(b) = self.transfers[moved as usize].alone.as_mut() {
                    b.index = a.index;
                }
            }
        } else if let Some(m) = self.maxmin.as_mut() {
            m.remove(id);
            if !self.stream.is_empty() {
                self.recap(&route);
            }
        }
        self.network_bytes += self.transfers[id as usize].bytes;
        self.transfers[id as usize].route = route;
        self.arrive(now, id);
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

    fn update_rates(&mut self, now: f64) {
        let Some(m) = self.maxmin.as_mut() else {
            return;
        };
        // What the solve would do for a flow that started alone at this
        // instant: its rate from 0 to `rate` as of now, all its bytes left.
        for id in self.alone_new.drain(..) {
            let t = &mut self.transfers[id as usize];
            if let Some(a) = t.alone.as_mut() {
                a.since = now;
                a.solved = true;
                self.ends.set(id, now + t.bytes / a.rate);
            }
        }
        let mut out = std::mem::take(&mut self.resched);
        out.clear();
        m.recompute(now, &mut out);
        for r in &out {
            if r.end.is_finite() {
                self.ends.set(r.flow, r.end);
            } else {
                self.ends.remove(r.flow);
            }
        }
        self.resched = out;
    }

    fn finish(mut self, wall: Instant) -> Result<SimResult> {
        self.booked_stats();
        let mut waits = String::new();
        if !self.parked.is_empty() {
            waits += &format!(
                ", {} sends wait for a receive that is never posted",
                self.parked.len()
            );
        }
        check_finished(self.src, self.ranks.iter(), &waits)?;
        let m = self.maxmin.as_ref();
        let totals = Totals {
            flows: self.flows,
            network_bytes: self.network_bytes,
            events: self.handled,
            recomputes: m.map_or(0, |m| m.recomputes),
            rounds: m.map_or(0, |m| m.rounds),
            full_solves: m.map_or(0, |m| m.full_solves),
            recomputed_flows: m.map_or(0, |m| m.recomputed_flows),
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
        self.push(now + dur, kind, r, i);
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
    Err(Error::Verify(format!(
        "simulation stopped with {} of {total} operations never run (first stuck rank: {stuck}{waits}); verify the schedule",
        total.saturating_sub(done).max(1),
    )))
}

/// A run's counts, before folding multiplies them back.
struct Totals {
    flows: u64,
    network_bytes: f64,
    events: u64,
    recomputes: u64,
    rounds: u64,
    full_solves: u64,
    recomputed_flows: u64,
}

/// The result of a finished run from each simulated rank's finish time and
/// each link's statistics.
fn results(
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
        events: totals.events,
        recomputes: totals.recomputes,
        rounds: totals.rounds,
        full_solves: totals.full_solves,
        recomputed_flows: totals.recomputed_flows,
        wall_s: wall.elapsed().as_secs_f64(),
        folded: copies as u64,
        driver: String::new(),
        by_rank_threads: 0,
        by_rank_sweeps: 0,
        by_rank_planes: 0,
        spans,
        link_samples: Vec::new(),
    }
}

#[cfg(test)]
#[test]
fn a_rank_state_is_two_cache_lines() {
    // Nearly every event touches its rank's state; on 9,216 ranks each line
    // of it is a cache miss.
    assert_eq!(std::mem::size_of::<RankState>(), 128);
}
