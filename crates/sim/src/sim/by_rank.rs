//! The by-rank driver: the same node model as [`super::Sim`], run one
//! rank at a time, for runs in which no flow ever shares a link.
//!
//! Where every flow is alone on its links (`super::Alone`: Trinaryx3's
//! edge-disjoint trees, rings, most pipelines), a flow's rate is its route's
//! bottleneck and its end is known when it starts, so ranks interact only
//! through data arriving, never sooner than a lookahead `L` after the event
//! that sends it: the shortest bandwidth phase of a cross-rank transfer (the
//! smallest message at the fastest link; a route's latency elapses before
//! the event that starts that phase). With T the earliest pending event of
//! all ranks, every rank can then run every event before T + L: nothing
//! another rank has yet to do can reach it sooner. The driver keeps each
//! rank's events in its own small queue and runs the ranks in sweeps: each
//! sweep takes the ranks in index order, each up to T + L, then T moves on.
//! In a sweep the ranks' order does not matter (what one sends lands after
//! T + L), so index order reads their states in memory order and asks for
//! the next ranks' states ahead of time. There is no global event queue,
//! flow-end queue or transfer table, and each rank keeps the routes it
//! sends on (`KeptRoute`).
//!
//! Same instant, per rank: a rank handles its events within a relative
//! 1e-12 of its earliest together (as `Sim` does for all ranks), its ready
//! sends and CPU tasks given out at that earliest time. Where two ranks'
//! events lie within 1e-12 but are not equal, `Sim` gives both the earlier
//! time and this driver each its own, so the two agree to that rounding
//! (the tests compare them to 1e-9), not always bit for bit.
//!
//! Threads (`SimConfig::threads`) take contiguous blocks of ranks. Each
//! runs its ranks as far as the others' earliest events allow (their
//! earliest + L), then they exchange the data that crosses blocks and their
//! earliest events at a barrier. A rank's instants do not depend on how
//! the ranks are split, so the result is the same for any number of
//! threads, bit for bit. Each thread touches only its block's state, which
//! on large networks fits its core's cache better.
//!
//! Whether flows are alone is checked as the run goes: each link must carry
//! flows of one sender only, one at a time (a flow starts only once the
//! last one on its links has ended, by the rank's instant). The first flow
//! that would share a link stops the run, and the caller runs `Sim`.

use super::node::{self, RankState};
use super::queue::SortedQueue;
use super::{
    check_finished, flow_cap, results, send_route, Route, Totals, CPU_IDLE, LEVEL_TOLERANCE,
};
use super::{Fairness, LinkUse, OpWindow, Sharing, SimConfig, SimResult};
use crate::error::{Error, Result};
use crate::invalid;
use crate::lookahead::Lookahead;
use crate::schedule::{OpId, Transfer};
use crate::topology::{Kind, LinkId, Topology};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// A rank's pending events. The order breaks ties in time; any order gives
/// the same result: a rank queues everything ready at an instant before it
/// gives out engines and the CPU, and a free CPU task (the one thing whose
/// outcome depended on the CPU's state when it came) is done at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Start,
    /// A transfer's data has arrived at its receiver (not counted as an
    /// event: `SendEnd` at the sender is `Sim`'s flow end).
    Delivered,
    /// A transfer's data has arrived: the sender's engine is free.
    SendEnd,
    OverheadDone,
    TaskDone,
    /// A transfer's latency has elapsed: its bandwidth phase starts.
    FlowStart,
}

/// (`repr(C)`: the fields every event touches come first, then the kept
/// routes, then their links, read only when a route is found or dropped or
/// its flow crosses more than one link. A sweep asks for the lines before
/// the links ahead of time.)
#[repr(C, align(64))]
struct Rank {
    state: RankState,
    /// Pending events: (time bits, kind, op), earliest first.
    queue: SortedQueue<(u64, Ev, OpId)>,
    /// The end (horizon) of the last instant it ran: nothing may arrive
    /// at or before it. (In `queue`'s line: data from another rank reads
    /// both, and `Local::deliver_mail` asks for that one line.)
    past: f64,
    dispatch_pending: bool,
    /// The entry of `kept` to replace next.
    next_kept: u8,
    /// The keys of `kept`: each entry's peer and route (0: the
    /// topology's), `NO_PEER` for an empty entry. Apart from the entries,
    /// so that finding one reads one line, the entry's own the next.
    kept_keys: [(u32, u32); KEPT_ROUTES],
    /// The routes of its last few transfers (see `KeptRoute`).
    kept: [KeptRoute; KEPT_ROUTES],
    /// Each kept route's links.
    kept_links: [Route; KEPT_ROUTES],
}

/// A route a rank sent on, kept with what its flows need: a pipeline sends
/// on the same few routes over and over, and finding the route, summing its
/// latency and finding its bottleneck read the topology's link records, a
/// cache miss a flow on large networks (a tenth of the run).
///
/// A route of one link also holds that link's statistics while it is kept
/// (`held`): they would be another miss a flow in `Local::link_use`. A
/// rank's kept routes share no link, so each link's statistics are in one
/// place: in `link_use`, or in the one kept route that holds them, written
/// back when it is dropped and when the run ends.
#[derive(Clone, Default)]
struct KeptRoute {
    latency: f64,
    bottleneck: f64,
    /// Whether this rank's flows have claimed every link and the route
    /// crosses none twice, checked at its first flow: a link's sender never
    /// changes, so the check need not be repeated.
    checked: bool,
    /// Whether `link_use` below is its one link's (see above).
    held: bool,
    /// Whether the route has no link (data for the rank itself).
    no_links: bool,
    link_use: LinkUse,
}

/// Gives up a kept route: the statistics it holds go back to `link_use`.
fn drop_kept(kept: &mut KeptRoute, links: &mut Route, link_use: &mut [LinkUse]) {
    if kept.held {
        link_use[links[0] as usize] = kept.link_use;
    }
    kept.held = false;
    links.clear();
}

/// Routes kept per rank: a Trinaryx3 rank sends on at most six (its + and
/// − neighbours along three axes).
const KEPT_ROUTES: usize = 6;
const NO_PEER: u32 = u32::MAX;

/// Asks the CPU to bring the cache line at `at` (a hint: no effect on the
/// result).
#[inline(always)]
fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch(at as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

impl Rank {
    /// Queues an event (time bits, kind, op); true if it falls in the
    /// rank's past. (A guard on the lookahead's reasoning: such an event
    /// would be a wrong result, so the run goes to `Sim` instead.)
    fn queue_event(&mut self, e: (u64, Ev, OpId)) -> bool {
        self.queue.push(e);
        f64::from_bits(e.0) <= self.past
    }

    /// Asks for the lines of the rank's own record that its events read.
    fn prefetch_record(&self) {
        let at = self as *const Rank as *const u8;
        // Everything before the kept routes' links (`Rank` starts a line).
        for line in 0..std::mem::offset_of!(Rank, kept_links).div_ceil(64) {
            prefetch(at.wrapping_add(64 * line));
        }
    }

    /// Asks for the heads of the rank's queues (its record must be in
    /// cache by now: their addresses are read from it).
    fn prefetch_queues(&self) {
        let events = self.queue.as_slice();
        prefetch(events.as_ptr());
        if events.len() > 4 {
            prefetch(events.as_ptr().wrapping_add(4));
        }
        if let Some(first) = self.state.ready_sends.peek() {
            prefetch(first);
        }
        if let Some(first) = self.state.cpu_queue.peek() {
            prefetch(first);
        }
        // A combine that comes ready is appended, after a comparison with
        // the last entry, on another line once the queue is long.
        if let Some(last) = self.state.cpu_queue.last() {
            prefetch(last);
        }
    }
}

/// The end of a gating send (`Horizon`; its time bits, which order
/// times as the event queues do), lowered by twice the instants' rounding,
/// then the rank's place in its thread's part and the gated send, which
/// holds the lookahead down until it is done.
type Gate = Reverse<(u64, u32, OpId)>;

/// A send as it starts (`Part::transfer`).
#[derive(Clone, Copy)]
struct Started {
    /// The receiver, and the receive the data meets.
    dst: u32,
    recv: OpId,
    bytes: f64,
    /// Its route's place in the rank's `kept`.
    kept: usize,
    /// The send it gates (`Lookahead::gated_transfer`).
    gated: Option<OpId>,
}

/// `Local::running` when no rank runs.
const NONE_RUNNING: u32 = u32::MAX;
/// How many ranks ahead a sweep asks for a rank's state.
const PREFETCH_AHEAD: usize = 6;
/// How many deliveries ahead `deliver_mail` asks for a receiver's queue.
const MAIL_AHEAD: usize = 8;

/// Planes a thread runs in each window of a tiled run (`Tiles`).
const TILE_DEPTH: u32 = 4;

/// How a run on one thread is tiled: its ranks cut into `planes` planes
/// of `plane` consecutive ranks, around the ring of ranks, where every rank
/// sends only within its plane and to the two planes beside it (the
/// planes along a grid's last axis: each rank's neighbours and tree edges).
///
/// Why: a sweep over all ranks reads more state than the core's cache
/// holds, so every sweep fetches every rank's state again. Tiled, each
/// window runs `depth` planes, one sweep each, and the next window moves on
/// by one plane, so that each plane runs in `depth` windows in a row while
/// it is still in cache, each time about one lookahead further: the planes
/// of a window form a staircase (the first one step ahead of the plane
/// after it, the last `depth` steps), which is what lets each run so far.
/// (The 48×6×32 allreduce at 8 MiB on one thread: 57% fewer misses of a
/// 2 MiB cache, by cachegrind.)
///
/// Each plane runs up to its own limit, from every plane's earliest event:
/// what can reach a plane from planes d apart lands no sooner than d
/// lookaheads after their earliest ([`reach`]). A rank's instants do not
/// depend on the limits they ran under, so the result is the same bit for
/// bit as untiled; a send that went further than a plane's neighbours
/// would land in its receiver's past and stop the run (`Rank::past`),
/// never change it.
///
/// On several threads, each takes a run of planes and tiles it the same
/// way, without meetings: the threads relay bounds on the data crossing
/// between them as they go (`Local::run_relay`). (Meeting once a window,
/// as untiled threads do, they met four times as often, and the meetings
/// cost more than the cache saved: docs/PERFORMANCE.md.)
#[derive(Clone, Copy, Debug)]
struct Tiles {
    plane: u32,
    planes: u32,
    depth: u32,
}

/// The tiling of a run on `threads` threads, or `None` when it does not
/// apply: a grid whose ranks are its nodes in order, planes along its last
/// axis (on one thread at least two windows' staircases of them, on
/// several as many for each thread, at least two), and no rank that sends
/// further than the next plane.
fn tiles<P: Lookahead>(src: &P, topo: &Topology, cfg: &SimConfig, threads: usize) -> Option<Tiles> {
    let Kind::Grid(grid) = &topo.kind else {
        return None;
    };
    if !cfg.tile {
        return None;
    }
    let planes = u32::try_from(*grid.dims.last()?).ok()?;
    let threads = u32::try_from(threads).ok()?;
    // On one thread the planes are a ring, and a window's staircase must
    // not catch up with its own tail; on several, each thread's planes are
    // a run of at least two (`Local::run_relay`).
    let enough = if threads == 1 {
        planes >= 2 * TILE_DEPTH
    } else {
        planes.is_multiple_of(threads) && planes / threads >= 2
    };
    if grid.dims.len() < 2 || !enough {
        return None;
    }
    if topo
        .rank_node
        .iter()
        .enumerate()
        .any(|(r, &n)| n as usize != r)
    {
        return None;
    }
    let plane = u32::try_from(topo.num_ranks()).ok()? / planes;
    if src.farthest_peer()? > u64::from(plane) {
        return None;
    }
    Some(Tiles {
        plane,
        planes,
        depth: TILE_DEPTH,
    })
}

/// What became of a plane a tiled run on several threads came to
/// (`Local::relay_plane`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Plane {
    Ran,
    /// It has events, but data may yet reach the first of them.
    Held,
    /// It has no events.
    Idle,
}

