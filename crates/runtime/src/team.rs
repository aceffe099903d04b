//! The replay's helper threads: one large copy or combine shared among the
//! cores.
//!
//! The replay runs its steps in order on the calling thread. A large step is
//! cut into parts, up to one per core; the caller does the first and hands the
//! others to helper threads, which stay alive between runs (spinning for
//! [`IDLE`], then parked), so a run pays no thread start. A part is done by
//! whichever thread claims it first: a helper that has not begun its part
//! when the caller is done with its own (parked, or descheduled on a busy
//! machine) gets it taken back, so waking a helper costs no waiting; the
//! caller waits only for parts a helper is in the middle of. A thread takes
//! a whole part, not chunks claimed from a shared counter, so that its
//! stream through memory does not break at every chunk (docs/PERFORMANCE.md).
//!
//! One run at a time uses the helpers ([`lease`]); a concurrent run, or a
//! machine with one core, runs its steps alone.

use super::Elem;
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::{Duration, Instant};
use topocoll_schedule::ReduceOp;

/// How long an idle helper spins for the next part before it parks: longer
/// than a benchmark's gap between two runs (refilling the inputs), so back
/// to back runs never wake a parked thread.
const IDLE: Duration = Duration::from_millis(2);

/// Most helper threads (the caller is one more).
const MOST: usize = 15;

/// The smallest part of a shared step, in bytes: a step is shared only from
/// two parts.
pub const PART: u64 = 64 << 10;

/// One part of a step: `dst = src` or `dst = dst ∘ src` over `len` elements,
/// by `work` (which knows the element type); a copy with `stream` bypasses
/// the caches ([`super::kernels::stream_copy`]).
#[derive(Clone, Copy)]
pub struct Part {
    work: unsafe fn(&Part),
    src: *const u8,
    dst: *mut u8,
    len: usize,
    elem: usize,
    op: ReduceOp,
    combine: bool,
    stream: bool,
}

impl Part {
    /// # Safety
    /// `src` and `dst` must be valid for `len` elements of `T`, must not
    /// overlap, and nothing else may touch them until the part is done.
    pub unsafe fn new<T: Elem>(
        src: *const T,
        dst: *mut T,
        len: usize,
        op: ReduceOp,
        combine: bool,
        stream: bool,
    ) -> Part {
        Part {
            work: work::<T>,
            src: src.cast(),
            dst: dst.cast(),
            len,
            elem: std::mem::size_of::<T>(),
            op,
            combine,
            stream,
        }
    }

    /// Runs the part on the calling thread.
    pub fn run(&self) {
        // SAFETY: `Part::new`'s contract.
        unsafe { (self.work)(self) }
    }

    /// Elements `lo..hi` of the part.
    fn slice(&self, lo: usize, hi: usize) -> Part {
        assert!(lo <= hi && hi <= self.len);
        Part {
            // SAFETY: inside the part's regions (just checked).
            src: unsafe { self.src.add(lo * self.elem) },
            dst: unsafe { self.dst.add(lo * self.elem) },
            len: hi - lo,
            ..*self
        }
    }
}

/// Runs `p`, whose element type is `T`.
///
/// # Safety
/// `p` must have been made by `Part::new::<T>` (its contract holds).
#[inline]
pub(super) unsafe fn work<T: Elem>(p: &Part) {
    let x = std::slice::from_raw_parts(p.src.cast::<T>(), p.len);
    let y = std::slice::from_raw_parts_mut(p.dst.cast::<T>(), p.len);
    if p.combine {
        T::reduce_into(p.op, y, x);
    } else if p.stream {
        super::kernels::stream_copy(y, x);
    } else {
        y.copy_from_slice(x);
    }
}

/// One helper's mailbox. `posted` counts parts handed over; a part is
/// claimed by moving `claimed` up to its number (by the helper or by the
/// caller taking it back) and done when `done` reaches it.
struct Slot {
    posted: AtomicU64,
    claimed: AtomicU64,
    done: AtomicU64,
    failed: AtomicBool,
    sleeping: AtomicBool,
    part: UnsafeCell<Option<Part>>,
    thread: OnceLock<Thread>,
}

