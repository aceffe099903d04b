//! Reading a schedule one operation at a time.
//!
//! The simulator does not need a schedule's programs in memory: it asks for an
//! operation, its number of dependencies, its successors and (for a send) the
//! receive it meets, when it gets to them. [`OpSource`] is that interface. A
//! materialised [`Schedule`] implements it through [`Materialised`] (which
//! precomputes successors and the message matching); a generator implements it
//! by arithmetic, so a pipeline of hundreds of millions of operations can be
//! simulated in memory that follows the operations in flight, not all of them
//! (`algorithms::pipelined::PipelineStream`).
//!
//! What a simulator may ask beyond the schedule itself, to run ahead, is
//! the separate trait [`crate::lookahead::Lookahead`].
//!
//! Receives with no dependencies count as posted from the moment their rank
//! starts; [`OpSource::initial`] therefore lists only the other operations a
//! rank can run at once.

use super::graph::{match_messages, Successors};
use super::{Op, OpId, Schedule};
use crate::error::Result;

/// A send as the simulator starts it ([`OpSource::transfer`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// The receiving rank.
    pub peer: u32,
    /// The elements sent.
    pub count: u64,
    /// The route (0: the topology's).
    pub route: u32,
    /// The receive it meets on `peer`.
    pub recv: OpId,
}

/// A schedule the simulator reads operation by operation.
pub trait OpSource {
    /// The collective, ranks, element type and offset-route table (a
    /// generator's header has empty programs).
    fn header(&self) -> &Schedule;
    /// Operations in rank `r`'s program.
    fn len(&self, r: usize) -> u64;
    /// Operation `i` of rank `r`.
    fn op(&self, r: usize, i: OpId) -> Op;
    /// How many operations op `i` waits for.
    fn dep_count(&self, r: usize, i: OpId) -> u32;
    /// `dep_count` of each op in `ops`, in order (a generator decodes the
    /// first and steps to the next: the simulator sets up ops in runs).
    fn dep_counts(&self, r: usize, ops: std::ops::Range<OpId>, mut f: impl FnMut(u32)) {
        for i in ops {
            f(self.dep_count(r, i));
        }
    }
    /// Calls `f` with every op of rank `r` that waits for op `i`.
    fn successors(&self, r: usize, i: OpId, f: impl FnMut(OpId));
    /// For a send: the index of the receive it meets on its peer.
    fn partner(&self, r: usize, i: OpId) -> OpId;
    /// The ops of rank `r` with no dependencies, receives excepted, in program order.
    fn initial(&self, r: usize, out: &mut Vec<OpId>);
    /// Whether op `i` of rank `r` is a send, a receive or neither: what
    /// the simulator asks of every op that becomes ready, answered without
    /// decoding the op where a generator can.
    fn kind(&self, r: usize, i: OpId) -> OpKind {
        match self.op(r, i) {
            Op::Send { .. } => OpKind::Send,
            Op::Recv { .. } => OpKind::Recv,
            _ => OpKind::Other,
        }
    }
    /// For a receive: the elements it combines into its buffer when its
    /// data is in, or `None` when it only stores them (what the simulator
    /// asks of every receive that completes, answered without decoding the
    /// op where a generator can).
    fn combines(&self, r: usize, i: OpId) -> Option<u64> {
        match self.op(r, i) {
            Op::Recv {
                combine: true,
                region,
                ..
            } => Some(region.count),
            _ => None,
        }
    }
    /// A send as the simulator starts it: its receiver, elements and route,
    /// and the receive it meets (a generator locates the op once, and need
    /// not compute the regions' offsets and the tag).
    fn transfer(&self, r: usize, i: OpId) -> Transfer {
        match self.op(r, i) {
            Op::Send {
                peer,
                region,
                route,
                ..
            } => Transfer {
                peer,
                count: region.count,
                route,
                recv: self.partner(r, i),
            },
            op => panic!("op {i} of rank {r} is not a send: {op:?}"),
        }
    }
}

/// What [`OpSource::kind`] answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Send,
    Recv,
    Other,
}

/// A materialised schedule as an [`OpSource`].
pub struct Materialised<'a> {
    s: &'a Schedule,
    succ: Vec<Successors>,
    partner: Vec<Vec<OpId>>,
}

impl<'a> Materialised<'a> {
    /// Precomputes successors and the send/receive matching (errors name the
    /// first message without a partner).
    pub fn new(s: &'a Schedule) -> Result<Materialised<'a>> {
        Ok(Materialised {
            s,
            succ: s.programs.iter().map(Successors::new).collect(),
            partner: match_messages(s)?,
        })
    }
}

impl OpSource for Materialised<'_> {
    fn header(&self) -> &Schedule {
        self.s
    }
    fn len(&self, r: usize) -> u64 {
        self.s.programs[r].len() as u64
    }
    fn op(&self, r: usize, i: OpId) -> Op {
        self.s.programs[r].ops[i as usize]
    }
    fn dep_count(&self, r: usize, i: OpId) -> u32 {
        self.s.programs[r].deps(i as usize).len() as u32
    }
    fn successors(&self, r: usize, i: OpId, mut f: impl FnMut(OpId)) {
        for &j in self.succ[r].of(i as usize) {
            f(j);
        }
    }
    fn partner(&self, r: usize, i: OpId) -> OpId {
        self.partner[r][i as usize]
    }
    fn initial(&self, r: usize, out: &mut Vec<OpId>) {
        let p = &self.s.programs[r];
        out.extend(
            (0..p.len())
                .filter(|&i| p.deps(i).is_empty() && !matches!(p.ops[i], Op::Recv { .. }))
                .map(|i| i as OpId),
        );
    }
}