/// What stops a run: an error, or a flow that would share a link (or a
/// lookahead too short to run an instant), after which `Sim` must run it.
enum Stop {
    Error(Error),
    Fallback,
    /// Another thread stopped.
    Halted,
    /// The windows hold too few events to be worth a barrier each: one
    /// thread should run it.
    Narrow,
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Error(e)
    }
}

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
pub(super) struct Horizon {
    small: f64,
    big: f64,
    flows_at_dispatch: bool,
}

impl Horizon {
    /// The limit of a sweep from the earliest event of all, `base`, and the
    /// earliest end of a gating send, `gate` (`INFINITY`: none).
    fn limit(&self, base: f64, gate: f64) -> f64 {
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
fn reach(from: &[f64], la: Horizon, gate: f64, reach: &mut Vec<f64>) {
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
fn reach_line(from: &[f64], before: f64, after: f64, la: Horizon, gate: f64, reach: &mut Vec<f64>) {
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
pub(super) fn lookahead<P: Lookahead>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
) -> std::result::Result<Horizon, &'static str> {
    let refused = [
        (cfg.sharing != Sharing::MaxMin, "reservation sharing"),
        (cfg.fairness != Fairness::Equal, "RTT-weighted shares"),
        (cfg.rendezvous, "rendezvous"),
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

/// Runs the schedule with the by-rank driver; `None` when a flow would
/// share a link (then `Sim` must run it).
pub(super) fn simulate<P: Lookahead + Sync>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
    lookahead: Horizon,
    wall: Instant,
) -> Option<Result<SimResult>> {
    let outcome = match run_threads(src, topo, cfg, lookahead, wall, cfg.threads) {
        // Windows too thin to share: one thread runs it again.
        Err(Stop::Narrow) => run_threads(src, topo, cfg, lookahead, wall, 1),
        other => other,
    };
    match outcome {
        Ok(result) => Some(Ok(result)),
        Err(Stop::Error(e)) => Some(Err(e)),
        Err(_) => None,
    }
}

/// More threads than this are refused (each keeps its own link table).
pub const MAX_THREADS: usize = 256;

/// The run on `threads` threads.
fn run_threads<P: Lookahead + Sync>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
    lookahead: Horizon,
    wall: Instant,
    threads: usize,
) -> std::result::Result<SimResult, Stop> {
    let p = src.header().ranks;
    let block = p.div_ceil(threads.clamp(1, p.max(1))).max(1);
    // Every block has ranks.
    let threads = p.div_ceil(block).max(1);
    let shared = Shared {
        tiles: tiles(src, topo, cfg, threads),
        owner: (0..topo.links.len())
            .map(|_| AtomicU32::new(NO_OWNER))
            .collect(),
        earliest: std::array::from_fn(|_| (0..threads).map(|_| AtomicU64::new(0)).collect()),
        sent: std::array::from_fn(|_| {
            (0..threads * threads)
                .map(|_| AtomicU64::new(u64::MAX))
                .collect()
        }),
        done: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        inbox: std::array::from_fn(|_| (0..threads).map(|_| Mutex::new(Vec::new())).collect()),
        handled: std::array::from_fn(|_| (0..threads).map(|_| AtomicU64::new(0)).collect()),
        gate: std::array::from_fn(|_| (0..threads).map(|_| AtomicU64::new(u64::MAX)).collect()),
        stop: AtomicBool::new(false),
        barrier: Meeting::new(threads),
        relay: Relay::new(
            threads,
            cfg.start_offsets(p)
                .into_iter()
                .fold(f64::INFINITY, f64::min),
        ),
        block: block as u32,
        spin: threads <= std::thread::available_parallelism().map_or(1, |n| n.get()),
        total_ops: if cfg.progress.is_some() {
            (0..p).map(|r| src.len(r)).sum()
        } else {
            0
        },
    };
    let parts: Vec<Local<P>> = (0..threads)
        .map(|k| {
            let lo = (k * block).min(p);
            let hi = ((k + 1) * block).min(p);
            Local::new(src, topo, cfg, lookahead, &shared, k, lo..hi)
        })
        .collect();
    // Each part runs on a thread of its own; one that panics, or cannot be
    // started, calls the meeting off, so the others stop instead of
    // waiting for it forever.
    let outcomes: Vec<(Local<P>, std::result::Result<(), Stop>)> = if threads == 1 {
        parts.into_iter().map(|p| run_part(p, &shared)).collect()
    } else {
        std::thread::scope(|scope| {
            let mut handles = Vec::new();
            let mut failed = None;
            for part in parts {
                match std::thread::Builder::new().spawn_scoped(scope, || run_part(part, &shared)) {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        shared.stop.store(true, Ordering::Relaxed);
                        shared.barrier.call_off();
                        failed = Some(e);
                        break;
                    }
                }
            }
            let done: Vec<_> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
            match failed {
                None => Ok(done),
                Some(e) => Err(Stop::Error(Error::Invalid(format!(
                    "cannot start {threads} simulation threads ({e}): give fewer with --threads"
                )))),
            }
        })?
    };
    let mut parts = Vec::with_capacity(outcomes.len());
    let mut stop = None;
    for (part, res) in outcomes {
        match res {
            Ok(()) => {}
            // The first cause, in thread order (the others halted for it).
            Err(Stop::Halted) => {}
            Err(other) => {
                stop.get_or_insert(other);
            }
        }
        parts.push(part);
    }
    if let Some(stop) = stop {
        return Err(stop);
    }
    if parts.len() < threads {
        return Err(Stop::Error(Error::Invalid(
            "a simulation thread was lost".into(),
        )));
    }
    finish(src, topo, &shared, parts, wall).map_err(Stop::Error)
}

/// Runs one part; a part that fails (or panics) calls the meeting off.
fn run_part<'a, P: Lookahead>(
    mut part: Local<'a, P>,
    shared: &Shared,
) -> (Local<'a, P>, std::result::Result<(), Stop>) {
    let res =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| part.run())).unwrap_or_else(|e| {
            let what = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(Stop::Error(Error::Invalid(format!(
                "a simulation thread failed: {what}"
            ))))
        });
    if res.is_err() {
        shared.stop.store(true, Ordering::Relaxed);
        shared.barrier.call_off();
    }
    (part, res)
}

/// A barrier that can be called off: a thread that fails must not leave
/// the others waiting for it.
struct Meeting {
    parties: usize,
    /// (arrived, generation, called off)
    state: Mutex<(usize, u64, bool)>,
    all_here: Condvar,
}

