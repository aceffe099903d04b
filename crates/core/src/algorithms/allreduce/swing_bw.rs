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
//!   extra ranks fold in as in `rabenseifner` (the paper's own scheme for
//!   such P is not implemented).
//! * `swing_bw_torus`: on a mesh or torus whose every dimension is a power
//!   of two, per-dimension Swing steps, one part of the buffer per port (2·D
//!   parts, each its own reduce-scatter and allgather starting on its own
//!   dimension, the second D mirrored), as the paper runs it.

use super::recursive_doubling::Fold;
use crate::algorithms::butterfly::{self, Blocks, Butterfly};
use crate::algorithms::{Algorithm, Request};
use crate::algorithms::{Applies, Counterparts, OpCount, RankNeed, RootNeed, TopologyNeed};
use crate::error::Result;
use crate::schedule::{chunk, CollectiveKind, OpId, Program, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Allreduce,
    name: "swing_bw",
    summary: "Swing: reduce-scatter then allgather with rank ± ρ(s), one contiguous run a step (fold for non-powers of two)",
    build,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: Applies::ANYWHERE,
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

pub const TORUS: Algorithm = Algorithm {
    collective: CollectiveKind::Allreduce,
    name: "swing_bw_torus",
    summary: "Swing reduce-scatter + allgather on a torus of powers of two, one part of the buffer per port",
    build: build_torus,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: Applies { topology: TopologyNeed::PowerOfTwoGrid, ranks: RankNeed::Any, root: RootNeed::Any },
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

/// Reduce-scatter then allgather over `bf` on the Output elements
/// `at..at + len`, cut into `bf.len()` chunks in block order; tags from
/// `tag0` (2·S of them).
pub(crate) fn rs_ag(
    prog: &mut Program,
    bf: &Butterfly,
    q: usize,
    real: &dyn Fn(usize) -> u32,
    (at, len): (u64, u64),
    tag0: u32,
    deps: &mut Vec<OpId>,
) {
    let parts = bf.len() as u64;
    let bound = |i: usize| {
        at + if i as u64 >= parts {
            len
        } else {
            chunk(len, parts, i as u64).0
        }
    };
    let region = |a: usize, b: usize| Region::output(bound(a), bound(b) - bound(a));
    let blocks = Blocks {
        region: &region,
        real,
    };
    butterfly::reduce_scatter(prog, bf, q, &blocks, tag0, deps);
    butterfly::allgather(prog, bf, q, &blocks, tag0 + bf.steps(), deps);
}

fn build(req: &Request) -> Result<Schedule> {
    ring(req, ALGORITHM.name)
}

/// The rank-based Swing allreduce, named `name` (Bine's is the same on a
/// power of two).
pub(crate) fn ring(req: &Request, name: &str) -> Result<Schedule> {
    let mut s = req.schedule(name);
    let (p, n) = (req.ranks, req.count);
    if p == 1 || n == 0 {
        return Ok(s);
    }
    let fold = Fold::new(p);
    let bf = Butterfly::ring(fold.p2, false)?;
    let last_tag = 1 + 2 * fold.steps();
    let real = |q: usize| fold.real(q);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let Some(q) = fold.newrank(r) else {
            fold.sit_out(prog, r, n, last_tag);
            continue;
        };
        let mut deps = fold.absorb(prog, r, n);
        if !deps.is_empty() {
            prog.scratch = n;
        }
        rs_ag(prog, &bf, q, &real, (0, n), 1, &mut deps);
        fold.give_back(prog, r, n, last_tag, &deps);
    }
    Ok(s)
}

fn build_torus(req: &Request) -> Result<Schedule> {
    let dims = butterfly::grid_dims(req, TORUS.name)?;
    let mut s = req.schedule(TORUS.name);
    let n = req.count;
    if req.ranks == 1 || n == 0 {
        return Ok(s);
    }
    let ports = butterfly::ports(&dims, false)?;
    let real = |q: usize| q as u32;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        for (j, bf) in ports.iter().enumerate() {
            let part = chunk(n, ports.len() as u64, j as u64);
            let tag0 = 2 * j as u32 * bf.steps();
            rs_ag(prog, bf, r, &real, part, tag0, &mut Vec::new());
        }
    }
    Ok(s)
}
