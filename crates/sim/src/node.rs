//! The node model, once, for every simulation driver: what a rank does with
//! its ops. A rank's ready sends go to free engines in program order; one
//! CPU runs, uninterrupted, the overhead of a send that holds an engine
//! first, otherwise the waiting task first in program order (combines,
//! combining receives, compute); a free task is done at once; a receive
//! completes once it is posted and its data is in (after its combine); an
//! op's completion makes ready the ops that waited only for it.
//!
//! The functions here act on one rank's [`RankState`] and ask their driver,
//! through [`Host`], for what lies outside the rank: the clock (when a CPU
//! task ends), the network (a send whose overhead is paid starts its
//! latency phase), and where ready ops and dispatch requests wait for the
//! end of the instant. The event driver (`Sim`) and the by-rank driver
//! (`by_rank`) each implement `Host`; neither has a node model of its own.

use super::{queue, SimConfig, Span};
use crate::error::Error;
use topocoll_schedule::lookahead::Lookahead;
use topocoll_schedule::{Op, OpId, OpKind, OpSource};

/// A receive has been posted (its dependencies are done).
pub(super) const POSTED: u32 = 1 << 31;
/// A receive's data has arrived.
pub(super) const ARRIVED: u32 = 1 << 30;
pub(super) const DONE: u32 = 1 << 29;
/// The op has no dependencies at all (so a receive is posted once its rank starts).
pub(super) const NO_DEPS: u32 = 1 << 28;
/// The low bits count the dependencies not yet done.
pub(super) const REMAINING: u32 = NO_DEPS - 1;

/// An op's flags and its count of dependencies not yet done, in four bytes
/// (a streamed pipeline can have a few hundred million ops in flight).
#[derive(Clone, Copy, Debug)]
pub(super) struct OpState {
    pub(super) flags: u32,
}

impl OpState {
    pub(super) fn remaining(&self) -> u32 {
        self.flags & REMAINING
    }

    /// Whether a receive is posted: its dependencies are done, or it has
    /// none and its rank (`started`) has started.
    pub(super) fn posted(&self, started: bool) -> bool {
        self.flags & POSTED != 0 || (started && self.flags & NO_DEPS != 0)
    }
}

/// The state of one rank's ops from the oldest unfinished one to the furthest
/// one touched so far, in a ring buffer that grows by doubling and shrinks
/// when the window does: ops before `front` are done, ops from
/// `front + len` on untouched. Memory follows the ops in flight, not the
/// length of the program, and a short window is a few cache lines of one
/// allocation (9,216 ranks each holding a 16 KiB chunk spread the hot states
/// over thousands of pages: a TLB miss and two cache misses per access).
#[derive(Default)]
pub(super) struct OpWindow {
    /// The oldest op not yet retired.
    pub(super) front: OpId,
    /// Where `front`'s state sits in `states` (a power-of-two length).
    /// (32-bit like `front`: a rank's whole state fits two cache lines.)
    pub(super) start: u32,
    /// States set, from `front` on.
    pub(super) len: u32,
    pub(super) states: Vec<OpState>,
}

/// The smallest ring a window allocates.
pub(super) const WINDOW_MIN: usize = 16;

impl OpWindow {
    /// Op `i`'s state, set up (with the states before it) if the window
    /// does not hold it yet. (Inlined: most calls find the state, and a
    /// call cost as much as the lookup.)
    #[inline(always)]
    pub(super) fn get<P: Lookahead>(&mut self, src: &P, r: usize, i: OpId) -> &mut OpState {
        debug_assert!(i >= self.front, "op {i} of rank {r} is already done");
        let k = i - self.front;
        if self.len <= k {
            self.extend(src, r, k);
        }
        let at = self.slot(k);
        &mut self.states[at]
    }