impl Meeting {
    fn new(parties: usize) -> Meeting {
        Meeting {
            parties,
            state: Mutex::new((0, 0, false)),
            all_here: Condvar::new(),
        }
    }

    /// Waits for every party; `false` when the meeting was called off.
    fn wait(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.2 {
            return false;
        }
        st.0 += 1;
        if st.0 == self.parties {
            st.0 = 0;
            st.1 += 1;
            self.all_here.notify_all();
            return true;
        }
        let generation = st.1;
        while st.1 == generation && !st.2 {
            st = self.all_here.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        !st.2
    }

    fn call_off(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.2 = true;
        self.all_here.notify_all();
    }
}

/// A time as the threads publish it: its bits, `u64::MAX` for none (inf).
fn time_bits(t: f64) -> u64 {
    if t == f64::INFINITY {
        u64::MAX
    } else {
        t.to_bits()
    }
}

/// The time whose bits `time_bits` gave.
fn bits_time(bits: u64) -> f64 {
    if bits == u64::MAX {
        f64::INFINITY
    } else {
        f64::from_bits(bits)
    }
}

/// Data for another thread's rank: (time bits, rank, receive).
type Mail = (u64, u32, OpId);

/// What the threads share.
///
/// The threads meet once a window. Before they meet, each publishes what
/// the others need to bound it: its earliest pending event, and the
/// earliest data it has sent each other thread (which that thread takes
/// from its inbox after the meeting). What is published and sent for
/// window w sits in slot w % 2: a thread that passes the meeting and runs
/// its next window writes the other slot, while the slowest still reads
/// this one, so one meeting a window is enough.
struct Shared {
    /// Each link's one sender, `NO_OWNER` until its first flow.
    owner: Vec<AtomicU32>,
    /// Each thread's earliest pending event (time bits; `u64::MAX`: none),
    /// its inbox aside: `[slot][thread]`.
    earliest: [Vec<AtomicU64>; 2],
    /// The earliest data each thread has sent each other one in its last
    /// window (time bits; `u64::MAX`: none): `[slot][from * threads + to]`.
    sent: [Vec<AtomicU64>; 2],
    /// Each thread's ops completed, for progress.
    done: Vec<AtomicU64>,
    /// Data arriving at each thread's ranks from other threads:
    /// `[slot][thread]`, (time bits, rank, receive).
    inbox: [Vec<Mutex<Vec<Mail>>>; 2],
    /// Each thread's events handled: `[slot][thread]`.
    handled: [Vec<AtomicU64>; 2],
    /// The earliest end of each thread's gating sends (`Part::gates`;
    /// time bits, `u64::MAX`: none): `[slot][thread]`.
    gate: [Vec<AtomicU64>; 2],
    /// Set by a thread that stops (an error or a shared link).
    stop: AtomicBool,
    barrier: Meeting,
    /// Ranks per thread (the last may have fewer).
    block: u32,
    total_ops: u64,
    /// How the run is tiled, if it is (`Tiles`).
    tiles: Option<Tiles>,
    /// What the threads of a tiled run pass each other instead of meeting.
    relay: Relay,
    /// Whether each thread has a core of its own: only then does a relaying
    /// thread spin while it waits (with more threads than cores, its spin
    /// would take the core of the thread it waits for).
    spin: bool,
}

/// What the threads of a tiled run on several threads share
/// (`Local::run_relay`): for each thread, the earliest its data can land in
/// the thread before it (in that thread's last plane) and in the thread
/// after it (in its first plane), as of what it has run, posted so far and
/// been told; the data itself; and a bell each that rings when there is
/// something new for it.
///
/// A thread posts its data before it publishes a bound, and reads a bound
/// before it takes its post: what it takes is all the data landing before
/// the bound it read, and what comes later lands at or after it.
struct Relay {
    /// Time bits, by thread.
    into_before: Vec<AtomicU64>,
    into_after: Vec<AtomicU64>,
    post: Mutex<Post>,
    /// Rung (counted up) after new bounds or data for each thread.
    bell: Vec<AtomicU64>,
    /// Set when every thread is idle and no data is in the post.
    over: AtomicBool,
}

/// The data in transit between the threads of a tiled run, and which
/// threads have nothing left to run: the run is over when all are idle and
/// the post is empty (an idle thread wakes only by taking data).
struct Post {
    inbox: Vec<Vec<Mail>>,
    idle: Vec<bool>,
}

impl Relay {
    /// For `threads` threads whose earliest events are at or after `start`.
    fn new(threads: usize, start: f64) -> Relay {
        let at = || {
            (0..threads)
                .map(|_| AtomicU64::new(time_bits(start)))
                .collect()
        };
        Relay {
            into_before: at(),
            into_after: at(),
            post: Mutex::new(Post {
                inbox: vec![Vec::new(); threads],
                idle: vec![false; threads],
            }),
            bell: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            over: AtomicBool::new(false),
        }
    }
}

/// The result from the threads' parts, in rank order.
fn finish<P: Lookahead>(
    src: &P,
    topo: &Topology,
    shared: &Shared,
    mut parts: Vec<Local<P>>,
    wall: Instant,
) -> Result<SimResult> {
    for part in &mut parts {
        for rank in &mut part.ranks {
            for (kept, links) in rank.kept.iter_mut().zip(&mut rank.kept_links) {
                drop_kept(kept, links, &mut part.eng.link_use);
            }
        }
    }
    check_finished(
        src,
        parts
            .iter()
            .flat_map(|part| part.ranks.iter().map(|r| &r.state)),
        "",
    )?;
    let finish: Vec<f64> = parts
        .iter()
        .flat_map(|part| part.ranks.iter().map(|r| r.state.finish))
        .collect();
    // A link's statistics are kept by the thread of its one sender.
    let link_use: Vec<LinkUse> = (0..topo.links.len())
        .map(|l| match shared.owner[l].load(Ordering::Relaxed) {
            NO_OWNER => LinkUse::default(),
            r => parts[(r / shared.block) as usize].eng.link_use[l],
        })
        .collect();
    let totals = Totals {
        flows: parts.iter().map(|p| p.eng.flows).sum(),
        network_bytes: parts.iter().map(|p| p.eng.network_bytes).sum(),
        events: parts.iter().map(|p| p.eng.handled).sum(),
        recomputes: 0,
        rounds: 0,
        full_solves: 0,
        recomputed_flows: 0,
    };
    let mut result = results(topo, None, &finish, &link_use, totals, wall, Vec::new());
    result.by_rank_threads = parts.len();
    result.by_rank_sweeps = parts.iter().map(|p| p.eng.sweeps).max().unwrap_or(0);
    result.by_rank_planes = shared.tiles.map_or(0, |t| t.planes as usize);
    Ok(result)
}

/// A thread's part of the run: its ranks' records, and the rest apart, so
/// that the rank that runs is borrowed from `ranks` while its events use the
/// rest (`Part`'s methods take it) and nothing indexes `ranks` again.
struct Local<'a, P: Lookahead> {
    /// This thread's ranks: `eng.lo..eng.lo + ranks.len()`.
    ranks: Vec<Rank>,
    eng: Part<'a, P>,
}

/// Everything of a thread's part of the run but its ranks' records.
struct Part<'a, P: Lookahead> {
    src: &'a P,
    topo: &'a Topology,
    cfg: &'a SimConfig,
    lookahead: Horizon,
    shared: &'a Shared,
    /// The ends of the gating sends this thread's ranks have started whose
    /// gated sends may not be done (see `Horizon`), earliest first.
    gates: BinaryHeap<Gate>,
    /// This thread's index, and its first rank.
    part: usize,
    lo: u32,
    /// Each rank's earliest pending event (`INFINITY`: none), apart from
    /// the ranks so that a sweep reads a few cache lines to find the ranks
    /// it must run.
    next: Vec<f64>,
    /// The earliest of `next` as of the end of the last sweep, lowered by
    /// every event queued since for a rank other than the running one.
    own_min: f64,
    /// The rank running, `NONE_RUNNING` between ranks.
    running: u32,
    /// The ranks a sweep runs, in order.
    due: Vec<u32>,
    /// Per link this thread's ranks send on: its statistics (`since` holds
    /// when its last flow ends).
    link_use: Vec<LinkUse>,
    /// Data for other threads' ranks, by thread, sent at the barrier.
    outbox: Vec<Vec<Mail>>,
    flows: u64,
    network_bytes: f64,
    handled: u64,
    sweeps: u64,
    next_report: u64,
    /// Ops of the running rank that became ready at its instant.
    ready_now: Vec<(u32, OpId)>,
    route_buf: Vec<LinkId>,
    /// Whether an event landed in a rank's past (see `Rank::past`).
    late: bool,
    /// Data the sweep's ranks sent other ranks of this thread, delivered
    /// when the sweep is done (see `Part::deliver`).
    mail: Vec<Mail>,
    /// The earliest data sent to another thread's ranks in this window, in
    /// all and to each thread.
    sent: f64,
    sent_to: Vec<f64>,
    /// In a tiled run (`Tiles`): the earliest pending event of each of this
    /// thread's planes (as `own_min` is of all its ranks), the windows run, and room for
    /// each plane's `reach`.
    plane_min: Vec<f64>,
    windows: u64,
    plane_reach: Vec<f64>,
}

