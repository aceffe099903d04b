//! The threads backend: P ranks in one process, transfers are memory copies.
//!
//! By default a schedule with a [`super::replay::Replay`] runs its recorded
//! copies, and nothing below happens. The rest of this file is the *task
//! pool*, for schedules without a replay and for `--workers N`.
//!
//! Ranks are state machines ([`RankState`]), not threads: a small pool of
//! workers (one per core by default) takes *tasks* from one queue: a local
//! operation, a transfer (copy or combine from the sender's region straight
//! into the posted receive's), the delivery of a buffered message, or an
//! eager copy of a send into a message buffer. Scheduling (dependency
//! counters, matching, engines) happens under one lock; data moves outside
//! it. 256 ranks on 2 cores are 2 threads, which sleep on a condition
//! variable when there is nothing to do.
//!
//! A send that starts before its receive is posted is *parked*: it holds its
//! engine, and the receive, when posted, copies straight from the sender's
//! region (one copy instead of two). Parking must not break eager semantics
//! (a send never waits for its receiver), so when nothing at all can run
//! (no task queued or running), every parked send is copied into a message
//! buffer and completes. If then still nothing can run, the schedule is
//! deadlocked and the run fails saying which receive waits for what.

use super::{mismatch, op_regions, team, Claims, Elem, Options, Plan, RankBuffers, RankState};
use crate::error::{Error, Result, RunKind};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};
use topocoll_schedule::{Buf, Op, OpId, Region, Schedule};

/// How long an idle worker spins before it sleeps.
const SPIN: Duration = Duration::from_micros(50);

/// Without a replay, below this many bytes moved in all, the pool runs on
/// one worker (starting threads costs more than the copies).
pub const SMALL_BYTES: u64 = 1 << 20;

/// The cores this process may use, read once (the call reads cgroup files:
/// tens of microseconds, more than a small collective takes).
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
}

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub seconds: f64,
    /// Sends that had to be copied into a message buffer (their receive was
    /// not posted in time); the others were copied once, straight across.
    pub eager_copies: usize,
    pub workers: usize,
}

/// Raw view of one buffer, shared by the workers. Safety rests on the claims:
/// a slice is only made for a region claimed by the running task, and claims
/// never overlap with a writer.
struct Raw<T> {
    ptr: *mut T,
    len: usize,
}

struct Memory<T> {
    bufs: Vec<[Raw<T>; 3]>,
}

// SAFETY: see `Raw`; the element types are plain data.
unsafe impl<T: Elem> Sync for Memory<T> {}
unsafe impl<T: Elem> Send for Memory<T> {}

impl<T: Elem> Memory<T> {
    fn new(bufs: &mut [RankBuffers<T>]) -> Memory<T> {
        let raw = |v: &mut Vec<T>| Raw {
            ptr: v.as_mut_ptr(),
            len: v.len(),
        };
        Memory {
            bufs: bufs
                .iter_mut()
                .map(|b| [raw(&mut b.input), raw(&mut b.output), raw(&mut b.scratch)])
                .collect(),
        }
    }

    /// # Safety
    /// The region must be claimed (for reading) by the calling task.
    unsafe fn get(&self, rank: usize, r: Region) -> &[T] {
        let b = &self.bufs[rank][r.buf as usize];
        assert!(r.end() as usize <= b.len);
        std::slice::from_raw_parts(b.ptr.add(r.offset as usize), r.count as usize)
    }

    /// # Safety
    /// The region must be claimed for writing by the calling task.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get_mut(&self, rank: usize, r: Region) -> &mut [T] {
        let b = &self.bufs[rank][r.buf as usize];
        assert!(r.end() as usize <= b.len);
        std::slice::from_raw_parts_mut(b.ptr.add(r.offset as usize), r.count as usize)
    }
}

