//! Schedule reversal: a schedule of a collective turned into one of its dual,
//! the data flowing backwards along the same transfers.
//!
//! | schedule of | reversed, a schedule of | buffers |
//! |---|---|---|
//! | `scatter{root}` | `gather{root}` | input ↔ output, scratch kept |
//! | `gather{root}` | `scatter{root}` | output ↔ input, scratch kept |
//! | `allgather` | `reduce_scatter` | output block b → chunk b, input → the rank's own chunk |
//! | `bcast{root}` | `reduce{root}` | the same |
//!
//! Each rank's program runs backwards: the last operation comes first, and an
//! operation waits for the reversed ops of those that waited for it. A send
//! of a region becomes a receive into it from the same peer with the same
//! tag, a receive becomes a send, a copy `dst = src` a copy `src = dst`.
//! Where the dual reduces (reduce_scatter, reduce), a region that still holds
//! a contribution is received or copied into by combining (`src = src ∘ dst`),
//! one that holds none (scratch, or a region whose content was sent on) by
//! overwriting; a copy whose two sides land on the same elements (allgather's
//! own block, which is the rank's own chunk in place) is left out. Since the
//! k-th send and the k-th receive of a (source, destination, tag) are both
//! counted in program order, reversing every program keeps them matched.
//!
//! Reversal is correct for schedules whose data flow is a tree (each piece
//! read once, or combined where the dual reduces), not for every schedule,
//! so it is not assumed: a reversed schedule is proven by the verifier like
//! any other, on every shape of the test corpus and wherever a schedule is
//! verified before use (`verify`, `simulate` unless `--no-verify`, `run`).
//! [`reverse_checked`] reverses and verifies in one call. [`reverse`] does
//! not verify, so that building a reduce_scatter costs what building the
//! allgather does: verifying a ring of 1,024 ranks takes tens of seconds.

use super::{chunk, verify, Buf, Collective, Op, OpId, Region, Schedule};
use crate::error::fail;
use crate::error::{Error, Result, VerifyError, VerifyKind};
use std::collections::BTreeMap;

/// The collective a reversed schedule of `c` implements, if it has one.
pub fn dual(c: Collective) -> Option<Collective> {
    Some(match c {
        Collective::Scatter { root } => Collective::Gather { root },
        Collective::Gather { root } => Collective::Scatter { root },
        Collective::Allgather => Collective::ReduceScatter,
        Collective::Bcast { root } => Collective::Reduce { root },
        _ => return None,
    })
}

/// `s` reversed into `into`, an empty schedule of the dual collective (see
/// [`dual`]) on the same ranks, whose header (count, element type, operator,
/// algorithm) it keeps; not verified (see [`reverse_checked`]). The
/// count is the same as `s`'s, but for allgather → reduce_scatter, where
/// `into.count` is the whole buffer: allgather's blocks of `s.count`
/// elements become the standard chunks of it (an allgather of one element a
/// block reverses into a reduce_scatter of any count).
pub fn reverse(s: &Schedule, mut into: Schedule) -> Result<Schedule> {
    let refuse = |why: String| {
        fail!(
            Schedule,
            Reverse,
            "cannot reverse {} {} into {} {}: {why}",
            s.collective.name(),
            s.algorithm,
            into.collective.name(),
            into.algorithm
        )
    };
    if dual(s.collective) != Some(into.collective) {
        return Err(refuse(format!(
            "the reversal of {} is {}",
            s.collective.name(),
            dual(s.collective).map_or("nothing", |c| c.name())
        )));
    }
    if into.ranks != s.ranks || into.num_ops() > 0 {
        return Err(refuse(format!(
            "give an empty schedule on the schedule's {} ranks",
            s.ranks
        )));
    }
    if s.collective != Collective::Allgather && into.count != s.count {
        return Err(refuse(format!(
            "a count of {} elements, not {}",
            s.count, into.count
        )));
    }
    let map = Map {
        from: s.collective,
        ranks: s.ranks as u64,
        block: s.count,
        total: into.count,
    };
    for r in 0..s.ranks {
        into.programs[r] = reverse_program(s, r, &map, into.collective.is_reduction())
            .map_err(|e| refuse(format!("rank {r}: {e}")))?;
    }
    Ok(into)
}