const NO_OWNER: u32 = u32::MAX;

/// After this many windows, threads whose windows average fewer than
/// `MIN_WINDOW_EVENTS` events each hand the run to one thread.
const NARROW_CHECK: u64 = 256;
/// Meetings between two counts of a thread's ops done for the progress bar.
const PROGRESS_WINDOWS: u64 = 64;
const MIN_WINDOW_EVENTS: u64 = 2000;

impl<'a, P: Lookahead> Local<'a, P> {
    fn new(
        src: &'a P,
        topo: &'a Topology,
        cfg: &'a SimConfig,
        lookahead: Horizon,
        shared: &'a Shared,
        part: usize,
        ranks: std::ops::Range<usize>,
    ) -> Self {
        let ranks_len = ranks.len();
        let lo = ranks.start as u32;
        Local {
            ranks: ranks
                .map(|_| Rank {
                    state: RankState {
                        ops: OpWindow::default(),
                        started: false,
                        ready_sends: SortedQueue::default(),
                        engines_busy: 0,
                        cpu_running: CPU_IDLE,
                        cpu_queue: SortedQueue::default(),
                        finish: 0.0,
                        done: 0,
                    },
                    queue: SortedQueue::default(),
                    dispatch_pending: false,
                    kept_keys: [(NO_PEER, 0); KEPT_ROUTES],
                    kept: std::array::from_fn(|_| KeptRoute::default()),
                    kept_links: std::array::from_fn(|_| Route::new()),
                    next_kept: 0,
                    past: f64::NEG_INFINITY,
                })
                .collect(),
            eng: Part {
                src,
                topo,
                cfg,
                lookahead,
                gates: BinaryHeap::new(),
                shared,
                part,
                lo,
                next: vec![f64::INFINITY; ranks_len],
                own_min: f64::INFINITY,
                running: NONE_RUNNING,
                due: Vec::new(),
                link_use: vec![LinkUse::default(); topo.links.len()],
                outbox: vec![Vec::new(); shared.done.len()],
                sent_to: vec![f64::INFINITY; shared.done.len()],
                mail: Vec::new(),
                flows: 0,
                network_bytes: 0.0,
                handled: 0,
                sweeps: 0,
                next_report: if cfg.progress.is_some() && part == 0 {
                    0
                } else {
                    u64::MAX
                },
                ready_now: Vec::new(),
                route_buf: Vec::new(),
                late: false,
                sent: f64::INFINITY,
                plane_min: vec![
                    f64::INFINITY;
                    shared.tiles.map_or(0, |t| ranks_len / t.plane as usize)
                ],
                windows: 0,
                plane_reach: Vec::new(),
            },
        }
    }

    /// Queues an event of rank q when no rank runs, and lowers its earliest
    /// (`next`). Data for another thread's rank waits in the outbox.
    fn push(&mut self, q: u32, time: f64, ev: Ev, op: OpId) {
        debug_assert_eq!(self.eng.running, NONE_RUNNING);
        let k = q.wrapping_sub(self.eng.lo) as usize;
        if k >= self.ranks.len() {
            debug_assert_eq!(ev, Ev::Delivered);
            self.eng.send_out(q, time, op);
            return;
        }
        self.eng.lower_earliest(k, time);
        self.eng.late |= self.ranks[k].queue_event((time.to_bits(), ev, op));
    }

    /// Hands the data the sweep's ranks sent other ranks of this thread to
    /// them (see `Part::deliver`), asking for each receiver's queue ahead
    /// of time: its record's line, then the end of its event queue.
    ///
    /// A receiver that ran after the data was sent has set its `next` from
    /// its queue, without the data: `push` lowers it again here.
    /// Nothing read `next` in between, and the receiver lost nothing: it
    /// ran only instants before the limit, and the data lands at or after
    /// it (an instant at or after the data would be in the receiver's
    /// `past`, which `queue_event` reports).
    fn deliver_mail(&mut self) {
        let mail = std::mem::take(&mut self.eng.mail);
        for (n, &(key, q, op)) in mail.iter().enumerate() {
            if let Some(&(_, ahead, _)) = mail.get(n + 2 * MAIL_AHEAD) {
                let rank = &self.ranks[(ahead - self.eng.lo) as usize];
                prefetch(std::ptr::addr_of!(rank.queue));
            }
            if let Some(&(_, ahead, _)) = mail.get(n + MAIL_AHEAD) {
                let events = &self.ranks[(ahead - self.eng.lo) as usize].queue;
                // A push compares with the last entry and writes past it.
                prefetch(events.end());
                prefetch(events.end().wrapping_sub(1));
            }
            self.push(q, f64::from_bits(key), Ev::Delivered, op);
        }
        self.eng.mail = mail;
        self.eng.mail.clear();
    }

    /// The earliest end of a gating send whose gated send is not done
    /// (`INFINITY`: none), dropping the gates before it that are spent.
    fn gate(&mut self) -> f64 {
        while let Some(&Reverse((at, k, gated))) = self.eng.gates.peek() {
            if !self.ranks[k as usize].state.ops.is_done(gated) {
                return f64::from_bits(at);
            }
            self.eng.gates.pop();
        }
        f64::INFINITY
    }

    /// The earliest pending event of this thread's ranks (bits), or
    /// `u64::MAX`.
    fn earliest(&self) -> u64 {
        time_bits(self.eng.own_min)
    }

