//! The replay's helper threads: one large copy or combine shared among the
//! cores.
//!
//! The replay runs its steps in order on the calling thread. A large step is
//! cut into parts, one per core; the caller does the first and hands the
//! others to helper threads, which stay alive between runs (spinning for
//! [`IDLE`], then parked), so a run pays no thread start. A part is done by
//! whichever thread claims it first: when a helper is late (parked, or
//! descheduled on a busy machine) the caller takes its part back, so a
//! helper can only add speed, never wait time.
//!
//! One run at a time uses the helpers ([`lease`]); a concurrent run, or a
//! machine with one core, runs its steps alone.

use super::Elem;
use crate::schedule::ReduceOp;
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long an idle helper spins for the next part before it parks: longer
/// than a benchmark's gap between two runs (refilling the inputs), so back
/// to back runs never wake a parked thread.
const IDLE: Duration = Duration::from_millis(2);

/// Most helper threads (the caller is one more).
const MOST: usize = 15;

/// One part of a step: `dst = src` or `dst = dst ∘ src` over `len` elements,
/// by `work` (which knows the element type); a copy with `stream` bypasses
/// the caches ([`super::kernels::stream_copy`]).
#[derive(Clone, Copy)]
pub struct Part {
    work: unsafe fn(&Part),
    src: *const u8,
    dst: *mut u8,
    len: usize,
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
}

unsafe fn work<T: Elem>(p: &Part) {
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
    slots: Vec<Slot>,
    busy: AtomicBool,
}

static TEAM: OnceLock<Team> = OnceLock::new();
static STARTED: OnceLock<()> = OnceLock::new();

/// The right to use the helpers for one run; released when dropped.
pub struct Lease {
    team: &'static Team,
}

/// The helpers for a run that uses `threads` threads in all (the caller
/// included), or `None` when that is one thread or another run holds them.
pub fn lease(threads: usize) -> Option<Lease> {
    let n = threads.saturating_sub(1).min(MOST);
    if n == 0 {
        return None;
    }
    let team = TEAM.get_or_init(|| Team {
        slots: (0..n).map(|_| Slot::new()).collect(),
        busy: AtomicBool::new(false),
    });
    if team
        .busy
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        return None;
    }
    STARTED.get_or_init(|| {
        for slot in &team.slots {
            let h = std::thread::Builder::new()
                .name("topocoll-replay".into())
                .spawn(move || slot.serve())
                .expect("starting a replay helper thread");
            let _ = slot.thread.set(h.thread().clone());
        }
    });
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

    /// Runs `parts` (at most [`Lease::threads`]; their memory disjoint): the
    /// first on the calling thread, the others on the helpers, and returns
    /// when all are done.
    pub fn run(&self, parts: &[Part]) {
        let (first, rest) = parts.split_first().expect("at least one part");
        let slots = &self.team.slots[..rest.len()];
        let tickets: Vec<u64> = slots.iter().zip(rest).map(|(s, p)| s.post(*p)).collect();
        first.run();
        for ((slot, part), &t) in slots.iter().zip(rest).zip(&tickets) {
            slot.finish(part, t);
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
        // SAFETY: the previous part is done (`finish` returned), so the
        // helper no longer reads the mailbox.
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

    /// Waits for part `t`, or does it here if the helper has not begun.
    fn finish(&self, p: &Part, t: u64) {
        if self
            .claimed
            .compare_exchange(t - 1, t, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            p.run();
            return;
        }
        let mut spins = 0u32;
        while self.done.load(Ordering::Acquire) < t {
            spins += 1;
            if spins < 1 << 12 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        if self.failed.load(Ordering::Acquire) {
            panic!("a replay helper thread failed");
        }
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
            if self
                .claimed
                .compare_exchange(t - 1, t, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                // SAFETY: posted before `posted` moved (Acquire above).
                let p = unsafe { (*self.part.get()).expect("a posted part") };
                if catch_unwind(AssertUnwindSafe(|| p.run())).is_err() {
                    self.failed.store(true, Ordering::Release);
                }
                self.done.store(t, Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_at_a_time_and_every_part_done() {
        assert!(lease(1).is_none(), "one thread needs no helper");
        let l = loop {
            if let Some(l) = lease(2) {
                break l;
            }
            std::thread::yield_now();
        };
        assert!(lease(2).is_none(), "the helpers serve one run at a time");
        // Many short steps, so parts are handed over, taken back and waited
        // for in every interleaving the scheduler produces.
        let src: Vec<i32> = (0..10_000).collect();
        let mut dst = vec![0i32; src.len()];
        let n = l.threads();
        for round in 0..2_000i32 {
            dst.iter_mut().for_each(|x| *x = round);
            let (x, y) = (src.as_ptr(), dst.as_mut_ptr());
            let parts: Vec<Part> = (0..n)
                .map(|i| {
                    let (lo, hi) = (src.len() * i / n, src.len() * (i + 1) / n);
                    // SAFETY: disjoint pieces of two live vectors.
                    unsafe {
                        Part::new(
                            x.add(lo),
                            y.add(lo),
                            hi - lo,
                            ReduceOp::Sum,
                            round % 2 == 1,
                            false,
                        )
                    }
                })
                .collect();
            l.run(&parts);
            for (i, (&d, &s)) in dst.iter().zip(&src).enumerate() {
                let want = if round % 2 == 1 {
                    round.wrapping_add(s)
                } else {
                    s
                };
                assert_eq!(d, want, "round {round}, element {i}");
            }
        }
        drop(l);
        assert!(lease(2).is_some());
    }
}
