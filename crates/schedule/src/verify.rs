//! The verifier: runs a schedule symbolically and proves it implements its
//! collective.
//!
//! Every element of every rank's initial data is a token; a buffer's content is
//! kept as runs of elements whose tokens advance together (an interval map), so
//! a 1,024-rank all-to-all of 1 KiB blocks needs a few million runs, not a
//! billion tokens. Reductions are multisets of tokens, kept as spans of
//! consecutive ranks ([`Span`]), so a partial sum over a run of ranks is one
//! span, not a token per rank. The checks, in order:
//!
//! 1. structure: peers are ranks, regions lie inside their buffers, copies and
//!    combines have equal sides, dependencies point to earlier operations;
//! 2. races: two operations of one rank that touch overlapping elements, at
//!    least one writing, must be ordered by dependencies (otherwise the result,
//!    or a reduction's order, would depend on timing); operations sharing a
//!    (peer, tag) key must be ordered too, so matching is the same everywhere;
//! 3. execution: sends deliver their region's content at the time they run;
//!    every receive must be matched, with the same element count; no
//!    operation may read data that was never written; nothing may be left
//!    blocked (deadlock) or sent and never received;
//! 4. outputs: every constrained output element holds exactly the expected
//!    contributions, each exactly once;
//! 5. for a scan or exscan, the order: every combine must join the
//!    reductions of two runs of consecutive ranks that meet (one ends where
//!    the other starts), so each result is `in_lo ∘ … ∘ in_hi` under one
//!    bracketing fixed by the schedule, never an out-of-order mix;
//! 6. for a barrier, which moves no data, its meaning (`sync`): every rank's
//!    exits wait, through dependencies and messages, on every rank.

use super::{
    dependency_counts, reference_fault, Buf, Collective, Expect, Op, OpId, Program, Region,
    Schedule, Successors, Term,
};
use crate::error::{Error, Result, VerifyError, VerifyKind};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::collections::{BTreeMap, VecDeque};

/// What the verifier looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyReport {
    pub ops: usize,
    pub transfers: usize,
    pub bytes_moved: u64,
}

/// Element `offset` of each of ranks `rank..rank + ranks`: that many terms
/// as one. Why: a reduction over P ranks holds P terms an element, and the
/// ranks a partial sum covers are, for the algorithms here, one or two runs
/// of consecutive ranks (a ring's arc, a recursive halving's block, a Swing
/// step's interval). As spans, a 1,528-rank ring or Swing allreduce makes
/// O(P²) of them; as terms, O(P³), past any memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Span {
    offset: u64,
    rank: u32,
    ranks: u32,
}

/// A multiset of terms as spans in canonical order: sorted by (offset,
/// rank), and each span joined to the next where that one starts at the
/// same offset on the rank after it. A set (no term twice) has one such
/// form, so equal sets compare equal; a multiset with a repeated term may
/// have two, which [`same_terms`] settles term by term.
type Terms = SmallVec<[Span; 1]>;

/// `spans` in canonical order (see [`Terms`]).
fn canonical(mut spans: Terms) -> Terms {
    spans.sort_unstable();
    let mut out: Terms = SmallVec::with_capacity(spans.len());
    for sp in spans {
        match out.last_mut() {
            Some(last) if last.offset == sp.offset && last.rank + last.ranks == sp.rank => {
                last.ranks += sp.ranks;
            }
            _ => out.push(sp),
        }
    }
    out
}

/// The terms `spans` stand for, sorted by (rank, offset) as the messages
/// name them.
fn expand(spans: &[Span]) -> Vec<Term> {
    let mut terms: Vec<Term> = spans
        .iter()
        .flat_map(|sp| {
            (sp.rank..sp.rank + sp.ranks).map(move |rank| Term {
                rank,
                offset: sp.offset,
            })
        })
        .collect();
    terms.sort_unstable();
    terms
}

/// Whether two canonical span lists stand for the same multiset of terms.
fn same_terms(a: &[Span], b: &[Span]) -> bool {
    a == b || expand(a) == expand(b)
}

/// A run of elements starting at some position: element i holds the sum of
/// `terms`, each advanced by i.
#[derive(Clone, Debug)]
struct Run {
    len: u64,
    terms: Terms,
}

fn shifted(terms: &Terms, by: u64) -> Terms {
    terms
        .iter()
        .map(|t| Span {
            offset: t.offset + by,
            ..*t
        })
        .collect()
}

/// A piece of data in flight: `len` elements starting `rel` into a region.
#[derive(Clone, Debug)]
struct Piece {
    rel: u64,
    len: u64,
    terms: Terms,
}

/// One buffer's content: runs keyed by their first element; gaps are undefined.
#[derive(Default, Debug)]
struct Content {
    runs: BTreeMap<u64, Run>,
}

impl Content {
    /// Splits the run covering `pos` (if any starts before it) so a run starts at `pos`.
    fn split_at(&mut self, pos: u64) {
        let Some((&start, run)) = self.runs.range_mut(..pos).next_back() else {
            return;
        };
        if start + run.len <= pos {
            return;
        }
        let cut = pos - start;
        let tail = Run {
            len: run.len - cut,
            terms: shifted(&run.terms, cut),
        };
        run.len = cut;
        self.runs.insert(pos, tail);
    }

