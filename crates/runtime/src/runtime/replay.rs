//! The replay: a schedule run as one straight list of copies, for the
//! threads backend on one worker.
//!
//! On one worker the task pool's bookkeeping (dependency counters, the
//! matcher, memory claims, the task queue under its lock) costs far more
//! than the copies of a small collective: an 8-byte allreduce on 4 ranks
//! spends microseconds deciding what to do and nanoseconds doing it. On one
//! worker that bookkeeping has one outcome, which depends on the schedule
//! alone, so it is worked out once per [`Plan`] and kept: the ops are
//! executed symbolically, each matched send and receive as one step (the
//! receive copies straight from the sender's region, as the task pool does
//! for a send parked until its receive is posted), and the steps are
//! recorded. A run then only moves data.
//!
//! No replay is made, and the task pool runs instead and reports what is
//! wrong, when the symbolic run gets stuck (a deadlock, or a schedule that
//! needs a send buffered before its receive can be posted), when a
//! message's two sides differ in size, or when the source and destination
//! of one step overlap.

use super::{Elem, Plan, RankBuffers, RankState};
use crate::schedule::{Op, OpId, Region, Schedule};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

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
        (done && matched).then_some(Replay { steps: r.steps })
    }

    /// Runs the steps on `bufs` (one per rank, each at least as long as the
    /// schedule's buffers: the caller checks).
    pub fn run<T: Elem>(&self, s: &Schedule, bufs: &mut [RankBuffers<T>]) {
        for st in &self.steps {
            let (a, b) = (st.src_rank as usize, st.dst_rank as usize);
            if a == b {
                super::move_within(s.op, &mut bufs[a], st.src, st.dst, st.combine);
            } else {
                let (from, to) = if a < b {
                    let (lo, hi) = bufs.split_at_mut(b);
                    (&lo[a], &mut hi[0])
                } else {
                    let (lo, hi) = bufs.split_at_mut(a);
                    (&hi[0], &mut lo[b])
                };
                let x = from.region(st.src);
                let y = to.region_mut(st.dst);
                if st.combine {
                    T::reduce_into(s.op, y, x);
                } else {
                    y.copy_from_slice(x);
                }
            }
        }
    }
}

fn overlap(a: Region, b: Region) -> bool {
    a.buf == b.buf && a.count > 0 && b.count > 0 && a.offset < b.end() && b.offset < a.end()
}

impl Recorder<'_, '_> {
    fn op(&self, rank: usize, op: OpId) -> &Op {
        &self.plan.schedule.programs[rank].ops[op as usize]
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
                    self.steps.push(Step {
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
            self.steps.push(Step {
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
