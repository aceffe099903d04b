//! All-to-all algorithms.
//!
//! Direct algorithms (linear, A2AND, A2AT, Dragon, pairwise, ring) move every
//! block straight from its source to its destination; Bruck forwards packed
//! blocks in log2 P steps. See `docs/alltoall.md`.

pub mod a2and;
pub mod a2at;
pub mod a2at3d;
pub mod bine;
pub mod bruck;
pub mod dragon;
pub mod linear;
pub mod node_aware;
pub mod pairwise;
pub mod ring;

use crate::error::fail;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{Op, Program, Region, Schedule};
use topocoll_topology::{GridShape, Topology};

/// Which of A2AT's send orders (2D and 3D): a mesh's, or a torus's, whose
/// every side that matters wraps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    Mesh,
    Torus,
}

impl Wrap {
    /// `Torus` where every side that matters wraps, else `Mesh`.
    pub fn of(every_side_wraps: bool) -> Wrap {
        if every_side_wraps {
            Wrap::Torus
        } else {
            Wrap::Mesh
        }
    }
}

/// The request's topology and its grid shape, for grid-aware algorithms;
/// `unsupported` when there is no topology or it is not a grid.
pub(crate) fn grid_of<'a>(req: &Request<'a>, alg: &Algorithm) -> Result<(&'a Topology, GridShape)> {
    let Some(topo) = req.topology else {
        return Err(req.unsupported(
            alg,
            "needs a mesh or torus topology (--topology mesh:8x8, torus:8x8)",
        ));
    };
    if topo.num_ranks() != req.ranks {
        return Err(fail!(
            Algorithm,
            Request,
            "{}: the request has {} ranks but topology {} has {}",
            alg.name,
            req.ranks,
            topo.name,
            topo.num_ranks()
        ));
    }
    let Some(shape) = topo.grid_shape() else {
        return Err(req.unsupported(
            alg,
            format!("needs a mesh or torus topology, not {}", topo.describe()),
        ));
    };
    Ok((topo, shape))
}

/// The local copy of a rank's own block (input block r to output block r).
pub(crate) fn self_copy(prog: &mut Program, rank: usize, block: u64) -> u32 {
    let at = rank as u64 * block;
    prog.push(
        Op::copy(Region::input(at, block), Region::output(at, block)),
        &[],
    )
}

/// Posts, with no dependencies, a receive of every other rank's block into
/// its output slot (tag 0): what direct algorithms whose sends never wait do.
pub(crate) fn post_all_receives(prog: &mut Program, rank: usize, ranks: usize, block: u64) {
    for q in (0..ranks).filter(|&q| q != rank) {
        prog.push(
            Op::recv(q as u32, 0, Region::output(q as u64 * block, block)),
            &[],
        );
    }
}

/// A step-separated exchange: in step i = 1..P−1 rank r sends its block for
/// `partners(r, i).0` there and receives the block of `partners(r, i).1` from
/// it; the step's send and receive start together and the next step waits for
/// both (tag = step). The self block is a local copy that holds nothing back.
/// Pairwise, ring and Dragon differ only in their partners.
pub(crate) fn stepped_exchange(
    req: &Request,
    alg: &Algorithm,
    partners: impl Fn(usize, usize) -> (usize, usize),
) -> Schedule {
    let mut s = req.schedule(alg);
    let (p, b) = (req.ranks, req.count);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.ops.reserve(2 * p - 1);
        self_copy(prog, r, b);
        let mut deps: Vec<u32> = Vec::new();
        for step in 1..p {
            let (to, from) = partners(r, step);
            let send = prog.push(
                Op::send(to as u32, step as u32, Region::input(to as u64 * b, b)),
                &deps,
            );
            let recv = prog.push(
                Op::recv(from as u32, step as u32, Region::output(from as u64 * b, b)),
                &deps,
            );
            deps = vec![send, recv];
        }
    }
    s
}