    /// Sets up the states of the ops up to `front + k`.
    #[inline(never)]
    pub(super) fn extend<P: Lookahead>(&mut self, src: &P, r: usize, k: u32) {
        let len = k + 1;
        if len as usize > self.states.len() {
            // An op outside the rank's program (or one before the front,
            // whose `k` wrapped) is a generator naming a wrong successor:
            // stop before the window grows to it and asks for gigabytes.
            let op = u64::from(self.front) + u64::from(k);
            assert!(
                op < src.len(r),
                "internal error: the schedule source names op {op} of rank {r}, which has {} \
                 ops, {} of them finished (inconsistent successors or dependency counts)",
                src.len(r),
                self.front
            );
            self.resize((len as usize).next_power_of_two().max(WINDOW_MIN));
        }
        let (start, mask) = (self.start, self.states.len() - 1);
        let states = &mut self.states;
        let mut at = self.len;
        src.dep_counts(r, self.front + self.len..self.front + len, |deps| {
            let flags = if deps == 0 {
                NO_DEPS
            } else {
                deps.min(REMAINING)
            };
            states[(start + at) as usize & mask] = OpState { flags };
            at += 1;
        });
        self.len = len;
    }

    /// Asks the CPU to bring op `i`'s state into cache, if the window holds
    /// it (a hint: no effect on the result).
    pub(super) fn prefetch(&self, i: OpId) {
        let Some(k) = i.checked_sub(self.front) else {
            return;
        };
        if k < self.len {
            let at: *const OpState = &self.states[self.slot(k)];
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch reads nothing and cannot fault.
            unsafe {
                std::arch::x86_64::_mm_prefetch(at as *const i8, std::arch::x86_64::_MM_HINT_T0);
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = at;
        }
    }

    /// Where the state of op `front + k` sits in the ring.
    pub(super) fn slot(&self, k: u32) -> usize {
        (self.start + k) as usize & self.states.len().wrapping_sub(1)
    }

    /// Moves the window into a ring of `capacity` states (a power of two,
    /// at least `len`), its front at the start.
    pub(super) fn resize(&mut self, capacity: usize) {
        debug_assert!(capacity.is_power_of_two() && capacity >= self.len as usize);
        let mut states = Vec::with_capacity(capacity);
        states.extend((0..self.len).map(|k| self.states[self.slot(k)]));
        states.resize(capacity, OpState { flags: 0 });
        self.states = states;
        self.start = 0;
    }

    /// Whether op `i` is done (retired, or done in the window).
    pub(super) fn is_done(&self, i: OpId) -> bool {
        match i.checked_sub(self.front) {
            None => true,
            Some(k) => k < self.len && self.states[self.slot(k)].flags & DONE != 0,
        }
    }

    /// The oldest op not yet retired.
    pub(super) fn front(&self) -> OpId {
        self.front
    }

    /// Retires the finished ops at the front; a window that has shrunk to
    /// an eighth of its ring moves into a smaller one.
    pub(super) fn retire(&mut self) {
        let mask = self.states.len().wrapping_sub(1) as u32;
        while self.len > 0 && self.states[self.start as usize].flags & DONE != 0 {
            self.start = (self.start + 1) & mask;
            self.front += 1;
            self.len -= 1;
        }
        if self.states.len() > WINDOW_MIN && self.len as usize * 8 <= self.states.len() {
            self.resize((self.states.len() / 4).max(WINDOW_MIN));
        }
    }

    /// The ops touched and not retired, with their states.
    pub(super) fn touched(&self) -> impl Iterator<Item = (OpId, &OpState)> + '_ {
        (0..self.len).map(move |k| (self.front + k, &self.states[self.slot(k)]))
    }
}

/// `RankState::cpu_running` of an idle CPU (no rank has `OpId::MAX` ops).
pub(super) const CPU_IDLE: OpId = OpId::MAX;

/// One rank's state: 128 bytes, two cache lines, touched by nearly every
/// event of the rank.
#[repr(align(64))]
pub(super) struct RankState {
    pub(super) ops: OpWindow,
    pub(super) started: bool,
    /// Ready sends, smallest program index first.
    pub(super) ready_sends: queue::SortedQueue<OpId>,
    pub(super) engines_busy: u32,
    /// The op whose task the CPU is running, or `CPU_IDLE` (not an
    /// `Option`, which would take 8 bytes and the state a third cache line).
    pub(super) cpu_running: OpId,
    /// Tasks waiting for the CPU: send overheads first (key false), then
    /// combines and compute (true); each kind smallest program index first.
    /// The last field is the task's duration (its bits), kept so the op need
    /// not be read again.
    pub(super) cpu_queue: queue::SortedQueue<(bool, OpId, u64)>,
    pub(super) finish: f64,
    pub(super) done: OpId,
}