/// [`reverse`], the result proven by [`verify`]: an error, never the
/// schedule, when it does not verify.
pub fn reverse_checked(s: &Schedule, into: Schedule) -> Result<Schedule> {
    let into = reverse(s, into)?;
    verify(&into).map_err(|e| {
        let message = format!(
            "the reversal of {} {} into {} does not verify: {e}",
            s.collective.name(),
            s.algorithm,
            into.collective.name()
        );
        // The check the reversal broke, where the verifier named one.
        match e {
            Error::Verify(v) => Error::Verify(VerifyError { message, ..v }),
            _ => Error::Verify(VerifyError::new(VerifyKind::Structure, message)),
        }
    })?;
    Ok(into)
}

/// Where a region of the original schedule lands in the dual's buffers.
struct Map {
    from: Collective,
    ranks: u64,
    /// Elements of the original's count (an allgather's block).
    block: u64,
    /// Elements of the dual's count.
    total: u64,
}

impl Map {
    /// Whether allgather's blocks are the reduce_scatter's chunks as they are.
    fn even(&self) -> bool {
        self.block * self.ranks == self.total
    }

    /// The element of the reduce_scatter's buffer where allgather's output
    /// element `x` (a block boundary) lands.
    fn bound(&self, x: u64) -> std::result::Result<u64, String> {
        if self.even() {
            Ok(x)
        } else if self.block > 0 && x.is_multiple_of(self.block) {
            Ok(chunk(self.total, self.ranks, x / self.block).0)
        } else {
            Err(format!(
                "element {x} is not a block boundary (blocks of {} elements onto chunks of {})",
                self.block, self.total
            ))
        }
    }

    fn region(&self, rank: usize, g: Region) -> std::result::Result<Region, String> {
        let swap = |buf| match buf {
            Buf::Input => Buf::Output,
            Buf::Output => Buf::Input,
            Buf::Scratch => Buf::Scratch,
        };
        match self.from {
            Collective::Scatter { .. } | Collective::Gather { .. } => {
                Ok(Region::new(swap(g.buf), g.offset, g.count))
            }
            Collective::Allgather => {
                let (a, b) = match g.buf {
                    Buf::Output => (self.bound(g.offset)?, self.bound(g.end())?),
                    Buf::Input => {
                        let (at, len) = chunk(self.total, self.ranks, rank as u64);
                        let inside = |y: u64| match y {
                            _ if self.even() => Ok(at + y),
                            0 => Ok(at),
                            y if y == self.block => Ok(at + len),
                            y => Err(format!("input element {y} is not a block boundary")),
                        };
                        (inside(g.offset)?, inside(g.end())?)
                    }
                    Buf::Scratch if self.even() => return Ok(g),
                    Buf::Scratch => {
                        return Err("scratch regions of blocks that are not the chunks".into())
                    }
                };
                let buf = if g.buf == Buf::Scratch {
                    Buf::Scratch
                } else {
                    Buf::Output
                };
                Ok(Region::new(buf, a, b - a))
            }
            _ => Ok(g),
        }
    }

    /// Whether the original's input lands in the dual's output (allgather's
    /// own block), so that ops on the two must be ordered where they meet.
    fn aliases(&self) -> bool {
        self.from == Collective::Allgather
    }
}

/// How much of a region holds a contribution in the dual.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    Nothing,
    All,
    Part,
}

/// The elements of a rank's original buffers whose reversed content holds a
/// contribution, as disjoint runs (start → end) per buffer.
#[derive(Default)]
struct Live {
    runs: [BTreeMap<u64, u64>; 3],
}

