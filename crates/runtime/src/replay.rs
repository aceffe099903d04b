//! The replay: a schedule run as one straight list of copies, the threads
//! backend's default executor.
//!
//! The task pool's bookkeeping (dependency counters, the matcher, memory
//! claims, the task queue under its lock) costs far more than the copies of
//! a small collective: an 8-byte allreduce on 4 ranks spends microseconds
//! deciding what to do and nanoseconds doing it. Run in order on one thread,
//! that bookkeeping has one outcome, which depends on the schedule alone,
//! so it is worked out once per [`Plan`] and kept: the ops are executed
//! symbolically, each matched send and receive as one step (the receive
//! copies straight from the sender's region, as the task pool does for a
//! send parked until its receive is posted), and the steps are recorded,
//! a step that continues the last one merged into it. A run then only moves
//! data: large steps cut among the cores ([`super::team`]), copies streamed
//! past the caches when the buffers exceed them.
//!
//! No replay is made, and the task pool runs instead and reports what is
//! wrong, when the symbolic run gets stuck (a deadlock, or a schedule that
//! needs a send buffered before its receive can be posted), when a
//! message's two sides differ in size, or when the source and destination
//! of one step overlap.

use super::team::{work, Lease, Part, PART};
use super::{Elem, Plan, RankBuffers, RankState};
use crate::error::{Error, Result, RunKind};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use topocoll_schedule::{Op, OpId, Region};

/// One data movement: `dst = src` or `dst = dst ∘ src`, on one rank or
/// across two.
#[derive(Clone, Copy, Debug)]
struct Step {
    src_rank: u32,
    src: Region,
    dst_rank: u32,
    dst: Region,
    combine: bool,
}

/// The recorded steps of one schedule, in an order its semantics allow.
#[derive(Debug)]
pub struct Replay {
    steps: Vec<Step>,
    /// Whether a step is large enough to share with helper threads.
    shares: bool,
    /// Whether large copies stream past the caches: all ranks' buffers
    /// together are more than [`stream_bytes`].
    stream: bool,
}

type Key = (u32, u32, u32);

/// The symbolic run that records the steps.
struct Recorder<'p, 's> {
    plan: &'p Plan<'s>,
    ranks: Vec<RankState>,
    /// Started sends and posted receives not yet matched, per key.
    sends: FxHashMap<Key, VecDeque<OpId>>,
    recvs: FxHashMap<Key, VecDeque<OpId>>,
    /// Ranks that may have ready operations.
    queue: VecDeque<usize>,
    queued: Vec<bool>,
    steps: Vec<Step>,
}

impl Replay {
    /// Records the steps of `plan`'s schedule; `None` when the task pool must
    /// run it instead (see the module's text).
    pub fn new(plan: &Plan) -> Option<Replay> {
        let s = plan.schedule;
        let p = s.ranks;
        let mut r = Recorder {
            plan,
            // Engines bound how many sends are in flight, not what data
            // they carry: a symbolic run needs no bound.
            ranks: (0..p).map(|k| plan.rank_state(k, usize::MAX)).collect(),
            sends: FxHashMap::default(),
            recvs: FxHashMap::default(),
            queue: (0..p).collect(),
            queued: vec![true; p],
            steps: Vec::new(),
        };
        while let Some(k) = r.queue.pop_front() {
            r.queued[k] = false;
            r.drain(k)?;
        }
        let done = r.ranks.iter().all(RankState::finished);
        let matched = r
            .sends
            .values()
            .chain(r.recvs.values())
            .all(VecDeque::is_empty);
        let elem = s.elem_bytes();
        let shares = r.steps.iter().any(|st| st.src.count * elem >= 2 * PART);
        let buffers = (0..p)
            .map(|k| super::buffer_bytes(s, k))
            .fold(0u64, u64::saturating_add);
        (done && matched).then_some(Replay {
            steps: r.steps,
            shares,
            stream: buffers > stream_bytes(),
        })
    }

    /// Whether a step is large enough to share with helper threads (two
    /// parts or more): a run needs the helpers only then.
    pub fn shares(&self) -> bool {
        self.shares
    }

    /// Whether large copies stream past the caches (the buffers exceed
    /// them).
    pub fn streams(&self) -> bool {
        self.stream
    }

