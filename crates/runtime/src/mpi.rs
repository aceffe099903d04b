//! The MPI backend: one MPI process per rank (`mpirun -np P topocoll run
//! --backend mpi ...`). Every process builds the same schedule and runs its
//! own rank's program with the shared executor core ([`RankState`]):
//! local operations run inline, ready receives are posted at once as
//! `MPI_Irecv`, ready sends go out as `MPI_Isend` (tag = the schedule's tag),
//! at most `engines` outstanding, lowest program index first; completions are
//! polled with `MPI_Testsome`. A combining receive lands in a temporary buffer
//! and is combined into its region when it completes, so the order of
//! combination is the schedule's, not the network's.
//!
//! Rendezvous: MPI may hold a large send until its receive is posted, while
//! the IR's sends are eager. A schedule that is correct with eager sends can
//! then stall if every engine holds a send whose receiver first needs a send
//! still queued behind them. The backend posts every receive as soon as it is
//! ready (so a posted receive never waits on the engines), and when nothing
//! completes for a while (20 ms, doubling after each use) with sends queued,
//! it starts one send beyond the engine limit; the engine limit is exact
//! otherwise. A schedule that posts a receive only once one of its own
//! sends has completed, on ranks that wait for each other that way, can
//! still stall under rendezvous (docs/runtime.md): the run then fails at
//! the timeout, naming the sends that wait.
//!
//! Failures: a rank that fails (injected fault, size mismatch, timeout, a
//! panic) sends a short notice with a reserved tag to every other rank;
//! every rank polls for notices and returns an error naming the failed rank
//! and operation. Tags: schedule tags must be below 32767 (the MPI standard's
//! minimum `MPI_TAG_UB`); larger ones are renumbered per (source, destination)
//! pair, which every process can do alone since each holds the whole schedule.

use super::{op_regions, Claims, Elem, Options, Plan, RankBuffers, RankState};
use mpi::ffi;
use rustc_hash::FxHashMap;
use std::os::raw::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};
use topocoll_core::error::{Error, Result};
use topocoll_core::schedule::{Buf, Collective, Dtype, Op, OpId, ReduceOp, Schedule};

/// The tag failure notices travel with; schedule tags are kept below it.
const ABORT_TAG: c_int = 32767;
const NOTICE_BYTES: usize = 1024;
/// Polls that find nothing to do before the clock is read (for stalls and
/// the timeout): a read of the clock costs as much as a poll.
const CLOCK_POLLS: u32 = 64;
/// Polls that find nothing to do before the rank yields its core (to the
/// other ranks of an oversubscribed node).
const YIELD_POLLS: u32 = 16;
/// Landing buffers up to this size are kept from one run to the next.
const KEPT_BYTES: usize = 1 << 20;

/// The MPI world of this process.
pub struct World {
    rank: usize,
    size: usize,
    /// The receive failure notices land in, posted once for the process
    /// (not per run: cancelling a posted receive costs more than a small
    /// collective), and posted again only after a notice arrived.
    notice: std::cell::UnsafeCell<Box<[u8; NOTICE_BYTES]>>,
    notice_req: std::cell::Cell<ffi::MPI_Request>,
    // Dropped last: finalizes MPI.
    _universe: mpi::environment::Universe,
}

impl Drop for World {
    fn drop(&mut self) {
        let mut r = self.notice_req.get();
        // SAFETY: an unmatched notice receive is cancelled before MPI
        // finalizes (a completed one is already null).
        unsafe {
            if r != ffi::RSMPI_REQUEST_NULL {
                ffi::MPI_Cancel(&mut r);
                ffi::MPI_Wait(&mut r, std::ptr::null_mut());
            }
        }
    }
}

fn world() -> ffi::MPI_Comm {
    // SAFETY: a constant the MPI library initialises.
    unsafe { ffi::RSMPI_COMM_WORLD }
}

