//! One rank's run of a schedule over MPI: receives posted as they become
//! ready, sends started by the engines, completions polled, failures
//! passed on to every rank (see the module's docs).

use super::world::{world, World, ABORT_TAG, NOTICE_BYTES};
use crate::error::{Error, Result, RunKind};
use crate::{op_regions, Claims, Elem, Options, Plan, RankBuffers, RankState};
use mpi::ffi;
use rustc_hash::FxHashMap;
use std::os::raw::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};
use topocoll_schedule::{Buf, Op, OpId, Program, Schedule};

/// Polls that find nothing to do before the clock is read (for stalls and
/// the timeout): a read of the clock costs as much as a poll.
const CLOCK_POLLS: u32 = 64;
/// Polls that find nothing to do before the rank yields its core (to the
/// other ranks of an oversubscribed node).
const YIELD_POLLS: u32 = 16;
/// Landing buffers up to this size are kept from one run to the next.
const KEPT_BYTES: usize = 1 << 20;

/// Maps schedule tags to MPI tags below [`ABORT_TAG`].
struct Tags {
    /// (peer, schedule tag, is_send) -> MPI tag; empty means identity.
    map: FxHashMap<(u32, u32, bool), c_int>,
}

impl Tags {
    fn new(s: &Schedule, rank: usize, max: u32) -> Result<Tags> {
        let mut map = FxHashMap::default();
        if max >= ABORT_TAG as u32 {
            // Dense numbering of the distinct tags of each (peer, direction),
            // in increasing order: the sender's view of its sends to d equals
            // d's view of its receives from the sender.
            let mut by: FxHashMap<(u32, bool), Vec<u32>> = FxHashMap::default();
            for o in &s.programs[rank].ops {
                match *o {
                    Op::Send { peer, tag, .. } => by.entry((peer, true)).or_default().push(tag),
                    Op::Recv { peer, tag, .. } => by.entry((peer, false)).or_default().push(tag),
                    _ => {}
                }
            }
            for ((peer, send), mut tags) in by {
                tags.sort_unstable();
                tags.dedup();
                if tags.len() >= ABORT_TAG as usize {
                    return Err(Error::runtime(RunKind::Transport, format!(
                        "rank {rank} uses {} distinct tags with rank {peer}; MPI guarantees only 32767",
                        tags.len()
                    )));
                }
                for (i, t) in tags.into_iter().enumerate() {
                    map.insert((peer, t, send), i as c_int);
                }
            }
        }
        Ok(Tags { map })
    }

    fn get(&self, peer: u32, tag: u32, send: bool) -> c_int {
        if self.map.is_empty() {
            tag as c_int
        } else {
            self.map[&(peer, tag, send)]
        }
    }
}

struct Active<T> {
    op: OpId,
    /// A combining receive's landing buffer.
    temp: Option<Vec<T>>,
}

/// What a run keeps between its polls, kept between runs too so that a
/// repeated run allocates nothing: the transfers in flight and the rank's
/// state.
struct Scratch<T> {
    io: Transfers<T>,
    state: Option<RankState>,
}

/// Requests in flight and their ops, the MPI_Testsome outputs, the
/// completed ones, landing buffers of combining receives to reuse, memory
/// claims.
struct Transfers<T> {
    reqs: Vec<ffi::MPI_Request>,
    active: Vec<Active<T>>,
    indices: Vec<c_int>,
    statuses: Vec<ffi::MPI_Status>,
    done: Vec<(usize, usize)>,
    pool: Vec<Vec<T>>,
    claims: Claims,
}

impl<T> Default for Scratch<T> {
    fn default() -> Self {
        Scratch {
            io: Transfers {
                reqs: Vec::with_capacity(64),
                active: Vec::with_capacity(64),
                indices: Vec::with_capacity(64),
                statuses: Vec::with_capacity(64),
                done: Vec::with_capacity(64),
                pool: Vec::new(),
                claims: Claims::default(),
            },
            state: None,
        }
    }
}

thread_local! {
    /// This thread's [`Scratch`] for the element type of its last run.
    static SCRATCH: std::cell::RefCell<Option<Box<dyn std::any::Any>>> =
        const { std::cell::RefCell::new(None) };
}

/// What one rank's run did.
#[derive(Clone, Debug, Default)]
pub struct RankRun {
    /// Sends started beyond the engine limit to escape a rendezvous stall.
    pub stall_escapes: usize,
}