    /// Steps in the replay.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Runs the steps on `bufs` (one per rank, each at least as long as the
    /// schedule's buffers: the caller checks), those of two parts
    /// ([`PART`]) or more shared with `team`'s helpers; returns the most
    /// threads a step used. Past `deadline` (checked before each step of `PART`
    /// or more and every 64 steps) it stops with an error naming the
    /// step it was at.
    pub fn run<T: Elem>(
        &self,
        plan: &Plan,
        bufs: &mut [RankBuffers<T>],
        mut team: Option<&mut Lease>,
        deadline: Option<(Instant, Duration)>,
    ) -> Result<usize> {
        let op = plan.schedule.op;
        let threads = team.as_deref().map_or(1, Lease::threads);
        let mut most = 1;
        let size = std::mem::size_of::<T>() as u64;
        for (k, st) in self.steps.iter().enumerate() {
            let bytes = st.src.count * size;
            if let Some((at, limit)) = deadline {
                if (bytes >= PART || k % 64 == 63) && Instant::now() >= at {
                    let what = if st.src_rank == st.dst_rank {
                        format!("copies {} elements within its buffers", st.src.count)
                    } else {
                        format!(
                            "waits for {} elements from rank {}",
                            st.src.count, st.src_rank
                        )
                    };
                    return Err(Error::runtime(
                        RunKind::Timeout,
                        format!(
                        "timed out after {:.3} s: rank {} {what} (step {} of the replay's {}); \
                         all {} ranks stopped",
                        limit.as_secs_f64(),
                        st.dst_rank,
                        k + 1,
                        self.steps.len(),
                        plan.schedule.ranks
                    ),
                    ));
                }
            }
            // The two regions are disjoint: other ranks' buffers, or checked
            // when the replay was recorded.
            let x = start(&mut bufs[st.src_rank as usize], st.src).cast_const();
            let y = start(&mut bufs[st.dst_rank as usize], st.dst);
            let stream = self.stream && bytes >= PART;
            // SAFETY: the step's two regions, which nothing else touches
            // while it runs.
            let step = unsafe { Part::new(x, y, st.src.count as usize, op, st.combine, stream) };
            match team.as_deref_mut() {
                Some(team) if bytes >= 2 * PART => {
                    team.run(step);
                    most = threads;
                }
                // Here the element type is known: the copy or combine is
                // called directly, not through the part's function pointer.
                // SAFETY: as for `step`.
                _ => unsafe { work::<T>(&step) },
            }
        }
        Ok(most)
    }
}

/// Beyond how many bytes of buffers in all a replay's large copies stream
/// past the caches ([`super::kernels::stream_copy`]): the largest cache's
/// size. With buffers that fit in it, a copy's destination is likely still
/// cached when a later step reads it, and streaming it out would cost 3.2–3.3
/// times (a 1–4 MiB pipelined broadcast), 1.35 times for buffers exactly
/// its size (an all-to-all of 1 MiB blocks on 4 ranks: 32 MiB in a 32 MiB
/// cache); with buffers beyond it, streaming pays 1.4–1.7 times (all-to-all
/// and allgather from 4 MiB blocks; docs/PERFORMANCE.md).
pub fn stream_bytes() -> u64 {
    static BYTES: OnceLock<u64> = OnceLock::new();
    *BYTES.get_or_init(|| largest_cache().unwrap_or(32 << 20))
}

/// The largest cache of CPU 0, from Linux's sysfs ("32768K").
fn largest_cache() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| {
        let size = std::fs::read_to_string(e.ok()?.path().join("size")).ok()?;
        topocoll_base::units::parse_bytes(&size).ok()
    })
    .max()
}

/// Where region `r` starts, its end checked against its buffer's. `as_mut_ptr` makes no
/// reference to the buffer, so pointers to two regions of one buffer both
/// stay valid.
fn start<T: Elem>(b: &mut RankBuffers<T>, r: Region) -> *mut T {
    let v = b.get_mut(r.buf);
    assert!(r.end() as usize <= v.len(), "region out of its buffer");
    // SAFETY: in bounds (just checked).
    unsafe { v.as_mut_ptr().add(r.offset as usize) }
}

