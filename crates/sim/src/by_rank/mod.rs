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
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;
use topocoll_schedule::lookahead::Lookahead;
use topocoll_schedule::{OpId, Transfer};
use topocoll_topology::{Kind, LinkId, Topology};

mod flows;
mod horizon;
mod relay;
mod sweep;
mod threads;
mod tiles;

use flows::At;
pub(super) use horizon::{lookahead, Horizon};
use horizon::{reach, reach_line};
use relay::Relay;
#[cfg(test)]
use threads::Meeting;
use threads::{bits_time, run_threads, time_bits, Shared};
use tiles::{tiles, Plane, Tiles};

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

/// Data for another thread's rank: (time bits, rank, receive).
type Mail = (u64, u32, OpId);

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
        rescheduled_flows: 0,
    };
    let mut result = results(topo, None, &finish, &link_use, totals, wall, Vec::new());
    result.run.by_rank_threads = parts.len();
    result.run.by_rank_sweeps = parts.iter().map(|p| p.eng.sweeps).max().unwrap_or(0);
    result.run.by_rank_planes = shared.tiles.map_or(0, |t| t.planes as usize);
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

    /// Whether none of this thread's planes has an event pending (in a
    /// tiled run).
    fn no_events_left(&self) -> bool {
        self.eng.plane_min.iter().all(|&x| x == f64::INFINITY)
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
