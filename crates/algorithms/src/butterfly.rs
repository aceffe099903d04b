//! The Swing butterfly (a shared helper, not an algorithm): the peer
//! sequence of Swing (De Sensi, Bonato, Saam, Hoefler, NSDI 2024) that the
//! Swing allreduces and the Bine trees (De Sensi et al., SC 2025) are built
//! on, and the block order in which what a rank holds is one contiguous run.
//!
//! # Peers
//!
//! On a ring of n = 2^s ranks, step j pairs rank r with
//! `π(r, j) = r + ρ(j)` for even r and `r − ρ(j)` for odd r (mod n), where
//! `ρ(j) = Σ_{i≤j} (−2)^i = 1, −1, 3, −5, 11, …`: a butterfly whose peers
//! stay within |ρ(j)| ≤ 2^j·2/3 + 1 of each other rather than 2^j. The
//! *mirrored* butterfly takes −ρ(j) (the other direction of a
//! bidirectional ring: the reflection r → −r maps one onto the other).
//! On a torus each dimension of size > 1 has its own ring's steps, and the
//! steps take the dimensions in turn, starting from a given one, skipping
//! those whose steps are done (the paper's multidimensional Swing); a
//! rank's parity in a step is that of its coordinate in the step's
//! dimension.
//!
//! # Rings that are not a power of two
//!
//! The rule of the authors' reference code (HLC-Lab/bine_trees_fugaku,
//! `lib/libswing.cc` of 2024 and `lib/libswing_common.cc` after it, MIT
//! licence: `SwingBitmapCalculator` and `get_step_to_reach`; read, not
//! copied), which the paper's multidimensional Swing applies to each
//! dimension:
//!
//! * A ring of even length n takes ⌈log2 n⌉ steps with the same peers
//!   `π(r, j)` taken mod n (on an even ring they still pair up, even with
//!   odd). Its 2^S increasing-step paths from a rank reach every rank,
//!   some twice (along two paths that start at different steps), so a
//!   reduce-scatter must not hand a block on along both: x hands block b
//!   on at the *latest* step k whose peer `π(x, k)` reaches b by the
//!   steps after k (b itself included), and never hands on its own. Every
//!   block then travels one tree to its owner, each rank sending it once
//!   ([`Butterfly::sends`]; `number_uneven` proves the tree for every
//!   butterfly it builds). The allgather runs the same sets backwards.
//! * On a ring of odd length the peers do not pair up; there the
//!   bandwidth-optimal collectives fold the last coordinate into the one
//!   before it first and hand it the result last ([`Shrink::even`]).
//! * The latency-optimal allreduce, whose whole-buffer exchanges would
//!   count a contribution twice where a path reaches a rank twice, shrinks
//!   each dimension of n not a power of two to the power of two below, m:
//!   coordinate c ≥ m hands its buffer to c − (n − m) first and gets the
//!   result last ([`Shrink::pow2`], the reference code's
//!   `shrink_non_power_of_two` / `enlarge_non_power_of_two`).
//!
//! # Block order
//!
//! Running the steps 0, 1, …, S−1 in turn, rank x is *responsible* from
//! step k on for the set `B(x, k) = B(x, k+1) ∪ B(π(x, k), k+1)`,
//! `B(x, S) = {x}`: in a reduce-scatter it keeps `B(x, k+1)` and hands its
//! peer `B(π(x, k), k+1)`. [`Butterfly::new`] numbers the ranks by a walk
//! of `B(0, 0)` (each set, its own half first) and proves that every
//! `B(x, k)` is then an aligned run of 2^(S−k) positions (the paper's
//! remapping of blocks, in Bine's terms the negabinary `ν(r)`), so that
//! every message of a reduce-scatter or allgather is one contiguous region.
//! The same sets with the steps taken in the other order, S−1 first, are
//! the Bine trees: the root's first peer is the farthest, `ρ(S−1)`, and
//! the distances shrink towards the leaves. Where a ring is not a power of
//! two the places are numbered by the same walk, each participant at its
//! first visit, and a step's blocks may take several runs (one on rings
//! of 3·2^k up to 384, a unit test's); they go as one message, packed in Scratch ([`Blocks`]), as
//! the reference code sends them as one indexed datatype.

use crate::error::fail;
use crate::error::Result;
use topocoll_schedule::{Buf, Op, OpId, Program, Region};

/// The most participants of a butterfly whose rings are not all powers
/// of two.
pub(crate) const MAX_UNEVEN: usize = 1 << 13;

/// `ρ(j) = Σ_{i=0}^{j} (−2)^i`.
pub(crate) fn rho(j: u32) -> i64 {
    (1 - (-2i64).pow(j + 1)) / 3
}

/// Which way a butterfly's peers go round a ring: Swing's `π(r, j)`, or
/// mirrored (−ρ(j), the other direction of a bidirectional ring).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Turn {
    Swing,
    Mirrored,
}

