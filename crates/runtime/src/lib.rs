//! topocoll's runtime: executes a verified schedule on real buffers, over
//! in-process threads or (feature `mpi`) MPI, and the reduction kernels and
//! their memory-bandwidth benchmark. See `DESIGN.md` and `docs/runtime.md`.
//!
//! # Semantics (every backend)
//!
//! Each rank runs its program as a dependency graph: an operation becomes
//! *ready* when every operation it waits for has completed. Then:
//!
//! - a ready `Copy`, `Combine` or `Compute` runs (`Compute` is a cost for the
//!   simulator and moves no data: the runtime does nothing for it);
//! - a ready `Recv` is *posted* at once;
//! - a ready `Send` joins the rank's send queue; the rank's `engines` take the
//!   queued sends lowest program index first, at most `engines` in flight
//!   (the node model of the simulator and of the A2AT paper);
//! - sends and receives match by (source, destination, tag), the k-th send of
//!   a key meeting the k-th receive of it (as in MPI);
//! - a `Recv` with `combine` does `dst = dst ∘ received` with the kernels of
//!   [`kernels`]; combines happen exactly where the schedule puts them, never
//!   in arrival order, so every run gives the same bits.
//!
//! Messages are eager: a send never needs its receiver to be posted. The
//! threads backend copies straight into the posted receive when there is one
//! and into a message buffer otherwise; the MPI backend has to live with
//! rendezvous for large messages (see `mpi.rs` and `docs/runtime.md`).
//!
//! Regions a running operation touches are *claimed*; claiming a region that
//! overlaps one in use, with either side writing, is an error (a verified
//! schedule never does this, the verifier's race check guarantees it). So an
//! unverified schedule (`--no-verify`) can fail but never corrupts memory.
//!
//! # Inputs and checks
//!
//! [`initial_buffers`] fills each rank's own data (`Collective::initial`) with
//! [`Elem::pattern`]`(rank, index)`. [`check`] compares a backend's outputs with
//! (1) [`run_sequential`], the same schedule executed one operation at a time
//! in one thread: bit-for-bit, since a verified schedule fixes every
//! combination order, and (2) a reference computed the obvious way from the
//! collective's definition (`Collective::expected`): exact for data movement,
//! integers, min and max; for float sums and products within the classic
//! error bound of a sum in any order.

pub mod kernel_bench;
pub mod kernels;
pub mod replay;
pub mod team;
pub mod threads;

#[cfg(feature = "mpi")]
pub mod mpi;

pub use kernels::Elem;

use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::OnceLock;
use std::time::Duration;
use topocoll_core::error::{Error, Result};
use topocoll_core::schedule::{
    dependency_counts, Buf, Collective, Op, OpId, Program, ReduceOp, Region, Schedule, Successors,
};

/// Options every backend takes.
#[derive(Clone, Debug)]
pub struct Options {
    /// Transfers (sends) a rank keeps in flight at once; at least 1.
    pub engines: usize,
    /// Give up (with an error naming what is still waiting) after this long.
    pub timeout: Option<Duration>,
    /// Make one rank fail when one of its operations becomes ready (tests).
    pub fault: Option<Fault>,
    /// Threads backend: worker threads (0: one per available core).
    pub workers: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            engines: 4,
            timeout: Some(Duration::from_secs(600)),
            fault: None,
            workers: 0,
        }
    }
}

/// An injected failure: rank `rank` panics when its op `op` becomes ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub rank: usize,
    pub op: usize,
}

impl Fault {
    /// A fault that names no op of the schedule would never fire: refused.
    pub fn check(&self, s: &Schedule) -> Result<()> {
        let Some(program) = s.programs.get(self.rank) else {
            return Err(Error::Invalid(format!(
                "--fault: rank {} is not one of the schedule's {} ranks",
                self.rank, s.ranks
            )));
        };
        if self.op >= program.ops.len() {
            return Err(Error::Invalid(format!(
                "--fault: rank {} has {} ops, so op {} does not exist",
                self.rank,
                program.ops.len(),
                self.op
            )));
        }
        Ok(())
    }
}

/// One rank's three buffers.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RankBuffers<T> {
    pub input: Vec<T>,
    pub output: Vec<T>,
    pub scratch: Vec<T>,
}

