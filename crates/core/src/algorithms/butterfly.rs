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
//! On a torus each dimension of size > 1 (a power of two) has its own
//! ring's steps, and the steps take the dimensions in turn, starting from
//! a given one, skipping those whose steps are done (the paper's
//! multidimensional Swing); a rank's parity in a step is that of its
//! coordinate in the step's dimension.
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
//! the distances shrink towards the leaves.

use crate::error::Result;
use crate::invalid;
use crate::schedule::{Buf, Op, OpId, Program, Region};

/// `ρ(j) = Σ_{i=0}^{j} (−2)^i`.
pub(crate) fn rho(j: u32) -> i64 {
    (1 - (-2i64).pow(j + 1)) / 3
}

/// Swing's peer of coordinate `c` at its ring's step `j` on a ring of `n`.
pub(crate) fn swing_peer(c: usize, j: u32, n: usize, mirror: bool) -> usize {
    let d = rho(j).rem_euclid(n as i64) as usize;
    if c.is_multiple_of(2) != mirror {
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
    mirror: bool,
    /// `pos[x]`: x's place in the block order.
    pos: Vec<u32>,
    /// `order[i]`: the participant at place i.
    order: Vec<u32>,
}

impl Butterfly {
    /// A ring of `n` participants (a power of two).
    pub fn ring(n: usize, mirror: bool) -> Result<Butterfly> {
        Butterfly::torus(&[(1, n)], 0, mirror, false)
    }

    /// A torus of dimensions (stride, length), every length a power of two
    /// (lengths of 1 are left out), the steps taking the dimensions in turn
    /// from `first`; `reversed` runs the steps in the other order (the Bine
    /// trees').
    pub fn torus(
        dims: &[(usize, usize)],
        first: usize,
        mirror: bool,
        reversed: bool,
    ) -> Result<Butterfly> {
        let dims: Vec<(usize, usize)> = dims.iter().copied().filter(|d| d.1 > 1).collect();
        if let Some(&(_, n)) = dims.iter().find(|d| !d.1.is_power_of_two()) {
            return Err(invalid!(
                "a Swing butterfly needs rings of a power of two, not {n}"
            ));
        }
        let mut left: Vec<u32> = dims.iter().map(|d| d.1.trailing_zeros()).collect();
        let total: u32 = left.iter().sum();
        let mut steps = Vec::with_capacity(total as usize);
        let mut t = first;
        while steps.len() < total as usize {
            let d = t % dims.len();
            if left[d] > 0 {
                let done = dims[d].1.trailing_zeros() - left[d];
                steps.push((d, done));
                left[d] -= 1;
            }
            t += 1;
        }
        if reversed {
            steps.reverse();
        }
        let n: usize = dims.iter().map(|d| d.1).product();
        let mut b = Butterfly {
            dims,
            steps,
            mirror,
            pos: vec![u32::MAX; n],
            order: Vec::with_capacity(n),
        };
        // The block order is the forward steps' (the reversed steps' sets
        // are not aligned runs of it; the Bine trees number their own).
        if !reversed {
            b.number()?;
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
        x - c * stride + swing_peer(c, j, n, self.mirror) * stride
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
                return Err(invalid!("the Swing steps reach participant {x} twice"));
            }
            self.pos[x as usize] = i as u32;
        }
        for x in 0..self.len() {
            for k in 0..s {
                let shift = s - k - 1;
                if self.pos(self.peer(x, k)) >> shift != (self.pos(x) >> shift) ^ 1 {
                    return Err(invalid!(
                        "the Swing blocks of participant {x} at step {k} are not one run"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Where a butterfly's blocks live for one rank: `region(a, b)` the places
/// a..b (contiguous by construction), `real(q)` the rank of participant q.
pub(crate) struct Blocks<'a> {
    pub region: &'a dyn Fn(usize, usize) -> Region,
    pub real: &'a dyn Fn(usize) -> u32,
}

/// A reduce-scatter on `bf` for participant `q`: at step k = 0, 1, …, send
/// the peer's `B(peer, k+1)` and receive-combine one's own `B(q, k+1)`
/// (tags `tag0 + k`); q ends holding place `pos(q)` reduced. Empty
/// regions are not sent. `deps` becomes what the next ops wait for.
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
        let (give, keep) = (bf.block(y, k + 1), bf.block(q, k + 1));
        let (give, keep) = ((at.region)(give.0, give.1), (at.region)(keep.0, keep.1));
        let mut next = Vec::new();
        if give.count > 0 {
            next.push(prog.push(Op::send(peer, tag, give), deps));
        }
        if keep.count > 0 {
            next.push(prog.push(Op::recv_combine(peer, tag, keep), deps));
        }
        if !next.is_empty() {
            *deps = next;
        }
    }
}

/// An allgather on `bf` for participant `q`, the reduce-scatter reversed:
/// at step k = S−1, …, 0, send `B(q, k+1)` and receive `B(peer, k+1)`
/// (tags `tag0 + k`); q starts holding place `pos(q)` and ends holding all.
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
        let (mine, theirs) = (bf.block(q, k + 1), bf.block(y, k + 1));
        let (mine, theirs) = ((at.region)(mine.0, mine.1), (at.region)(theirs.0, theirs.1));
        let mut next = Vec::new();
        if mine.count > 0 {
            next.push(prog.push(Op::send(peer, tag, mine), deps));
        }
        if theirs.count > 0 {
            next.push(prog.push(Op::recv(peer, tag, theirs), deps));
        }
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

    /// Copies between every place and its Output piece (into Scratch when
    /// `to_scratch`), neighbouring ones merged into one; each waits for
    /// `deps`. Returns the copies.
    pub fn copies(&self, prog: &mut Program, to_scratch: bool, deps: &[OpId]) -> Vec<OpId> {
        self.copies_with(prog, Buf::Output, to_scratch, deps)
    }

    /// [`Layout::copies`] with the pieces in buffer `buf`.
    pub fn copies_with(
        &self,
        prog: &mut Program,
        buf: Buf,
        to_scratch: bool,
        deps: &[OpId],
    ) -> Vec<OpId> {
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
            .map(|(s, o, len)| {
                let (scr, out) = (Region::scratch(s, len), Region::new(buf, o, len));
                let op = if to_scratch {
                    Op::copy(out, scr)
                } else {
                    Op::copy(scr, out)
                };
                prog.push(op, deps)
            })
            .collect()
    }
}

/// A Bine tree over `p` ranks (a power of two) rooted at relative rank 0:
/// Swing's butterfly with the steps taken S−1 first, so that the root's
/// first child is the farthest (|ρ(S−1)|) and the distances shrink towards
/// the leaves. At each step after the one it receives at, a rank sends to
/// its peer of that step.
pub(crate) struct BineTree {
    pub bf: Butterfly,
    /// Each relative rank's (step, parent): when and from whom it receives
    /// (None for the root).
    pub parent: Vec<Option<(u32, usize)>>,
    /// Each rank's place in the tree's preorder (children farthest first),
    /// where every subtree is one run, and its subtree's size.
    pub pre: Vec<usize>,
    pub size: Vec<usize>,
}

pub(crate) fn bine_tree(p: usize) -> Result<BineTree> {
    let bf = Butterfly::torus(&[(1, p)], 0, false, true)?;
    let mut parent: Vec<Option<(u32, usize)>> = vec![None; p];
    let mut informed = vec![0usize];
    for k in 0..bf.steps() {
        for i in 0..informed.len() {
            let child = bf.peer(informed[i], k);
            if child == 0 || parent[child].is_some() {
                return Err(invalid!("the Bine tree reaches rank {child} twice"));
            }
            parent[child] = Some((k, informed[i]));
            informed.push(child);
        }
    }
    // A subtree of a rank received at step k has 2^(S−k−1) ranks.
    let size: Vec<usize> = parent
        .iter()
        .map(|e| e.map_or(p, |(k, _)| 1 << (bf.steps() - k - 1)))
        .collect();
    let mut pre = vec![0; p];
    let mut stack = vec![(0usize, 0usize)];
    while let Some((v, at)) = stack.pop() {
        pre[v] = at;
        let first = parent[v].map_or(0, |(k, _)| k + 1);
        let mut next = at + 1;
        for k in first..bf.steps() {
            let child = bf.peer(v, k);
            stack.push((child, next));
            next += size[child];
        }
    }
    Ok(BineTree {
        bf,
        parent,
        pre,
        size,
    })
}

/// The dimensions of a grid request for a torus Swing: (stride, length) of
/// each dimension, refused unless every length is a power of two.
pub(crate) fn grid_dims(req: &super::Request, name: &str) -> Result<Vec<(usize, usize)>> {
    let (_, shape) = super::alltoall::grid_of(req, name)?;
    let mut stride = 1;
    let mut dims = Vec::new();
    for &n in &shape.dims {
        if !n.is_power_of_two() {
            return Err(req.unsupported(
                name,
                format!(
                    "needs every dimension a power of two, not {n} in {:?} (the rank-based variant takes any shape)",
                    shape.dims
                ),
            ));
        }
        dims.push((stride, n));
        stride *= n;
    }
    Ok(dims)
}

/// The ports of a torus Swing: one butterfly per direction of each
/// dimension of size > 1 (2·D of them, each starting on its own dimension
/// and the second D mirrored), as the paper runs one collective per port
/// on its own part of the data; one butterfly where there is no dimension.
pub(crate) fn ports(dims: &[(usize, usize)], reversed: bool) -> Result<Vec<Butterfly>> {
    let big = dims.iter().filter(|d| d.1 > 1).count();
    if big == 0 {
        return Ok(vec![Butterfly::torus(dims, 0, false, reversed)?]);
    }
    (0..2 * big)
        .map(|j| Butterfly::torus(dims, j % big, j >= big, reversed))
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
            for mirror in [false, true] {
                Butterfly::torus(&[(1, 1 << s)], 0, mirror, false).unwrap();
            }
            bine_tree(1 << s).unwrap();
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
            for b in ports(&d, false).unwrap() {
                assert_eq!(b.len(), dims.iter().product::<usize>());
            }
        }
    }
}
