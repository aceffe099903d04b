//! Swing's bandwidth-optimal allreduce (De Sensi et al., NSDI 2024, §3):
//! a reduce-scatter then an allgather on Swing's butterfly
//! (`algorithms::butterfly`). The buffer is cut into P chunks taken in the
//! butterfly's block order, so that what a rank hands its peer at each
//! step is one contiguous run: at step s = 0, 1, … a rank sends the half
//! of its current run its peer π(r, s) keeps and receive-combines the
//! peer's copy of its own half; the allgather runs the steps backwards.
//! Each chunk is combined on one rank only, then copied: every rank gets
//! the same bits.
//!
//! * `swing_bw`: rank-based, any network. For P not a power of two the
//!   paper's own scheme, as the authors' reference code runs it
//!   (`algorithms::butterfly`, "Rings that are not a power of two"): an
//!   even P takes ⌈log2 P⌉ steps, each block handed on at the latest step
//!   that reaches it, so that each rank sends every block but its own
//!   once; an odd P first folds rank P − 1 into P − 2.
//! * `swing_bw_torus`: on a mesh or torus of any shape, per-dimension
//!   Swing steps (⌈log2 d⌉ on a dimension of d), one part of the buffer
//!   per port (2·D parts, each its own reduce-scatter and allgather
//!   starting on its own dimension, the second D mirrored), as the paper
//!   runs it; odd dimensions first fold their last coordinate in.

use crate::butterfly::{self, Blocks, Butterfly, Shrink, StepOrder, Turn};
use crate::error::Result;
use crate::{Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::{chunk, CollectiveKind, OpId, Program, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "swing_bw", "Swing: reduce-scatter then allgather with rank ± ρ(s), one message a step, ⌈log2 P⌉ steps (odd P: one rank folds in)", build);

pub const TORUS: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "swing_bw_torus", "Swing reduce-scatter + allgather on a mesh or torus of any shape, one part of the buffer per port (odd dimensions fold one coordinate in)", build_torus).applies(Applies { topology: TopologyNeed::Grid, ranks: RankNeed::Any, root: RootNeed::Any });

/// Reduce-scatter then allgather over `bf` on the Output elements
/// `at..at + len`, cut into `bf.len()` chunks in block order; tags from
/// `tag0` (2·S of them); a step's blocks that are several runs are packed
/// in Scratch at `stage.0`, `stage.1` elements sent and as many received
/// (see [`stage_len`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn rs_ag(
    prog: &mut Program,
    bf: &Butterfly,
    q: usize,
    real: &dyn Fn(usize) -> u32,
    (at, len): (u64, u64),
    tag0: u32,
    stage: (u64, u64),
    deps: &mut Vec<OpId>,
) {
    let region = part_regions(bf, (at, len));
    let blocks = Blocks {
        region: &region,
        real,
        stage: stage.0,
        stage_len: stage.1,
    };
    butterfly::reduce_scatter(prog, bf, q, &blocks, tag0, deps);
    butterfly::allgather(prog, bf, q, &blocks, tag0 + bf.steps(), deps);
}

/// The regions of places a..b of the Output elements `at..at + len` cut
/// into `bf.len()` chunks.
fn part_regions(bf: &Butterfly, (at, len): (u64, u64)) -> impl Fn(usize, usize) -> Region {
    let parts = bf.len() as u64;
    let bound = move |i: usize| {
        at + if i as u64 >= parts {
            len
        } else {
            chunk(len, parts, i as u64).0
        }
    };
    move |a: usize, b: usize| Region::output(bound(a), bound(b) - bound(a))
}

/// The longest message [`rs_ag`] packs on `bf` for the part `part` (it
/// takes two Scratch areas of this length: sent and received).
pub(crate) fn stage_len(bf: &Butterfly, part: (u64, u64)) -> u64 {
    butterfly::stage_len(bf, &part_regions(bf, part))
}

fn build(req: &Request) -> Result<Schedule> {
    ring(req, &ALGORITHM)
}

/// The rank-based Swing allreduce as `alg`'s schedule (Bine's is the
/// same on a power of two).
pub(crate) fn ring(req: &Request, alg: &Algorithm) -> Result<Schedule> {
    grid(req, alg, &[(1, req.ranks)], Parts::Whole)
}

fn build_torus(req: &Request) -> Result<Schedule> {
    let dims = butterfly::grid_dims(req, &TORUS)?;
    grid(req, &TORUS, &dims, Parts::PerPort)
}

/// How [`grid`] lays its butterflies over the buffer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parts {
    /// One butterfly over the whole buffer (the rank-based variant).
    Whole,
    /// One part of the buffer per port, each its own butterfly (the torus
    /// variant).
    PerPort,
}

/// Swing's bandwidth-optimal allreduce on a grid of dimensions (stride,
/// length): odd dimensions fold their last coordinate in
/// ([`Shrink::even`]); one part of the buffer per port (tags from 0), or
/// one butterfly over the whole (tags from 1, the fold's 0 and 1 + 2·S).
fn grid(req: &Request, alg: &Algorithm, dims: &[(usize, usize)], split: Parts) -> Result<Schedule> {
    let mut s = req.schedule(alg);
    let n = req.count;
    if req.ranks == 1 || n == 0 {
        return Ok(s);
    }
    let shrink = Shrink::even(dims);
    let kept = shrink.kept();
    let bfs = match split {
        Parts::PerPort => butterfly::ports(&kept)?,
        Parts::Whole => vec![Butterfly::torus(&kept, 0, Turn::Swing, StepOrder::Forward)?],
    };
    let parts: Vec<(u64, u64)> = (0..bfs.len())
        .map(|j| chunk(n, bfs.len() as u64, j as u64))
        .collect();
    let steps = bfs[0].steps();
    let (tag0, tag_in, tag_out) = match split {
        Parts::PerPort => {
            let end = 2 * bfs.len() as u32 * steps;
            (0, end, end + 1)
        }
        Parts::Whole => (1, 0, 1 + 2 * steps),
    };
    // Scratch: the folded-in buffer, then each port's two stages.
    let tmp = if shrink.folds() { n } else { 0 };
    let mut stages = Vec::with_capacity(bfs.len());
    let mut scratch = tmp;
    for (bf, &part) in bfs.iter().zip(&parts) {
        let len = stage_len(bf, part);
        stages.push((scratch, len));
        scratch += 2 * len;
    }
    let real = |q: usize| shrink.real(q);
    let all = Region::output(0, n);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.scratch = scratch;
        let (deps, out) = shrink.fold_in(prog, r, all, Region::scratch(0, n), tag_in);
        let mut done = Vec::new();
        if let Some(q) = shrink.participant(r) {
            for (j, bf) in bfs.iter().enumerate() {
                let mut d = deps.clone();
                let tag = tag0 + 2 * j as u32 * steps;
                rs_ag(prog, bf, q, &real, parts[j], tag, stages[j], &mut d);
                done.extend(d);
            }
        } else {
            done = deps;
        }
        shrink.fold_out(prog, r, all, tag_out, out, &done);
    }
    Ok(s)
}