impl<T: Elem> RankBuffers<T> {
    pub fn get(&self, buf: Buf) -> &Vec<T> {
        match buf {
            Buf::Input => &self.input,
            Buf::Output => &self.output,
            Buf::Scratch => &self.scratch,
        }
    }

    pub fn get_mut(&mut self, buf: Buf) -> &mut Vec<T> {
        match buf {
            Buf::Input => &mut self.input,
            Buf::Output => &mut self.output,
            Buf::Scratch => &mut self.scratch,
        }
    }

    /// The elements of a region (which must lie inside the buffer).
    pub fn region(&self, r: Region) -> &[T] {
        &self.get(r.buf)[r.offset as usize..r.end() as usize]
    }

    pub fn region_mut(&mut self, r: Region) -> &mut [T] {
        &mut self.get_mut(r.buf)[r.offset as usize..r.end() as usize]
    }
}

/// Bytes of `rank`'s three buffers.
pub fn buffer_bytes(s: &Schedule, rank: usize) -> u64 {
    [Buf::Input, Buf::Output, Buf::Scratch]
        .iter()
        .map(|&b| s.buffer_len(rank, b))
        .fold(0u64, |a, n| a.saturating_add(n))
        .saturating_mul(s.elem_bytes())
}

/// Rank `rank`'s buffers at the start: its own data holds the pattern, the
/// rest is zero.
pub fn initial_buffers<T: Elem>(s: &Schedule, rank: usize) -> RankBuffers<T> {
    let len = |b: Buf| s.buffer_len(rank, b) as usize;
    let mut b = RankBuffers {
        input: vec![T::default(); len(Buf::Input)],
        output: vec![T::default(); len(Buf::Output)],
        scratch: vec![T::default(); len(Buf::Scratch)],
    };
    reset_buffers(s, rank, &mut b);
    b
}

/// Refills a rank's own data with the pattern (between repeated runs).
pub fn reset_buffers<T: Elem>(s: &Schedule, rank: usize, b: &mut RankBuffers<T>) {
    if let Some((buf, len)) = s.collective.initial(s.ranks, s.count, rank) {
        for (i, x) in b.get_mut(buf)[..len as usize].iter_mut().enumerate() {
            *x = T::pattern(rank, i as u64, s.op);
        }
    }
}

/// The static part of an execution, computed once per schedule and shared by
/// every backend and every repetition: per-rank successor lists.
pub struct Plan<'s> {
    pub schedule: &'s Schedule,
    ranks: Vec<RankPlan>,
    /// Bytes all sends move together.
    pub bytes_moved: u64,
    /// The largest tag any send or receive uses.
    pub max_tag: u32,
    /// The threads backend's replay, recorded on first use.
    replay: OnceLock<Option<replay::Replay>>,
}

struct RankPlan {
    succ: Successors,
    ndeps: Vec<u32>,
}