/// The order a butterfly takes its steps in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StepOrder {
    /// Step 0 first: Swing's butterfly, whose sets are runs of the block
    /// order.
    Forward,
    /// Step S−1 first: the Bine trees' (powers of two only).
    Reversed,
}

/// Swing's peer of coordinate `c` at its ring's step `j` on a ring of `n`.
pub(crate) fn swing_peer(c: usize, j: u32, n: usize, turn: Turn) -> usize {
    let d = rho(j).rem_euclid(n as i64) as usize;
    if c.is_multiple_of(2) == (turn == Turn::Swing) {
        (c + d) % n
    } else {
        (c + n - d) % n
    }
}

/// A butterfly over n = 2^S participants: per-step peers and the block
/// order (see the module's comment).
pub(crate) struct Butterfly {
    /// (stride, length) of each dimension of size > 1.
    dims: Vec<(usize, usize)>,
    /// Step k: (dimension index into `dims`, that ring's step).
    steps: Vec<(usize, u32)>,
    turn: Turn,
    /// `pos[x]`: x's place in the block order.
    pos: Vec<u32>,
    /// `order[i]`: the participant at place i.
    order: Vec<u32>,
    /// Some ring not a power of two: `last[t]` is the step at which
    /// participant 0 hands on the block of the participant at offsets `t`
    /// (see [`Butterfly::sends`]), `steps()` for its own.
    last: Option<Vec<u32>>,
    /// With `last`: the offsets handed on at each step.
    by_step: Vec<Vec<u32>>,
}

impl Butterfly {
    /// A ring of `n` participants (even), Swing's peers, step 0 first.
    pub fn ring(n: usize) -> Result<Butterfly> {
        Butterfly::torus(&[(1, n)], 0, Turn::Swing, StepOrder::Forward)
    }

    /// A torus of dimensions (stride, length), every length even (lengths
    /// of 1 are left out), ⌈log2 n⌉ steps per ring, the steps taking the
    /// dimensions in turn from `first`, in the step order `order`.
    pub fn torus(
        dims: &[(usize, usize)],
        first: usize,
        turn: Turn,
        order: StepOrder,
    ) -> Result<Butterfly> {
        let reversed = order == StepOrder::Reversed;
        let dims: Vec<(usize, usize)> = dims.iter().copied().filter(|d| d.1 > 1).collect();
        let pow2 = dims.iter().all(|d| d.1.is_power_of_two());
        if let Some(&(_, n)) = dims.iter().find(|d| d.1 % 2 == 1) {
            return Err(fail!(
                Algorithm,
                Shape,
                "a Swing butterfly needs rings of even length, not {n}"
            ));
        }
        if reversed && !pow2 {
            return Err(fail!(
                Algorithm,
                Shape,
                "a Bine tree needs rings of a power of two"
            ));
        }
        let n: usize = dims.iter().map(|d| d.1).product();
        // Each participant's hand-on sets take O(n) to list: bound the
        // O(n²) of a whole schedule before building it.
        if !pow2 && n > MAX_UNEVEN {
            return Err(fail!(
                Algorithm,
                Shape,
                "swing and bine on {n} participants, not a power of two, take at most {MAX_UNEVEN}"
            ));
        }
        let ring_steps = |n: usize| usize::BITS - (n - 1).leading_zeros();
        let mut left: Vec<u32> = dims.iter().map(|d| ring_steps(d.1)).collect();
        let total: u32 = left.iter().sum();
        let mut steps = Vec::with_capacity(total as usize);
        let mut t = first;
        while steps.len() < total as usize {
            let d = t % dims.len();
            if left[d] > 0 {
                let done = ring_steps(dims[d].1) - left[d];
                steps.push((d, done));
                left[d] -= 1;
            }
            t += 1;
        }
        if reversed {
            steps.reverse();
        }
        let mut b = Butterfly {
            dims,
            steps,
            turn,
            pos: vec![u32::MAX; n],
            order: Vec::with_capacity(n),
            last: None,
            by_step: Vec::new(),
        };
        // The block order is the forward steps' (the reversed steps' sets
        // are not aligned runs of it; the Bine trees number their own).
        if !reversed {
            if pow2 {
                b.number()?;
            } else {
                b.number_uneven()?;
            }
        }
        Ok(b)
    }

    /// Participants.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// Steps: log2 of the participants.
    pub fn steps(&self) -> u32 {
        self.steps.len() as u32
    }

    /// Participant x's peer at step k.
    pub fn peer(&self, x: usize, k: u32) -> usize {
        let (d, j) = self.steps[k as usize];
        let (stride, n) = self.dims[d];
        let c = (x / stride) % n;
        x - c * stride + swing_peer(c, j, n, self.turn) * stride
    }

    /// x's place in the block order (of a butterfly not reversed).
    pub fn pos(&self, x: usize) -> usize {
        self.pos[x] as usize
    }

    /// The participant at place i.
    pub fn at(&self, i: usize) -> usize {
        self.order[i] as usize
    }