    /// The content of `[off, off+count)`, or the first undefined element;
    /// adds the terms it copies to `made`.
    fn read(&self, off: u64, count: u64, made: &mut u64) -> std::result::Result<Vec<Piece>, u64> {
        let end = off + count;
        let mut pieces = Vec::new();
        let mut pos = off;
        if let Some((&start, run)) = self.runs.range(..=off).next_back() {
            if start + run.len > off {
                let take = (start + run.len).min(end) - off;
                pieces.push(Piece {
                    rel: 0,
                    len: take,
                    terms: shifted(&run.terms, off - start),
                });
                pos = off + take;
            }
        }
        for (&start, run) in self.runs.range(pos..end) {
            if start != pos {
                return Err(pos);
            }
            let take = (start + run.len).min(end) - start;
            pieces.push(Piece {
                rel: start - off,
                len: take,
                terms: run.terms.clone(),
            });
            pos = start + take;
        }
        if pos < end {
            return Err(pos);
        }
        *made += pieces.iter().map(|p| p.terms.len() as u64).sum::<u64>();
        Ok(pieces)
    }

    /// Replaces `[off, off+count)` with `pieces`.
    fn write(&mut self, off: u64, count: u64, pieces: Vec<Piece>) {
        self.split_at(off);
        self.split_at(off + count);
        let keys: Vec<u64> = self.runs.range(off..off + count).map(|(&k, _)| k).collect();
        for k in keys {
            self.runs.remove(&k);
        }
        for p in pieces {
            if p.len > 0 {
                self.runs.insert(
                    off + p.rel,
                    Run {
                        len: p.len,
                        terms: p.terms,
                    },
                );
            }
        }
        self.coalesce(off, off + count);
    }

    /// Joins each run in `[lo, hi]`, and the one ending at `lo`, to the run
    /// before it where it continues that run: it starts where the other
    /// ends and its terms are the other's advanced by the other's length.
    /// Why: a reduction's blocks arrive one by one, each with a term per
    /// rank; joined, a 1,528-rank allreduce's output is one run of 1,528
    /// terms a rank, not 1,528 runs of them, and reading it makes P terms,
    /// not P². What each element holds does not change.
    fn coalesce(&mut self, lo: u64, hi: u64) {
        let first = self.runs.range(..lo).next_back().map_or(lo, |(&k, _)| k);
        let keys: Vec<u64> = self.runs.range(first..=hi).map(|(&k, _)| k).collect();
        let mut prev = None::<u64>;
        for k in keys {
            if let Some(p) = prev {
                let (len, continues) = {
                    let (a, b) = (&self.runs[&p], &self.runs[&k]);
                    let continues = p + a.len == k
                        && a.terms.len() == b.terms.len()
                        && a.terms.iter().zip(&b.terms).all(|(x, y)| {
                            x.rank == y.rank && x.ranks == y.ranks && x.offset + a.len == y.offset
                        });
                    (a.len, continues)
                };
                if continues {
                    let b = self.runs.remove(&k).expect("a key of the range");
                    self.runs.get_mut(&p).expect("a key of the range").len = len + b.len;
                    continue;
                }
            }
            prev = Some(k);
        }
    }

    /// `dst = dst ∘ pieces` over `[off, off+count)`; errors with the first
    /// undefined destination element. Adds the terms it makes to `made`.
    fn combine(
        &mut self,
        off: u64,
        pieces: Vec<Piece>,
        made: &mut u64,
    ) -> std::result::Result<(), u64> {
        for p in pieces {
            if p.len == 0 {
                continue;
            }
            let (lo, hi) = (off + p.rel, off + p.rel + p.len);
            self.split_at(lo);
            self.split_at(hi);
            let mut pos = lo;
            for (&start, run) in self.runs.range_mut(lo..hi) {
                if start != pos {
                    return Err(pos);
                }
                let add = shifted(&p.terms, start - lo);
                let merged = canonical(run.terms.iter().chain(add.iter()).copied().collect());
                *made += merged.len() as u64;
                run.terms = merged;
                pos = start + run.len;
            }
            if pos < hi {
                return Err(pos);
            }
            self.coalesce(lo, hi);
        }
        Ok(())
    }
}

/// A failure of check `kind` naming no single rank.
fn verr(kind: VerifyKind, msg: String) -> Error {
    Error::Verify(VerifyError::new(kind, msg))
}

/// A failure of check `kind` at `rank`'s op `op` (`None`: the rank's).
fn verr_at(kind: VerifyKind, rank: usize, op: Option<usize>, msg: String) -> Error {
    Error::Verify(VerifyError::at(kind, rank, op, msg))
}

