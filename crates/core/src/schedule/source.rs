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
    /// The send of this rank that waits for this one to end and carries
    /// fewer than [`OpSource::min_ungated_send_count`] elements, if there is
    /// one (a pipeline's short last segment): the simulator's lookahead
    /// counts with it from this send's end.
    pub gated: Option<OpId>,
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
    /// The successor of send `i` whose state is likely far from its own,
    /// if one is known without decoding (a prefetch hint: in a pipeline,
    /// the same send of the next segment). `None` by default.
    fn far_successor(&self, _r: usize, _i: OpId) -> Option<OpId> {
        None
    }
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
                gated: None,
            },
            op => panic!("op {i} of rank {r} is not a send: {op:?}"),
        }
    }
    /// The fewest elements a send to another rank carries, or `None` when
    /// no rank sends to another: it bounds how soon one rank can affect
    /// another (the simulator's lookahead, `sim::local`). The default reads
    /// every op; a generator answers from its arithmetic.
    fn min_send_count(&self) -> Option<u64> {
        sends_to_others(self).map(|(_, _, count)| count).min()
    }
    /// The fewest elements a send to another rank carries unless the send
    /// it waits for names it as `gated` ([`OpSource::transfer`]), where that
    /// one carries at least as many; `None` when no rank sends to another.
    ///
    /// It lets the simulator look further ahead than `min_send_count`
    /// allows: a gated send cannot start before the send it waits for has
    /// ended, so until that one has started, the gated send's data cannot
    /// land sooner than this many elements take plus its own. The default
    /// names no gated sends.
    fn min_ungated_send_count(&self) -> Option<u64> {
        self.min_send_count()
    }
    /// The farthest any rank sends, as a distance between rank indices
    /// around the ring of ranks (from r to q: the smaller of |q − r| and
    /// P − |q − r|), or `None` when no rank sends to another. It tells the
    /// simulator which ranks can affect which directly (`sim::local`'s
    /// planes). The default reads every op; a generator answers from its
    /// structure.
    fn farthest_peer(&self) -> Option<u64> {
        let ranks = self.header().ranks as u64;
        sends_to_others(self)
            .map(|(r, peer, _)| ring_distance(r as u64, u64::from(peer), ranks))
            .max()
    }
}

/// Every send of `src` to another rank, op by op: (rank, peer, elements).
/// What the defaults of [`OpSource`] that read every op go through.
fn sends_to_others<S: OpSource + ?Sized>(src: &S) -> impl Iterator<Item = (usize, u32, u64)> + '_ {
    (0..src.header().ranks)
        .flat_map(move |r| (0..src.len(r)).map(move |i| (r, i as OpId)))
        .filter_map(move |(r, i)| match src.op(r, i) {
            Op::Send { peer, region, .. } if peer as usize != r => Some((r, peer, region.count)),
            _ => None,
        })
}

/// The distance between ranks `a` and `b` around a ring of `ranks`.
pub fn ring_distance(a: u64, b: u64, ranks: u64) -> u64 {
    let d = a.abs_diff(b);
    d.min(ranks - d)
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