enum Task<T> {
    Local {
        rank: usize,
        op: OpId,
    },
    /// Sender's region straight into the posted receive.
    Transfer {
        src: usize,
        sop: OpId,
        dst: usize,
        rop: OpId,
    },
    /// A buffered message into its receive.
    Deliver {
        dst: usize,
        rop: OpId,
        data: Vec<T>,
    },
    /// A parked send copied into a message buffer.
    Eager {
        src: usize,
        sop: OpId,
        data: Vec<T>,
    },
    /// An injected failure.
    Fault {
        rank: usize,
        op: OpId,
    },
}

enum Pending<T> {
    /// Started, holding an engine, waiting for its receive.
    Parked,
    /// Being copied into a message buffer (after a stall).
    Copying,
    /// Complete; the data waits for its receive.
    Msg(Vec<T>),
}

/// One (source, destination, tag) key: sends and receives not yet matched,
/// each in program order (same-key operations are ordered by dependencies).
struct Chan<T> {
    sends: VecDeque<(OpId, Pending<T>)>,
    recvs: VecDeque<OpId>,
}

impl<T> Default for Chan<T> {
    fn default() -> Self {
        Chan {
            sends: VecDeque::new(),
            recvs: VecDeque::new(),
        }
    }
}

struct State<T> {
    ranks: Vec<RankState>,
    claims: Vec<Claims>,
    chans: FxHashMap<(u32, u32, u32), Chan<T>>,
    tasks: VecDeque<Task<T>>,
    running: usize,
    parked: usize,
    unfinished: usize,
    error: Option<Error>,
    eager_copies: usize,
    next_claim: u64,
    /// Message buffers to reuse (large allocations are expensive to fault in).
    pool: Vec<Vec<T>>,
}

struct Exec<'a, 's, T> {
    plan: &'a Plan<'s>,
    s: &'s Schedule,
    opts: &'a Options,
    mem: Memory<T>,
    state: Mutex<State<T>>,
    wake: Condvar,
    /// Bumped (under the lock) whenever there may be new work, so an idle
    /// worker can spin briefly before it sleeps on `wake`.
    events: AtomicU64,
}

/// Runs the schedule on `bufs` (one per rank, as from
/// [`super::initial_buffers`]). On failure every rank stops and the error
/// names the rank and operation that failed.
pub fn run<T: Elem>(plan: &Plan, bufs: &mut [RankBuffers<T>], opts: &Options) -> Result<RunStats> {
    let s = plan.schedule;
    let p = s.ranks;
    if let Some(f) = &opts.fault {
        f.check(s)?;
    }
    if bufs.len() != p {
        return Err(Error::runtime(
            RunKind::Plan,
            format!("{} buffers for {p} ranks", bufs.len()),
        ));
    }
    for (r, b) in bufs.iter().enumerate() {
        for buf in [Buf::Input, Buf::Output, Buf::Scratch] {
            if (b.get(buf).len() as u64) < s.buffer_len(r, buf) {
                return Err(Error::runtime(
                    RunKind::Plan,
                    format!("rank {r}: {buf:?} buffer too small"),
                ));
            }
        }
    }
    let t0 = Instant::now();
    // Default: the replay, its large steps shared among the cores; the task
    // pool where the schedule has no replay. `--workers 1` is the replay on
    // the calling thread alone, `--workers N` the pool with N workers.
    if opts.workers <= 1 && opts.fault.is_none() {
        if let Some(r) = plan.replay() {
            let mut team = if opts.workers == 0 && r.shares() {
                team::lease()
            } else {
                None
            };
            let deadline = opts.timeout.map(|t| (t0 + t, t));
            // A part that panics (a kernel's bug) is an error, as on the pool.
            let ran = catch_unwind(AssertUnwindSafe(|| {
                r.run(plan, bufs, team.as_mut(), deadline)
            }))
            .unwrap_or_else(|e| {
                Err(Error::runtime(
                    RunKind::Failed,
                    format!(
                        "the replay failed: {}; all {p} ranks stopped",
                        panic_text(&*e)
                    ),
                ))
            });
            return Ok(RunStats {
                seconds: t0.elapsed().as_secs_f64(),
                eager_copies: 0,
                workers: ran?,
            });
        }
    }
    let workers = if opts.workers > 0 {
        opts.workers
    } else if plan.bytes_moved < SMALL_BYTES {
        1
    } else {
        cores()
    }
    .min(p.max(1));
    let ranks: Vec<RankState> = (0..p).map(|r| plan.rank_state(r, opts.engines)).collect();
    let unfinished = ranks.iter().filter(|r| !r.finished()).count();
    let exec = Exec {
        plan,
        s,
        opts,
        mem: Memory::new(bufs),
        state: Mutex::new(State {
            ranks,
            claims: (0..p).map(|_| Claims::default()).collect(),
            chans: FxHashMap::default(),
            tasks: VecDeque::new(),
            running: 0,
            parked: 0,
            unfinished,
            error: None,
            eager_copies: 0,
            next_claim: 0,
            pool: Vec::new(),
        }),
        wake: Condvar::new(),
        events: AtomicU64::new(0),
    };
    {
        let mut st = exec.state.lock().unwrap();
        for r in 0..p {
            exec.advance(&mut st, r);
        }
    }
    let deadline = opts.timeout.map(|t| t0 + t);
    std::thread::scope(|scope| {
        for _ in 1..workers {
            scope.spawn(|| exec.worker(deadline));
        }
        exec.worker(deadline);
    });
    let st = exec.state.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = st.error {
        return Err(e);
    }
    let mut left: Vec<_> = st
        .chans
        .iter()
        .filter(|(_, c)| !c.sends.is_empty())
        .map(|(k, c)| (*k, c.sends[0].0))
        .collect();
    left.sort_unstable();
    if let Some(&((src, dst, tag), op)) = left.first() {
        return Err(Error::runtime(RunKind::Unreceived, format!(
            "mismatched message: rank {src} op {op} ({}) sent to rank {dst} with tag {tag} is never received",
            s.programs[src as usize].ops[op as usize].describe()
        )));
    }
    Ok(RunStats {
        seconds: t0.elapsed().as_secs_f64(),
        eager_copies: st.eager_copies,
        workers,
    })
}

fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = e.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = e.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".into()
    }
}

impl<T: Elem> Exec<'_, '_, T> {
    fn op(&self, rank: usize, op: OpId) -> &Op {
        &self.s.programs[rank].ops[op as usize]
    }

    fn fail(&self, st: &mut State<T>, kind: RunKind, msg: String) {
        if st.error.is_none() {
            st.error = Some(Error::runtime(
                kind,
                format!("{msg}; all {} ranks stopped", self.s.ranks),
            ));
        }
        self.signal();
    }

    /// There may be new work (call with the lock held).
    fn signal(&self) {
        self.events.fetch_add(1, Ordering::Release);
        self.wake.notify_all();
    }

    /// Hands a rank's newly ready operations to the task queue, the matcher
    /// and the engines.
    fn advance(&self, st: &mut State<T>, rank: usize) {
        let fault = |op: OpId| {
            self.opts
                .fault
                .is_some_and(|f| f.rank == rank && f.op == op as usize)
        };
        while let Some(op) = st.ranks[rank].pop_local() {
            st.tasks.push_back(if fault(op) {
                Task::Fault { rank, op }
            } else {
                Task::Local { rank, op }
            });
        }
        while let Some(op) = st.ranks[rank].pop_recv() {
            if fault(op) {
                st.tasks.push_back(Task::Fault { rank, op });
                continue;
            }
            let Op::Recv { peer, tag, .. } = *self.op(rank, op) else {
                unreachable!()
            };
            let key = (peer, rank as u32, tag);
            st.chans.entry(key).or_default().recvs.push_back(op);
            self.pump(st, key);
        }
        while let Some(op) = st.ranks[rank].start_send() {
            if fault(op) {
                st.tasks.push_back(Task::Fault { rank, op });
                continue;
            }
            let Op::Send { peer, tag, .. } = *self.op(rank, op) else {
                unreachable!()
            };
            let key = (rank as u32, peer, tag);
            st.chans
                .entry(key)
                .or_default()
                .sends
                .push_back((op, Pending::Parked));
            st.parked += 1;
            self.pump(st, key);
        }
        self.signal();
    }