/// Runs this process's rank of the schedule on its buffers.
pub fn run_rank<T: Elem>(
    w: &World,
    plan: &Plan,
    b: &mut RankBuffers<T>,
    opts: &Options,
) -> Result<RankRun> {
    let s = plan.schedule;
    let rank = w.rank;
    // Every rank checks the same fault, so all refuse it before talking.
    if let Some(f) = &opts.fault {
        f.check(s)?;
    }
    if s.ranks != w.size {
        return Err(Error::runtime(
            RunKind::Plan,
            format!(
                "the schedule has {} ranks but MPI has {} processes",
                s.ranks, w.size
            ),
        ));
    }
    if w.notice_req.get() == unsafe { ffi::RSMPI_REQUEST_NULL } {
        w.post_notice();
    }
    let mut notice_req = w.notice_req.get();
    // SAFETY: the buffer is read only once its receive has completed.
    let notice: &[u8] = unsafe { &**w.notice.get() };
    let mut scratch: Box<Scratch<T>> = SCRATCH
        .with(|c| c.borrow_mut().take())
        .and_then(|b| b.downcast().ok())
        .unwrap_or_default();
    let result = catch_unwind(AssertUnwindSafe(|| {
        drive(w, plan, b, opts, &mut scratch, &mut notice_req, notice)
    }))
    .unwrap_or_else(|e| {
        let text = e
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".into());
        Err(Failure::Mine(
            RunKind::Failed,
            format!("rank {rank} panicked: {text}"),
        ))
    });
    // The notice receive stays posted for the next run (or is null, its
    // notice received).
    w.notice_req.set(notice_req);
    let Transfers { reqs, active, .. } = &mut scratch.io;
    let result = match result {
        Ok(run) => Ok(run),
        Err(f) => {
            let (kind, msg) = match f {
                Failure::Mine(kind, msg) => {
                    notify_all(w, &msg);
                    (kind, msg)
                }
                Failure::Theirs(msg) => (
                    RunKind::Failed,
                    format!("rank {rank} stopped because {msg}"),
                ),
            };
            // Leave the transfers in flight: their buffers may still be
            // touched by MPI, so leak them rather than free them under it.
            for mut r in reqs.drain(..) {
                unsafe {
                    ffi::MPI_Cancel(&mut r);
                    ffi::MPI_Request_free(&mut r);
                }
            }
            for a in active.drain(..) {
                std::mem::forget(a.temp);
            }
            Err(Error::runtime(kind, msg))
        }
    };
    // Landing buffers are kept for small runs only (where allocating costs
    // as much as the run), not to hold a large run's memory afterwards.
    scratch
        .io
        .pool
        .retain(|v| v.capacity() * std::mem::size_of::<T>() <= KEPT_BYTES);
    SCRATCH.with(|c| *c.borrow_mut() = Some(scratch));
    result
}

enum Failure {
    /// This rank failed (the message names it and the operation).
    Mine(RunKind, String),
    /// Another rank's notice.
    Theirs(String),
}

fn notify_all(w: &World, msg: &str) {
    let bytes: Vec<u8> = msg.bytes().take(NOTICE_BYTES).collect();
    let mut reqs = Vec::new();
    for peer in (0..w.size).filter(|&p| p != w.rank) {
        let mut r: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: `bytes` lives until the requests complete or are freed below.
        unsafe {
            ffi::MPI_Isend(
                bytes.as_ptr() as *const c_void,
                bytes.len() as c_int,
                ffi::RSMPI_UINT8_T,
                peer as c_int,
                ABORT_TAG,
                world(),
                &mut r,
            );
        }
        reqs.push(r);
    }
    // Notices are tiny (eager): wait for them briefly, then let go of any
    // still pending (a completed request is already freed by MPI_Test).
    let t0 = Instant::now();
    while !reqs.is_empty() && t0.elapsed() < Duration::from_secs(2) {
        reqs.retain_mut(|r| {
            let mut flag = 0;
            unsafe { ffi::MPI_Test(r, &mut flag, std::ptr::null_mut()) };
            flag == 0
        });
    }
    for r in reqs.iter_mut() {
        unsafe { ffi::MPI_Request_free(r) };
    }
    std::mem::forget(bytes);
}