// SAFETY: `part` is written by the caller before `posted` moves (Release)
// and read by the helper after it sees the move (Acquire); the caller does
// not write it again until the part is done.
unsafe impl Sync for Slot {}
// SAFETY: a part's pointers are only used under `Part::new`'s contract.
unsafe impl Send for Part {}

struct Team {
    /// Leaked once: the helper threads hold references to their slots.
    slots: &'static [Slot],
    busy: AtomicBool,
    /// Whether every helper thread started.
    started: bool,
}

static TEAM: OnceLock<Team> = OnceLock::new();

/// Parts the helpers have done since the process started (tests check that
/// the helpers take part at all: the caller would do every part otherwise).
pub static HELPED: AtomicU64 = AtomicU64::new(0);

/// The right to use the helper threads for one run; released when dropped.
/// `run` takes it mutably: one step at a time.
pub struct Lease {
    team: &'static Team,
}

/// The helpers for a run, or `None` when this process may use one core,
/// another run holds them, or they could not be started. The team has one
/// helper per core this process may use, less one (at most [`MOST`]),
/// started on first use.
pub fn lease() -> Option<Lease> {
    let team = TEAM.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = cores.saturating_sub(1).min(MOST);
        let slots: &'static [Slot] = Vec::leak((0..n).map(|_| Slot::new()).collect());
        let started = slots.iter().all(|slot| {
            std::thread::Builder::new()
                .name("topocoll-replay".into())
                .spawn(move || slot.serve())
                .map(|h| {
                    let _ = slot.thread.set(h.thread().clone());
                })
                .is_ok()
        });
        Team {
            slots,
            busy: AtomicBool::new(false),
            started,
        }
    });
    if team.slots.is_empty() || !team.started {
        return None;
    }
    team.busy
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .ok()?;
    Some(Lease { team })
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.team.busy.store(false, Ordering::Release);
    }
}

impl Lease {
    /// Threads that share a step: the helpers and the caller.
    pub fn threads(&self) -> usize {
        self.team.slots.len() + 1
    }

    /// Runs `step` cut into up to [`Lease::threads`] parts of at least
    /// [`PART`] bytes: the first on the calling thread, the others handed
    /// to the helpers. When the caller is done with its own, it takes back
    /// every part no helper has begun, then waits for the ones that have:
    /// nothing touches the step's memory once this returns, or unwinds from
    /// a part that panicked.
    pub fn run(&mut self, step: Part) {
        let bytes = (step.len * step.elem) as u64;
        let n = ((bytes / PART) as usize).clamp(1, self.threads());
        let part = |i: usize| step.slice(step.len * i / n, step.len * (i + 1) / n);
        let slots = &self.team.slots[..n - 1];
        let mut tickets = [0u64; MOST];
        for (i, slot) in slots.iter().enumerate() {
            tickets[i] = slot.post(part(i + 1));
        }
        let mut failure = catch_unwind(AssertUnwindSafe(|| part(0).run())).err();
        let mut taken = [false; MOST];
        for (i, slot) in slots.iter().enumerate() {
            if slot.claim(tickets[i]) {
                taken[i] = true;
                if let Err(e) = catch_unwind(AssertUnwindSafe(|| part(i + 1).run())) {
                    failure.get_or_insert(e);
                }
            }
        }
        let mut helper_failed = false;
        for (i, slot) in slots.iter().enumerate() {
            if !taken[i] {
                helper_failed |= slot.wait(tickets[i]);
            }
        }
        if let Some(e) = failure {
            std::panic::resume_unwind(e);
        }
        if helper_failed {
            panic!("a part of a replay step failed on a helper thread");
        }
    }
}

impl Slot {
    fn new() -> Slot {
        Slot {
            posted: AtomicU64::new(0),
            claimed: AtomicU64::new(0),
            done: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            sleeping: AtomicBool::new(false),
            part: UnsafeCell::new(None),
            thread: OnceLock::new(),
        }
    }

    /// Hands `p` to the helper; returns its number.
    fn post(&self, p: Part) -> u64 {
        // SAFETY: the previous part is done (`Lease::run` returned only
        // after taking it back or waiting for it), so the helper no longer
        // reads the mailbox.
        unsafe { *self.part.get() = Some(p) };
        let t = self.posted.fetch_add(1, Ordering::SeqCst) + 1;
        // Paired with the helper's store of `sleeping` and load of `posted`
        // (both SeqCst): either it sees the part or we see it asleep.
        if self.sleeping.load(Ordering::SeqCst) {
            if let Some(th) = self.thread.get() {
                th.unpark();
            }
        }
        t
    }