    /// The places of `B(x, k)`: an aligned run of 2^(S−k).
    pub fn block(&self, x: usize, k: u32) -> (usize, usize) {
        let len = 1usize << (self.steps() - k);
        let start = self.pos(x) & !(len - 1);
        (start, start + len)
    }

    /// The places of the blocks participant x hands its peer at step k of
    /// a reduce-scatter, as runs: `B(π(x, k), k+1)`, one aligned run, on
    /// rings of powers of two; on others the blocks whose last hand-on
    /// from x is at step k (see the module's comment), in as many runs as
    /// the block order leaves them.
    pub fn sends(&self, x: usize, k: u32) -> Vec<(usize, usize)> {
        if self.last.is_none() {
            return vec![self.block(self.peer(x, k), k + 1)];
        }
        let mut places: Vec<usize> = self.by_step[k as usize]
            .iter()
            .map(|&t| self.pos(self.moved(x, t as usize)))
            .collect();
        places.sort_unstable();
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for i in places {
            match runs.last_mut() {
                Some(r) if r.1 == i => r.1 += 1,
                _ => runs.push((i, i + 1)),
            }
        }
        runs
    }

    /// Whether some ring is not a power of two (so that a step's blocks
    /// may take several runs).
    pub fn uneven(&self) -> bool {
        self.last.is_some()
    }

    /// The participant at offsets `t` from x: the image of t under the map
    /// of the butterfly onto itself that takes 0 to x (per ring, c ↦ x + c
    /// where x is even, c ↦ x − c where it is odd: both keep the peers).
    fn moved(&self, x: usize, t: usize) -> usize {
        let mut b = 0;
        for &(stride, n) in &self.dims {
            let (c, o) = ((x / stride) % n, (t / stride) % n);
            let to = if c.is_multiple_of(2) {
                (c + o) % n
            } else {
                (c + n - o) % n
            };
            b += to * stride;
        }
        b
    }

    /// The offsets of b from x (the inverse of [`Butterfly::moved`]).
    fn offsets(&self, x: usize, b: usize) -> usize {
        let mut t = 0;
        for &(stride, n) in &self.dims {
            let (c, to) = ((x / stride) % n, (b / stride) % n);
            let o = if c.is_multiple_of(2) {
                (to + n - c) % n
            } else {
                (c + n - to) % n
            };
            t += o * stride;
        }
        t
    }

    /// The step at which x hands on block b in a reduce-scatter on rings
    /// not all powers of two.
    fn last_step(&self, x: usize, b: usize) -> u32 {
        self.last.as_ref().map_or(0, |l| l[self.offsets(x, b)])
    }

    /// The block order and hand-on steps of a butterfly whose rings are
    /// not all powers of two (see the module's comment), proven to route
    /// every block to its owner along one tree.
    fn number_uneven(&mut self) -> Result<()> {
        let (s, n) = (self.steps(), self.len());
        // The walk of B(0, 0), each participant at its first visit.
        let mut stack = vec![(0usize, 0u32)];
        while let Some((y, k)) = stack.pop() {
            if k == s {
                if self.pos[y] == u32::MAX {
                    self.pos[y] = self.order.len() as u32;
                    self.order.push(y as u32);
                }
                continue;
            }
            stack.push((self.peer(y, k), k + 1));
            stack.push((y, k + 1));
        }
        if self.order.len() != n {
            return Err(fail!(
                Algorithm,
                Shape,
                "the Swing steps reach {} of {n} participants",
                self.order.len()
            ));
        }
        // last[b]: the latest step k whose peer π(0, k) reaches b by steps
        // after k (b itself included).
        let mut last = vec![u32::MAX; n];
        let mut seen = vec![u32::MAX; n];
        for k in (0..s).rev() {
            let mut reach = vec![self.peer(0, k)];
            seen[reach[0]] = k;
            for j in k + 1..s {
                for i in 0..reach.len() {
                    let w = self.peer(reach[i], j);
                    if seen[w] != k {
                        seen[w] = k;
                        reach.push(w);
                    }
                }
            }
            for b in reach {
                if last[b] == u32::MAX {
                    last[b] = k;
                }
            }
        }
        last[0] = s;
        if let Some(b) = last.iter().position(|&k| k == u32::MAX) {
            return Err(fail!(
                Algorithm,
                Shape,
                "the Swing steps never reach participant {b} from 0"
            ));
        }
        self.by_step = vec![Vec::new(); s as usize];
        for (t, &k) in last.iter().enumerate() {
            if k < s {
                self.by_step[k as usize].push(t as u32);
            }
        }
        self.last = Some(last);
        // Every block goes on from where it lands at a later step (or has
        // arrived): one tree per block. The maps of `moved` carry 0's
        // proof to every participant.
        for b in 1..n {
            let k = self.last_step(0, b);
            let y = self.peer(0, k);
            if y != b && self.last_step(y, b) <= k {
                return Err(fail!(
                    Algorithm,
                    Shape,
                    "the Swing block {b} lands on {y} at step {k} after it left"
                ));
            }
        }
        Ok(())
    }