#[allow(clippy::too_many_arguments)]
fn drive<T: Elem>(
    w: &World,
    plan: &Plan,
    b: &mut RankBuffers<T>,
    opts: &Options,
    scratch: &mut Scratch<T>,
    notice_req: &mut ffi::MPI_Request,
    notice: &[u8],
) -> std::result::Result<RankRun, Failure> {
    let Scratch { io, state } = scratch;
    debug_assert!(io.reqs.is_empty() && io.active.is_empty());
    let s = plan.schedule;
    let rank = w.rank;
    let tags = Tags::new(s, rank, plan.max_tag)
        .map_err(|e| Failure::Mine(RunKind::Transport, e.to_string()))?;
    let run = Run {
        rank,
        plan,
        prog: &s.programs[rank],
        elem: s.elem_bytes() as usize,
        tags,
        opts,
    };
    let st = match state {
        Some(st) => {
            plan.reset_rank_state(rank, opts.engines, st);
            st
        }
        None => state.insert(plan.rank_state(rank, opts.engines)),
    };
    for buf in [Buf::Input, Buf::Output, Buf::Scratch] {
        if (b.get(buf).len() as u64) < s.buffer_len(rank, buf) {
            return Err(Failure::Mine(
                RunKind::Plan,
                format!("rank {rank}: {buf:?} buffer too small"),
            ));
        }
    }
    // Regions MPI may be reading or writing (claim id = op id + 1), so a
    // racy unverified schedule fails instead of racing with the library.
    io.claims.clear();
    let mut clock = Clock::new();
    loop {
        let mut progressed = run.run_locals(b, st, &mut io.claims)?;
        progressed |= io.post_recvs(&run, b, st)?;
        progressed |= io.start_sends(&run, b, st, &mut clock)?;
        if st.finished() && io.active.is_empty() {
            break;
        }
        progressed |= io.complete_some(&run, b, st)?;
        if progressed {
            clock.idle = 0;
            clock.unstamped = true;
            continue;
        }
        clock.idle = clock.idle.wrapping_add(1);
        if clock.idle.is_multiple_of(CLOCK_POLLS) {
            clock.check(&run, st, &io.active, notice_req, notice)?;
        }
        // Let other ranks on an oversubscribed node run.
        if clock.idle > YIELD_POLLS {
            std::thread::yield_now();
        }
    }
    Ok(RankRun {
        stall_escapes: clock.escapes,
    })
}

/// What one run reads throughout: its rank, plan and options, the rank's
/// program, its element size and the MPI tags of its messages.
struct Run<'a> {
    rank: usize,
    plan: &'a Plan<'a>,
    prog: &'a Program,
    elem: usize,
    tags: Tags,
    opts: &'a Options,
}

impl Run<'_> {
    /// This rank's failure at `op`, naming the op.
    fn fail(&self, kind: RunKind, op: OpId, why: &str) -> Failure {
        let rank = self.rank;
        Failure::Mine(
            kind,
            format!(
                "rank {rank} failed at op {op} ({}): {why}",
                self.prog.ops[op as usize].describe()
            ),
        )
    }

    /// Whether the injected fault is this rank's op `op`.
    fn fault(&self, op: OpId) -> bool {
        self.opts
            .fault
            .is_some_and(|f| f.rank == self.rank && f.op == op as usize)
    }

    /// `op` claims a region a transfer in flight uses.
    fn race(&self, op: OpId) -> Failure {
        self.fail(
            RunKind::Race,
            op,
            "touches memory an outstanding transfer uses (a race the verifier rejects: run without --no-verify)",
        )
    }

    /// The bytes of a message of `count` elements, as MPI counts them.
    fn bytes_of(&self, count: u64, op: OpId) -> std::result::Result<c_int, Failure> {
        c_int::try_from(count as usize * self.elem).map_err(|_| {
            self.fail(
                RunKind::Transport,
                op,
                "message over 2 GiB (split it in the schedule)",
            )
        })
    }

    /// Runs the ready local operations; whether there were any.
    fn run_locals<T: Elem>(
        &self,
        b: &mut RankBuffers<T>,
        st: &mut RankState,
        claims: &mut Claims,
    ) -> std::result::Result<bool, Failure> {
        let s = self.plan.schedule;
        let prog = self.prog;
        let mut progressed = false;
        while let Some(op) = st.pop_local() {
            if self.fault(op) {
                return Err(self.fail(RunKind::Failed, op, "injected fault"));
            }
            let id = u64::from(op) + 1;
            claims
                .claim(id, &op_regions(&prog.ops[op as usize]))
                .map_err(|_| self.race(op))?;
            claims.release(id);
            crate::run_local(s, b, &prog.ops[op as usize]);
            self.plan.complete(self.rank, st, op);
            progressed = true;
        }
        Ok(progressed)
    }
}