impl<'s> Plan<'s> {
    /// Builds the plan, after checking what memory safety needs: peers are
    /// ranks, regions lie inside their buffers, copies have equal sides,
    /// dependencies point backwards. (The verifier checks all this and more;
    /// this runs even with `--no-verify`.)
    pub fn new(s: &'s Schedule) -> Result<Plan<'s>> {
        if s.programs.len() != s.ranks {
            return Err(Error::Runtime(format!(
                "{} programs for {} ranks",
                s.programs.len(),
                s.ranks
            )));
        }
        let mut ranks = Vec::with_capacity(s.ranks);
        let mut bytes_moved = 0;
        let mut max_tag = 0;
        for (rank, prog) in s.programs.iter().enumerate() {
            check_program(s, rank, prog)?;
            for op in &prog.ops {
                match op {
                    Op::Send { region, tag, .. } => {
                        bytes_moved += region.count * s.elem_bytes();
                        max_tag = max_tag.max(*tag);
                    }
                    Op::Recv { tag, .. } => max_tag = max_tag.max(*tag),
                    _ => {}
                }
            }
            ranks.push(RankPlan {
                succ: Successors::new(prog),
                ndeps: dependency_counts(prog),
            });
        }
        Ok(Plan {
            schedule: s,
            ranks,
            bytes_moved,
            max_tag,
            replay: OnceLock::new(),
        })
    }

    /// The schedule as a straight list of copies (see [`replay`]), recorded
    /// on the first call; `None` when it cannot be one.
    pub fn replay(&self) -> Option<&replay::Replay> {
        self.replay
            .get_or_init(|| replay::Replay::new(self))
            .as_ref()
    }

    /// A fresh execution state for one rank.
    pub fn rank_state(&self, rank: usize, engines: usize) -> RankState {
        let mut st = RankState {
            remaining: Vec::new(),
            done: 0,
            total: 0,
            local: VecDeque::new(),
            recvs: VecDeque::new(),
            sends: BinaryHeap::new(),
            in_flight: 0,
            engines: 1,
        };
        self.reset_rank_state(rank, engines, &mut st);
        st
    }

    /// Makes `st` a fresh execution state for one rank, reusing its memory
    /// (a repeated run allocates nothing).
    pub fn reset_rank_state(&self, rank: usize, engines: usize, st: &mut RankState) {
        let rp = &self.ranks[rank];
        st.remaining.clear();
        st.remaining.extend_from_slice(&rp.ndeps);
        st.done = 0;
        st.total = rp.ndeps.len();
        st.local.clear();
        st.recvs.clear();
        st.sends.clear();
        st.in_flight = 0;
        st.engines = engines.max(1);
        let prog = &self.schedule.programs[rank];
        for (i, &d) in rp.ndeps.iter().enumerate() {
            if d == 0 {
                st.classify(prog, i as OpId);
            }
        }
    }

    /// Marks op `op` of `rank` complete in `st`, making its successors ready.
    pub fn complete(&self, rank: usize, st: &mut RankState, op: OpId) {
        let rp = &self.ranks[rank];
        let prog = &self.schedule.programs[rank];
        st.done += 1;
        for &j in rp.succ.of(op as usize) {
            st.remaining[j as usize] -= 1;
            if st.remaining[j as usize] == 0 {
                st.classify(prog, j);
            }
        }
    }
}

fn check_program(s: &Schedule, rank: usize, prog: &Program) -> Result<()> {
    let bad = |i: usize, why: &str| {
        Err(Error::Runtime(format!(
            "rank {rank} op {i} ({}): {why}",
            prog.ops[i].describe()
        )))
    };
    let fits = |r: &Region| {
        r.offset
            .checked_add(r.count)
            .is_some_and(|e| e <= s.buffer_len(rank, r.buf))
    };
    for (i, op) in prog.ops.iter().enumerate() {
        if prog.deps(i).iter().any(|&d| d as usize >= i) {
            return bad(i, "depends on an operation that is not earlier");
        }
        match op {
            Op::Send { peer, region, .. } | Op::Recv { peer, region, .. } => {
                if *peer as usize >= s.ranks {
                    return bad(i, "peer is not a rank");
                }
                if !fits(region) {
                    return bad(i, "region ends past its buffer");
                }
            }
            Op::Copy { src, dst } | Op::Combine { src, dst } => {
                if !fits(src) || !fits(dst) {
                    return bad(i, "region ends past its buffer");
                }
                if src.count != dst.count {
                    return bad(i, "source and destination sizes differ");
                }
            }
            Op::Compute { .. } => {}
        }
    }
    Ok(())
}

/// One rank's dynamic state: dependency counters and what is ready, by kind.
pub struct RankState {
    remaining: Vec<u32>,
    /// Operations completed.
    pub done: usize,
    total: usize,
    local: VecDeque<OpId>,
    recvs: VecDeque<OpId>,
    sends: BinaryHeap<Reverse<OpId>>,
    /// Sends started and not yet complete.
    pub in_flight: usize,
    engines: usize,
}

impl RankState {
    fn classify(&mut self, prog: &Program, op: OpId) {
        match prog.ops[op as usize] {
            Op::Send { .. } => self.sends.push(Reverse(op)),
            Op::Recv { .. } => self.recvs.push_back(op),
            _ => self.local.push_back(op),
        }
    }

    /// A ready local operation (copy, combine, compute), oldest first.
    pub fn pop_local(&mut self) -> Option<OpId> {
        self.local.pop_front()
    }

    /// A ready receive to post.
    pub fn pop_recv(&mut self) -> Option<OpId> {
        self.recvs.pop_front()
    }

    /// The next send an engine takes (lowest program index), if an engine is free.
    pub fn start_send(&mut self) -> Option<OpId> {
        if self.in_flight >= self.engines {
            return None;
        }
        self.start_send_beyond_engines()
    }

    /// The next ready send even when every engine is busy (the MPI backend's
    /// escape from rendezvous deadlock).
    pub fn start_send_beyond_engines(&mut self) -> Option<OpId> {
        let Reverse(op) = self.sends.pop()?;
        self.in_flight += 1;
        Some(op)
    }

