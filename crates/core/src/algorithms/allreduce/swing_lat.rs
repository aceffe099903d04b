//! Swing's latency-optimal allreduce (De Sensi et al., NSDI 2024, §3):
//! recursive doubling with Swing's peers, so that the peer of step s is
//! |ρ(s)| ≈ 2^s·2/3 away rather than 2^s (`algorithms::butterfly`). At
//! each of log2 P steps a rank sends its whole buffer to its peer,
//! receives the peer's into Scratch and combines it in.
//!
//! * `swing_lat`: rank-based, ranks on a ring, any network. For P not a
//!   power of two the extra ranks fold in as in `recursive_doubling` (the
//!   first 2·(P − p2) ranks pair up, the even one hands its buffer over
//!   first and gets the result last); the paper's own scheme for such P
//!   is not implemented.
//! * `swing_lat_torus`: on a mesh or torus whose every dimension is a power
//!   of two, the steps take the dimensions in turn, and the buffer is cut
//!   into 2·D parts, one per port (direction of a dimension), each running
//!   its own Swing starting on its own dimension, the second D mirrored.
//!
//! Unlike recursive doubling, the sets a rank has combined after each step
//! are not the same on its partners (rank 0's first four are {0,1,6,7} on 8
//! ranks, rank 1's {0,1,2,3}), so ranks reduce in different orders: each
//! result is exact to rounding but float sums may differ in their last bits
//! between ranks (`algorithms::RANKS_DIFFER`); the bandwidth-optimal
//! `swing_bw` gives every rank the same bits.

use super::recursive_doubling::Fold;
use crate::algorithms::butterfly::{self, Butterfly};
use crate::algorithms::{Algorithm, Request};
use crate::algorithms::{Applies, Counterparts, OpCount, RankNeed, RootNeed, TopologyNeed};
use crate::error::Result;
use crate::schedule::{chunk, CollectiveKind, Op, OpId, Program, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Allreduce,
    name: "swing_lat",
    summary: "Swing: exchange whole buffers with rank ± ρ(s), ρ = 1, −1, 3, −5, …, log2 P steps (fold for non-powers of two)",
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
    name: "swing_lat_torus",
    summary: "Swing on a torus of powers of two: per-dimension Swing steps, one part of the buffer per port",
    build: build_torus,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: Applies { topology: TopologyNeed::PowerOfTwoGrid, ranks: RankNeed::Any, root: RootNeed::Any },
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

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
    let mut s = req.schedule(ALGORITHM.name);
    let (p, n) = (req.ranks, req.count);
    if p == 1 || n == 0 {
        return Ok(s);
    }
    let fold = Fold::new(p);
    let bf = Butterfly::ring(fold.p2, false)?;
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
        prog.scratch = n;
        for (j, bf) in ports.iter().enumerate() {
            let (at, len) = chunk(n, ports.len() as u64, j as u64);
            if len > 0 {
                let tag0 = j as u32 * bf.steps();
                exchange(
                    prog,
                    bf,
                    r,
                    &real,
                    Region::output(at, len),
                    tag0,
                    &mut Vec::new(),
                );
            }
        }
    }
    Ok(s)
}