impl<T: Elem> Transfers<T> {
    /// Posts the ready receives; whether there were any.
    fn post_recvs(
        &mut self,
        run: &Run,
        b: &mut RankBuffers<T>,
        st: &mut RankState,
    ) -> std::result::Result<bool, Failure> {
        let Transfers {
            reqs,
            active,
            pool,
            claims,
            ..
        } = self;
        let mut progressed = false;
        while let Some(op) = st.pop_recv() {
            if run.fault(op) {
                return Err(run.fail(RunKind::Failed, op, "injected fault"));
            }
            let Op::Recv {
                peer,
                tag,
                region,
                combine,
            } = run.prog.ops[op as usize]
            else {
                unreachable!()
            };
            let n = region.count as usize;
            let mut temp = None;
            let ptr = if combine {
                let mut t = pool.pop().unwrap_or_default();
                t.resize(n, T::default());
                let p = t.as_mut_ptr();
                temp = Some(t);
                p
            } else {
                b.region_mut(region).as_mut_ptr()
            };
            let mut r: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: the landing region stays untouched until completion
            // (verified schedules order every other access after it), and
            // `temp` is kept in `active` until then.
            let rc = unsafe {
                ffi::MPI_Irecv(
                    ptr as *mut c_void,
                    run.bytes_of(region.count, op)?,
                    ffi::RSMPI_UINT8_T,
                    peer as c_int,
                    run.tags.get(peer, tag, false),
                    world(),
                    &mut r,
                )
            };
            if rc != 0 {
                return Err(run.fail(
                    RunKind::Transport,
                    op,
                    &format!("MPI_Irecv returned error {rc}"),
                ));
            }
            if !combine {
                claims
                    .claim(u64::from(op) + 1, &[(region, true)])
                    .map_err(|_| run.race(op))?;
            }
            reqs.push(r);
            active.push(Active { op, temp });
            progressed = true;
        }
        Ok(progressed)
    }

    /// Starts the sends the engines take, and one beyond them when the
    /// run has stalled; whether there were any.
    fn start_sends(
        &mut self,
        run: &Run,
        b: &RankBuffers<T>,
        st: &mut RankState,
        clock: &mut Clock,
    ) -> std::result::Result<bool, Failure> {
        let mut progressed = false;
        let mut escape = clock.stalled(st);
        while let Some(op) = if escape {
            st.start_send_beyond_engines()
        } else {
            st.start_send()
        } {
            if escape {
                clock.escapes += 1;
                clock.stall *= 2;
                escape = false;
            }
            if run.fault(op) {
                return Err(run.fail(RunKind::Failed, op, "injected fault"));
            }
            let Op::Send {
                peer, tag, region, ..
            } = run.prog.ops[op as usize]
            else {
                unreachable!()
            };
            let mut r: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: the region is only read until completion.
            let rc = unsafe {
                ffi::MPI_Isend(
                    b.region(region).as_ptr() as *const c_void,
                    run.bytes_of(region.count, op)?,
                    ffi::RSMPI_UINT8_T,
                    peer as c_int,
                    run.tags.get(peer, tag, true),
                    world(),
                    &mut r,
                )
            };
            if rc != 0 {
                return Err(run.fail(
                    RunKind::Transport,
                    op,
                    &format!("MPI_Isend returned error {rc}"),
                ));
            }
            self.claims
                .claim(u64::from(op) + 1, &[(region, false)])
                .map_err(|_| run.race(op))?;
            self.reqs.push(r);
            self.active.push(Active { op, temp: None });
            progressed = true;
        }
        Ok(progressed)
    }

