//! Ring allreduce: a reduce-scatter then an allgather around the ring
//! r → r+1, with SimGrid's `lr` partner and chunk pattern. The buffer is split
//! in P chunks (the standard split: the first n mod P chunks one element
//! longer). In reduce-scatter step s (0..P−2) rank r sends chunk (r−1−s) mod P
//! and receive-combines chunk (r−2−s) mod P, after which it holds the full
//! reduction of chunk r; in allgather step s it sends chunk (r−s) mod P and
//! receives chunk (r−1−s) mod P. Each chunk is reduced once, along the ring,
//! then copied: every rank gets identical bits. Each step is a send-receive
//! that waits for both operations of the step before (tag = step).
//!
//! Unlike SimGrid's `lr`, counts that P does not divide are handled by the
//! standard split rather than a trailing reduce+bcast of the remainder.

use crate::error::Result;
use crate::OpCount;
use crate::{Algorithm, Request, Stream};
use topocoll_schedule::lookahead::Lookahead;
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{chunk, Op, OpId, OpSource, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allreduce,
    "ring",
    "ring reduce-scatter then ring allgather, 2(P-1) steps of n/P elements",
    build,
)
.stream(stream)
.ops(OpCount::Generated)
.ompi(4, "ring", "ring");

fn build(req: &Request) -> Result<Schedule> {
    let ring = RingStream::new(req);
    let mut s = req.schedule(&ALGORITHM);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        for i in 0..ring.len(r) as OpId {
            let deps: Vec<OpId> = ring.deps(i).collect();
            prog.push(ring.op(r, i), &deps);
        }
    }
    Ok(s)
}

fn stream(req: &Request) -> Result<Stream> {
    Ok(Stream::Ring(RingStream::new(req)))
}

/// The ring's programs by arithmetic ([`OpSource`]): op 2·step is the send of
/// a step, op 2·step + 1 its receive, and both wait for the two ops of the
/// step before. On 9,216 ranks that is 170 M operations, generated as the
/// simulator reaches them; [`build`] writes the same ops out.
pub struct RingStream {
    header: Schedule,
}

impl RingStream {
    pub fn new(req: &Request) -> RingStream {
        RingStream {
            header: req.schedule(&ALGORITHM),
        }
    }

    /// The ops op `i` waits for.
    fn deps(&self, i: OpId) -> impl Iterator<Item = OpId> {
        let step = i / 2;
        (step > 0)
            .then(|| [2 * step - 2, 2 * step - 1])
            .into_iter()
            .flatten()
    }

    pub fn into_header(self) -> Schedule {
        self.header
    }
}

impl OpSource for RingStream {
    fn header(&self) -> &Schedule {
        &self.header
    }

    fn len(&self, _r: usize) -> u64 {
        let p = self.header.ranks as u64;
        if p == 1 {
            0
        } else {
            4 * (p - 1)
        }
    }

    fn op(&self, r: usize, i: OpId) -> Op {
        let p = self.header.ranks;
        let n = self.header.count;
        let part = |c: usize| {
            let (start, len) = chunk(n, p as u64, c as u64);
            Region::output(start, len)
        };
        let step = i as usize / 2;
        let (send_chunk, recv_chunk, combine) = if step < p - 1 {
            ((r + 2 * p - 1 - step) % p, (r + 2 * p - 2 - step) % p, true)
        } else {
            let s = step - (p - 1);
            ((r + p - s) % p, (r + 2 * p - 1 - s) % p, false)
        };
        let tag = step as u32;
        if i.is_multiple_of(2) {
            Op::send(((r + 1) % p) as u32, tag, part(send_chunk))
        } else {
            Op::recv_with(((r + p - 1) % p) as u32, tag, part(recv_chunk), combine)
        }
    }

    fn dep_count(&self, _r: usize, i: OpId) -> u32 {
        if i < 2 {
            0
        } else {
            2
        }
    }

    fn successors(&self, r: usize, i: OpId, mut f: impl FnMut(OpId)) {
        let next = (i / 2 + 1) * 2;
        if (next as u64) < self.len(r) {
            f(next);
            f(next + 1);
        }
    }

    fn partner(&self, _r: usize, i: OpId) -> OpId {
        // A send meets the receive of the same step on the next rank.
        i + 1
    }

    fn initial(&self, r: usize, out: &mut Vec<OpId>) {
        if self.len(r) > 0 {
            out.push(0);
        }
    }
}

impl Lookahead for RingStream {
    fn min_send_count(&self) -> Option<u64> {
        // Every send carries one chunk; the shortest has n / P elements.
        let p = self.header.ranks as u64;
        (p > 1).then(|| self.header.count / p)
    }

    fn farthest_peer(&self) -> Option<u64> {
        // Each rank sends to the next; on two ranks, back and forth.
        (self.header.ranks > 1).then_some(1)
    }
}