fn overlap(a: Region, b: Region) -> bool {
    a.buf == b.buf && a.count > 0 && b.count > 0 && a.offset < b.end() && b.offset < a.end()
}

impl Recorder<'_, '_> {
    fn op(&self, rank: usize, op: OpId) -> &Op {
        &self.plan.schedule.programs[rank].ops[op as usize]
    }

    /// Records a step; a step that continues the last one (the same ranks,
    /// both regions picking up where the last one's end) extends it
    /// instead, so a schedule cut into segments for a network replays as
    /// long copies (fewer, larger steps to share among the cores).
    fn push(&mut self, st: Step) {
        if let Some(last) = self.steps.last_mut() {
            let follows = |a: Region, b: Region| a.buf == b.buf && a.end() == b.offset;
            if last.src_rank == st.src_rank
                && last.dst_rank == st.dst_rank
                && last.combine == st.combine
                && follows(last.src, st.src)
                && follows(last.dst, st.dst)
            {
                let src = Region::new(last.src.buf, last.src.offset, last.src.count + st.src.count);
                let dst = Region::new(last.dst.buf, last.dst.offset, last.dst.count + st.dst.count);
                if last.src_rank != last.dst_rank || !overlap(src, dst) {
                    (last.src, last.dst) = (src, dst);
                    return;
                }
            }
        }
        self.steps.push(st);
    }

    fn wake(&mut self, rank: usize) {
        if !self.queued[rank] {
            self.queued[rank] = true;
            self.queue.push_back(rank);
        }
    }

    /// Runs everything rank `k` has ready, until nothing is.
    fn drain(&mut self, k: usize) -> Option<()> {
        loop {
            let mut progressed = false;
            while let Some(i) = self.ranks[k].pop_local() {
                let (src, dst, combine) = match *self.op(k, i) {
                    Op::Copy { src, dst } => (src, dst, false),
                    Op::Combine { src, dst } => (src, dst, true),
                    _ => (Region::output(0, 0), Region::output(0, 0), false),
                };
                if src.count > 0 {
                    if overlap(src, dst) {
                        return None;
                    }
                    self.push(Step {
                        src_rank: k as u32,
                        src,
                        dst_rank: k as u32,
                        dst,
                        combine,
                    });
                }
                self.plan.complete(k, &mut self.ranks[k], i);
                progressed = true;
            }
            while let Some(i) = self.ranks[k].start_send() {
                let Op::Send { peer, tag, .. } = *self.op(k, i) else {
                    unreachable!()
                };
                let key = (k as u32, peer, tag);
                match self.recvs.get_mut(&key).and_then(VecDeque::pop_front) {
                    Some(j) => self.transfer(k, i, peer as usize, j)?,
                    None => self.sends.entry(key).or_default().push_back(i),
                }
                progressed = true;
            }
            while let Some(j) = self.ranks[k].pop_recv() {
                let Op::Recv { peer, tag, .. } = *self.op(k, j) else {
                    unreachable!()
                };
                let key = (peer, k as u32, tag);
                match self.sends.get_mut(&key).and_then(VecDeque::pop_front) {
                    Some(i) => self.transfer(peer as usize, i, k, j)?,
                    None => self.recvs.entry(key).or_default().push_back(j),
                }
                progressed = true;
            }
            if !progressed {
                return Some(());
            }
        }
    }

    /// Send `sop` of `src` meets receive `rop` of `dst`: one step, both
    /// complete.
    fn transfer(&mut self, src: usize, sop: OpId, dst: usize, rop: OpId) -> Option<()> {
        let (
            Op::Send { region: a, .. },
            Op::Recv {
                region: b, combine, ..
            },
        ) = (*self.op(src, sop), *self.op(dst, rop))
        else {
            unreachable!()
        };
        if a.count != b.count || (src == dst && overlap(a, b)) {
            return None;
        }
        if a.count > 0 {
            self.push(Step {
                src_rank: src as u32,
                src: a,
                dst_rank: dst as u32,
                dst: b,
                combine,
            });
        }
        self.ranks[src].send_finished();
        self.plan.complete(src, &mut self.ranks[src], sop);
        self.plan.complete(dst, &mut self.ranks[dst], rop);
        self.wake(src);
        self.wake(dst);
        Some(())
    }
}
