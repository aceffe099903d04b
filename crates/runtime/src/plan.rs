//! The static part of an execution, worked out once per schedule.

use crate::error::{Error, Result, RunKind};
use crate::replay;
use crate::state::RankState;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::OnceLock;
use topocoll_schedule::{dependency_counts, Op, OpId, Program, Region, Schedule, Successors};

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
            return Err(Error::runtime(
                RunKind::Plan,
                format!("{} programs for {} ranks", s.programs.len(), s.ranks),
            ));
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
        Err(Error::runtime(
            RunKind::Plan,
            format!("rank {rank} op {i} ({}): {why}", prog.ops[i].describe()),
        ))
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