    /// Numbers the participants by a walk of B(0, 0) and proves every
    /// B(x, k) an aligned run (so that every block message is contiguous).
    fn number(&mut self) -> Result<()> {
        let s = self.steps();
        // Depth-first, explicit stack: (participant, step).
        let mut stack = vec![(0usize, 0u32)];
        while let Some((y, k)) = stack.pop() {
            if k == s {
                self.order.push(y as u32);
                continue;
            }
            stack.push((self.peer(y, k), k + 1));
            stack.push((y, k + 1));
        }
        for (i, &x) in self.order.iter().enumerate() {
            if self.pos[x as usize] != u32::MAX {
                return Err(fail!(
                    Algorithm,
                    Shape,
                    "the Swing steps reach participant {x} twice"
                ));
            }
            self.pos[x as usize] = i as u32;
        }
        for x in 0..self.len() {
            for k in 0..s {
                let shift = s - k - 1;
                if self.pos(self.peer(x, k)) >> shift != (self.pos(x) >> shift) ^ 1 {
                    return Err(fail!(
                        Algorithm,
                        Shape,
                        "the Swing blocks of participant {x} at step {k} are not one run"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Where a butterfly's blocks live for one rank: `region(a, b)` the places
/// a..b (contiguous by construction), `real(q)` the rank of participant q;
/// a step's blocks that are more than one run go as one message, packed
/// in Scratch at `stage` (sent) and `stage + stage_len` (received).
pub(crate) struct Blocks<'a> {
    pub region: &'a dyn Fn(usize, usize) -> Region,
    pub real: &'a dyn Fn(usize) -> u32,
    pub stage: u64,
    pub stage_len: u64,
}

impl Blocks<'_> {
    /// The non-empty regions of some runs of places.
    fn regions(&self, runs: &[(usize, usize)]) -> Vec<Region> {
        runs.iter()
            .map(|&(a, b)| (self.region)(a, b))
            .filter(|r| r.count > 0)
            .collect()
    }

    /// Sends the places `runs` to `peer` as one message; pushes what the
    /// next step waits for onto `next`.
    fn send(
        &self,
        prog: &mut Program,
        peer: u32,
        tag: u32,
        runs: &[(usize, usize)],
        deps: &[OpId],
        next: &mut Vec<OpId>,
    ) {
        let regions = self.regions(runs);
        if let [one] = regions[..] {
            next.push(prog.push(Op::send(peer, tag, one), deps));
        } else if !regions.is_empty() {
            let mut at = self.stage;
            let packed: Vec<OpId> = regions
                .iter()
                .map(|r| {
                    at += r.count;
                    prog.push(Op::copy(*r, Region::scratch(at - r.count, r.count)), deps)
                })
                .collect();
            let all = Region::scratch(self.stage, at - self.stage);
            next.push(prog.push(Op::send(peer, tag, all), &packed));
        }
    }

    /// Receives the places `runs` from `peer` as one message, combining
    /// them in when `combine`; pushes what the next step waits for.
    #[allow(clippy::too_many_arguments)]
    fn recv(
        &self,
        prog: &mut Program,
        peer: u32,
        tag: u32,
        runs: &[(usize, usize)],
        combine: bool,
        deps: &[OpId],
        next: &mut Vec<OpId>,
    ) {
        let regions = self.regions(runs);
        if let [one] = regions[..] {
            let op = if combine {
                Op::recv_combine(peer, tag, one)
            } else {
                Op::recv(peer, tag, one)
            };
            next.push(prog.push(op, deps));
        } else if !regions.is_empty() {
            let total: u64 = regions.iter().map(|r| r.count).sum();
            let base = self.stage + self.stage_len;
            let recv = prog.push(Op::recv(peer, tag, Region::scratch(base, total)), deps);
            let mut at = base;
            for r in regions {
                let part = Region::scratch(at, r.count);
                at += r.count;
                let op = if combine {
                    Op::combine(part, r)
                } else {
                    Op::copy(part, r)
                };
                next.push(prog.push(op, &[recv]));
            }
        }
    }
}

/// The Scratch a step's packed message needs on `bf` with blocks at
/// `region` (0 where every message is one run).
pub(crate) fn stage_len(bf: &Butterfly, region: &dyn Fn(usize, usize) -> Region) -> u64 {
    if !bf.uneven() {
        return 0;
    }
    let mut most = 0;
    for x in 0..bf.len() {
        for k in 0..bf.steps() {
            let runs = bf.sends(x, k);
            if runs.len() > 1 {
                most = most.max(runs.iter().map(|&(a, b)| region(a, b).count).sum());
            }
        }
    }
    most
}

/// A reduce-scatter on `bf` for participant `q`: at step k = 0, 1, …, send
/// the peer the blocks q hands on at k (`B(peer, k+1)` on powers of two)
/// and receive-combine those the peer hands q (tags `tag0 + k`); q ends
/// holding place `pos(q)` reduced. Empty regions are not sent. `deps`
/// becomes what the next ops wait for.
pub(crate) fn reduce_scatter(
    prog: &mut Program,
    bf: &Butterfly,
    q: usize,
    at: &Blocks,
    tag0: u32,
    deps: &mut Vec<OpId>,
) {
    for k in 0..bf.steps() {
        let y = bf.peer(q, k);
        let (peer, tag) = ((at.real)(y), tag0 + k);
        let mut next = Vec::new();
        at.send(prog, peer, tag, &bf.sends(q, k), deps, &mut next);
        at.recv(prog, peer, tag, &bf.sends(y, k), true, deps, &mut next);
        if !next.is_empty() {
            *deps = next;
        }
    }
}

/// An allgather on `bf` for participant `q`, the reduce-scatter reversed:
/// at step k = S−1, …, 0, send what the peer handed q at k and receive
/// what q handed it (tags `tag0 + k`); q starts holding place `pos(q)`
/// and ends holding all.
pub(crate) fn allgather(
    prog: &mut Program,
    bf: &Butterfly,
    q: usize,
    at: &Blocks,
    tag0: u32,
    deps: &mut Vec<OpId>,
) {
    for k in (0..bf.steps()).rev() {
        let y = bf.peer(q, k);
        let (peer, tag) = ((at.real)(y), tag0 + k);
        let mut next = Vec::new();
        at.send(prog, peer, tag, &bf.sends(y, k), deps, &mut next);
        at.recv(prog, peer, tag, &bf.sends(q, k), false, deps, &mut next);
        if !next.is_empty() {
            *deps = next;
        }
    }
}

/// Blocks held in Scratch in a butterfly's block order, each the image of
/// a piece of the Output (the block collectives, whose Output is in rank
/// order): place i of Scratch, from `base`, holds participant `at(i)`'s
/// piece.
pub(crate) struct Layout {
    /// The participant at each place.
    order: Vec<usize>,
    /// Scratch offset of each place (one past the last at the end).
    off: Vec<u64>,
    /// Output (offset, length) of each participant's piece.
    out: Vec<(u64, u64)>,
}

impl Layout {
    /// In `bf`'s block order.
    pub fn new(bf: &Butterfly, base: u64, out: Vec<(u64, u64)>) -> Layout {
        Layout::ordered((0..bf.len()).map(|i| bf.at(i)).collect(), base, out)
    }

    /// In the order `order` (the participant at each place).
    pub fn ordered(order: Vec<usize>, base: u64, out: Vec<(u64, u64)>) -> Layout {
        let mut off = Vec::with_capacity(order.len() + 1);
        off.push(base);
        for (i, &q) in order.iter().enumerate() {
            off.push(off[i] + out[q].1);
        }
        Layout { order, off, out }
    }

    /// Scratch elements used, from the base.
    pub fn len(&self) -> u64 {
        self.off[self.off.len() - 1] - self.off[0]
    }

    /// The Scratch region of places a..b.
    pub fn region(&self, a: usize, b: usize) -> Region {
        Region::scratch(self.off[a], self.off[b] - self.off[a])
    }

    /// Participant q's piece of the Output.
    pub fn piece(&self, q: usize) -> Region {
        Region::output(self.out[q].0, self.out[q].1)
    }

    /// Copies of every participant's piece of `buf` to its place,
    /// neighbouring ones merged into one; each waits for `deps`. Returns
    /// the copies.
    pub fn copies_in(&self, prog: &mut Program, buf: Buf, deps: &[OpId]) -> Vec<OpId> {
        self.runs(buf)
            .into_iter()
            .map(|(scr, piece)| prog.push(Op::copy(piece, scr), deps))
            .collect()
    }

    /// Copies of every place to its participant's piece of the Output,
    /// neighbouring ones merged into one; each waits for `deps`. Returns
    /// the copies.
    pub fn copies_out(&self, prog: &mut Program, deps: &[OpId]) -> Vec<OpId> {
        self.runs(Buf::Output)
            .into_iter()
            .map(|(scr, piece)| prog.push(Op::copy(scr, piece), deps))
            .collect()
    }

    /// The runs of places whose pieces follow each other in `buf` too:
    /// (Scratch, `buf`) region pairs.
    fn runs(&self, buf: Buf) -> Vec<(Region, Region)> {
        let mut runs: Vec<(u64, u64, u64)> = Vec::new();
        for (i, &q) in self.order.iter().enumerate() {
            let (o, len) = self.out[q];
            if len == 0 {
                continue;
            }
            match runs.last_mut() {
                Some((s, d, l)) if *s + *l == self.off[i] && *d + *l == o => *l += len,
                _ => runs.push((self.off[i], o, len)),
            }
        }
        runs.into_iter()
            .map(|(s, o, len)| (Region::scratch(s, len), Region::new(buf, o, len)))
            .collect()
    }
}

/// A Bine tree over `p` ranks rooted at relative rank 0: Swing's
/// butterfly with the steps taken S−1 first, so that the root's first
/// child is the farthest (|ρ(S−1)|) and the distances shrink towards the
/// leaves. At each step after the one it receives at, a participant sends
/// to its peer of that step.
///
/// The tree is defined on a power of two. On other counts the reference
/// code has no Bine tree (HLC-Lab/pico, `libbine/libbine_bcast.c` and
/// `libbine_scatter.c` refuse them; HLC-Lab/bine-trees lists it as to do,
/// "similarly to standard binomial trees"), so the ranks fold as its
/// allreduce folds them (`libbine/libbine_allreduce.c`,
/// `allreduce_bine_lat`): of P = 2^S + e, the first 2e relative ranks
/// pair up with their neighbour, the odd one of each pair sitting out and
/// served by the even one, and the 2^S participants (the even ones below
/// 2e, every one from 2e on) run the tree. The root, relative rank 0, is
/// always a participant. The pairs are neighbours, so the extra hop is
/// the shortest: a participant serves its partner after its tree sends,
/// as a last step of distance 1.
pub(crate) struct BineTree {
    /// Over the 2^S participants.
    pub bf: Butterfly,
    /// Ranks (relative ranks 0..p).
    pub p: usize,
    /// Each participant's (step, parent participant): when and from whom
    /// it receives (None for the root).
    pub parent: Vec<Option<(u32, usize)>>,
    /// Each participant's place in the ranks' preorder (children farthest
    /// first, each participant followed by its partner), where every
    /// subtree is one run, and the ranks in its subtree (partners
    /// included).
    pub pre: Vec<usize>,
    pub size: Vec<usize>,
}

/// Where a relative rank stands in a [`BineTree`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seat {
    /// Participant q of the tree.
    Runs(usize),
    /// Sits out, served by the participant just below it (relative rank
    /// v − 1).
    SitsOut,
}

impl BineTree {
    /// Relative ranks beyond the power of two.
    fn extra(&self) -> usize {
        self.p - self.bf.len()
    }

    /// Relative rank v's seat.
    pub fn seat(&self, v: usize) -> Seat {
        let e = self.extra();
        if v < 2 * e {
            if v % 2 == 1 {
                Seat::SitsOut
            } else {
                Seat::Runs(v / 2)
            }
        } else {
            Seat::Runs(v - e)
        }
    }

    /// Participant q's relative rank.
    pub fn rank(&self, q: usize) -> usize {
        if q < self.extra() {
            2 * q
        } else {
            q + self.extra()
        }
    }

    /// The relative rank participant q serves, if any.
    pub fn partner(&self, q: usize) -> Option<usize> {
        (q < self.extra()).then(|| 2 * q + 1)
    }
}

pub(crate) fn bine_tree(p: usize) -> Result<BineTree> {
    if p == 0 {
        return Err(fail!(
            Algorithm,
            Shape,
            "a Bine tree needs at least one rank"
        ));
    }
    let n = 1usize << p.ilog2();
    let bf = Butterfly::torus(&[(1, n)], 0, Turn::Swing, StepOrder::Reversed)?;
    let mut parent: Vec<Option<(u32, usize)>> = vec![None; n];
    let mut informed = vec![0usize];
    for k in 0..bf.steps() {
        for i in 0..informed.len() {
            let child = bf.peer(informed[i], k);
            if child == 0 || parent[child].is_some() {
                return Err(fail!(
                    Algorithm,
                    Shape,
                    "the Bine tree reaches rank {child} twice"
                ));
            }
            parent[child] = Some((k, informed[i]));
            informed.push(child);
        }
    }
    let mut tree = BineTree {
        bf,
        p,
        parent,
        pre: vec![0; n],
        size: vec![0; n],
    };
    // Subtree sizes, leaves first (a child is informed after its parent):
    // a participant and its partner, then its children's.
    for &q in informed.iter().rev() {
        tree.size[q] += 1 + usize::from(tree.partner(q).is_some());
        if let Some((_, up)) = tree.parent[q] {
            tree.size[up] += tree.size[q];
        }
    }
    let mut stack = vec![(0usize, 0usize)];
    while let Some((q, at)) = stack.pop() {
        tree.pre[q] = at;
        let first = tree.parent[q].map_or(0, |(k, _)| k + 1);
        let mut next = at + 1 + usize::from(tree.partner(q).is_some());
        for k in first..tree.bf.steps() {
            let child = tree.bf.peer(q, k);
            stack.push((child, next));
            next += tree.size[child];
        }
    }
    Ok(tree)
}

/// The dimensions of a grid request for a torus Swing: (stride, length) of
/// each dimension.
pub(crate) fn grid_dims(
    req: &super::Request,
    alg: &super::Algorithm,
) -> Result<Vec<(usize, usize)>> {
    let (_, shape) = super::alltoall::grid_of(req, alg)?;
    let mut stride = 1;
    let mut dims = Vec::new();
    for &n in &shape.dims {
        dims.push((stride, n));
        stride *= n;
    }
    Ok(dims)
}

/// Ranks folded onto a smaller grid before a Swing allreduce and given the
/// result after, one dimension at a time as the authors' reference code
/// does: in a dimension of n kept to m, coordinate c ≥ m hands its buffer
/// to c − (n − m), which combines it in, and sits out until it gets the
/// result back; the dimensions fold in order and unfold in reverse.
pub(crate) struct Shrink {
    /// (stride, length, kept length) of each dimension.
    dims: Vec<(usize, usize, usize)>,
}

impl Shrink {
    /// Odd dimensions lose their last coordinate (the bandwidth-optimal
    /// Swing, whose peers pair up only on rings of even length).
    pub fn even(dims: &[(usize, usize)]) -> Shrink {
        let keep = |n: usize| if n % 2 == 1 && n > 1 { n - 1 } else { n };
        Shrink {
            dims: dims.iter().map(|&(s, n)| (s, n, keep(n))).collect(),
        }
    }

    /// Dimensions not a power of two shrink to the power of two below (the
    /// latency-optimal Swing, whose whole-buffer exchanges would count a
    /// contribution twice where a ring's steps reach a rank twice).
    pub fn pow2(dims: &[(usize, usize)]) -> Shrink {
        let keep = |n: usize| {
            if n.is_power_of_two() {
                n
            } else {
                1 << n.ilog2()
            }
        };
        Shrink {
            dims: dims.iter().map(|&(s, n)| (s, n, keep(n))).collect(),
        }
    }

    /// Whether any rank sits out.
    pub fn folds(&self) -> bool {
        self.dims.iter().any(|d| d.2 < d.1)
    }

    /// The kept grid, (stride, length) in its own numbering.
    pub fn kept(&self) -> Vec<(usize, usize)> {
        let mut stride = 1;
        self.dims
            .iter()
            .map(|&(_, _, m)| {
                stride *= m;
                (stride / m, m)
            })
            .collect()
    }

    /// Rank r's index in the kept grid, None if it sits out.
    pub fn participant(&self, r: usize) -> Option<usize> {
        let mut q = 0;
        let mut stride = 1;
        for &(s, n, m) in &self.dims {
            let c = (r / s) % n;
            if c >= m {
                return None;
            }
            q += c * stride;
            stride *= m;
        }
        Some(q)
    }

    /// The rank of kept participant q.
    pub fn real(&self, q: usize) -> u32 {
        let mut r = 0;
        let mut rest = q;
        for &(s, _, m) in &self.dims {
            r += (rest % m) * s;
            rest /= m;
        }
        r as u32
    }

    /// The ranks rank r takes in, in the order it takes them (one in each
    /// dimension where a rank folds into it), and where it sits out: the
    /// dimension and the rank it hands all it holds to. (The folding of
    /// [`Shrink::fold_in`], for the collectives that gather blocks instead
    /// of combining buffers.)
    pub fn takes_in(&self, r: usize) -> (Vec<usize>, Option<(usize, usize)>) {
        let mut from = Vec::new();
        for (d, &(s, n, m)) in self.dims.iter().enumerate() {
            let (c, e) = ((r / s) % n, n - m);
            if c >= m {
                return (from, Some((d, r - e * s)));
            }
            if c + e >= m {
                from.push(r + e * s);
            }
        }
        (from, None)
    }

    /// Each rank's ranks after the folding: itself, then what each rank it
    /// took in held, in the order it took them in.
    pub fn sets(&self, p: usize) -> Vec<Vec<usize>> {
        fn set(sh: &Shrink, r: usize, memo: &mut Vec<Option<Vec<usize>>>) -> Vec<usize> {
            if let Some(s) = &memo[r] {
                return s.clone();
            }
            let mut out = vec![r];
            for f in sh.takes_in(r).0 {
                out.extend(set(sh, f, memo));
            }
            memo[r] = Some(out.clone());
            out
        }
        let mut memo = vec![None; p];
        (0..p).map(|r| set(self, r, &mut memo)).collect()
    }

    /// Rank r's folding in of `all` (through `tmp`, tag `tag`): the ops a
    /// participant's Swing waits for, and for a rank that sits out the
    /// dimension it sat out in.
    pub fn fold_in(
        &self,
        prog: &mut Program,
        r: usize,
        all: Region,
        tmp: Region,
        tag: u32,
    ) -> (Vec<OpId>, Option<usize>) {
        let mut deps = Vec::new();
        for (d, &(s, n, m)) in self.dims.iter().enumerate() {
            let (c, e) = ((r / s) % n, n - m);
            if c >= m {
                let send = prog.push(Op::send((r - e * s) as u32, tag, all), &deps);
                return (vec![send], Some(d));
            }
            if c + e >= m {
                let recv = prog.push(Op::recv((r + e * s) as u32, tag, tmp), &deps);
                deps = vec![prog.push(Op::combine(tmp, all), &[recv])];
            }
        }
        (deps, None)
    }

    /// Rank r's unfolding: the result in `all` goes back (tag `tag`) to
    /// every rank folded into r, after `deps`; a rank that sat out in
    /// dimension `out` first gets it.
    pub fn fold_out(
        &self,
        prog: &mut Program,
        r: usize,
        all: Region,
        tag: u32,
        out: Option<usize>,
        deps: &[OpId],
    ) {
        let mut deps = deps.to_vec();
        for (d, &(s, n, m)) in self.dims.iter().enumerate().rev() {
            let (c, e) = ((r / s) % n, n - m);
            if out.is_some_and(|o| d > o) || e == 0 {
                continue;
            }
            if out == Some(d) {
                deps = vec![prog.push(Op::recv((r - e * s) as u32, tag, all), &deps)];
            } else if c + e >= m {
                prog.push(Op::send((r + e * s) as u32, tag, all), &deps);
            }
        }
    }
}

/// The ports of a torus Swing: one butterfly per direction of each
/// dimension of size > 1 (2·D of them, each starting on its own dimension
/// and the second D mirrored), as the paper runs one collective per port
/// on its own part of the data; one butterfly where there is no dimension.
pub(crate) fn ports(dims: &[(usize, usize)]) -> Result<Vec<Butterfly>> {
    let big = dims.iter().filter(|d| d.1 > 1).count();
    let forward = StepOrder::Forward;
    if big == 0 {
        return Ok(vec![Butterfly::torus(dims, 0, Turn::Swing, forward)?]);
    }
    (0..2 * big)
        .map(|j| {
            let turn = if j < big { Turn::Swing } else { Turn::Mirrored };
            Butterfly::torus(dims, j % big, turn, forward)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rho_is_the_papers_sequence() {
        let got: Vec<i64> = (0..6).map(rho).collect();
        assert_eq!(got, [1, -1, 3, -5, 11, -21]);
    }

    /// Every ring and torus of powers of two up to 2^10 is a butterfly
    /// whose blocks are runs, mirrored or not, either step order.
    #[test]
    fn swing_blocks_are_runs() {
        for s in 0..=10 {
            for turn in [Turn::Swing, Turn::Mirrored] {
                Butterfly::torus(&[(1, 1 << s)], 0, turn, StepOrder::Forward).unwrap();
            }
            bine_tree(1 << s).unwrap();
            bine_tree((1 << s) + 1 + s).unwrap();
        }
        for dims in [[4, 8, 2], [2, 2, 2], [16, 1, 4]] {
            let mut stride = 1;
            let d: Vec<(usize, usize)> = dims
                .iter()
                .map(|&n| {
                    stride *= n;
                    (stride / n, n)
                })
                .collect();
            for b in ports(&d).unwrap() {
                assert_eq!(b.len(), dims.iter().product::<usize>());
            }
        }
    }

    /// Every even ring up to 1,024 and tori of even dimensions route every
    /// block along one tree (`number_uneven`'s proof), hand each rank's
    /// blocks on exactly once, in ⌈log2 n⌉ steps per ring; odd rings are
    /// refused.
    #[test]
    fn swing_on_even_rings_hands_every_block_on_once() {
        for n in (2..=1024).step_by(2) {
            for turn in [Turn::Swing, Turn::Mirrored] {
                let b = Butterfly::torus(&[(1, n)], 0, turn, StepOrder::Forward).unwrap();
                assert_eq!(b.steps(), usize::BITS - (n - 1).leading_zeros());
                if n <= 64 {
                    for x in 0..n {
                        let mut sent: Vec<usize> = (0..b.steps())
                            .flat_map(|k| b.sends(x, k))
                            .flat_map(|(a, e)| a..e)
                            .collect();
                        sent.sort_unstable();
                        let mut others: Vec<usize> =
                            (0..n).filter(|&y| y != x).map(|y| b.pos(y)).collect();
                        others.sort_unstable();
                        assert_eq!(sent, others, "ring {n}, participant {x}");
                    }
                }
            }
        }
        for dims in [[6, 4, 1], [2, 6, 10], [6, 6, 2], [12, 2, 6]] {
            let mut stride = 1;
            let d: Vec<(usize, usize)> = dims
                .iter()
                .map(|&n| {
                    stride *= n;
                    (stride / n, n)
                })
                .collect();
            for b in ports(&d).unwrap() {
                assert!(b.uneven());
                assert_eq!(b.len(), dims.iter().product::<usize>());
            }
        }
        // On rings of 3·2^k every step's blocks are one run.
        for k in 1..8 {
            let b = Butterfly::ring(3 << k).unwrap();
            for x in 0..b.len() {
                assert!(
                    (0..b.steps()).all(|j| b.sends(x, j).len() <= 1),
                    "ring {}",
                    b.len()
                );
            }
        }
        assert!(Butterfly::ring(6).is_ok());
        assert!(Butterfly::ring(7).is_err());
    }
}