    /// Matches a key's first unmatched send and receive while both exist.
    fn pump(&self, st: &mut State<T>, key: (u32, u32, u32)) {
        let (src, dst) = (key.0 as usize, key.1 as usize);
        loop {
            let chan = st.chans.get_mut(&key).expect("channel");
            if chan.recvs.is_empty()
                || matches!(chan.sends.front(), None | Some((_, Pending::Copying)))
            {
                return;
            }
            let rop = chan.recvs.pop_front().unwrap();
            let (sop, pending) = chan.sends.pop_front().unwrap();
            match pending {
                Pending::Parked => {
                    st.parked -= 1;
                    self.matched(st, src, sop, dst, rop, None);
                }
                Pending::Msg(data) => self.matched(st, src, sop, dst, rop, Some(data)),
                Pending::Copying => unreachable!(),
            }
        }
    }

    /// A send met its receive: queue the copy (or report a size mismatch).
    fn matched(
        &self,
        st: &mut State<T>,
        src: usize,
        sop: OpId,
        dst: usize,
        rop: OpId,
        data: Option<Vec<T>>,
    ) {
        let (Op::Send { region: a, .. }, Op::Recv { region: b, .. }) =
            (self.op(src, sop), self.op(dst, rop))
        else {
            unreachable!()
        };
        if a.count != b.count {
            let e = mismatch(self.s, src, sop, dst, rop);
            self.fail(
                st,
                RunKind::Mismatch,
                e.to_string().trim_start_matches("run failed: ").to_string(),
            );
            return;
        }
        st.tasks.push_back(match data {
            None => Task::Transfer { src, sop, dst, rop },
            Some(data) => Task::Deliver { dst, rop, data },
        });
    }

    fn complete(&self, st: &mut State<T>, rank: usize, op: OpId) {
        self.plan.complete(rank, &mut st.ranks[rank], op);
        if st.ranks[rank].finished() {
            st.unfinished -= 1;
        }
    }

    /// The (rank, region, writes) list a task touches.
    fn task_regions(&self, t: &Task<T>) -> Vec<(usize, Region, bool)> {
        let region = |rank: usize, op: OpId| match *self.op(rank, op) {
            Op::Send { region, .. } | Op::Recv { region, .. } => region,
            _ => unreachable!(),
        };
        match *t {
            Task::Local { rank, op } => op_regions(self.op(rank, op))
                .into_iter()
                .map(|(r, w)| (rank, r, w))
                .collect(),
            Task::Transfer { src, sop, dst, rop } => {
                vec![
                    (src, region(src, sop), false),
                    (dst, region(dst, rop), true),
                ]
            }
            Task::Deliver { dst, rop, .. } => vec![(dst, region(dst, rop), true)],
            Task::Eager { src, sop, .. } => vec![(src, region(src, sop), false)],
            Task::Fault { .. } => Vec::new(),
        }
    }

    /// The rank and op a task is "about", for error messages.
    fn task_op(t: &Task<T>) -> (usize, OpId) {
        match *t {
            Task::Local { rank, op } | Task::Fault { rank, op } => (rank, op),
            Task::Transfer { dst, rop, .. } | Task::Deliver { dst, rop, .. } => (dst, rop),
            Task::Eager { src, sop, .. } => (src, sop),
        }
    }

    /// Claims a task's regions; returns the claim id and the ranks it holds
    /// memory on (released after the task, one or two of them: releasing
    /// on every rank made a run quadratic in its ranks), or fails the run.
    fn claim(&self, st: &mut State<T>, t: &Task<T>) -> Option<(u64, Vec<usize>)> {
        st.next_claim += 1;
        let id = st.next_claim;
        let regs = self.task_regions(t);
        let mut per_rank: Vec<(usize, Vec<(Region, bool)>)> = Vec::new();
        for (rank, r, w) in regs {
            match per_rank.iter_mut().find(|x| x.0 == rank) {
                Some(x) => x.1.push((r, w)),
                None => per_rank.push((rank, vec![(r, w)])),
            }
        }
        for (k, (rank, regs)) in per_rank.iter().enumerate() {
            if st.claims[*rank].claim(id, regs).is_err() {
                for (r2, _) in &per_rank[..k] {
                    st.claims[*r2].release(id);
                }
                let (r, op) = Self::task_op(t);
                let msg = format!(
                    "rank {rank}: op {op} of rank {r} ({}) touches memory in use by itself or another running operation (a race the verifier rejects: run without --no-verify)",
                    self.op(r, op).describe()
                );
                self.fail(st, RunKind::Race, msg);
                return None;
            }
        }
        Some((id, per_rank.into_iter().map(|(rank, _)| rank).collect()))
    }