    fn run(&mut self) -> std::result::Result<(), Stop> {
        let offsets = self.eng.cfg.start_offsets(self.eng.src.header().ranks);
        for k in 0..self.ranks.len() {
            let r = self.eng.lo + k as u32;
            let t = offsets[r as usize];
            self.ranks[k].state.finish = t;
            self.push(r, t, Ev::Start, 0);
        }
        let threads = self.eng.shared.done.len();
        match (threads, self.eng.shared.tiles) {
            (1, Some(t)) => return self.run_tiled(t),
            (1, None) => return self.window(f64::INFINITY, f64::INFINITY, f64::INFINITY),
            (_, Some(t)) => return self.run_relay(t),
            (_, None) => {}
        }
        let shared = self.eng.shared;
        let me = self.eng.part;
        let mut window = 0u64;
        let mut res = Ok(());
        loop {
            // Publish for this window (slot `window % 2`), then meet.
            let slot = (window % 2) as usize;
            for (k, out) in self.eng.outbox.iter_mut().enumerate() {
                if !out.is_empty() {
                    shared.inbox[slot][k].lock().expect("inbox").append(out);
                }
                shared.sent[slot][me * threads + k]
                    .store(time_bits(self.eng.sent_to[k]), Ordering::Relaxed);
                self.eng.sent_to[k] = f64::INFINITY;
            }
            shared.earliest[slot][me].store(self.earliest(), Ordering::Relaxed);
            shared.handled[slot][me].store(self.eng.handled, Ordering::Relaxed);
            let gate = self.gate();
            shared.gate[slot][me].store(time_bits(gate), Ordering::Relaxed);
            // Only for the progress bar, and not at every meeting: it reads
            // every rank's record.
            if self.eng.cfg.progress.is_some() && window.is_multiple_of(PROGRESS_WINDOWS) {
                shared.done[me].store(
                    self.ranks.iter().map(|r| r.state.done as u64).sum(),
                    Ordering::Relaxed,
                );
            }
            if !shared.barrier.wait() {
                return res.and(Err(Stop::Halted));
            }
            if res.is_err() || shared.stop.load(Ordering::Relaxed) {
                return res.and(Err(Stop::Halted));
            }
            let arrived = std::mem::take(&mut *shared.inbox[slot][me].lock().expect("inbox"));
            for (key, q, op) in arrived {
                self.push(q, f64::from_bits(key), Ev::Delivered, op);
            }
            window += 1;
            // Every thread reads the same slot here, so all decide alike:
            // a meeting costs tens of microseconds, and windows of a few
            // events each (one tiny message sets L) made two threads 50
            // times slower than one.
            if window == NARROW_CHECK {
                let handled: u64 = shared.handled[slot]
                    .iter()
                    .map(|h| h.load(Ordering::Relaxed))
                    .sum();
                if handled < NARROW_CHECK * MIN_WINDOW_EVENTS * threads as u64 {
                    return Err(Stop::Narrow);
                }
            }
            // Each thread's earliest, with the data sent to it.
            let earliest = |k: usize| {
                (0..threads)
                    .map(|j| shared.sent[slot][j * threads + k].load(Ordering::Relaxed))
                    .fold(shared.earliest[slot][k].load(Ordering::Relaxed), u64::min)
            };
            let others = (0..threads)
                .filter(|&k| k != me)
                .map(earliest)
                .min()
                .unwrap_or(u64::MAX);
            if others == u64::MAX && earliest(me) == u64::MAX {
                return Ok(());
            }
            let others_gate = (0..threads)
                .filter(|&k| k != me)
                .map(|k| shared.gate[slot][k].load(Ordering::Relaxed))
                .min()
                .unwrap_or(u64::MAX);
            res = self.window(bits_time(others), bits_time(others_gate), gate);
            if res.is_err() {
                shared.stop.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Runs the ranks plane by plane (`Tiles`) to the end: window w runs
    /// planes w, w − 1, ... (around the ring), `depth` of them, one sweep
    /// each, each up to what it and the planes beside it can send it.
    fn run_tiled(&mut self, t: Tiles) -> std::result::Result<(), Stop> {
        let n = t.planes as usize;
        let la = self.eng.lookahead;
        loop {
            if self.eng.plane_min.iter().all(|&x| x == f64::INFINITY) {
                return Ok(());
            }
            let w = (self.eng.windows % n as u64) as usize;
            self.eng.windows += 1;
            for step in 0..t.depth as usize {
                let l = (w + n - step) % n;
                let own = self.eng.plane_min[l];
                if own == f64::INFINITY {
                    continue;
                }
                let gate = self.gate();
                reach(&self.eng.plane_min, la, gate, &mut self.eng.plane_reach);
                let reach = &self.eng.plane_reach;
                let limit = la
                    .limit(own, gate)
                    .min(la.limit(reach[(l + n - 1) % n], gate))
                    .min(la.limit(reach[(l + 1) % n], gate));
                if own + own.abs() * LEVEL_TOLERANCE >= limit {
                    // The earliest plane of all cannot run its first
                    // instant: the lookahead is inside its rounding, and
                    // `Sim` must run.
                    if self.eng.plane_min.iter().all(|&x| own <= x) {
                        return Err(Stop::Fallback);
                    }
                    continue;
                }
                let ranks = l * t.plane as usize..(l + 1) * t.plane as usize;
                self.sweep_ranks(ranks, Some(l), limit)?;
            }
        }
    }

    /// Runs this thread's run of planes tiled (`Tiles`) to the end, beside
    /// threads that run theirs, without meetings: a thread waits only when
    /// none of its planes can run, until a thread beside it has news.
    ///
    /// The bounds the threads relay (`Relay`) close the reach of each
    /// thread's planes ([`reach_line`]): its first plane receives data from
    /// the thread before no sooner than that thread said, and its last from
    /// the thread after. After each plane it runs, a thread posts the data
    /// for the others, then publishes its own bounds, from its planes'
    /// reach, and rings its neighbours' bells. These are the null messages
    /// of conservative parallel simulation (Chandy and Misra): every bound
    /// holds for all that its thread can still send, so no data ever lands
    /// in a rank's past (which `Rank::past` would catch), and the thread
    /// with the earliest event of all can always run: it is never waiting
    /// on a bound it has not been told.
    fn run_relay(&mut self, t: Tiles) -> std::result::Result<(), Stop> {
        let shared = self.eng.shared;
        let relay = &shared.relay;
        let me = self.eng.part;
        let n = self.eng.plane_min.len();
        let depth = (t.depth as usize).min(n);
        // The window's first plane: it moves on once that plane has run (or
        // has nothing to run), so that a plane held back by the thread
        // beside runs as soon as it may, still in step with the planes
        // after it.
        let mut w = 0;
        loop {
            // Read before anything this round reads from the others: a
            // bell rung after it is news this round may have missed.
            let bell = relay.bell[me].load(Ordering::Acquire);
            if shared.stop.load(Ordering::Relaxed) {
                return Err(Stop::Halted);
            }
            if self.eng.cfg.progress.is_some() && self.eng.windows.is_multiple_of(PROGRESS_WINDOWS)
            {
                shared.done[me].store(
                    self.ranks.iter().map(|r| r.state.done as u64).sum(),
                    Ordering::Relaxed,
                );
            }
            let idle = self.no_events_left();
            if !idle && self.relay_window(t, &mut w, depth)? {
                continue;
            }
            // Tell the others where this thread stands, then wait for news
            // (or for the end). An idle thread takes its post here first:
            // data posted before the bell was read must run now.
            let (before, after) = self.take_relayed();
            if self.eng.late {
                return Err(Stop::Fallback);
            }
            if idle && !self.no_events_left() {
                continue;
            }
            self.relay_out(before, after);
            if self.no_events_left() && self.idle_and_over() {
                return Ok(());
            }
            if !self.wait_for_bell(bell) {
                return Err(Stop::Halted);
            }
            if relay.over.load(Ordering::Acquire) {
                return Ok(());
            }
        }
    }

    /// Runs a window of a tiled run on several threads (`run_relay`): its
    /// planes `w`, `w` − 1, ... (around this thread's planes), `depth` of
    /// them, each as far as it can go. Moves `w` on once its plane has run
    /// (or has nothing to run), so that a plane held back by the thread
    /// beside runs as soon as it may, still in step with the planes after
    /// it. When no plane of the window can run, any other plane that can
    /// runs once. `false` when no plane could run.
    fn relay_window(
        &mut self,
        t: Tiles,
        w: &mut usize,
        depth: usize,
    ) -> std::result::Result<bool, Stop> {
        let n = self.eng.plane_min.len();
        self.eng.windows += 1;
        let mut first = Plane::Idle;
        let mut ran = false;
        for step in 0..depth {
            let l = (*w + n - step) % n;
            let outcome = self.relay_plane(t, l)?;
            ran |= outcome == Plane::Ran;
            if step == 0 {
                first = outcome;
            }
        }
        if first != Plane::Held {
            *w = (*w + 1) % n;
            return Ok(true);
        }
        if ran {
            return Ok(true);
        }
        for l in 0..n {
            if (0..depth).any(|step| (*w + n - step) % n == l) {
                continue;
            }
            ran |= self.relay_plane(t, l)? == Plane::Ran;
        }
        Ok(ran)
    }

    /// Runs plane `l` of this thread (its `l`-th) as far as it can go, with
    /// what the threads beside have told (`take_relayed`), and tells them
    /// the news (`relay_out`).
    fn relay_plane(&mut self, t: Tiles, l: usize) -> std::result::Result<Plane, Stop> {
        let (before, after) = self.take_relayed();
        if self.eng.late {
            return Err(Stop::Fallback);
        }
        let own = self.eng.plane_min[l];
        if own == f64::INFINITY {
            return Ok(Plane::Idle);
        }
        let la = self.eng.lookahead;
        let n = self.eng.plane_min.len();
        let gate = self.relay_reach(before, after);
        let reach = &self.eng.plane_reach;
        let from_before = if l == 0 {
            before
        } else {
            la.limit(reach[l - 1], gate)
        };
        let from_after = if l == n - 1 {
            after
        } else {
            la.limit(reach[l + 1], gate)
        };
        let limit = la.limit(own, gate).min(from_before).min(from_after);
        let least = own + own.abs() * LEVEL_TOLERANCE;
        if least >= limit {
            // As on one thread: the earliest plane of all (as far as this
            // thread knows) cannot run its first instant.
            if least >= la.limit(own, gate)
                && own <= before.min(after)
                && self.eng.plane_min.iter().all(|&x| own <= x)
            {
                return Err(Stop::Fallback);
            }
            return Ok(Plane::Held);
        }
        let ranks = l * t.plane as usize..(l + 1) * t.plane as usize;
        self.sweep_ranks(ranks, Some(l), limit)?;
        self.relay_out(before, after);
        Ok(Plane::Ran)
    }

    /// The bounds of the data from the threads before and after this one
    /// (`Relay`), then the data they have posted it, queued.
    fn take_relayed(&mut self) -> (f64, f64) {
        let relay = &self.eng.shared.relay;
        let (me, prev, next) = self.neighbours();
        let before = bits_time(relay.into_after[prev].load(Ordering::Acquire));
        let after = bits_time(relay.into_before[next].load(Ordering::Acquire));
        let arrived = {
            let mut post = relay.post.lock().unwrap_or_else(|e| e.into_inner());
            if post.inbox[me].is_empty() {
                return (before, after);
            }
            post.idle[me] = false;
            std::mem::take(&mut post.inbox[me])
        };
        for (key, q, op) in arrived {
            self.push(q, f64::from_bits(key), Ev::Delivered, op);
        }
        (before, after)
    }

    /// Posts the data for the other threads, publishes this thread's bounds
    /// (from its planes' reach, with the bounds it was told, `before` and
    /// `after`), and rings the bells beside it.
    fn relay_out(&mut self, before: f64, after: f64) {
        let relay = &self.eng.shared.relay;
        let (me, prev, next) = self.neighbours();
        if self.eng.outbox.iter().any(|o| !o.is_empty()) {
            let mut post = relay.post.lock().unwrap_or_else(|e| e.into_inner());
            for (k, out) in self.eng.outbox.iter_mut().enumerate() {
                post.inbox[k].append(out);
            }
        }
        let la = self.eng.lookahead;
        let gate = self.relay_reach(before, after);
        let reach = &self.eng.plane_reach;
        let first = la.limit(reach[0], gate);
        let last = la.limit(reach[reach.len() - 1], gate);
        relay.into_before[me].store(time_bits(first), Ordering::Release);
        relay.into_after[me].store(time_bits(last), Ordering::Release);
        relay.bell[prev].fetch_add(1, Ordering::Release);
        relay.bell[next].fetch_add(1, Ordering::Release);
    }

    /// Each plane's reach into `plane_reach` ([`reach_line`], with the
    /// bounds the threads beside told, `before` and `after`), and the gate
    /// it used.
    fn relay_reach(&mut self, before: f64, after: f64) -> f64 {
        let gate = self.gate();
        reach_line(
            &self.eng.plane_min,
            before,
            after,
            self.eng.lookahead,
            gate,
            &mut self.eng.plane_reach,
        );
        gate
    }

    /// Whether none of this thread's planes has an event pending (in a
    /// tiled run).
    fn no_events_left(&self) -> bool {
        self.eng.plane_min.iter().all(|&x| x == f64::INFINITY)
    }

    /// This thread, and the threads before and after it (around the ring
    /// of threads).
    fn neighbours(&self) -> (usize, usize, usize) {
        let threads = self.eng.shared.done.len();
        let me = self.eng.part;
        (me, (me + threads - 1) % threads, (me + 1) % threads)
    }

    /// Marks this thread idle (it has no event left), and ends the run if
    /// every thread is and no data is in transit; `false` while some
    /// thread may still send.
    fn idle_and_over(&mut self) -> bool {
        let relay = &self.eng.shared.relay;
        let mut post = relay.post.lock().unwrap_or_else(|e| e.into_inner());
        if !post.inbox[self.eng.part].is_empty() {
            return false;
        }
        post.idle[self.eng.part] = true;
        if post.idle.iter().all(|&i| i) && post.inbox.iter().all(|b| b.is_empty()) {
            relay.over.store(true, Ordering::Release);
            for b in &relay.bell {
                b.fetch_add(1, Ordering::Release);
            }
            return true;
        }
        false
    }

    /// Waits until this thread's bell rings past `bell` (or the run is
    /// over); `false` when another thread stopped. Spins a while, then
    /// yields the core, then sleeps in short naps.
    fn wait_for_bell(&self, bell: u64) -> bool {
        let shared = self.eng.shared;
        let mut tries = 0u32;
        loop {
            if shared.relay.bell[self.eng.part].load(Ordering::Acquire) != bell
                || shared.relay.over.load(Ordering::Acquire)
            {
                return true;
            }
            if shared.stop.load(Ordering::Relaxed) {
                return false;
            }
            tries = tries.saturating_add(1);
            if tries < 1 << 10 && shared.spin {
                std::hint::spin_loop();
            } else if tries < 1 << 14 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
        }
    }

    /// Runs this thread's ranks for one window: alone (`others` = `inf`),
    /// sweep after sweep, each up to L past the earliest event left, to the
    /// end; beside other threads, up to L past the earliest event of all
    /// (theirs given as `others`, with the data sent to them), one sweep.
    ///
    /// Within a sweep the ranks' order does not matter: every event a rank
    /// runs is at or after the sweep's earliest, so whatever it sends lands
    /// at or after the limit, in another sweep. Running them in index
    /// order reads their states in memory order and lets the sweep ask for
    /// the next ranks' states ahead of time.
    ///
    /// `others_gate` is the earliest gate end the other threads published
    /// (`Part::gates`), `own_gate` this thread's: every thread bounds
    /// the window by the same values.
    fn window(
        &mut self,
        others: f64,
        others_gate: f64,
        own_gate: f64,
    ) -> std::result::Result<(), Stop> {
        if self.eng.late {
            return Err(Stop::Fallback);
        }
        self.eng.sent = f64::INFINITY;
        // With other threads, every thread runs to the same limit, L past
        // the earliest event of all, so they end the window together. (Up
        // to the others' earliest + L instead, the one behind ran L plus
        // its lag and the one ahead L less its lag, and the lag passed
        // from one to the other at every window: each waited a sixth of
        // the run.)
        let la = self.eng.lookahead;
        let cap = if others == f64::INFINITY {
            f64::INFINITY
        } else {
            la.limit(self.eng.own_min.min(others), own_gate.min(others_gate))
        };
        let mut swept = false;
        loop {
            let own = self.eng.own_min;
            if own == f64::INFINITY {
                return Ok(());
            }
            let base = own.min(others).min(self.eng.sent);
            let limit = la.limit(base, self.gate().min(others_gate)).min(cap);
            if own + own.abs() * LEVEL_TOLERANCE >= limit {
                // This thread's earliest rank cannot run its first instant:
                // the window is over, or it waits for the others, or, if
                // it is the earliest of all and has not moved, the
                // lookahead is inside its rounding and `Sim` must run.
                return if own <= base && (!swept || limit < cap) {
                    Err(Stop::Fallback)
                } else {
                    Ok(())
                };
            }
            swept = true;
            self.sweep(limit)?;
        }
    }

    /// Runs every rank's instants that end before `limit`, in rank order.
    fn sweep(&mut self, limit: f64) -> std::result::Result<(), Stop> {
        self.sweep_ranks(0..self.ranks.len(), None, limit)
    }

    /// Runs the instants that end before `limit` of the ranks in `ranks`
    /// (this thread's k-th), in rank order: all of them, or one plane of a
    /// tiled run (`Tiles`), whose earliest the sweep sets in `plane_min`.
    fn sweep_ranks(
        &mut self,
        ranks: std::ops::Range<usize>,
        plane: Option<usize>,
        limit: f64,
    ) -> std::result::Result<(), Stop> {
        self.eng.sweeps += 1;
        let mut due = std::mem::take(&mut self.eng.due);
        due.clear();
        // Ranks not run keep their earliest; those run and those that
        // receive data add theirs as the sweep goes (`Part::deliver`).
        let mut rest = f64::INFINITY;
        let first = ranks.start;
        for (k, &t) in self.eng.next[ranks].iter().enumerate() {
            if t < limit {
                due.push((first + k) as u32);
            } else if t < rest {
                rest = t;
            }
        }
        match plane {
            None => self.eng.own_min = rest,
            Some(l) => self.eng.plane_min[l] = rest,
        }
        let mut ran = f64::INFINITY;
        for (n, &k) in due.iter().enumerate() {
            // In three stages, each reading addresses the one before
            // brought in: a rank's record, its queues, then the states of
            // the ops its due events touch (written long ago, they have
            // left the cache).
            if let Some(&ahead) = due.get(n + 3 * PREFETCH_AHEAD) {
                self.ranks[ahead as usize].prefetch_record();
            }
            if let Some(&ahead) = due.get(n + 2 * PREFETCH_AHEAD) {
                self.ranks[ahead as usize].prefetch_queues();
            }
            if let Some(&ahead) = due.get(n + PREFETCH_AHEAD) {
                let rank = &self.ranks[ahead as usize];
                // The events due come first.
                for &(key, ev, op) in rank.queue.as_slice() {
                    if f64::from_bits(key) >= limit {
                        break;
                    }
                    rank.state.ops.prefetch(op);
                    // A send that ends counts down its successors: in a
                    // pipeline, the same send of the next segment, whose
                    // state its receives set up long before (named without
                    // decoding: decoding them all cost 3.6% of the
                    // instructions).
                    if ev == Ev::SendEnd {
                        let r = self.eng.lo as usize + ahead as usize;
                        if let Some(j) = self.eng.src.far_successor(r, op) {
                            rank.state.ops.prefetch(j);
                        }
                    }
                }
            }
            let r = self.eng.lo + k;
            self.eng.running = r;
            if self.eng.handled >= self.eng.next_report {
                self.report_progress();
            }
            let res = self.eng.advance(&mut self.ranks[k as usize], r, limit);
            self.eng.running = NONE_RUNNING;
            res?;
            if self.eng.late {
                return Err(Stop::Fallback);
            }
            let next = match self.ranks[k as usize].queue.peek() {
                Some(&(key, _, _)) => f64::from_bits(key),
                None => f64::INFINITY,
            };
            self.eng.next[k as usize] = next;
            if next < ran {
                ran = next;
            }
        }
        self.eng.due = due;
        match plane {
            None => self.eng.own_min = self.eng.own_min.min(ran),
            Some(l) => {
                self.eng.plane_min[l] = self.eng.plane_min[l].min(ran);
                self.eng.own_min = self
                    .eng
                    .plane_min
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min);
            }
        }
        debug_assert_eq!(self.eng.running, NONE_RUNNING);
        self.deliver_mail();
        if self.eng.late {
            return Err(Stop::Fallback);
        }
        Ok(())
    }

    /// As `Sim::report_progress`, for all threads (their counts as of the
    /// last barrier).
    #[cold]
    #[inline(never)]
    fn report_progress(&mut self) {
        self.eng.next_report = self.eng.handled + (1 << 16);
        if let Some(p) = &self.eng.cfg.progress {
            let own: u64 = self.ranks.iter().map(|r| r.state.done as u64).sum();
            let others: u64 = (0..self.eng.shared.done.len())
                .filter(|&k| k != self.eng.part)
                .map(|k| self.eng.shared.done[k].load(Ordering::Relaxed))
                .sum();
            let millionths =
                (own + others).saturating_mul(1_000_000) / self.eng.shared.total_ops.max(1);
            p.store(millionths, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl<'a, P: Lookahead> Part<'a, P> {
    /// Data for another thread's rank: it waits in the outbox.
    fn send_out(&mut self, q: u32, time: f64, op: OpId) {
        let to = (q / self.shared.block) as usize;
        self.outbox[to].push((time.to_bits(), q, op));
        // The other thread runs from it after the next meeting, and may
        // answer L later.
        self.sent = self.sent.min(time);
        self.sent_to[to] = self.sent_to[to].min(time);
    }

    /// Data the running rank sends rank q, landing at `time`. Data for
    /// another rank of this thread lands at or after the sweep's limit, so
    /// it waits in `mail` until the sweep is done (`Local::deliver_mail`);
    /// q's earliest (`next`) is lowered now.
    fn deliver(&mut self, rank: &mut Rank, q: u32, time: f64, op: OpId) {
        if q == self.running {
            self.push_own(rank, time, Ev::Delivered, op);
            return;
        }
        let k = q.wrapping_sub(self.lo) as usize;
        if k >= self.next.len() {
            self.send_out(q, time, op);
            return;
        }
        self.lower_earliest(k, time);
        self.mail.push((time.to_bits(), q, op));
    }

    /// An event at `time` is queued for this thread's k-th rank (not the
    /// running one): its earliest and the thread's come down to it.
    fn lower_earliest(&mut self, k: usize, time: f64) {
        if time < self.next[k] {
            self.next[k] = time;
        }
        if time < self.own_min {
            self.own_min = time;
        }
        if let Some(t) = self.shared.tiles {
            let l = k / t.plane as usize;
            if time < self.plane_min[l] {
                self.plane_min[l] = time;
            }
        }
    }

    /// Queues an event of the running rank. (Its `next` is set from its
    /// queue when it is done, and `own_min` then: neither is touched here.)
    #[inline(always)]
    fn push_own(&mut self, rank: &mut Rank, time: f64, ev: Ev, op: OpId) {
        self.late |= rank.queue_event((time.to_bits(), ev, op));
    }

    /// Runs rank r's instants that end before `limit`.
    fn advance(&mut self, rank: &mut Rank, r: u32, limit: f64) -> std::result::Result<(), Stop> {
        loop {
            let Some(&(key, _, _)) = rank.queue.peek() else {
                return Ok(());
            };
            let now = f64::from_bits(key);
            if !now.is_finite() {
                return Err(invalid!(
                    "the simulated time overflowed (an event at {now} s): the overheads, latencies, \
                     bandwidths or sizes given are out of range"
                )
                .into());
            }
            let horizon = now + now.abs() * LEVEL_TOLERANCE;
            if horizon >= limit {
                // The instant may yet receive data from another rank
                // (`window` checks that the earliest rank can run one).
                return Ok(());
            }
            loop {
                node::drain_ready(&mut self.at(rank, now, horizon), now)?;
                if let Some(&(k, ev, op)) = rank.queue.peek() {
                    let t = f64::from_bits(k);
                    if t <= horizon {
                        rank.queue.pop();
                        self.handled += u64::from(ev != Ev::Delivered);
                        self.handle(rank, r, t, ev, op, now, horizon)?;
                        continue;
                    }
                }
                if rank.dispatch_pending {
                    rank.dispatch_pending = false;
                    node::dispatch(&mut self.at(rank, now, horizon), now, r)?;
                    continue;
                }
                break;
            }
            rank.past = horizon;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn handle(
        &mut self,
        rank: &mut Rank,
        r: u32,
        t: f64,
        ev: Ev,
        i: OpId,
        now: f64,
        horizon: f64,
    ) -> std::result::Result<(), Stop> {
        match ev {
            Ev::Start => node::start(&mut self.at(rank, now, horizon), r, std::iter::empty()),
            Ev::OverheadDone => node::task_done(&mut self.at(rank, now, horizon), t, r, i, true)?,
            Ev::TaskDone => node::task_done(&mut self.at(rank, now, horizon), t, r, i, false)?,
            Ev::FlowStart => {
                // Or set when the latency began.
                if !self.lookahead.flows_at_dispatch {
                    let send = self.transfer(rank, r, i)?;
                    self.begin_bandwidth(rank, t, now, horizon, r, i, send)?;
                }
            }
            Ev::SendEnd => node::send_done(&mut self.at(rank, now, horizon), t, r, i),
            Ev::Delivered => node::data_arrived(&mut self.at(rank, now, horizon), t, r, i),
        }
        Ok(())
    }

    /// The node model's view of the running rank in the instant that began
    /// at `now` and ends at `horizon`.
    #[inline(always)]
    fn at<'p>(&'p mut self, rank: &'p mut Rank, now: f64, horizon: f64) -> At<'p, 'a, P> {
        At {
            part: self,
            rank,
            now,
            horizon,
        }
    }

    /// Send i of rank r: its receiver, receive, bytes and gated send, and
    /// its route's entry in the rank's `kept` (as `Sim::begin_latency`
    /// finds the route).
    fn transfer(&mut self, rank: &mut Rank, r: u32, i: OpId) -> Result<Started> {
        let (
            Transfer {
                peer,
                count,
                route,
                recv,
            },
            gated,
        ) = self.src.gated_transfer(r as usize, i);
        let bytes = if peer == r {
            0.0
        } else {
            (count * self.src.header().elem_bytes() + self.cfg.header_bytes) as f64
        };
        let started = |kept| Started {
            dst: peer,
            recv,
            bytes,
            kept,
            gated,
        };
        if let Some(k) = rank.kept_keys.iter().position(|&key| key == (peer, route)) {
            return Ok(started(k));
        }
        // As `Sim::route_links` finds it, without fold and node links (a
        // route is found once, then kept).
        let mut buf = std::mem::take(&mut self.route_buf);
        buf.clear();
        if peer != r {
            let offsets = &self.src.header().offsets;
            send_route(self.topo, offsets, r, i, peer, route, &mut buf)?;
        }
        let path = Route::from_slice(&buf);
        self.route_buf = buf;
        let links = &self.topo.links;
        let latency: f64 = path.iter().map(|&l| links[l as usize].latency).sum();
        let bottleneck = path
            .iter()
            .map(|&l| self.topo.lone_rate(l))
            .fold(f64::INFINITY, f64::min);
        let k = rank.next_kept as usize;
        rank.next_kept = ((k + 1) % KEPT_ROUTES) as u8;
        // Its place, and any kept route that shares a link with it, are
        // given up (their statistics written back) before it takes a
        // link's statistics.
        for (j, (old, links)) in rank.kept.iter_mut().zip(&mut rank.kept_links).enumerate() {
            if j == k || links.iter().any(|l| path.contains(l)) {
                drop_kept(old, links, &mut self.link_use);
                rank.kept_keys[j] = (NO_PEER, 0);
            }
        }
        let held = path.len() == 1;
        rank.kept_keys[k] = (peer, route);
        rank.kept[k] = KeptRoute {
            latency,
            bottleneck,
            checked: false,
            held,
            no_links: path.is_empty(),
            link_use: if held {
                self.link_use[path[0] as usize]
            } else {
                LinkUse::default()
            },
        };
        rank.kept_links[k] = path;
        Ok(started(k))
    }

    /// Send i of rank r ends at `end`: its engine is freed then, and its
    /// data lands. If it gates another send (`Horizon`), the lookahead
    /// counts from its end until the gated one is done.
    fn end_send(&mut self, rank: &mut Rank, r: u32, i: OpId, end: f64, send: &Started) {
        self.push_own(rank, end, Ev::SendEnd, i);
        self.deliver(rank, send.dst, end, send.recv);
        if let Some(gated) = send.gated {
            let at = end - end.abs() * 2.0 * LEVEL_TOLERANCE;
            self.gates.push(Reverse((at.to_bits(), r - self.lo, gated)));
        }
    }

    /// As `Sim::begin_latency`: the send's overhead is paid at t.
    fn begin_latency(
        &mut self,
        rank: &mut Rank,
        t: f64,
        now: f64,
        horizon: f64,
        r: u32,
        i: OpId,
    ) -> std::result::Result<(), Stop> {
        let send = self.transfer(rank, r, i)?;
        self.flows += 1;
        let kept = &rank.kept[send.kept];
        let lat = kept.latency;
        if send.bytes == 0.0 || kept.no_links {
            self.end_send(rank, r, i, t + lat, &send);
            return Ok(());
        }
        let (start, now, horizon) = if lat == 0.0 {
            (t, now, horizon)
        } else {
            self.push_own(rank, t + lat, Ev::FlowStart, i);
            if !self.lookahead.flows_at_dispatch {
                return Ok(());
            }
            // The bandwidth phase is set now, from the latency's end, in an
            // instant of its own (`Horizon`); its `FlowStart` event only
            // counts, as `Sim`'s does.
            let start = t + lat;
            (start, start, start + start.abs() * LEVEL_TOLERANCE)
        };
        self.begin_bandwidth(rank, start, now, horizon, r, i, send)
    }

    /// A flow starts its bandwidth phase at t, in the instant of rank r that
    /// began at `now`, on the route `kept[k]` of rank r: alone on its links,
    /// at its bottleneck's rate, it ends at `now` + bytes / rate, as
    /// `Sim::update_rates` sets it.
    #[allow(clippy::too_many_arguments)]
    fn begin_bandwidth(
        &mut self,
        rank: &mut Rank,
        t: f64,
        now: f64,
        horizon: f64,
        r: u32,
        i: OpId,
        send: Started,
    ) -> std::result::Result<(), Stop> {
        let (k, bytes) = (send.kept, send.bytes);
        let (kept, links) = (&mut rank.kept[k], &rank.kept_links[k]);
        let rate = flow_cap(self.cfg, || kept.latency);
        // `MaxMin::alone`: the bottleneck, unless the cap is below it.
        let rate = if rate < kept.bottleneck {
            rate
        } else {
            kept.bottleneck
        };
        let end = now + bytes / rate;
        if !kept.checked {
            for (j, &l) in links.iter().enumerate() {
                let owner = &self.shared.owner[l as usize];
                let mine = match owner.load(Ordering::Relaxed) {
                    NO_OWNER => match owner.compare_exchange(
                        NO_OWNER,
                        r,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => true,
                        Err(other) => other == r,
                    },
                    other => other == r,
                };
                // Another sender's link, or one crossed twice.
                if !mine || links[..j].contains(&l) {
                    return Err(Stop::Fallback);
                }
            }
            kept.checked = true;
        }
        // A link still busy with this rank's last flow on it, or an end
        // inside the instant (`Sim` queues it after the instant).
        let busy = if kept.held {
            kept.link_use.since > horizon
        } else {
            links
                .iter()
                .any(|&l| self.link_use[l as usize].since > horizon)
        };
        if busy || end <= horizon {
            return Err(Stop::Fallback);
        }
        let count = |u: &mut LinkUse| {
            u.bytes += bytes;
            u.busy += end - t;
            u.since = end;
            u.peak = u.peak.max(1);
        };
        if kept.held {
            count(&mut kept.link_use);
        } else {
            for &l in links {
                count(&mut self.link_use[l as usize]);
            }
        }
        self.network_bytes += bytes;
        self.end_send(rank, r, i, end, &send);
        Ok(())
    }
}

/// The by-rank driver runs the node model on one rank at a time (`rank`, of
/// its thread's part), in the instant that began at `now`: its events go to
/// the rank's own queue, and a flow's latency and bandwidth phases are set
/// at once (the flow is alone on its links).
struct At<'p, 'a, P: Lookahead> {
    part: &'p mut Part<'a, P>,
    rank: &'p mut Rank,
    now: f64,
    horizon: f64,
}

impl<'a, P: Lookahead> node::Host<'a> for At<'_, 'a, P> {
    type Src = P;
    type Err = Stop;
    #[inline(always)]
    fn src(&self) -> &'a P {
        self.part.src
    }
    #[inline(always)]
    fn cfg(&self) -> &'a SimConfig {
        self.part.cfg
    }
    #[inline(always)]
    fn rank(&mut self, _r: u32) -> &mut RankState {
        &mut self.rank.state
    }
    #[inline(always)]
    fn rank_and_ready(&mut self, _r: u32) -> (&mut RankState, &mut Vec<(u32, OpId)>) {
        (&mut self.rank.state, &mut self.part.ready_now)
    }
    #[inline(always)]
    fn next_ready(&mut self) -> Option<(u32, OpId)> {
        self.part.ready_now.pop()
    }
    #[inline(always)]
    fn want_dispatch(&mut self, _r: u32) {
        self.rank.dispatch_pending = true;
    }
    #[inline(always)]
    fn free_task_done(&mut self, now: f64, _r: u32, i: OpId) {
        self.part.push_own(self.rank, now, Ev::TaskDone, i);
    }
    #[inline(always)]
    fn task_started(
        &mut self,
        now: f64,
        dur: f64,
        r: u32,
        i: OpId,
        compute: bool,
    ) -> std::result::Result<(), Stop> {
        let end = now + dur;
        if compute {
            self.part.push_own(self.rank, end, Ev::TaskDone, i);
        } else {
            self.part.push_own(self.rank, end, Ev::OverheadDone, i);
            if self.part.lookahead.flows_at_dispatch {
                // The flow starts as the overhead ends (`Horizon`), in an
                // instant of its own.
                let end_horizon = end + end.abs() * LEVEL_TOLERANCE;
                self.part
                    .begin_latency(self.rank, end, end, end_horizon, r, i)?;
            }
        }
        Ok(())
    }
    #[inline(always)]
    fn begin_latency(&mut self, now: f64, r: u32, i: OpId) -> std::result::Result<(), Stop> {
        self.part
            .begin_latency(self.rank, now, self.now, self.horizon, r, i)
    }
    #[inline(always)]
    fn overhead_done(&mut self, now: f64, r: u32, i: OpId) -> std::result::Result<(), Stop> {
        // The flow was set when the overhead started.
        if self.part.lookahead.flows_at_dispatch {
            return Ok(());
        }
        self.part
            .begin_latency(self.rank, now, self.now, self.horizon, r, i)
    }
}

#[cfg(test)]
mod tests {
    use super::{reach, reach_line, Horizon, Meeting, Rank};

    #[test]
    fn a_plane_is_reached_a_lookahead_a_step_around_the_ring() {
        let la = Horizon {
            small: 1.0,
            big: 3.0,
            flows_at_dispatch: false,
        };
        let inf = f64::INFINITY;
        let mut out = Vec::new();
        // Planes 1 and 5 of 8 have events at 10 and 11; the rest none. With
        // no gate a step is 3, both ways around the ring.
        let from = [inf, 10.0, inf, inf, inf, 11.0, inf, inf];
        reach(&from, la, inf, &mut out);
        assert_eq!(out, [13.0, 10.0, 13.0, 16.0, 14.0, 11.0, 14.0, 16.0]);
        // A gating send ending at 10.5: a step from T lands by max(10.5, T)
        // + 1 where that is sooner.
        reach(&from, la, 10.5, &mut out);
        assert_eq!(out, [11.5, 10.0, 11.5, 12.5, 12.0, 11.0, 12.0, 12.5]);
        // Nothing anywhere: nothing reaches.
        reach(&[inf; 4], la, inf, &mut out);
        assert_eq!(out, [inf; 4]);
    }

    #[test]
    fn a_thread_s_planes_are_reached_along_their_line_and_from_its_ends() {
        let la = Horizon {
            small: 1.0,
            big: 3.0,
            flows_at_dispatch: false,
        };
        let inf = f64::INFINITY;
        let mut out = Vec::new();
        // A thread's five planes, events in plane 1 at 10: steps of 3 along
        // the line, and the ends do not wrap around to each other.
        let from = [inf, 10.0, inf, inf, inf];
        reach_line(&from, inf, inf, la, inf, &mut out);
        assert_eq!(out, [13.0, 10.0, 13.0, 16.0, 19.0]);
        // The thread after says its data lands in the last plane from 12:
        // that plane and the one before it are reached sooner.
        reach_line(&from, inf, 12.0, la, inf, &mut out);
        assert_eq!(out, [13.0, 10.0, 13.0, 15.0, 12.0]);
        // So does the thread before, in the first plane, at 9.5.
        reach_line(&from, 9.5, 12.0, la, inf, &mut out);
        assert_eq!(out, [9.5, 10.0, 13.0, 15.0, 12.0]);
        // A gate at 10.5 shortens the steps from before it.
        reach_line(&from, inf, inf, la, 10.5, &mut out);
        assert_eq!(out, [11.5, 10.0, 11.5, 12.5, 13.5]);
        // One plane: both ends at once.
        reach_line(&[20.0], 15.0, 17.0, la, inf, &mut out);
        assert_eq!(out, [15.0]);
    }

    #[test]
    fn the_lookahead_counts_from_a_gate_only_once_it_is_near() {
        let la = Horizon {
            small: 1.0,
            big: 3.0,
            flows_at_dispatch: false,
        };
        // No gating send started: the full phase.
        assert_eq!(la.limit(10.0, f64::INFINITY), 13.0);
        // One ends at 11: its gated send's data may land at 12.
        assert_eq!(la.limit(10.0, 11.0), 12.0);
        // One that ended before T: the gated send starts at T at the soonest.
        assert_eq!(la.limit(10.0, 4.0), 11.0);
        // Far enough not to matter.
        assert_eq!(la.limit(10.0, 20.0), 13.0);
        // No gated sends, or `small` within the instants' rounding.
        let flat = Horizon {
            small: 1.0,
            big: 1.0,
            flows_at_dispatch: false,
        };
        assert_eq!(flat.limit(10.0, 4.0), 11.0);
        assert_eq!(la.limit(1e12, f64::INFINITY), 1e12 + 1.0);
    }

    #[test]
    fn a_rank_keeps_its_hot_fields_in_nine_lines() {
        // What a sweep asks for ahead of each rank it runs: more lines
        // would cost every rank every sweep.
        let hot = std::mem::offset_of!(Rank, kept_links);
        assert!(hot <= 9 * 64, "{hot} bytes before the kept routes' links");
        assert_eq!(std::mem::align_of::<Rank>(), 64);
        // What data from another rank reads, in one line.
        let line = |offset: usize| offset / 64;
        assert_eq!(
            line(std::mem::offset_of!(Rank, queue)),
            line(std::mem::offset_of!(Rank, past) + 7)
        );
    }

    #[test]
    fn a_meeting_called_off_releases_whoever_waits() {
        let m = Meeting::new(3);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| m.wait());
            // Only two of three arrive; the third calls it off.
            std::thread::sleep(std::time::Duration::from_millis(20));
            m.call_off();
            assert!(!waiter.join().unwrap());
        });
        assert!(!m.wait(), "a meeting called off stays off");
        let two = Meeting::new(2);
        std::thread::scope(|scope| {
            let a = scope.spawn(|| (0..100).all(|_| two.wait()));
            let b = (0..100).all(|_| two.wait());
            assert!(b && a.join().unwrap());
        });
    }
}