impl RankState {
    /// The rank starts: its ops without dependencies (receives aside), its
    /// receives without dependencies whose data came first, and `extra`
    /// (rendezvous sends waiting on such receives), in program order.
    pub(super) fn start<P: Lookahead>(
        &mut self,
        src: &P,
        r: usize,
        extra: impl Iterator<Item = OpId>,
    ) -> Vec<OpId> {
        self.started = true;
        let mut ids = Vec::new();
        src.initial(r, &mut ids);
        ids.extend(self.ops.touched().filter_map(|(i, st)| {
            (st.flags & ARRIVED != 0 && st.flags & NO_DEPS != 0).then_some(i)
        }));
        ids.extend(extra);
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Op i completes at `now`: `ready` gets each successor it leaves with
    /// nothing to wait for. (Inlined: it is the engines' hottest path.)
    #[inline(always)]
    pub(super) fn complete<P: Lookahead>(
        &mut self,
        src: &P,
        r: usize,
        i: OpId,
        now: f64,
        mut ready: impl FnMut(OpId),
    ) {
        self.done += 1;
        self.finish = self.finish.max(now);
        self.ops.get(src, r, i).flags |= DONE;
        let ops = &mut self.ops;
        src.successors(r, i, |j| {
            let st = ops.get(src, r, j);
            st.flags -= 1;
            if st.remaining() == 0 {
                ready(j);
            } else if st.remaining() == REMAINING {
                more_done_than_deps(r, j);
            }
        });
        // Only the front op's completion can let the front move: after every
        // retire the front op is not done. (Reading the front's state for
        // nothing would cost a cache miss on ranks whose window is long.)
        if i == self.ops.front() {
            self.ops.retire();
        }
    }
}

/// A successor counted down past zero: the schedule source's dependency
/// counts and successors disagree (a generator's bug, never the user's
/// input: a written-out schedule's counts come from its own lists).
#[cold]
#[inline(never)]
pub(super) fn more_done_than_deps(r: usize, j: OpId) -> ! {
    panic!(
        "internal error: op {j} of rank {r} has more predecessors done than its dependency \
         count (the schedule source's dependency counts and successors disagree)"
    )
}

/// The CPU time of an op's task (a send's overhead, a combine, a compute)
/// and its name.
pub(super) fn cpu_time(cfg: &SimConfig, elem_bytes: u64, op: &Op) -> (f64, &'static str) {
    let combine = |count: u64| combine_time(cfg, elem_bytes, count);
    match *op {
        Op::Send { .. } => (cfg.overhead_s, "overhead"),
        Op::Recv { region, .. } => (combine(region.count), "combine"),
        Op::Combine { src, .. } => (combine(src.count), "combine"),
        Op::Compute { seconds } => (seconds, "compute"),
        Op::Copy { .. } => (0.0, "copy"),
    }
}

/// The CPU time of combining `count` elements.
pub(super) fn combine_time(cfg: &SimConfig, elem_bytes: u64, count: u64) -> f64 {
    cfg.compute_bandwidth
        .map_or(0.0, |bw| (count * elem_bytes) as f64 / bw)
}

/// What the node model asks of the driver that runs it (see the module).
/// `r` is always a rank the driver holds (for the by-rank driver, the rank
/// it runs).
pub(super) trait Host<'a> {
    type Src: Lookahead + 'a;
    /// The driver's error: it can carry the model's.
    type Err: From<Error>;
    fn src(&self) -> &'a Self::Src;
    fn cfg(&self) -> &'a SimConfig;
    /// Rank r's state.
    fn rank(&mut self, r: u32) -> &mut RankState;
    /// Rank r's state and the ops that became ready at this instant
    /// (rank, op), handled before time moves.
    fn rank_and_ready(&mut self, r: u32) -> (&mut RankState, &mut Vec<(u32, OpId)>);
    /// The next op that became ready at this instant, if any.
    fn next_ready(&mut self) -> Option<(u32, OpId)>;
    /// Asks for rank r's engines and CPU to be given work at the end of this
    /// instant, once everything that becomes ready at it is queued.
    fn want_dispatch(&mut self, r: u32);
    /// A free task of op i (no CPU time) is done at `now`.
    fn free_task_done(&mut self, now: f64, r: u32, i: OpId);
    /// The CPU starts op i's task at `now` for `dur` seconds: a compute task
    /// (`compute`: it completes the op) or a send's overhead.
    fn task_started(
        &mut self,
        now: f64,
        dur: f64,
        r: u32,
        i: OpId,
        compute: bool,
    ) -> Result<(), Self::Err>;
    /// Send i of rank r has paid its overhead (or needs none) at `now`: its
    /// latency phase begins (the network's part).
    fn begin_latency(&mut self, now: f64, r: u32, i: OpId) -> Result<(), Self::Err>;
    /// The overhead task of send i ended at `now` (its `task_started` event).
    fn overhead_done(&mut self, now: f64, r: u32, i: OpId) -> Result<(), Self::Err> {
        self.begin_latency(now, r, i)
    }
    /// Receive i of rank r was posted at `now` (a driver with sends that
    /// wait for their receive starts them).
    fn recv_posted(&mut self, _now: f64, _r: u32, _i: OpId) -> Result<(), Self::Err> {
        Ok(())
    }
    /// A CPU span for a trace (by default none is kept).
    fn trace(&mut self, _span: Span) {}
    /// Op i of rank r completed at `now` (recorded under `trace`).
    fn op_done(&mut self, _r: u32, _i: OpId, _now: f64) {}
}