    /// Moves the data of a task (no lock held).
    fn execute(&self, t: &mut Task<T>) {
        let s = self.s;
        let region = |rank: usize, op: OpId| match *self.op(rank, op) {
            Op::Send { region, .. } => (region, false),
            Op::Recv {
                region, combine, ..
            } => (region, combine),
            _ => unreachable!(),
        };
        // SAFETY (all slices below): the task's regions are claimed.
        unsafe {
            match t {
                Task::Local { rank, op } => match *self.op(*rank, *op) {
                    Op::Copy { src, dst } => self
                        .mem
                        .get_mut(*rank, dst)
                        .copy_from_slice(self.mem.get(*rank, src)),
                    Op::Combine { src, dst } => {
                        T::reduce_into(s.op, self.mem.get_mut(*rank, dst), self.mem.get(*rank, src))
                    }
                    _ => {}
                },
                Task::Transfer { src, sop, dst, rop } => {
                    let (a, _) = region(*src, *sop);
                    let (b, combine) = region(*dst, *rop);
                    let (from, to) = (self.mem.get(*src, a), self.mem.get_mut(*dst, b));
                    if combine {
                        T::reduce_into(s.op, to, from);
                    } else {
                        to.copy_from_slice(from);
                    }
                }
                Task::Deliver { dst, rop, data } => {
                    let (b, combine) = region(*dst, *rop);
                    let to = self.mem.get_mut(*dst, b);
                    if combine {
                        T::reduce_into(s.op, to, data);
                    } else {
                        to.copy_from_slice(data);
                    }
                }
                Task::Eager { src, sop, data } => {
                    let (a, _) = region(*src, *sop);
                    data.clear();
                    data.extend_from_slice(self.mem.get(*src, a));
                }
                // resume_unwind: fails like a panic without the panic hook's noise.
                Task::Fault { .. } => std::panic::resume_unwind(Box::new("injected fault")),
            }
        }
    }

    /// Bookkeeping after a task's data moved (lock held).
    fn finish(&self, st: &mut State<T>, t: Task<T>) {
        match t {
            Task::Local { rank, op } => {
                self.complete(st, rank, op);
                self.advance(st, rank);
            }
            Task::Transfer { src, sop, dst, rop } => {
                st.ranks[src].send_finished();
                self.complete(st, src, sop);
                self.complete(st, dst, rop);
                self.advance(st, src);
                self.advance(st, dst);
            }
            Task::Deliver { dst, rop, data } => {
                st.pool.push(data);
                self.complete(st, dst, rop);
                self.advance(st, dst);
            }
            Task::Eager { src, sop, data } => {
                st.eager_copies += 1;
                let Op::Send { peer, tag, .. } = *self.op(src, sop) else {
                    unreachable!()
                };
                let key = (src as u32, peer, tag);
                let chan = st.chans.get_mut(&key).expect("channel");
                let entry = chan
                    .sends
                    .iter_mut()
                    .find(|(op, _)| *op == sop)
                    .expect("copying send");
                entry.1 = Pending::Msg(data);
                self.pump(st, key);
                st.ranks[src].send_finished();
                self.complete(st, src, sop);
                self.advance(st, src);
            }
            Task::Fault { .. } => {}
        }
    }