fn describe_terms(terms: &[Term], at: u64, limit: usize) -> String {
    if terms.is_empty() {
        return "nothing".into();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < terms.len() && parts.len() < limit {
        let t = terms[i];
        let mut n = 1;
        while i + n < terms.len() && terms[i + n] == t {
            n += 1;
        }
        let times = if n > 1 {
            format!(" ({n} times)")
        } else {
            String::new()
        };
        parts.push(format!(
            "rank {} element {}{}",
            t.rank,
            t.offset + at,
            times
        ));
        i += n;
    }
    if i < terms.len() {
        parts.push(format!("… {} more", terms.len() - i));
    }
    parts.join(" + ")
}

/// Proves `s` implements its collective, or says precisely why not.
/// A schedule whose verification would not fit in the memory available is
/// refused before it starts (`term_budget`).
pub fn verify(s: &Schedule) -> Result<VerifyReport> {
    verify_within(s, topocoll_base::memory::available())
}

/// `verify` with `free` bytes of memory available (`None`: not known).
fn verify_within(s: &Schedule, free: Option<u64>) -> Result<VerifyReport> {
    check_structure(s)?;
    let max_terms = term_budget(s, free)?;
    for (rank, prog) in s.programs.iter().enumerate() {
        check_races(rank, prog)?;
    }
    let bytes_moved = execute_and_check(s, max_terms)?;
    if s.collective.is_sync() {
        super::sync::check_barrier(s)?;
    }
    Ok(VerifyReport {
        ops: s.num_ops(),
        transfers: s.num_transfers(),
        bytes_moved,
    })
}

fn check_structure(s: &Schedule) -> Result<()> {
    s.collective
        .check(s.ranks)
        .map_err(|e| verr(VerifyKind::Structure, e.to_string()))?;
    if s.programs.len() != s.ranks {
        return Err(verr(
            VerifyKind::Structure,
            format!("{} programs for {} ranks", s.programs.len(), s.ranks),
        ));
    }
    for (rank, prog) in s.programs.iter().enumerate() {
        let in_bounds = |i: usize, r: &Region| -> Result<()> {
            let len = s.buffer_len(rank, r.buf);
            if r.offset.checked_add(r.count).is_none_or(|end| end > len) {
                return Err(verr_at(
                    VerifyKind::Structure,
                    rank,
                    Some(i),
                    format!(
                    "rank {rank} op {i} ({}): region ends past the {:?} buffer's {len} elements",
                    prog.ops[i].describe(),
                    r.buf
                ),
                ));
            }
            Ok(())
        };
        for (i, op) in prog.ops.iter().enumerate() {
            if let Some(fault) = reference_fault(
                op,
                i,
                prog.deps(i),
                s.ranks,
                (s.offsets.len(), s.paths.len()),
            ) {
                return Err(verr_at(
                    VerifyKind::Structure,
                    rank,
                    Some(i),
                    format!("rank {rank} op {i} ({}): {fault}", op.describe()),
                ));
            }
            match op {
                Op::Send { region, .. } | Op::Recv { region, .. } => {
                    in_bounds(i, region)?;
                }
                Op::Copy { src, dst } | Op::Combine { src, dst } => {
                    in_bounds(i, src)?;
                    in_bounds(i, dst)?;
                    if src.count != dst.count {
                        return Err(verr_at(
                            VerifyKind::Structure,
                            rank,
                            Some(i),
                            format!(
                                "rank {rank} op {i} ({}): source and destination sizes differ",
                                op.describe()
                            ),
                        ));
                    }
                }
                Op::Compute { seconds } => {
                    if !(seconds.is_finite() && *seconds >= 0.0) {
                        return Err(verr_at(
                            VerifyKind::Structure,
                            rank,
                            Some(i),
                            format!("rank {rank} op {i}: compute time {seconds} is not a duration"),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Programs of at most this many ops keep every op's ancestors as a
/// bitset (8 MiB at most), built on the first query that needs it.
const ANCESTOR_BITS_OPS: usize = 8192;

/// Whether op `a` is an ancestor of op `b` (a < b) through dependencies.
/// Why two ways: a walk back from `b` costs the ops between, and a ring's
/// program is one chain of 4P ops whose every block is touched again P
/// steps later, so walks cost O(P²) a rank; a program small enough keeps
/// every op's ancestors as bits instead (O(ops²/64) once, then O(1) a
/// query), a larger one walks.
struct Ancestry<'a> {
    prog: &'a Program,
    stamp: Vec<u32>,
    generation: u32,
    stack: Vec<OpId>,
    /// Row i: the ancestors of op i, `words` words of bits.
    bits: Vec<u64>,
    words: usize,
}

impl<'a> Ancestry<'a> {
    fn new(prog: &'a Program) -> Self {
        Ancestry {
            prog,
            stamp: Vec::new(),
            generation: 0,
            stack: Vec::new(),
            bits: Vec::new(),
            words: 0,
        }
    }

    /// Every op's ancestors, each row the union of its dependencies' rows
    /// and the dependencies themselves (dependencies point back).
    fn build_bits(&mut self) {
        let n = self.prog.len();
        let w = n.div_ceil(64);
        let mut bits = vec![0u64; n * w];
        for i in 0..n {
            let (done, row) = bits.split_at_mut(i * w);
            let row = &mut row[..w];
            for &d in self.prog.deps(i) {
                let d = d as usize;
                for (x, y) in row.iter_mut().zip(&done[d * w..(d + 1) * w]) {
                    *x |= y;
                }
                row[d / 64] |= 1 << (d % 64);
            }
        }
        self.bits = bits;
        self.words = w;
    }

    fn ordered(&mut self, x: OpId, y: OpId) -> bool {
        let (a, b) = if x < y { (x, y) } else { (y, x) };
        if self.prog.deps(b as usize).contains(&a) {
            return true;
        }
        if self.prog.len() <= ANCESTOR_BITS_OPS {
            if self.words == 0 {
                self.build_bits();
            }
            let (a, b) = (a as usize, b as usize);
            return self.bits[b * self.words + a / 64] >> (a % 64) & 1 == 1;
        }
        if self.stamp.is_empty() {
            self.stamp = vec![0; self.prog.len()];
        }
        self.generation += 1;
        self.stack.clear();
        self.stack.push(b);
        while let Some(n) = self.stack.pop() {
            for &d in self.prog.deps(n as usize) {
                if d == a {
                    return true;
                }
                if d > a && self.stamp[d as usize] != self.generation {
                    self.stamp[d as usize] = self.generation;
                    self.stack.push(d);
                }
            }
        }
        false
    }
}

fn check_races(rank: usize, prog: &Program) -> Result<()> {
    // (buf, start, end, op, writes)
    let mut acc: Vec<(Buf, u64, u64, OpId, bool)> = Vec::new();
    let mut keyed: FxHashMap<(bool, u32, u32), OpId> = FxHashMap::default();
    let mut ancestry = Ancestry::new(prog);
    for (i, op) in prog.ops.iter().enumerate() {
        let i = i as OpId;
        let mut touch = |r: &Region, w: bool| {
            if r.count > 0 {
                acc.push((r.buf, r.offset, r.end(), i, w));
            }
        };
        match op {
            Op::Send { region, .. } => touch(region, false),
            Op::Recv { region, .. } => touch(region, true),
            Op::Copy { src, dst } | Op::Combine { src, dst } => {
                touch(src, false);
                touch(dst, true);
            }
            Op::Compute { .. } => {}
        }
        if let Op::Send { peer, tag, .. } | Op::Recv { peer, tag, .. } = op {
            let key = (matches!(op, Op::Send { .. }), *peer, *tag);
            if let Some(prev) = keyed.insert(key, i) {
                if !ancestry.ordered(prev, i) {
                    return Err(verr_at(VerifyKind::Race, rank, Some(i as usize), format!(
                        "rank {rank}: op {prev} ({}) and op {i} ({}) share peer and tag but are not ordered by dependencies, so which message each matches would depend on timing",
                        prog.ops[prev as usize].describe(),
                        op.describe()
                    )));
                }
            }
        }
    }
    acc.sort_unstable_by_key(|a| (a.0, a.1, a.3));
    let mut active: Vec<(Buf, u64, u64, OpId, bool)> = Vec::new();
    for a in acc {
        active.retain(|b| b.0 == a.0 && b.2 > a.1);
        for b in &active {
            if (a.4 || b.4) && a.3 != b.3 && !ancestry.ordered(a.3, b.3) {
                let (first, second) = if a.3 < b.3 { (a, *b) } else { (*b, a) };
                let lo = first.1.max(second.1);
                return Err(verr_at(VerifyKind::Race, rank, Some(second.3 as usize), format!(
                    "rank {rank}: race on {} element {lo}: op {} ({}) and op {} ({}) both touch it, one writes, and neither waits for the other",
                    format!("{:?}", a.0).to_lowercase(),
                    first.3,
                    prog.ops[first.3 as usize].describe(),
                    second.3,
                    prog.ops[second.3 as usize].describe()
                )));
            }
        }
        active.push(a);
    }
    Ok(())
}

struct Message {
    from_op: OpId,
    count: u64,
    pieces: Vec<Piece>,
}

/// Symbolic terms (spans of ranks, [`Span`]) the verifier may copy or make
/// before it gives up: a reduction whose partial sums scatter over the
/// ranks holds up to P spans per element piece on every rank, and checking
/// one on thousands of ranks would need tens of gigabytes. About 10 GB at
/// worst (`TERM_BYTES`); fewer where less memory is available
/// (`term_budget`).
pub const MAX_TERMS: u64 = 1 << 28;

/// What verifying takes beyond the schedule itself, a rank and an op:
/// `verify`'s peak RSS less that of `schedule` on the same input was 0.8
/// and 1.2 KB a rank for the binomial bcast and reduce on 2^18 ranks
/// (buffers, message queues), 172 and 176 B an op for the pairwise and
/// A2AT all-to-alls of 8.4 M and 33.6 M ops (successors, counts, data in
/// flight).
const RANK_BYTES: u64 = 1536;
const OP_BYTES: u64 = 224;
/// What a symbolic term takes, with its share of the run and the map that
/// hold it: the 64 KiB Trinaryx3 allreduce on 48×6×32, a term per rank,
/// made 255 M terms in 9.5 GB (37 bytes a term; the ring allreduce on 4,096
/// ranks, 21); a span is the size of a term.
const TERM_BYTES: u64 = 40;

/// The symbolic terms verifying `s` may make with `free` bytes of memory
/// available: `MAX_TERMS`, or fewer where the memory left after the ranks'
/// and ops' share would not hold them; an error where even that share does
/// not fit (a tree on 2^24 ranks needs about 33 GB).
fn term_budget(s: &Schedule, free: Option<u64>) -> Result<u64> {
    let Some(free) = free else {
        return Ok(MAX_TERMS);
    };
    let need = (s.ranks as u64)
        .saturating_mul(RANK_BYTES)
        .saturating_add((s.num_ops() as u64).saturating_mul(OP_BYTES));
    if need > free {
        return Err(too_large(
            &format!("{} ops on {} ranks need about", s.num_ops(), s.ranks),
            need,
            free,
        ));
    }
    Ok(MAX_TERMS.min((free - need) / TERM_BYTES))
}

/// Refuses to verify a schedule on `ranks` ranks before it is built, where
/// the ranks' share alone (`RANK_BYTES` each) would not fit in the memory
/// available: building a tree on 2^24 ranks took 20.8 s, only for
/// `term_budget` to refuse it.
pub fn check_ranks_fit(ranks: usize) -> Result<()> {
    ranks_fit(ranks, topocoll_base::memory::available())
}

fn ranks_fit(ranks: usize, free: Option<u64>) -> Result<()> {
    let need = (ranks as u64).saturating_mul(RANK_BYTES);
    match free {
        Some(free) if need > free => Err(too_large(
            &format!("a schedule on {ranks} ranks needs at least"),
            need,
            free,
        )),
        _ => Ok(()),
    }
}

fn too_large(what: &str, need: u64, free: u64) -> Error {
    Error::too_large(format!(
        "too large to verify: {what} {:.1} GiB to verify but only {:.1} GiB of memory is available; verify a smaller shape or size, or skip the verifier (simulate --no-verify)",
        topocoll_base::memory::gib(need),
        topocoll_base::memory::gib(free)
    ))
}

/// Runs the schedule symbolically and checks the outputs, giving up past
/// `max_terms` symbolic terms.
///
/// Whole on purpose: one event loop whose arms (send, receive, copy,
/// combine) share the buffers, the ready list, the message queues and the
/// term count through the `complete!` macro and `deliver`; split, each
/// piece would take all of them as arguments.
fn execute_and_check(s: &Schedule, max_terms: u64) -> Result<u64> {
    let mut bufs = initial_contents(s);
    let succ: Vec<Successors> = s.programs.iter().map(Successors::new).collect();
    let mut remaining: Vec<Vec<u32>> = s.programs.iter().map(dependency_counts).collect();
    let mut ready = initially_ready(&remaining);

    let mut messages: FxHashMap<(u32, u32, u32), VecDeque<Message>> = FxHashMap::default();
    let mut waiting: FxHashMap<(u32, u32, u32), VecDeque<OpId>> = FxHashMap::default();
    let mut done: usize = 0;
    let mut bytes_moved: u64 = 0;
    let mut made: u64 = 0;
    let too_big = |made: u64| {
        if made > max_terms {
            // A limit of the verifier, not a fault of the schedule: not a
            // verification failure (exit code 2, not 1).
            Err(Error::too_large(format!(
                "too large to verify: more than {max_terms} symbolic terms (each element of a reduction over {} ranks carries one per rank); verify a smaller shape or size, or skip the verifier (simulate --no-verify)",
                s.ranks
            )))
        } else {
            Ok(())
        }
    };
    let elem = s.elem_bytes();
    let prefix = s.collective.is_prefix();
    let undefined = |rank: usize, i: OpId, what: &str, buf: Buf, at: u64| {
        verr_at(
            VerifyKind::Undefined,
            rank,
            Some(i as usize),
            format!(
                "rank {rank} op {i} ({}) {what} {} element {at}, which holds no data yet",
                s.programs[rank].ops[i as usize].describe(),
                format!("{buf:?}").to_lowercase()
            ),
        )
    };

    // Completes op `i` of `rank` and releases its successors.
    macro_rules! complete {
        ($rank:expr, $i:expr) => {{
            let (rank, i) = ($rank as usize, $i as usize);
            done += 1;
            for &j in succ[rank].of(i) {
                remaining[rank][j as usize] -= 1;
                if remaining[rank][j as usize] == 0 {
                    ready.push((rank as u32, j));
                }
            }
        }};
    }

    // Delivers a message into a receive.
    let deliver = |bufs: &mut Vec<[Content; 3]>,
                   rank: usize,
                   i: OpId,
                   src: u32,
                   msg: Message,
                   made: &mut u64|
     -> Result<()> {
        let Op::Recv {
            region,
            combine,
            tag,
            ..
        } = s.programs[rank].ops[i as usize]
        else {
            unreachable!()
        };
        if msg.count != region.count {
            return Err(verr_at(VerifyKind::Mismatch, rank, Some(i as usize), format!(
                "rank {rank} op {i} ({}) expects {} elements but rank {src} op {} sends {} with tag {tag}",
                s.programs[rank].ops[i as usize].describe(),
                region.count,
                msg.from_op,
                msg.count
            )));
        }
        let dst = &mut bufs[rank][region.buf as usize];
        if combine {
            dst.combine(region.offset, msg.pieces, made)
                .map_err(|at| undefined(rank, i, "combines into", region.buf, at))?;
            if prefix {
                in_rank_order(dst, region, rank, i, s)?;
            }
        } else {
            dst.write(region.offset, region.count, msg.pieces);
        }
        Ok(())
    };

    while let Some((rank, i)) = ready.pop() {
        too_big(made)?;
        let r = rank as usize;
        match s.programs[r].ops[i as usize] {
            Op::Send {
                peer, tag, region, ..
            } => {
                let pieces = bufs[r][region.buf as usize]
                    .read(region.offset, region.count, &mut made)
                    .map_err(|at| undefined(r, i, "sends", region.buf, at))?;
                bytes_moved += region.count * elem;
                let key = (rank, peer, tag);
                let msg = Message {
                    from_op: i,
                    count: region.count,
                    pieces,
                };
                if let Some(j) = waiting.get_mut(&key).and_then(|q| q.pop_front()) {
                    deliver(&mut bufs, peer as usize, j, rank, msg, &mut made)?;
                    complete!(peer, j);
                } else {
                    messages.entry(key).or_default().push_back(msg);
                }
                complete!(rank, i);
            }
            Op::Recv { peer, tag, .. } => {
                let key = (peer, rank, tag);
                if let Some(msg) = messages.get_mut(&key).and_then(|q| q.pop_front()) {
                    deliver(&mut bufs, r, i, peer, msg, &mut made)?;
                    complete!(rank, i);
                } else {
                    waiting.entry(key).or_default().push_back(i);
                }
            }
            Op::Copy { src, dst } => {
                let pieces = bufs[r][src.buf as usize]
                    .read(src.offset, src.count, &mut made)
                    .map_err(|at| undefined(r, i, "copies from", src.buf, at))?;
                bufs[r][dst.buf as usize].write(dst.offset, dst.count, pieces);
                complete!(rank, i);
            }
            Op::Combine { src, dst } => {
                let pieces = bufs[r][src.buf as usize]
                    .read(src.offset, src.count, &mut made)
                    .map_err(|at| undefined(r, i, "combines from", src.buf, at))?;
                bufs[r][dst.buf as usize]
                    .combine(dst.offset, pieces, &mut made)
                    .map_err(|at| undefined(r, i, "combines into", dst.buf, at))?;
                if prefix {
                    in_rank_order(&bufs[r][dst.buf as usize], dst, r, i, s)?;
                }
                complete!(rank, i);
            }
            Op::Compute { .. } => complete!(rank, i),
        }
    }

    all_ran(s, done, &waiting, &messages)?;

    for (rank, b) in bufs.iter().enumerate() {
        check_output(
            s.collective,
            rank,
            &b[Buf::Output as usize],
            &s.expected(rank),
        )?;
    }
    Ok(bytes_moved)
}

/// After a combine into `region` by op `i` of `rank` in a scan or exscan:
/// every element holds one term of each of a run of consecutive ranks (the
/// same element of each). Both operands were such runs (a rank's own data,
/// or an earlier combine's result), so the combine joined two runs that
/// meet: the result is the ordered reduction of its run under the bracketing
/// the schedule fixes.
fn in_rank_order(
    content: &Content,
    region: Region,
    rank: usize,
    i: OpId,
    s: &Schedule,
) -> Result<()> {
    let pieces = content
        .read(region.offset, region.count, &mut 0)
        .expect("a combine's destination holds data");
    for piece in pieces {
        // One span is a run of consecutive ranks at one element; two or more
        // are not (a canonical form joins the spans of a run).
        let t = &expand(&piece.terms);
        if piece.terms.len() > 1 {
            return Err(verr_at(VerifyKind::ScanOrder, rank, Some(i as usize), format!(
                "rank {rank} op {i} ({}): {} element {} holds {}, not a run of consecutive ranks, so a {} would combine them out of rank order",
                s.programs[rank].ops[i as usize].describe(),
                format!("{:?}", region.buf).to_lowercase(),
                region.offset + piece.rel,
                describe_terms(t, 0, 4),
                s.collective.name()
            )));
        }
    }
    Ok(())
}

/// Buffers at the start, [input, output, scratch] per rank: each rank's
/// own data, where the collective gives it some.
fn initial_contents(s: &Schedule) -> Vec<[Content; 3]> {
    let p = s.ranks;
    let mut bufs: Vec<[Content; 3]> = (0..p).map(|_| Default::default()).collect();
    for (rank, b) in bufs.iter_mut().enumerate() {
        if let Some((buf, len)) = s.initial(rank) {
            if len > 0 {
                b[buf as usize].runs.insert(
                    0,
                    Run {
                        len,
                        terms: SmallVec::from_elem(
                            Span {
                                offset: 0,
                                rank: rank as u32,
                                ranks: 1,
                            },
                            1,
                        ),
                    },
                );
            }
        }
    }
    bufs
}

/// The ops that wait for nothing, as a stack that pops each rank's in
/// program order.
fn initially_ready(remaining: &[Vec<u32>]) -> Vec<(u32, OpId)> {
    let mut ready: Vec<(u32, OpId)> = Vec::new();
    for (rank, rem) in remaining.iter().enumerate() {
        for (i, &r) in rem.iter().enumerate().rev() {
            if r == 0 {
                ready.push((rank as u32, i as OpId));
            }
        }
    }
    ready
}

/// After the run: every op ran (else a deadlock, naming the receives that
/// wait) and every message was received.
fn all_ran(
    s: &Schedule,
    done: usize,
    waiting: &FxHashMap<(u32, u32, u32), VecDeque<OpId>>,
    messages: &FxHashMap<(u32, u32, u32), VecDeque<Message>>,
) -> Result<()> {
    let total = s.num_ops();
    if done < total {
        let mut blocked: Vec<String> = Vec::new();
        let mut keys: Vec<_> = waiting.iter().filter(|(_, q)| !q.is_empty()).collect();
        keys.sort_by_key(|(k, _)| (k.1, k.0, k.2));
        for ((src, dst, tag), q) in keys.iter().take(4) {
            blocked.push(format!(
                "rank {dst} op {} waits for a message from rank {src} tag {tag} that never comes",
                q[0]
            ));
        }
        return Err(verr(
            VerifyKind::Deadlock,
            format!(
                "deadlock: {} of {total} operations can never run; {}",
                total - done,
                if blocked.is_empty() {
                    "no receive is waiting".to_string()
                } else {
                    blocked.join("; ")
                }
            ),
        ));
    }
    let mut left: Vec<_> = messages.iter().filter(|(_, q)| !q.is_empty()).collect();
    if !left.is_empty() {
        left.sort_by_key(|(k, _)| **k);
        let ((src, dst, tag), q) = left[0];
        return Err(verr_at(VerifyKind::Unreceived, *src as usize, Some(q[0].from_op as usize), format!(
            "rank {src} op {} sends to rank {dst} with tag {tag}, but rank {dst} never receives it ({} unreceived messages in all)",
            q[0].from_op,
            left.iter().map(|(_, q)| q.len()).sum::<usize>()
        )));
    }
    Ok(())
}

fn check_output(c: Collective, rank: usize, out: &Content, expected: &[Expect]) -> Result<()> {
    for e in expected {
        if e.count == 0 {
            continue;
        }
        let pieces = out.read(e.offset, e.count, &mut 0).map_err(|at| {
            verr_at(VerifyKind::Output, rank, None, format!(
                "rank {rank} output element {at}: expected {}, found no data ({} never delivered it)",
                describe_terms(&e.terms, at - e.offset, 4),
                c.name()
            ))
        })?;
        let expected = canonical(
            e.terms
                .iter()
                .map(|t| Span {
                    offset: t.offset,
                    rank: t.rank,
                    ranks: 1,
                })
                .collect(),
        );
        for piece in pieces {
            let want = shifted(&expected, piece.rel);
            if !same_terms(&want, &piece.terms) {
                let (want, got) = (expand(&want), expand(&piece.terms));
                let at = e.offset + piece.rel;
                let missing: Vec<Term> = multiset_minus(&want, &got);
                let extra: Vec<Term> = multiset_minus(&got, &want);
                let mut why = Vec::new();
                if !missing.is_empty() {
                    why.push(format!("missing {}", describe_terms(&missing, 0, 4)));
                }
                if !extra.is_empty() {
                    let dup = extra.iter().any(|t| want.contains(t));
                    why.push(format!(
                        "{} {}",
                        if dup { "extra (duplicated)" } else { "extra" },
                        describe_terms(&extra, 0, 4)
                    ));
                }
                return Err(verr_at(
                    VerifyKind::Output,
                    rank,
                    None,
                    format!(
                        "rank {rank} output element {at}: expected {}, found {}: {}",
                        describe_terms(&want, 0, 4),
                        describe_terms(&got, 0, 4),
                        why.join("; ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn multiset_minus(a: &[Term], b: &[Term]) -> Vec<Term> {
    let mut out = Vec::new();
    let mut j = 0;
    for &t in a {
        while j < b.len() && b[j] < t {
            j += 1;
        }
        if j < b.len() && b[j] == t {
            j += 1;
        } else {
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dtype, ReduceOp};

    /// A reduction whose every element ends with 64 terms on 64 ranks: a
    /// linear allreduce (every rank's buffer combined into rank 0's, the
    /// even ranks' first, so that the partial sums are many spans, then
    /// rank 0's sent back to each).
    fn linear_allreduce_on_64_ranks() -> Schedule {
        let (p, n) = (64u32, 64u64);
        let mut s = Schedule::new(
            Collective::Allreduce,
            p as usize,
            n,
            Dtype::F64,
            ReduceOp::Sum,
            "linear",
        );
        let all = Region::output(0, n);
        let mut gathered = Vec::new();
        for r in (2..p).step_by(2).chain((1..p).step_by(2)) {
            s.programs[r as usize].push(Op::send(0, 0, all), &[]);
            let prev: Vec<OpId> = gathered.last().copied().into_iter().collect();
            gathered.push(s.programs[0].push(Op::recv_combine(r, 0, all), &prev));
        }
        let last: Vec<OpId> = gathered.last().copied().into_iter().collect();
        for r in 1..p {
            s.programs[0].push(Op::send(r, 1, all), &last);
            let sent = s.programs[r as usize].len() as OpId - 1;
            s.programs[r as usize].push(Op::recv(0, 1, all), &[sent]);
        }
        s
    }

    /// A reduction passed along a chain of ranks (rank r adds its buffer to
    /// what rank r-1 sent and passes it on; the last rank sends the sum
    /// back down the chain) holds, at rank r, the run of ranks 0..=r: one
    /// span. Verifying it on 1,024 ranks makes a few terms an op, where a
    /// term per rank would make half a million.
    #[test]
    fn a_sum_over_consecutive_ranks_is_one_span() {
        let (p, n) = (1024u32, 16u64);
        let mut s = Schedule::new(
            Collective::Allreduce,
            p as usize,
            n,
            Dtype::F64,
            ReduceOp::Sum,
            "chain",
        );
        let all = Region::output(0, n);
        s.programs[0].push(Op::send(1, 0, all), &[]);
        for r in 1..p {
            let got = s.programs[r as usize].push(Op::recv_combine(r - 1, 0, all), &[]);
            if r + 1 < p {
                s.programs[r as usize].push(Op::send(r + 1, 0, all), &[got]);
            }
        }
        for r in (1..p).rev() {
            let last = s.programs[r as usize].len() as OpId - 1;
            let back = if r + 1 < p {
                s.programs[r as usize].push(Op::recv(r + 1, 1, all), &[last])
            } else {
                last
            };
            s.programs[r as usize].push(Op::send(r - 1, 1, all), &[back]);
        }
        let last = s.programs[0].len() as OpId - 1;
        s.programs[0].push(Op::recv(1, 1, all), &[last]);
        assert!(execute_and_check(&s, 8 * u64::from(p)).is_ok());
    }

    /// Blocks written one after another whose terms continue each other
    /// (a reduced buffer arriving block by block) join into one run.
    #[test]
    fn blocks_that_continue_each_other_join_into_one_run() {
        let spans = |offset| -> Terms {
            SmallVec::from_elem(
                Span {
                    offset,
                    rank: 0,
                    ranks: 8,
                },
                1,
            )
        };
        let piece = |offset| Piece {
            rel: 0,
            len: 4,
            terms: spans(offset),
        };
        let mut c = Content::default();
        c.write(4, 4, vec![piece(4)]);
        c.write(12, 4, vec![piece(12)]);
        assert_eq!(c.runs.len(), 2);
        c.write(8, 4, vec![piece(8)]);
        assert_eq!(c.runs.len(), 1);
        c.write(0, 4, vec![piece(1)]);
        assert_eq!(c.runs.len(), 2, "element 0 holds other terms");
        let pieces = c.read(4, 12, &mut 0).unwrap();
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0].terms, spans(4));
    }

    /// A reduction too large for the term budget stops with a clear error
    /// instead of exhausting memory (the budget is MAX_TERMS in `verify`).
    #[test]
    fn gives_up_past_the_term_budget() {
        let s = linear_allreduce_on_64_ranks();
        assert!(execute_and_check(&s, u64::MAX).is_ok());
        let err = execute_and_check(&s, 1000).unwrap_err();
        assert!(
            matches!(err.base(), Some(topocoll_base::Error::TooLarge(_))),
            "{err:?}"
        );
        let err = err.to_string();
        assert!(
            err.contains("too large to verify: more than 1000 symbolic terms"),
            "{err}"
        );
        assert!(err.contains("64 ranks"), "{err}");
    }

    /// A schedule whose verification would not fit in the memory available
    /// is refused before it starts, naming both figures; with some memory
    /// left after the ranks' and ops' share, the terms it holds bound the
    /// term budget.
    #[test]
    fn refuses_what_the_memory_available_cannot_verify() {
        let s = linear_allreduce_on_64_ranks();
        let need = 64 * RANK_BYTES + s.num_ops() as u64 * OP_BYTES;
        let err = verify_within(&s, Some(need - 1)).unwrap_err();
        assert!(
            matches!(err.base(), Some(topocoll_base::Error::TooLarge(_))),
            "{err:?}"
        );
        let err = err.to_string();
        let ops = format!("{} ops on 64 ranks need about", s.num_ops());
        assert!(err.contains(&ops), "{err}");
        assert!(err.contains("GiB of memory is available"), "{err}");
        let err = verify_within(&s, Some(need + 1000 * TERM_BYTES))
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than 1000 symbolic terms"), "{err}");
        assert!(verify_within(&s, Some(need + (1 << 30))).is_ok());
        assert!(verify_within(&s, None).is_ok());
        assert!(verify(&s).is_ok());
    }

    /// Before a schedule is built, the ranks' share alone refuses what
    /// cannot fit, naming the ranks and both figures.
    #[test]
    fn refuses_ranks_whose_share_alone_cannot_fit() {
        let p = 1 << 24;
        let err = ranks_fit(p, Some(p as u64 * RANK_BYTES - 1))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a schedule on 16777216 ranks needs at least 24.0 GiB"),
            "{err}"
        );
        assert!(err.contains("GiB of memory is available"), "{err}");
        assert!(ranks_fit(p, Some(p as u64 * RANK_BYTES)).is_ok());
        assert!(ranks_fit(p, None).is_ok());
        assert!(check_ranks_fit(64).is_ok());
    }
}