/// Rank r starts: the ops without dependencies become ready, in program
/// order. Receives without dependencies count as posted from now on; the
/// ones whose data came first, and `extra` (sends waiting for such
/// receives, under rendezvous), are handled now like the rest.
#[inline]
pub(super) fn start<'a, H: Host<'a>>(h: &mut H, r: u32, extra: impl Iterator<Item = OpId>) {
    let src = h.src();
    let (rank, ready) = h.rank_and_ready(r);
    let ids = rank.start(src, r as usize, extra);
    ready.extend(ids.into_iter().map(|i| (r, i)));
}

/// Handles every op that became ready at `now`.
#[inline]
pub(super) fn drain_ready<'a, H: Host<'a>>(h: &mut H, now: f64) -> Result<(), H::Err> {
    let src = h.src();
    let cfg = h.cfg();
    loop {
        let Some((r, i)) = h.next_ready() else {
            return Ok(());
        };
        match src.kind(r as usize, i) {
            OpKind::Send => {
                h.rank(r).ready_sends.push(i);
                h.want_dispatch(r);
            }
            OpKind::Recv => {
                let st = h.rank(r).ops.get(src, r as usize, i);
                st.flags |= POSTED;
                if st.flags & ARRIVED != 0 {
                    received(h, now, r, i);
                }
                h.recv_posted(now, r, i)?;
            }
            OpKind::Other => match src.op(r as usize, i) {
                op @ (Op::Combine { .. } | Op::Compute { .. }) => {
                    let dur = cpu_time(cfg, src.header().elem_bytes(), &op).0;
                    cpu_task(h, now, r, i, dur, true);
                }
                _ => complete(h, now, r, i),
            },
        }
    }
}

/// Queues op i's task of `dur` seconds for rank r's CPU, which completes
/// the op (`compute`) or, for a send's overhead, starts its latency phase
/// when it is done. A free task takes no CPU time: it is done at once,
/// whatever the CPU is doing: were it to wait its turn behind a busy CPU,
/// the result would depend on the order of the events of one instant.
#[inline]
pub(super) fn cpu_task<'a, H: Host<'a>>(
    h: &mut H,
    now: f64,
    r: u32,
    i: OpId,
    dur: f64,
    compute: bool,
) {
    if dur <= 0.0 {
        // Only sends with an overhead come here, so a free task is never a send's.
        h.free_task_done(now, r, i);
        return;
    }
    h.rank(r).cpu_queue.push((compute, i, dur.to_bits()));
    h.want_dispatch(r);
}