    /// Tests the transfers in flight and completes those done (a combining
    /// receive combines its landing buffer into its region); whether any
    /// were.
    fn complete_some(
        &mut self,
        run: &Run,
        b: &mut RankBuffers<T>,
        st: &mut RankState,
    ) -> std::result::Result<bool, Failure> {
        let Transfers {
            reqs,
            active,
            indices,
            statuses,
            done,
            pool,
            claims,
        } = self;
        if reqs.is_empty() {
            return Ok(false);
        }
        let (rank, prog, elem) = (run.rank, run.prog, run.elem);
        let n = reqs.len();
        indices.resize(n, 0);
        // SAFETY: MPI_Status is plain data.
        statuses.resize(n, unsafe { std::mem::zeroed() });
        let mut out: c_int = 0;
        let rc = unsafe {
            ffi::MPI_Testsome(
                n as c_int,
                reqs.as_mut_ptr(),
                &mut out,
                indices.as_mut_ptr(),
                statuses.as_mut_ptr(),
            )
        };
        if rc != 0 {
            return Err(run.fail(
                RunKind::Transport,
                active[0].op,
                &format!("MPI_Testsome returned error {rc}"),
            ));
        }
        if out == 0 {
            return Ok(false);
        }
        done.clear();
        done.extend((0..out as usize).map(|k| (indices[k] as usize, k)));
        done.sort_unstable();
        for &(i, k) in done.iter() {
            let op = active[i].op;
            match prog.ops[op as usize] {
                Op::Recv {
                    peer,
                    region,
                    combine,
                    ..
                } => {
                    let mut got: c_int = 0;
                    unsafe { ffi::MPI_Get_count(&statuses[k], ffi::RSMPI_UINT8_T, &mut got) };
                    if got as usize != region.count as usize * elem {
                        return Err(Failure::Mine(RunKind::Mismatch, format!(
                            "rank {rank} failed at op {op} ({}): rank {peer} sent {} bytes, the receive expects {}",
                            prog.ops[op as usize].describe(),
                            got,
                            region.count as usize * elem
                        )));
                    }
                    if combine {
                        let id = u64::from(op) + 1;
                        claims
                            .claim(id, &[(region, true)])
                            .map_err(|_| run.race(op))?;
                        claims.release(id);
                        let t = active[i].temp.take().expect("landing buffer");
                        T::reduce_into(run.plan.schedule.op, b.region_mut(region), &t);
                        pool.push(t);
                    }
                }
                Op::Send { .. } => st.send_finished(),
                _ => unreachable!(),
            }
            claims.release(u64::from(op) + 1);
            run.plan.complete(rank, st, op);
        }
        // Drop the completed entries (highest index first keeps the
        // others in place; order among the rest does not matter).
        for &(i, _) in done.iter().rev() {
            reqs.swap_remove(i);
            active.swap_remove(i);
        }
        Ok(true)
    }
}

/// The run's clock. It is read at the checks only (every CLOCK_POLLS idle
/// polls; a read costs as much as a poll): a small run that never waits
/// that long never reads it. The timeout counts from the first check.
struct Clock {
    deadline: Option<Instant>,
    last_progress: Option<Instant>,
    now: Option<Instant>,
    /// Polls since the last progress, and whether that progress has been
    /// stamped with the clock yet.
    idle: u32,
    unstamped: bool,
    /// How long queued sends wait with nothing completing before one
    /// starts beyond the engines (doubling after each use), and how many did.
    stall: Duration,
    escapes: usize,
}

impl Clock {
    fn new() -> Clock {
        Clock {
            deadline: None,
            last_progress: None,
            now: None,
            idle: 0,
            unstamped: false,
            stall: Duration::from_millis(20),
            escapes: 0,
        }
    }

    /// Whether sends are queued and nothing has progressed for longer than
    /// the stall time, as of the last check.
    fn stalled(&self, st: &RankState) -> bool {
        let mut escape = false;
        if let (Some(n), Some(p)) = (self.now, self.last_progress) {
            if st.queued_sends() > 0 && !self.unstamped && n.duration_since(p) > self.stall {
                escape = true;
            }
        }
        escape
    }

    /// The check of an idle run: another rank's failure notice, then the
    /// clock (stamping the last progress) and the timeout.
    fn check<T>(
        &mut self,
        run: &Run,
        st: &RankState,
        active: &[Active<T>],
        notice_req: &mut ffi::MPI_Request,
        notice: &[u8],
    ) -> std::result::Result<(), Failure> {
        // Another rank's failure notice: looked for as the clock is
        // read (a rank that waits on a failed one soon has nothing
        // to do), not at every poll (each test drives MPI's progress).
        let mut flag = 0;
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        unsafe { ffi::MPI_Test(notice_req, &mut flag, &mut status) };
        if flag != 0 {
            let mut len: c_int = 0;
            unsafe { ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut len) };
            let text = String::from_utf8_lossy(&notice[..len.max(0) as usize]).into_owned();
            return Err(Failure::Theirs(text));
        }
        let n = Instant::now();
        self.now = Some(n);
        if self.deadline.is_none() {
            self.deadline = run.opts.timeout.map(|t| n + t);
        }
        if self.unstamped || self.last_progress.is_none() {
            self.last_progress = Some(n);
            self.unstamped = false;
        }
        if self.deadline.is_some_and(|d| n >= d) {
            let waiting: Vec<String> = active
                .iter()
                .take(3)
                .map(|a| format!("op {} ({})", a.op, run.prog.ops[a.op as usize].describe()))
                .collect();
            return Err(Failure::Mine(
                RunKind::Timeout,
                format!(
                    "rank {} timed out after {:.1} s with {} of {} operations done; waiting: {}",
                    run.rank,
                    run.opts.timeout.unwrap_or_default().as_secs_f64(),
                    st.done,
                    st.total(),
                    waiting.join(", ")
                ),
            ));
        }
        Ok(())
    }
}