fn slot(buf: Buf) -> usize {
    match buf {
        Buf::Input => 0,
        Buf::Output => 1,
        Buf::Scratch => 2,
    }
}

impl Live {
    fn held(&self, g: Region) -> Held {
        if g.count == 0 {
            return Held::All;
        }
        let (a, b) = (g.offset, g.end());
        let covered: u64 = self.runs[slot(g.buf)]
            .range(..b)
            .rev()
            .take_while(|(_, &e)| e > a)
            .map(|(&s, &e)| e.min(b) - s.max(a))
            .sum();
        match covered {
            0 => Held::Nothing,
            c if c == g.count => Held::All,
            _ => Held::Part,
        }
    }

    fn clear(&mut self, g: Region) {
        let (a, b) = (g.offset, g.end());
        let runs = &mut self.runs[slot(g.buf)];
        let hit: Vec<(u64, u64)> = runs
            .range(..b)
            .rev()
            .take_while(|(_, &e)| e > a)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in hit {
            runs.remove(&s);
            if s < a {
                runs.insert(s, a);
            }
            if e > b {
                runs.insert(b, e);
            }
        }
    }

    fn set(&mut self, g: Region) {
        if g.count > 0 {
            self.clear(g);
            self.runs[slot(g.buf)].insert(g.offset, g.end());
        }
    }
}