    /// A started send has completed (call [`Plan::complete`] too).
    pub fn send_finished(&mut self) {
        self.in_flight -= 1;
    }

    /// Sends ready but not started.
    pub fn queued_sends(&self) -> usize {
        self.sends.len()
    }

    pub fn finished(&self) -> bool {
        self.done == self.total
    }

    pub fn total(&self) -> usize {
        self.total
    }
}

/// Regions in use by running operations of one rank, so that overlapping
/// accesses (a race the verifier would have rejected) become errors instead
/// of undefined behaviour.
#[derive(Default)]
pub(crate) struct Claims {
    active: Vec<(Buf, u64, u64, bool, u64)>,
}

impl Claims {
    /// Claims `regs` (region, writes) for claim `id`; on a conflict returns the
    /// id holding the conflicting region.
    pub(crate) fn claim(
        &mut self,
        id: u64,
        regs: &[(Region, bool)],
    ) -> std::result::Result<(), u64> {
        for (k, (r, w)) in regs.iter().enumerate() {
            if r.count == 0 {
                continue;
            }
            let overlaps = |b: Buf, lo: u64, hi: u64, w2: bool| {
                b == r.buf && lo < r.end() && r.offset < hi && (*w || w2)
            };
            if let Some(a) = self.active.iter().find(|a| overlaps(a.0, a.1, a.2, a.3)) {
                return Err(a.4);
            }
            if regs[..k]
                .iter()
                .any(|(r2, w2)| r2.count > 0 && overlaps(r2.buf, r2.offset, r2.end(), *w2))
            {
                return Err(id);
            }
        }
        for (r, w) in regs {
            if r.count > 0 {
                self.active.push((r.buf, r.offset, r.end(), *w, id));
            }
        }
        Ok(())
    }

    pub(crate) fn release(&mut self, id: u64) {
        self.active.retain(|a| a.4 != id);
    }