    /// Claims part `t`: for the helper, or for the caller taking it back;
    /// false when the other side has it.
    fn claim(&self, t: u64) -> bool {
        self.claimed
            .compare_exchange(t - 1, t, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Waits for the helper to finish part `t`; whether it failed.
    fn wait(&self, t: u64) -> bool {
        let mut spins = 0u32;
        while self.done.load(Ordering::Acquire) < t {
            spins += 1;
            if spins < 1 << 12 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        self.failed.swap(false, Ordering::AcqRel)
    }

    /// The helper's loop.
    fn serve(&self) {
        let mut seen = 0u64;
        loop {
            let mut since = Instant::now();
            let mut spins = 0u32;
            let t = loop {
                let t = self.posted.load(Ordering::Acquire);
                if t != seen {
                    break t;
                }
                spins += 1;
                if !spins.is_multiple_of(256) {
                    std::hint::spin_loop();
                    continue;
                }
                if since.elapsed() < IDLE {
                    continue;
                }
                self.sleeping.store(true, Ordering::SeqCst);
                if self.posted.load(Ordering::SeqCst) == seen {
                    std::thread::park();
                }
                self.sleeping.store(false, Ordering::SeqCst);
                since = Instant::now();
            };
            seen = t;
            if self.claim(t) {
                // SAFETY: posted before `posted` moved (Acquire above).
                let p = unsafe { (*self.part.get()).expect("a posted part") };
                if catch_unwind(AssertUnwindSafe(|| p.run())).is_err() {
                    self.failed.store(true, Ordering::Release);
                }
                HELPED.fetch_add(1, Ordering::Relaxed);
                self.done.store(t, Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The helpers, once the other test's run has released them; `None` on
    /// a machine with one core.
    fn wait_lease() -> Option<Lease> {
        if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
            return None;
        }
        loop {
            if let Some(l) = lease() {
                return Some(l);
            }
            std::thread::yield_now();
        }
    }

    fn step<T: Elem>(src: &[T], dst: &mut [T], op: ReduceOp, combine: bool) -> Part {
        // SAFETY: two live slices of the same length.
        unsafe {
            Part::new(
                src.as_ptr(),
                dst.as_mut_ptr(),
                src.len(),
                op,
                combine,
                false,
            )
        }
    }

    #[test]
    fn one_run_at_a_time_and_every_part_done() {
        let Some(mut l) = wait_lease() else { return };
        assert!(lease().is_none(), "the helpers serve one run at a time");
        // Many steps, so parts are handed over, taken back and waited for in
        // every interleaving the scheduler produces; a length the thread
        // count does not divide.
        let helped = HELPED.load(Ordering::Relaxed);
        let src: Vec<i32> = (0..100_003).collect();
        let mut dst = vec![0i32; src.len()];
        for round in 0..2_000i32 {
            dst.iter_mut().for_each(|x| *x = round);
            let combine = round % 2 == 1;
            l.run(step(&src, &mut dst, ReduceOp::Sum, combine));
            for (i, (&d, &s)) in dst.iter().zip(&src).enumerate() {
                let want = if combine { round.wrapping_add(s) } else { s };
                assert_eq!(d, want, "round {round}, element {i}");
            }
        }
        assert!(
            HELPED.load(Ordering::Relaxed) > helped,
            "the helper never did a part"
        );
    }

    #[test]
    fn a_failing_part_fails_the_step_and_not_the_next() {
        let Some(mut l) = wait_lease() else { return };
        // A bitwise operator on floats panics in the kernel, in every part.
        let src = vec![1.0f64; 100_000];
        let mut dst = vec![2.0f64; src.len()];
        let s = step(&src, &mut dst, ReduceOp::Band, true);
        let r = catch_unwind(AssertUnwindSafe(|| l.run(s)));
        assert!(r.is_err(), "the step must fail");
        l.run(step(&src, &mut dst, ReduceOp::Sum, true));
        assert!(dst.iter().all(|&x| x == 3.0));
    }
}