/// One rank's program reversed (see the module's description).
///
/// Whole on purpose: one backward walk over the program, each op's
/// reversal reading and updating the same live-region map and successor
/// lists.
fn reverse_program(
    s: &Schedule,
    r: usize,
    map: &Map,
    reduce: bool,
) -> std::result::Result<super::Program, String> {
    let prog = &s.programs[r];
    let n = prog.len();
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        for &d in prog.deps(i) {
            successors[d as usize].push(i);
        }
    }
    let mut live = Live::default();
    if reduce {
        // What the original leaves in its outputs is what the dual starts with.
        live.set(Region::output(0, s.buffer_len(r, Buf::Output)));
    }
    let mut out = super::Program {
        scratch: prog.scratch,
        ..Default::default()
    };
    // The dual op of each original op, or (left out) the dual ops its
    // dependents wait for in its place.
    let mut dual: Vec<Option<OpId>> = vec![None; n];
    let mut through: Vec<Vec<OpId>> = vec![Vec::new(); n];
    // Where the original's input and output meet in the dual: the dual ops
    // touching each side, (op, region, writes).
    let mut touched: [Vec<(OpId, Region, bool)>; 2] = [Vec::new(), Vec::new()];
    // The dual ops that write, where the dual reduces.
    // (start → the latest such op and its length, the longest length) per
    // buffer: a later write that overlaps an earlier one is ordered after
    // the latest, which is ordered after the others.
    let mut combined: [(Writes, u64); 3] = Default::default();
    let mut before: Vec<Vec<u64>> = Vec::new();
    for i in (0..n).rev() {
        let mut deps: Vec<OpId> = Vec::new();
        for &j in &successors[i] {
            match dual[j] {
                Some(d) => deps.push(d),
                None => deps.extend_from_slice(&through[j]),
            }
        }
        let m = |g: Region| map.region(r, g);
        // The dual op and what it touches in the original's terms: (buffer
        // side, dual region, writes).
        let (op, access): (Option<Op>, Vec<(Buf, Region, bool)>) = match prog.ops[i] {
            Op::Send {
                peer, tag, region, ..
            } => {
                let held = if reduce {
                    live.held(region)
                } else {
                    Held::Nothing
                };
                if held == Held::Part {
                    return Err(format!("op {i} sends a region only partly reduced back"));
                }
                live.set(region);
                let to = m(region)?;
                let op = Op::recv_with(peer, tag, to, held == Held::All);
                (Some(op), vec![(region.buf, to, true)])
            }
            Op::Recv {
                peer,
                tag,
                region,
                combine: false,
            } => {
                live.clear(region);
                let from = m(region)?;
                (
                    Some(Op::send(peer, tag, from)),
                    vec![(region.buf, from, false)],
                )
            }
            Op::Copy { src, dst } => {
                let (to, from) = (m(src)?, m(dst)?);
                let held = if reduce {
                    live.held(src)
                } else {
                    Held::Nothing
                };
                if held == Held::Part {
                    return Err(format!("op {i} copies into a region only partly reduced"));
                }
                live.clear(dst);
                live.set(src);
                if to == from {
                    if held == Held::All {
                        return Err(format!("op {i} would combine a region with itself"));
                    }
                    (None, Vec::new())
                } else {
                    let op = if held == Held::All {
                        Op::combine(from, to)
                    } else {
                        Op::copy(from, to)
                    };
                    (Some(op), vec![(dst.buf, from, false), (src.buf, to, true)])
                }
            }
            Op::Compute { seconds } => (Some(Op::Compute { seconds }), Vec::new()),
            Op::Recv { combine: true, .. } | Op::Combine { .. } => {
                return Err(format!(
                    "op {i} ({}) reduces, and reversal takes schedules that only move data",
                    prog.ops[i].describe()
                ))
            }
        };
        let Some(op) = op else {
            through[i] = deps;
            continue;
        };
        let id = out.len() as OpId;
        if reduce {
            // Reads the original let run together (a region sent to several
            // peers) are combines into one region here: they run in the
            // reversed program order, so the result's bits do not depend
            // on timing.
            // Only those not ordered already: the op's dependencies and
            // what they wait for (`before`, one bit per earlier op).
            let words = (id as usize).div_ceil(64);
            let mut reach = vec![0u64; words];
            for &d in &deps {
                let d = d as usize;
                reach[d / 64] |= 1 << (d % 64);
                for (w, b) in reach.iter_mut().zip(&before[d]) {
                    *w |= b;
                }
            }
            for &(_, g, _) in access.iter().filter(|a| a.2) {
                let (runs, longest) = &mut combined[slot(g.buf)];
                let near = runs.range(g.offset.saturating_sub(*longest)..g.end());
                for (&at, &(d, len)) in near {
                    let du = d as usize;
                    let h = Region::new(g.buf, at, len);
                    if overlaps(g, h) && reach[du / 64] & (1 << (du % 64)) == 0 {
                        deps.push(d);
                        reach[du / 64] |= 1 << (du % 64);
                        for (w, b) in reach.iter_mut().zip(&before[du]) {
                            *w |= b;
                        }
                    }
                }
                if g.count > 0 {
                    runs.insert(g.offset, (id, g.count));
                    *longest = (*longest).max(g.count);
                }
            }
            before.push(reach);
        }
        if map.aliases() {
            for &(buf, g, writes) in access.iter().filter(|a| a.0 != Buf::Scratch) {
                let side = usize::from(buf == Buf::Input);
                let other = &touched[1 - side];
                deps.extend(
                    other
                        .iter()
                        .filter(|(_, h, w)| (writes || *w) && overlaps(g, *h))
                        .map(|&(d, _, _)| d),
                );
            }
            for &(buf, g, writes) in &access {
                if buf != Buf::Scratch {
                    touched[usize::from(buf == Buf::Input)].push((id, g, writes));
                }
            }
        }
        deps.sort_unstable();
        deps.dedup();
        dual[i] = Some(out.push(op, &deps));
    }
    Ok(out)
}

/// A buffer's written runs: start → (the latest op writing there, its length).
type Writes = BTreeMap<u64, (OpId, u64)>;

fn overlaps(a: Region, b: Region) -> bool {
    a.buf == b.buf && a.offset < b.end() && b.offset < a.end() && a.count > 0 && b.count > 0
}
