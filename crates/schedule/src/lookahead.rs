//! What a simulator running ahead of a schedule may ask of it.
//!
//! A schedule is wholly described by its [`OpSource`]. A simulator that runs
//! ranks apart from each other (`sim`'s by-rank drivers) must also know how
//! soon one rank can affect another, so that it can run each rank ahead
//! until then; and it runs faster when told which op's state to fetch before
//! it is needed. [`Lookahead`] asks for those facts. Every answer has a safe
//! default computed from the ops (or none at all), so a new source needs
//! only `impl Lookahead for S {}`; a generator overrides what its structure
//! answers without reading every op.

use crate::{Materialised, Op, OpId, OpSource, Transfer};

/// Facts about a schedule that let a simulator run ahead (see the module).
pub trait Lookahead: OpSource {
    /// The successor of send `i` whose state is likely far from its own,
    /// if one is known without decoding (a prefetch hint: in a pipeline,
    /// the same send of the next segment). `None` by default.
    fn far_successor(&self, _r: usize, _i: OpId) -> Option<OpId> {
        None
    }

    /// Send `i` of rank `r` as [`OpSource::transfer`] gives it, with the
    /// send of this rank that waits for this one to end and carries fewer
    /// than [`Lookahead::min_ungated_send_count`] elements, if there is one
    /// (a pipeline's short last segment): a simulator's lookahead counts
    /// with that one from this send's end. The default names none.
    fn gated_transfer(&self, r: usize, i: OpId) -> (Transfer, Option<OpId>) {
        (self.transfer(r, i), None)
    }

    /// The fewest elements a send to another rank carries, or `None` when
    /// no rank sends to another: it bounds how soon one rank can affect
    /// another. The default reads every op; a generator answers from its
    /// arithmetic.
    fn min_send_count(&self) -> Option<u64> {
        sends_to_others(self).map(|(_, _, count)| count).min()
    }

    /// The fewest elements a send to another rank carries unless the send
    /// it waits for names it as gated ([`Lookahead::gated_transfer`]),
    /// where that one carries at least as many; `None` when no rank sends
    /// to another.
    ///
    /// It lets a simulator look further ahead than `min_send_count` allows:
    /// a gated send cannot start before the send it waits for has ended,
    /// so until that one has started, the gated send's data cannot land
    /// sooner than this many elements take plus its own. The default names
    /// no gated sends.
    fn min_ungated_send_count(&self) -> Option<u64> {
        self.min_send_count()
    }

    /// The farthest any rank sends, as a distance between rank indices
    /// around the ring of ranks (from r to q: the smaller of |q − r| and
    /// P − |q − r|), or `None` when no rank sends to another: which ranks
    /// can affect which directly. The default reads every op; a generator
    /// answers from its structure.
    fn farthest_peer(&self) -> Option<u64> {
        let ranks = self.header().ranks as u64;
        sends_to_others(self)
            .map(|(r, peer, _)| ring_distance(r as u64, u64::from(peer), ranks))
            .max()
    }
}

/// A written-out schedule answers by reading its ops.
impl Lookahead for Materialised<'_> {}

/// Every send of `src` to another rank, op by op: (rank, peer, elements).
/// What the defaults of [`Lookahead`] that read every op go through.
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