fn check_rc(rc: c_int, what: &str) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::Runtime(format!("{what} returned MPI error {rc}")))
    }
}

impl World {
    /// Initialises MPI (once per process).
    pub fn init() -> Result<World> {
        let universe = mpi::initialize()
            .ok_or_else(|| Error::Runtime("MPI was already initialised".into()))?;
        let (mut rank, mut size) = (0, 0);
        // SAFETY: plain queries on the world communicator. Errors come back
        // as return codes (reported naming the rank and operation) instead
        // of aborting the job.
        unsafe {
            ffi::MPI_Comm_set_errhandler(world(), ffi::RSMPI_ERRORS_RETURN);
            ffi::MPI_Comm_rank(world(), &mut rank);
            ffi::MPI_Comm_size(world(), &mut size);
        }
        let w = World {
            rank: rank as usize,
            size: size as usize,
            notice: std::cell::UnsafeCell::new(Box::new([0u8; NOTICE_BYTES])),
            notice_req: std::cell::Cell::new(unsafe { ffi::RSMPI_REQUEST_NULL }),
            _universe: universe,
        };
        w.post_notice();
        Ok(w)
    }

    /// Posts the receive for failure notices.
    fn post_notice(&self) {
        let mut r: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: the notice buffer lives in the World, which cancels the
        // receive before it is freed; nothing else touches the buffer
        // while the receive is posted.
        unsafe {
            ffi::MPI_Irecv(
                (*self.notice.get()).as_mut_ptr() as *mut c_void,
                NOTICE_BYTES as c_int,
                ffi::RSMPI_UINT8_T,
                ffi::RSMPI_ANY_SOURCE,
                ABORT_TAG,
                world(),
                &mut r,
            );
        }
        self.notice_req.set(r);
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn barrier(&self) {
        // SAFETY: collective on the world communicator.
        unsafe { ffi::MPI_Barrier(world()) };
    }

    /// A barrier that sleeps while it waits (1 ms polls), leaving the CPU to
    /// whatever runs meanwhile (bench: the threads backend inside rank 0).
    pub fn sleepy_barrier(&self) {
        let mut req: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: a non-blocking barrier polled to completion.
        unsafe {
            ffi::MPI_Ibarrier(world(), &mut req);
            let mut flag = 0;
            loop {
                ffi::MPI_Test(&mut req, &mut flag, std::ptr::null_mut());
                if flag != 0 {
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Element-wise maximum over ranks, in place.
    pub fn max_in_place(&self, v: &mut [f64]) {
        let send = v.to_vec();
        // SAFETY: buffers of v.len() doubles on every rank.
        unsafe {
            ffi::MPI_Allreduce(
                send.as_ptr() as *const c_void,
                v.as_mut_ptr() as *mut c_void,
                v.len() as c_int,
                ffi::RSMPI_DOUBLE,
                ffi::RSMPI_MAX,
                world(),
            );
        }
    }

    pub fn sum_u64(&self, x: u64) -> u64 {
        let mut out = 0u64;
        // SAFETY: one u64 on every rank.
        unsafe {
            ffi::MPI_Allreduce(
                &x as *const u64 as *const c_void,
                &mut out as *mut u64 as *mut c_void,
                1,
                ffi::RSMPI_UINT64_T,
                ffi::RSMPI_SUM,
                world(),
            );
        }
        out
    }

    /// Whether every rank passes `ok`.
    pub fn all_true(&self, ok: bool) -> bool {
        let x = u64::from(!ok);
        self.sum_u64(x) == 0
    }

    /// Whether every rank has the same `h`.
    pub fn all_same(&self, h: u64) -> bool {
        let mut all = vec![0u64; self.size];
        // SAFETY: one u64 per rank.
        unsafe {
            ffi::MPI_Allgather(
                &h as *const u64 as *const c_void,
                1,
                ffi::RSMPI_UINT64_T,
                all.as_mut_ptr() as *mut c_void,
                1,
                ffi::RSMPI_UINT64_T,
                world(),
            );
        }
        all.iter().all(|&x| x == h)
    }
}

/// Ends the process, also after a failed run: waits (at most 10 s) until
/// every rank gets here, finalises MPI if they all did, and exits with
/// `code`. (After a timeout some rank may never arrive; exiting without
/// `MPI_Finalize` then lets mpirun end the job instead of hanging.)
pub fn exit_all(code: i32) -> ! {
    let mut req: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
    // SAFETY: non-blocking barrier polled to completion or a deadline.
    unsafe {
        ffi::MPI_Ibarrier(world(), &mut req);
        let t0 = Instant::now();
        let mut flag = 0;
        while flag == 0 && t0.elapsed() < Duration::from_secs(10) {
            ffi::MPI_Test(&mut req, &mut flag, std::ptr::null_mut());
            std::thread::sleep(Duration::from_millis(1));
        }
        if flag != 0 {
            ffi::MPI_Finalize();
        }
    }
    std::process::exit(code)
}

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
                    return Err(Error::Runtime(format!(
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
/// repeated run allocates nothing: requests in flight and their ops, the
/// MPI_Testsome outputs, the completed ones, landing buffers of combining
/// receives to reuse, memory claims.
struct Scratch<T> {
    reqs: Vec<ffi::MPI_Request>,
    active: Vec<Active<T>>,
    indices: Vec<c_int>,
    statuses: Vec<ffi::MPI_Status>,
    done: Vec<(usize, usize)>,
    pool: Vec<Vec<T>>,
    claims: Claims,
    state: Option<RankState>,
}

impl<T> Default for Scratch<T> {
    fn default() -> Self {
        Scratch {
            reqs: Vec::with_capacity(64),
            active: Vec::with_capacity(64),
            indices: Vec::with_capacity(64),
            statuses: Vec::with_capacity(64),
            done: Vec::with_capacity(64),
            pool: Vec::new(),
            claims: Claims::default(),
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
        return Err(Error::Runtime(format!(
            "the schedule has {} ranks but MPI has {} processes",
            s.ranks, w.size
        )));
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
        Err(Failure::Mine(format!("rank {rank} panicked: {text}")))
    });
    // The notice receive stays posted for the next run (or is null, its
    // notice received).
    w.notice_req.set(notice_req);
    let Scratch { reqs, active, .. } = &mut *scratch;
    let result = match result {
        Ok(run) => Ok(run),
        Err(f) => {
            let msg = match f {
                Failure::Mine(msg) => {
                    notify_all(w, &msg);
                    msg
                }
                Failure::Theirs(msg) => format!("rank {rank} stopped because {msg}"),
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
            Err(Error::Runtime(msg))
        }
    };
    // Landing buffers are kept for small runs only (where allocating costs
    // as much as the run), not to hold a large run's memory afterwards.
    scratch
        .pool
        .retain(|v| v.capacity() * std::mem::size_of::<T>() <= KEPT_BYTES);
    SCRATCH.with(|c| *c.borrow_mut() = Some(scratch));
    result
}

enum Failure {
    /// This rank failed (the message names it and the operation).
    Mine(String),
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
    let Scratch {
        reqs,
        active,
        indices,
        statuses,
        done,
        pool,
        claims,
        state,
    } = scratch;
    debug_assert!(reqs.is_empty() && active.is_empty());
    let s = plan.schedule;
    let rank = w.rank;
    let prog = &s.programs[rank];
    let elem = s.elem_bytes() as usize;
    let tags = Tags::new(s, rank, plan.max_tag).map_err(|e| Failure::Mine(e.to_string()))?;
    let fail = |op: OpId, why: &str| {
        Failure::Mine(format!(
            "rank {rank} failed at op {op} ({}): {why}",
            prog.ops[op as usize].describe()
        ))
    };
    let fault = |op: OpId| {
        opts.fault
            .is_some_and(|f| f.rank == rank && f.op == op as usize)
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
            return Err(Failure::Mine(format!(
                "rank {rank}: {buf:?} buffer too small"
            )));
        }
    }
    // Regions MPI may be reading or writing (claim id = op id + 1), so a
    // racy unverified schedule fails instead of racing with the library.
    claims.clear();
    let race = |op: OpId| {
        fail(
            op,
            "touches memory an outstanding transfer uses (a race the verifier rejects: run without --no-verify)",
        )
    };
    // The clock is read at the checks only (every CLOCK_POLLS idle polls; a
    // read costs as much as a poll): a small run that never waits that long
    // never reads it. The timeout counts from the first check.
    let mut deadline: Option<Instant> = None;
    let mut last_progress: Option<Instant> = None;
    let mut now: Option<Instant> = None;
    // Polls since the last progress, and whether that progress has been
    // stamped with the clock yet.
    let mut idle: u32 = 0;
    let mut unstamped = false;
    let mut stall = Duration::from_millis(20);
    let mut escapes = 0;
    let bytes_of = |count: u64, op: OpId| -> std::result::Result<c_int, Failure> {
        c_int::try_from(count as usize * elem)
            .map_err(|_| fail(op, "message over 2 GiB (split it in the schedule)"))
    };
    loop {
        let mut progressed = false;
        while let Some(op) = st.pop_local() {
            if fault(op) {
                return Err(fail(op, "injected fault"));
            }
            let id = u64::from(op) + 1;
            claims
                .claim(id, &op_regions(&prog.ops[op as usize]))
                .map_err(|_| race(op))?;
            claims.release(id);
            super::run_local(s, b, &prog.ops[op as usize]);
            plan.complete(rank, st, op);
            progressed = true;
        }
        while let Some(op) = st.pop_recv() {
            if fault(op) {
                return Err(fail(op, "injected fault"));
            }
            let Op::Recv {
                peer,
                tag,
                region,
                combine,
            } = prog.ops[op as usize]
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
                    bytes_of(region.count, op)?,
                    ffi::RSMPI_UINT8_T,
                    peer as c_int,
                    tags.get(peer, tag, false),
                    world(),
                    &mut r,
                )
            };
            if rc != 0 {
                return Err(fail(op, &format!("MPI_Irecv returned error {rc}")));
            }
            if !combine {
                claims
                    .claim(u64::from(op) + 1, &[(region, true)])
                    .map_err(|_| race(op))?;
            }
            reqs.push(r);
            active.push(Active { op, temp });
            progressed = true;
        }
        let mut escape = false;
        if let (Some(n), Some(p)) = (now, last_progress) {
            if st.queued_sends() > 0 && !unstamped && n.duration_since(p) > stall {
                escape = true;
            }
        }
        while let Some(op) = if escape {
            st.start_send_beyond_engines()
        } else {
            st.start_send()
        } {
            if escape {
                escapes += 1;
                stall *= 2;
                escape = false;
            }
            if fault(op) {
                return Err(fail(op, "injected fault"));
            }
            let Op::Send {
                peer, tag, region, ..
            } = prog.ops[op as usize]
            else {
                unreachable!()
            };
            let mut r: ffi::MPI_Request = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: the region is only read until completion.
            let rc = unsafe {
                ffi::MPI_Isend(
                    b.region(region).as_ptr() as *const c_void,
                    bytes_of(region.count, op)?,
                    ffi::RSMPI_UINT8_T,
                    peer as c_int,
                    tags.get(peer, tag, true),
                    world(),
                    &mut r,
                )
            };
            if rc != 0 {
                return Err(fail(op, &format!("MPI_Isend returned error {rc}")));
            }
            claims
                .claim(u64::from(op) + 1, &[(region, false)])
                .map_err(|_| race(op))?;
            reqs.push(r);
            active.push(Active { op, temp: None });
            progressed = true;
        }
        if st.finished() && active.is_empty() {
            break;
        }
        if !reqs.is_empty() {
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
                return Err(fail(
                    active[0].op,
                    &format!("MPI_Testsome returned error {rc}"),
                ));
            }
            if out > 0 {
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
                            unsafe {
                                ffi::MPI_Get_count(&statuses[k], ffi::RSMPI_UINT8_T, &mut got)
                            };
                            if got as usize != region.count as usize * elem {
                                return Err(Failure::Mine(format!(
                                    "rank {rank} failed at op {op} ({}): rank {peer} sent {} bytes, the receive expects {}",
                                    prog.ops[op as usize].describe(),
                                    got,
                                    region.count as usize * elem
                                )));
                            }
                            if combine {
                                let id = u64::from(op) + 1;
                                claims.claim(id, &[(region, true)]).map_err(|_| race(op))?;
                                claims.release(id);
                                let t = active[i].temp.take().expect("landing buffer");
                                T::reduce_into(s.op, b.region_mut(region), &t);
                                pool.push(t);
                            }
                        }
                        Op::Send { .. } => st.send_finished(),
                        _ => unreachable!(),
                    }
                    claims.release(u64::from(op) + 1);
                    plan.complete(rank, st, op);
                }
                // Drop the completed entries (highest index first keeps the
                // others in place; order among the rest does not matter).
                for &(i, _) in done.iter().rev() {
                    reqs.swap_remove(i);
                    active.swap_remove(i);
                }
                progressed = true;
            }
        }
        if progressed {
            idle = 0;
            unstamped = true;
            continue;
        }
        idle = idle.wrapping_add(1);
        if idle.is_multiple_of(CLOCK_POLLS) {
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
            now = Some(n);
            if deadline.is_none() {
                deadline = opts.timeout.map(|t| n + t);
            }
            if unstamped || last_progress.is_none() {
                last_progress = Some(n);
                unstamped = false;
            }
            if deadline.is_some_and(|d| n >= d) {
                let waiting: Vec<String> = active
                    .iter()
                    .take(3)
                    .map(|a| format!("op {} ({})", a.op, prog.ops[a.op as usize].describe()))
                    .collect();
                return Err(Failure::Mine(format!(
                    "rank {rank} timed out after {:.1} s with {} of {} operations done; waiting: {}",
                    opts.timeout.unwrap_or_default().as_secs_f64(),
                    st.done,
                    st.total(),
                    waiting.join(", ")
                )));
            }
        }
        // Let other ranks on an oversubscribed node run.
        if idle > YIELD_POLLS {
            std::thread::yield_now();
        }
    }
    Ok(RankRun {
        stall_escapes: escapes,
    })
}

fn datatype(d: Dtype) -> ffi::MPI_Datatype {
    // SAFETY: constants the MPI library initialises.
    unsafe {
        match d {
            Dtype::U8 => ffi::RSMPI_UINT8_T,
            Dtype::I32 => ffi::RSMPI_INT32_T,
            Dtype::I64 => ffi::RSMPI_INT64_T,
            Dtype::F32 => ffi::RSMPI_FLOAT,
            Dtype::F64 => ffi::RSMPI_DOUBLE,
        }
    }
}

fn mpi_op(o: ReduceOp) -> ffi::MPI_Op {
    // SAFETY: constants the MPI library initialises.
    unsafe {
        match o {
            ReduceOp::Sum => ffi::RSMPI_SUM,
            ReduceOp::Prod => ffi::RSMPI_PROD,
            ReduceOp::Min => ffi::RSMPI_MIN,
            ReduceOp::Max => ffi::RSMPI_MAX,
            ReduceOp::Band => ffi::RSMPI_BAND,
            ReduceOp::Bor => ffi::RSMPI_BOR,
            ReduceOp::Bxor => ffi::RSMPI_BXOR,
        }
    }
}

/// The MPI function the native baseline calls for a collective.
pub fn native_name(c: Collective) -> &'static str {
    match c {
        Collective::Alltoall => "MPI_Alltoall",
        Collective::Allgather => "MPI_Allgather",
        Collective::Bcast { .. } => "MPI_Bcast",
        Collective::Reduce { .. } => "MPI_Reduce",
        Collective::Allreduce => "MPI_Allreduce",
        Collective::ReduceScatter => "MPI_Reduce_scatter",
        Collective::Scatter { .. } => "MPI_Scatter",
        Collective::Gather { .. } => "MPI_Gather",
    }
}

/// Runs the MPI library's own collective for `s`'s shape on this rank's
/// buffers (reductions read a separate send buffer, as MPI requires without
/// MPI_IN_PLACE).
pub fn native<T: Elem>(s: &Schedule, b: &mut RankBuffers<T>, send: &[T]) -> Result<()> {
    let dt = datatype(s.dtype);
    let op = mpi_op(s.op);
    let c = world();
    let n =
        c_int::try_from(s.count).map_err(|_| Error::Runtime("count over 2^31 elements".into()))?;
    let inp = b.input.as_ptr() as *const c_void;
    let out = b.output.as_mut_ptr() as *mut c_void;
    let sp = send.as_ptr() as *const c_void;
    // SAFETY: buffer sizes follow the collective's definition (input_len,
    // output_len), which is what MPI expects for these calls.
    let rc = unsafe {
        match s.collective {
            Collective::Alltoall => ffi::MPI_Alltoall(inp, n, dt, out, n, dt, c),
            Collective::Allgather => ffi::MPI_Allgather(inp, n, dt, out, n, dt, c),
            Collective::Bcast { root } => ffi::MPI_Bcast(out, n, dt, root as c_int, c),
            Collective::Reduce { root } => ffi::MPI_Reduce(sp, out, n, dt, op, root as c_int, c),
            Collective::Allreduce => ffi::MPI_Allreduce(sp, out, n, dt, op, c),
            Collective::ReduceScatter => {
                let counts: Vec<c_int> = (0..s.ranks)
                    .map(|r| {
                        topocoll_core::schedule::chunk(s.count, s.ranks as u64, r as u64).1 as c_int
                    })
                    .collect();
                let (start, _) =
                    topocoll_core::schedule::chunk(s.count, s.ranks as u64, w_rank() as u64);
                ffi::MPI_Reduce_scatter(
                    sp,
                    out.cast::<T>().add(start as usize) as *mut c_void,
                    counts.as_ptr(),
                    dt,
                    op,
                    c,
                )
            }
            Collective::Scatter { root } => {
                ffi::MPI_Scatter(inp, n, dt, out, n, dt, root as c_int, c)
            }
            Collective::Gather { root } => {
                ffi::MPI_Gather(inp, n, dt, out, n, dt, root as c_int, c)
            }
        }
    };
    check_rc(rc, native_name(s.collective))
}

fn w_rank() -> usize {
    let mut r = 0;
    unsafe { ffi::MPI_Comm_rank(world(), &mut r) };
    r as usize
}

/// Times the native collective like `bench` times a schedule: barrier, run,
/// per-iteration seconds of the slowest rank.
pub fn time_native<T: Elem>(
    w: &World,
    s: &Schedule,
    warmup: usize,
    iters: usize,
) -> Result<Vec<f64>> {
    let mut b = super::initial_buffers::<T>(s, w.rank);
    let send = b.output.clone();
    let mut times = Vec::with_capacity(iters);
    for it in 0..warmup + iters {
        w.barrier();
        let t0 = Instant::now();
        native(s, &mut b, &send)?;
        if it >= warmup {
            times.push(t0.elapsed().as_secs_f64());
        }
    }
    w.max_in_place(&mut times);
    Ok(times)
}