    /// Nothing queued or running: copy every parked send into a message
    /// buffer, or report the deadlock.
    fn unstick(&self, st: &mut State<T>) {
        if st.parked == 0 {
            return;
        }
        let mut eager = Vec::new();
        for (&(src, _, _), chan) in st.chans.iter_mut() {
            for (sop, pending) in chan.sends.iter_mut() {
                if matches!(pending, Pending::Parked) {
                    *pending = Pending::Copying;
                    eager.push((src as usize, *sop));
                }
            }
        }
        st.parked = 0;
        // Deterministic order (the map's is not), lowest rank and op first.
        eager.sort_unstable();
        for (src, sop) in eager {
            st.tasks.push_back(Task::Eager {
                src,
                sop,
                data: Vec::new(),
            });
        }
        self.signal();
    }

    fn worker(&self, deadline: Option<Instant>) {
        let mut st = self.state.lock().unwrap();
        loop {
            if st.error.is_some() || st.unfinished == 0 {
                self.signal();
                return;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                let msg = format!(
                    "timed out after {:.3} s: {}",
                    self.opts.timeout.unwrap_or_default().as_secs_f64(),
                    self.waiting_text(&st)
                );
                self.fail(&mut st, RunKind::Timeout, msg);
                continue;
            }
            if let Some(mut t) = st.tasks.pop_front() {
                let Some((id, held)) = self.claim(&mut st, &t) else {
                    continue;
                };
                if let Task::Eager { data, .. } = &mut t {
                    if let Some(buf) = st.pool.pop() {
                        *data = buf;
                    }
                }
                st.running += 1;
                drop(st);
                let res = catch_unwind(AssertUnwindSafe(|| self.execute(&mut t)));
                st = self.state.lock().unwrap();
                st.running -= 1;
                for rank in held {
                    st.claims[rank].release(id);
                }
                match res {
                    Ok(()) => self.finish(&mut st, t),
                    Err(e) => {
                        let (r, op) = Self::task_op(&t);
                        let msg = format!(
                            "rank {r} failed at op {op} ({}): {}",
                            self.op(r, op).describe(),
                            panic_text(&*e)
                        );
                        self.fail(&mut st, RunKind::Failed, msg);
                    }
                }
                continue;
            }
            if st.running == 0 {
                self.unstick(&mut st);
                if st.tasks.is_empty() && st.error.is_none() {
                    let msg = self.deadlock_text(&st);
                    self.fail(&mut st, RunKind::Deadlock, msg);
                }
                continue;
            }
            // Spin a little before sleeping: waking a sleeping thread costs
            // tens of microseconds, more on a loaded machine, and the work
            // usually comes from the other worker very soon.
            let seen = self.events.load(Ordering::Acquire);
            drop(st);
            let t0 = Instant::now();
            while self.events.load(Ordering::Acquire) == seen && t0.elapsed() < SPIN {
                std::hint::spin_loop();
            }
            st = self.state.lock().unwrap();
            if self.events.load(Ordering::Acquire) != seen {
                continue;
            }
            match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    st = self
                        .wake
                        .wait_timeout(st, left.min(Duration::from_secs(1)))
                        .unwrap()
                        .0;
                }
                None => st = self.wake.wait(st).unwrap(),
            }
        }
    }

    /// The first unfinished rank and what its pending receives wait for.
    fn waiting_text(&self, st: &State<T>) -> String {
        let Some(r) = st.ranks.iter().position(|x| !x.finished()) else {
            return "every rank finished".into();
        };
        let mut waits: Vec<String> = st
            .chans
            .iter()
            .filter(|(k, c)| k.1 as usize == r && !c.recvs.is_empty())
            .map(|(k, c)| {
                format!(
                    "op {} ({}) waits for rank {}",
                    c.recvs[0],
                    self.op(r, c.recvs[0]).describe(),
                    k.0
                )
            })
            .collect();
        waits.sort();
        waits.truncate(3);
        format!(
            "rank {r} has done {} of {} operations{}{}",
            st.ranks[r].done,
            st.ranks[r].total(),
            if waits.is_empty() { "" } else { "; " },
            waits.join("; ")
        )
    }

    fn deadlock_text(&self, st: &State<T>) -> String {
        format!("deadlock: {}", self.waiting_text(st))
    }
}