/// Gives ready sends of rank r to free engines, in program order, and an
/// idle CPU its next task: a waiting send's overhead first (a node posts
/// its transfers before it computes), else the waiting task first in
/// program order (a single thread walking its schedule). Tasks are not
/// interrupted.
#[inline]
pub(super) fn dispatch<'a, H: Host<'a>>(h: &mut H, now: f64, r: u32) -> Result<(), H::Err> {
    let cfg = h.cfg();
    loop {
        let rank = h.rank(r);
        if rank.engines_busy as usize >= cfg.engines {
            break;
        }
        let Some(i) = rank.ready_sends.pop() else {
            break;
        };
        rank.engines_busy += 1;
        if cfg.overhead_s > 0.0 {
            cpu_task(h, now, r, i, cfg.overhead_s, false);
        } else {
            h.begin_latency(now, r, i)?;
        }
    }
    let rank = h.rank(r);
    if rank.cpu_running == CPU_IDLE {
        if let Some((compute, i, dur)) = rank.cpu_queue.pop() {
            rank.cpu_running = i;
            let dur = f64::from_bits(dur);
            if cfg.trace && dur > 0.0 {
                let src = h.src();
                let what = cpu_time(cfg, src.header().elem_bytes(), &src.op(r as usize, i)).1;
                h.trace(Span {
                    rank: r,
                    name: what.to_string(),
                    start_s: now,
                    end_s: now + dur,
                });
            }
            h.task_started(now, dur, r, i, compute)?;
        }
    }
    Ok(())
}

/// Op i's CPU task (a send's overhead, or a compute task) ended at `now`.
#[inline]
pub(super) fn task_done<'a, H: Host<'a>>(
    h: &mut H,
    now: f64,
    r: u32,
    i: OpId,
    overhead: bool,
) -> Result<(), H::Err> {
    let rank = h.rank(r);
    if rank.cpu_running == i {
        rank.cpu_running = CPU_IDLE;
        if !rank.cpu_queue.is_empty() {
            h.want_dispatch(r);
        }
    }
    if overhead {
        h.overhead_done(now, r, i)
    } else {
        complete(h, now, r, i);
        Ok(())
    }
}

/// Send i of rank r ended at `now` (its data has arrived): its engine is
/// free and the send completes.
#[inline]
pub(super) fn send_done<'a, H: Host<'a>>(h: &mut H, now: f64, r: u32, i: OpId) {
    h.rank(r).engines_busy -= 1;
    h.want_dispatch(r);
    complete(h, now, r, i);
}

/// The data of receive i of rank r arrived at `now`.
#[inline]
pub(super) fn data_arrived<'a, H: Host<'a>>(h: &mut H, now: f64, r: u32, i: OpId) {
    let src = h.src();
    let rank = h.rank(r);
    let started = rank.started;
    let st = rank.ops.get(src, r as usize, i);
    let posted = st.posted(started);
    st.flags |= ARRIVED;
    if posted {
        received(h, now, r, i);
    }
}

/// A receive is posted and its data is here: it combines, or completes.
#[inline]
pub(super) fn received<'a, H: Host<'a>>(h: &mut H, now: f64, r: u32, i: OpId) {
    let src = h.src();
    match src.combines(r as usize, i) {
        Some(count) => {
            let dur = combine_time(h.cfg(), src.header().elem_bytes(), count);
            cpu_task(h, now, r, i, dur, true)
        }
        None => complete(h, now, r, i),
    }
}

/// Op i of rank r completes at `now`.
#[inline]
pub(super) fn complete<'a, H: Host<'a>>(h: &mut H, now: f64, r: u32, i: OpId) {
    h.op_done(r, i, now);
    let src = h.src();
    let (rank, ready) = h.rank_and_ready(r);
    rank.complete(src, r as usize, i, now, |j| ready.push((r, j)));
}
