//! Swing's latency-optimal allreduce (De Sensi et al., NSDI 2024, §3):
//! recursive doubling with Swing's peers, so that the peer of step s is
//! |ρ(s)| ≈ 2^s·2/3 away rather than 2^s (`algorithms::butterfly`). At
//! each of log2 P steps a rank sends its whole buffer to its peer,
//! receives the peer's into Scratch and combines it in.
//!
//! * `swing_lat`: rank-based, ranks on a ring, any network. For P not a
//!   power of two the extra ranks fold in as in `recursive_doubling` (the
//!   first 2·(P − p2) ranks pair up, the even one hands its buffer over
//!   first and gets the result last): neighbours pair, where the authors'
//!   reference code's fold (c ≥ p2 into c − (P − p2), kept for the torus
//!   variant) pairs ranks P − p2 apart and took 2–3× as long on a ring of
//!   24 or 48 (docs/allreduce.md).
//! * `swing_lat_torus`: on a mesh or torus of any shape, the steps take
//!   the dimensions in turn, and the buffer is cut into 2·D parts, one per
//!   port (direction of a dimension), each running its own Swing starting
//!   on its own dimension, the second D mirrored. A dimension not a power
//!   of two first folds onto the power of two below, as the authors'
//!   reference code does (`butterfly::Shrink::pow2`).
//!
//! Unlike recursive doubling, the sets a rank has combined after each step
//! are not the same on its partners (rank 0's first four are {0,1,6,7} on 8
//! ranks, rank 1's {0,1,2,3}), so ranks reduce in different orders: each
//! result is exact to rounding but float sums may differ in their last bits
//! between ranks (its entry's `ranks_differ`); the bandwidth-optimal
//! `swing_bw` gives every rank the same bits.

use super::recursive_doubling::Fold;
use crate::butterfly::{self, Butterfly, Shrink};
use crate::error::Result;
use crate::{Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::{chunk, CollectiveKind, Op, OpId, Program, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "swing_lat", "Swing: exchange whole buffers with rank ± ρ(s), ρ = 1, −1, 3, −5, …, log2 P steps (fold for non-powers of two)", build).ranks_differ();

pub const TORUS: Algorithm = Algorithm::new(CollectiveKind::Allreduce, "swing_lat_torus", "Swing on a mesh or torus of any shape: per-dimension Swing steps, one part of the buffer per port (dimensions fold onto powers of two)", build_torus).applies(Applies { topology: TopologyNeed::Grid, ranks: RankNeed::Any, root: RootNeed::Any }).ranks_differ();

/// Whole-buffer exchanges over `bf` of the elements `part` (Output, with
/// Scratch at the same offsets), tags from `tag0`.
pub(crate) fn exchange(
    prog: &mut Program,
    bf: &Butterfly,
    q: usize,
    real: &dyn Fn(usize) -> u32,
    part: Region,
    tag0: u32,
    deps: &mut Vec<OpId>,
) {
    let tmp = Region::scratch(part.offset, part.count);
    for k in 0..bf.steps() {
        let peer = real(bf.peer(q, k));
        let send = prog.push(Op::send(peer, tag0 + k, part), deps);
        let recv = prog.push(Op::recv(peer, tag0 + k, tmp), deps);
        *deps = vec![prog.push(Op::combine(tmp, part), &[send, recv])];
    }
}

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(&ALGORITHM);
    let (p, n) = (req.ranks, req.count);
    if p == 1 || n == 0 {
        return Ok(s);
    }
    let fold = Fold::new(p);
    let bf = Butterfly::ring(fold.p2)?;
    let last_tag = 1 + fold.steps();
    let real = |q: usize| fold.real(q);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let Some(q) = fold.newrank(r) else {
            fold.sit_out(prog, r, n, last_tag);
            continue;
        };
        prog.scratch = n;
        let mut deps = fold.absorb(prog, r, n);
        exchange(prog, &bf, q, &real, Region::output(0, n), 1, &mut deps);
        fold.give_back(prog, r, n, last_tag, &deps);
    }
    Ok(s)
}

/// Swing's latency-optimal allreduce on the request's grid: dimensions not
/// a power of two fold onto the power of two below ([`Shrink::pow2`]), and
/// one part of the buffer per port, tags from 0. (The rank-based variant
/// folds as `recursive_doubling` instead, faster on a ring:
/// docs/allreduce.md.)
fn build_torus(req: &Request) -> Result<Schedule> {
    let dims = butterfly::grid_dims(req, &TORUS)?;
    let mut s = req.schedule(&TORUS);
    let n = req.count;
    if req.ranks == 1 || n == 0 {
        return Ok(s);
    }
    let shrink = Shrink::pow2(&dims);
    let bfs = butterfly::ports(&shrink.kept())?;
    let steps = bfs[0].steps();
    let end = bfs.len() as u32 * steps;
    let (tag0, tag_in, tag_out) = (0, end, end + 1);
    let real = |q: usize| shrink.real(q);
    let all = Region::output(0, n);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.scratch = n;
        let (deps, out) = shrink.fold_in(prog, r, all, Region::scratch(0, n), tag_in);
        let mut done = Vec::new();
        if let Some(q) = shrink.participant(r) {
            for (j, bf) in bfs.iter().enumerate() {
                let (at, len) = chunk(n, bfs.len() as u64, j as u64);
                if len > 0 {
                    let mut d = deps.clone();
                    let tag = tag0 + j as u32 * steps;
                    exchange(prog, bf, q, &real, Region::output(at, len), tag, &mut d);
                    done.extend(d);
                }
            }
        } else {
            done = deps;
        }
        shrink.fold_out(prog, r, all, tag_out, out, &done);
    }
    Ok(s)
}