    /// No claims (keeping the memory for the next run).
    #[cfg(feature = "mpi")]
    pub(crate) fn clear(&mut self) {
        self.active.clear();
    }
}

/// The regions an operation reads and writes on its own rank (a send reads,
/// a receive writes).
pub(crate) fn op_regions(op: &Op) -> Vec<(Region, bool)> {
    match *op {
        Op::Send { region, .. } => vec![(region, false)],
        Op::Recv { region, .. } => vec![(region, true)],
        Op::Copy { src, dst } | Op::Combine { src, dst } => vec![(src, false), (dst, true)],
        Op::Compute { .. } => Vec::new(),
    }
}

/// Two different buffers of a rank, one to read and one to write.
fn split<T: Elem>(b: &mut RankBuffers<T>, src: Buf, dst: Buf) -> (&[T], &mut [T]) {
    let RankBuffers {
        input,
        output,
        scratch,
    } = b;
    match (src, dst) {
        (Buf::Input, Buf::Output) => (input, output),
        (Buf::Input, Buf::Scratch) => (input, scratch),
        (Buf::Output, Buf::Input) => (output, input),
        (Buf::Output, Buf::Scratch) => (output, scratch),
        (Buf::Scratch, Buf::Input) => (scratch, input),
        (Buf::Scratch, Buf::Output) => (scratch, output),
        _ => unreachable!("split needs two different buffers"),
    }
}

/// Runs a local operation (copy, combine, compute) on one rank's buffers.
pub(crate) fn run_local<T: Elem>(s: &Schedule, b: &mut RankBuffers<T>, op: &Op) {
    match *op {
        Op::Copy { src, dst } => move_within(s.op, b, src, dst, false),
        Op::Combine { src, dst } => move_within(s.op, b, src, dst, true),
        _ => {}
    }
}

/// `dst = src` or `dst = dst ∘ src` within one rank's buffers. Overlapping
/// regions (only an unverified schedule has them) go through a copy of the
/// source.
fn move_within<T: Elem>(
    op: ReduceOp,
    b: &mut RankBuffers<T>,
    src: Region,
    dst: Region,
    combine: bool,
) {
    let (lo, hi) = (src.offset as usize, src.end() as usize);
    let (dlo, dhi) = (dst.offset as usize, dst.end() as usize);
    if src.buf != dst.buf {
        let (a, d) = split(b, src.buf, dst.buf);
        if combine {
            T::reduce_into(op, &mut d[dlo..dhi], &a[lo..hi]);
        } else {
            d[dlo..dhi].copy_from_slice(&a[lo..hi]);
        }
        return;
    }
    let v = b.get_mut(src.buf);
    if !combine {
        v.copy_within(lo..hi, dlo);
    } else if hi <= dlo || dhi <= lo {
        let (x, y) = if lo < dlo {
            let (l, h) = v.split_at_mut(dlo);
            (&l[lo..hi], &mut h[..dhi - dlo])
        } else {
            let (l, h) = v.split_at_mut(lo);
            (&h[..hi - lo], &mut l[dlo..dhi])
        };
        T::reduce_into(op, y, x);
    } else {
        let tmp: Vec<T> = v[lo..hi].to_vec();
        T::reduce_into(op, &mut v[dlo..dhi], &tmp);
    }
}

/// Executes a schedule one operation at a time in one thread, receives
/// matched eagerly: the obvious executor, the reference the backends must
/// match bit for bit. Errors on a deadlock or a mismatched message.
pub fn run_sequential<T: Elem>(s: &Schedule, bufs: &mut [RankBuffers<T>]) -> Result<()> {
    let plan = Plan::new(s)?;
    let p = s.ranks;
    let mut st: Vec<RankState> = (0..p).map(|r| plan.rank_state(r, usize::MAX)).collect();
    type Queue<T> = VecDeque<(OpId, Vec<T>)>;
    let mut msgs: FxHashMap<(u32, u32, u32), Queue<T>> = FxHashMap::default();
    let mut posted: FxHashMap<(u32, u32, u32), VecDeque<OpId>> = FxHashMap::default();
    let deliver = |bufs: &mut [RankBuffers<T>],
                   dst: usize,
                   rop: OpId,
                   src: usize,
                   sop: OpId,
                   data: &[T]|
     -> Result<()> {
        let op = &s.programs[dst].ops[rop as usize];
        let Op::Recv {
            region, combine, ..
        } = *op
        else {
            unreachable!()
        };
        if region.count as usize != data.len() {
            return Err(mismatch(s, src, sop, dst, rop));
        }
        let d = bufs[dst].region_mut(region);
        if combine {
            T::reduce_into(s.op, d, data);
        } else {
            d.copy_from_slice(data);
        }
        Ok(())
    };
    loop {
        let mut progressed = false;
        for r in 0..p {
            while let Some(i) = st[r].pop_local() {
                run_local(s, &mut bufs[r], &s.programs[r].ops[i as usize]);
                plan.complete(r, &mut st[r], i);
                progressed = true;
            }
            while let Some(i) = st[r].start_send() {
                let Op::Send {
                    peer, tag, region, ..
                } = s.programs[r].ops[i as usize]
                else {
                    unreachable!()
                };
                let data = bufs[r].region(region).to_vec();
                let key = (r as u32, peer, tag);
                if let Some(j) = posted.get_mut(&key).and_then(|q| q.pop_front()) {
                    deliver(bufs, peer as usize, j, r, i, &data)?;
                    plan.complete(peer as usize, &mut st[peer as usize], j);
                } else {
                    msgs.entry(key).or_default().push_back((i, data));
                }
                st[r].send_finished();
                plan.complete(r, &mut st[r], i);
                progressed = true;
            }
            while let Some(i) = st[r].pop_recv() {
                let Op::Recv { peer, tag, .. } = s.programs[r].ops[i as usize] else {
                    unreachable!()
                };
                let key = (peer, r as u32, tag);
                if let Some((sop, data)) = msgs.get_mut(&key).and_then(|q| q.pop_front()) {
                    deliver(bufs, r, i, peer as usize, sop, &data)?;
                    plan.complete(r, &mut st[r], i);
                } else {
                    posted.entry(key).or_default().push_back(i);
                }
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    if let Some(r) = (0..p).find(|&r| !st[r].finished()) {
        let waiting: Vec<String> = posted
            .iter()
            .filter(|(k, q)| k.1 as usize == r && !q.is_empty())
            .map(|(k, q)| format!("op {} waits for rank {} tag {}", q[0], k.0, k.2))
            .take(3)
            .collect();
        return Err(Error::Runtime(format!(
            "deadlock: rank {r} can never finish ({} of {} operations done; {})",
            st[r].done,
            st[r].total(),
            if waiting.is_empty() {
                "no receive waiting".into()
            } else {
                waiting.join(", ")
            }
        )));
    }
    if let Some(((src, dst, tag), q)) = msgs.iter().find(|(_, q)| !q.is_empty()) {
        return Err(Error::Runtime(format!(
            "rank {src} op {} sends to rank {dst} tag {tag}, which never receives it",
            q[0].0
        )));
    }
    Ok(())
}

/// The error for a send and a receive whose sizes differ.
pub(crate) fn mismatch(s: &Schedule, src: usize, sop: OpId, dst: usize, rop: OpId) -> Error {
    Error::Runtime(format!(
        "mismatched message: rank {dst} op {rop} ({}) does not fit rank {src} op {sop} ({})",
        s.programs[dst].ops[rop as usize].describe(),
        s.programs[src].ops[sop as usize].describe()
    ))
}

/// What [`check`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Output elements compared.
    pub elements: u64,
    /// Largest relative difference from the order-free float reference.
    pub max_rel_error: f64,
    /// For allreduce: every rank's output has the same bits.
    pub ranks_identical: bool,
}

/// Compares `got` (every rank's buffers after one run from
/// [`initial_buffers`]) with the sequential executor's and with the
/// collective's definition.
pub fn check<T: Elem>(s: &Schedule, got: &[RankBuffers<T>]) -> Result<CheckReport> {
    let p = s.ranks;
    let mut seq: Vec<RankBuffers<T>> = (0..p).map(|r| initial_buffers(s, r)).collect();
    run_sequential(s, &mut seq)?;
    let mut rep = CheckReport {
        ranks_identical: true,
        ..Default::default()
    };
    let mut cache = FxHashMap::default();
    for (r, g) in got.iter().enumerate() {
        check_one(s, r, g, &seq[r], &mut rep, &mut cache)?;
    }
    if s.collective == Collective::Allreduce {
        rep.ranks_identical = got.iter().all(|g| output_hash(g) == output_hash(&got[0]));
    }
    Ok(rep)
}

/// [`check`] for one rank's buffers only (the MPI backend, where each
/// process holds one rank); `ranks_identical` is left to the caller.
pub fn check_rank<T: Elem>(s: &Schedule, rank: usize, got: &RankBuffers<T>) -> Result<CheckReport> {
    let mut seq: Vec<RankBuffers<T>> = (0..s.ranks).map(|r| initial_buffers(s, r)).collect();
    run_sequential(s, &mut seq)?;
    let mut rep = CheckReport {
        ranks_identical: true,
        ..Default::default()
    };
    check_one(
        s,
        rank,
        got,
        &seq[rank],
        &mut rep,
        &mut FxHashMap::default(),
    )?;
    Ok(rep)
}

/// A hash of the output buffer's bits (to compare ranks cheaply).
pub fn output_hash<T: Elem>(b: &RankBuffers<T>) -> u64 {
    b.output
        .iter()
        .fold(0x1234_5678u64, |h, x| kernels::mix(h as usize, x.bits()))
}

/// Rank-order references of reductions, by (terms, count): an allreduce's
/// is computed once, not once per rank.
type RefCache<T> = FxHashMap<(Vec<topocoll_core::schedule::Term>, u64), Vec<(T, f64)>>;

/// The obvious reference of element i of a run: fold the terms in rank
/// order; also the sum of their magnitudes (for the float error bound).
fn fold_terms<T: Elem>(s: &Schedule, terms: &[topocoll_core::schedule::Term], i: u64) -> (T, f64) {
    let mut it = terms
        .iter()
        .map(|t| T::pattern(t.rank as usize, t.offset + i, s.op));
    let first = it.next().expect("a term");
    it.fold((first, first.to_f64().abs()), |(acc, a), x| {
        (T::apply(s.op, acc, x), a + x.to_f64().abs())
    })
}

fn check_one<T: Elem>(
    s: &Schedule,
    r: usize,
    g: &RankBuffers<T>,
    seq: &RankBuffers<T>,
    rep: &mut CheckReport,
    cache: &mut RefCache<T>,
) -> Result<()> {
    use topocoll_core::schedule::{Dtype, ReduceOp};
    let float = T::DTYPE.is_float();
    let order_free = !matches!(s.op, ReduceOp::Sum | ReduceOp::Prod);
    for e in s.collective.expected(s.ranks, s.count, r) {
        let refs = (e.terms.len() > 1).then(|| {
            cache
                .entry((e.terms.clone(), e.count))
                .or_insert_with(|| {
                    (0..e.count)
                        .map(|i| fold_terms::<T>(s, &e.terms, i))
                        .collect()
                })
                .clone()
        });
        for i in 0..e.count {
            let at = (e.offset + i) as usize;
            let v = g.output[at];
            let w = seq.output[at];
            if v.bits() != w.bits() {
                return Err(Error::Runtime(format!(
                    "check: rank {r} output element {at} is {v:?}, but executing the schedule in order gives {w:?}"
                )));
            }
            let (want, abs) = match &refs {
                Some(v) => v[i as usize],
                None => fold_terms::<T>(s, &e.terms, i),
            };
            if e.terms.len() == 1 || !float || order_free {
                if v.bits() != want.bits() {
                    return Err(Error::Runtime(format!(
                        "check: rank {r} output element {at} is {v:?}, expected {want:?}"
                    )));
                }
            } else {
                // |error| <= (n-1)·u·Σ|x| for a sum in any order, and
                // (n-1)·u·|result| (to first order) for a product; doubled.
                let n = e.terms.len() as f64;
                let u = if T::DTYPE == Dtype::F32 {
                    f32::EPSILON as f64 / 2.0
                } else {
                    f64::EPSILON / 2.0
                };
                let scale = if s.op == ReduceOp::Sum {
                    abs
                } else {
                    want.to_f64().abs()
                };
                let bound = 2.0 * n * u * scale;
                let diff = (v.to_f64() - want.to_f64()).abs();
                if diff.is_nan() || diff > bound {
                    return Err(Error::Runtime(format!(
                        "check: rank {r} output element {at} is {v:?}, expected {want:?} within {bound:e}"
                    )));
                }
                if scale > 0.0 {
                    rep.max_rel_error = rep.max_rel_error.max(diff / scale);
                }
            }
            rep.elements += 1;
        }
    }
    Ok(())
}

/// Bytes a collective "moves" for bandwidth figures, as the OSU and NCCL
/// tests count them: the buffer for allreduce, reduce, bcast and
/// reduce_scatter; P blocks for alltoall, allgather, scatter and gather.
pub fn data_bytes(s: &Schedule) -> u64 {
    let whole = s.count * s.elem_bytes();
    if s.collective.size_is_block() {
        whole * s.ranks as u64
    } else {
        whole
    }
}

/// Bus bandwidth factor (NCCL tests): algorithm bandwidth times this is the
/// rate each rank's link must sustain, comparable across P.
pub fn bus_factor(c: Collective, p: usize) -> f64 {
    let p = p as f64;
    match c {
        Collective::Allreduce => 2.0 * (p - 1.0) / p,
        Collective::Bcast { .. } | Collective::Reduce { .. } => 1.0,
        _ => (p - 1.0) / p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use topocoll_core::algorithms::{build, Request};
    use topocoll_core::schedule::{Dtype, ReduceOp};

    #[test]
    fn sequential_ring_allreduce_checks() {
        let req = Request::new(
            Collective::Allreduce,
            5,
            8 * 13,
            Dtype::F64,
            ReduceOp::Sum,
            None,
        )
        .unwrap();
        let s = build("ring", &req).unwrap();
        let mut b: Vec<RankBuffers<f64>> = (0..5).map(|r| initial_buffers(&s, r)).collect();
        run_sequential(&s, &mut b).unwrap();
        let rep = check(&s, &b).unwrap();
        assert_eq!(rep.elements, 5 * 13);
        assert!(rep.ranks_identical);
    }

    #[test]
    fn claims_detect_overlap() {
        let mut c = Claims::default();
        c.claim(1, &[(Region::output(0, 10), false)]).unwrap();
        c.claim(2, &[(Region::output(5, 10), false)]).unwrap();
        assert_eq!(c.claim(3, &[(Region::output(9, 1), true)]), Err(1));
        c.claim(3, &[(Region::input(9, 1), true)]).unwrap();
        c.release(1);
        assert_eq!(c.claim(4, &[(Region::output(0, 5), true)]), Ok(()));
        assert_eq!(
            c.claim(
                5,
                &[
                    (Region::scratch(0, 5), true),
                    (Region::scratch(4, 1), false)
                ]
            ),
            Err(5)
        );
    }
}
