//! Neighbor-exchange allgather (Chen et al. 2005; Open MPI's `neighbor`),
//! on an even rank count: ranks pair up as 2i, 2i + 1 and swap their blocks;
//! then in P/2 − 1 more steps each rank swaps with its other neighbour and
//! its first in turn (an even rank: r − 1, r + 1, …; an odd one: r + 1,
//! r − 1, …) the pair of blocks it received in the step before, so a pair
//! of blocks (2j, 2j + 1), contiguous in the output, travels as one message.
//! P/2 steps instead of the ring's P − 1, each step waiting for the one
//! before.
//!
//! An odd rank count leaves a rank without a partner in the first step, so
//! it is refused (Open MPI runs the ring there instead).

use crate::error::Result;
use crate::pipelined::MAX_MATERIALISED_OPS;
use crate::{Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::{CollectiveKind, Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allgather, "neighbor", "neighbor exchange: swap with the left and right neighbour in turn, two blocks a step, P/2 steps (even P)", build).applies(Applies {
        topology: TopologyNeed::Any,
        ranks: RankNeed::Even(
            "ranks 2i and 2i+1 swap blocks in the first step, which needs an even rank count, not {p} (Open MPI runs the ring there)",
        ),
        root: RootNeed::Any,
    }).ompi(5, "neighbor", "neighborexchange");

fn build(req: &Request) -> Result<Schedule> {
    // The builder refuses an odd count itself, as its declaration does.
    ALGORITHM.check(req)?;
    let mut s = req.schedule(&ALGORITHM);
    let (p, c) = (req.ranks, req.count);
    // One copy and a send and a receive a step: P + 1 ops a rank.
    if (p as u64).saturating_mul(p as u64 + 1) > MAX_MATERIALISED_OPS {
        return Err(crate::error::Error::too_large(format!(
            "allgather neighbor on {p} ranks: {} operations are too many to write out (at most {MAX_MATERIALISED_OPS})",
            (p as u64).saturating_mul(p as u64 + 1)
        )));
    }
    let blocks = |b: usize, k: u64| Region::output(b as u64 * c, k * c);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let copy = prog.push(Op::copy(Region::input(0, c), blocks(r, 1)), &[]);
        let even = r % 2 == 0;
        let (right, left) = ((r + 1) % p, (r + p - 1) % p);
        // Neighbour of even steps, of odd steps; where the pair of blocks
        // received in each comes from moves by ±2 a time it is used.
        let neighbour = if even { [right, left] } else { [left, right] };
        let step_offset: [isize; 2] = if even { [2, -2] } else { [-2, 2] };
        let start = if even { r } else { left };
        let mut recv_from = [start, start];
        let send = prog.push(Op::send(neighbour[0] as u32, 0, blocks(r, 1)), &[copy]);
        let recv = prog.push(
            Op::recv(neighbour[0] as u32, 0, blocks(neighbour[0], 1)),
            &[copy],
        );
        let mut last: [OpId; 2] = [send, recv];
        let mut send_from = start;
        for i in 1..p / 2 {
            let parity = i % 2;
            recv_from[parity] =
                (recv_from[parity] as isize + step_offset[parity]).rem_euclid(p as isize) as usize;
            let peer = neighbour[parity] as u32;
            let send = prog.push(Op::send(peer, i as u32, blocks(send_from, 2)), &last);
            let recv = prog.push(
                Op::recv(peer, i as u32, blocks(recv_from[parity], 2)),
                &last,
            );
            last = [send, recv];
            send_from = recv_from[parity];
        }
    }
    Ok(s)
}
