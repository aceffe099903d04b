//! A2AND (the A2AT paper, §2.2): relative N-dimensional offsets in loop order.
//! On an Nx×Ny grid each rank at (x0, y0) sends, for x = 0..Nx−1 (outer loop)
//! and y = 0..Ny−1 (inner loop) with (x, y) ≠ (0, 0), its block to
//! ((x0 + x) mod Nx, (y0 + y) mod Ny). The printed condition "x ≠ 0 and y ≠ 0"
//! would skip the whole row and column of the sender; the seeds' check (and
//! the paper's own cost analysis) need (x, y) ≠ (0, 0). N dimensions: the same
//! loop nest, dimension 0 outermost.
//!
//! Sends never wait and every receive is posted at once, as in `linear`: the
//! node's engines take the sends in this order (FIFO). Routes are the
//! topology's default (dimension order, shortest way round a ring): the paper
//! routes by destination, and an offset in 0..N reads as a destination, not as
//! a direction. Works on any grid shape, Tofu's virtual torus included.

use super::{grid_of, post_all_receives, self_copy};
use crate::error::Result;
use crate::{Algorithm, Request};
use crate::{Applies, OpCount, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Alltoall,
    "a2and",
    "A2AND: relative grid offsets in loop order (x outer), all sends at once (grids)",
    build,
)
.applies(Applies {
    topology: TopologyNeed::Grid,
    ranks: RankNeed::Any,
    root: RootNeed::Any,
})
.ops(OpCount::PerPair);

fn build(req: &Request) -> Result<Schedule> {
    let (_, shape) = grid_of(req, &ALGORITHM)?;
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let b = req.count;
    let nd = shape.dims.len();
    // Offsets in loop order: an odometer with the last dimension fastest.
    let mut offsets: Vec<Vec<usize>> = Vec::with_capacity(p.saturating_sub(1));
    let mut o = vec![0usize; nd];
    loop {
        if o.iter().any(|&c| c != 0) {
            offsets.push(o.clone());
        }
        let mut d = nd;
        loop {
            if d == 0 {
                break;
            }
            d -= 1;
            o[d] += 1;
            if o[d] < shape.dims[d] {
                break;
            }
            o[d] = 0;
        }
        if o.iter().all(|&c| c == 0) {
            break;
        }
    }
    let mut to = vec![0usize; nd];
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.ops.reserve(2 * p - 1);
        self_copy(prog, r, b);
        let me = shape.coords(r);
        for off in &offsets {
            for d in 0..nd {
                to[d] = (me[d] + off[d]) % shape.dims[d];
            }
            let dst = shape.rank(&to);
            prog.push(
                Op::send(dst as u32, 0, Region::input(dst as u64 * b, b)),
                &[],
            );
        }
        post_all_receives(prog, r, p, b);
    }
    Ok(s)
}
