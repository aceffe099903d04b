//! A2AT (Takaue, Yazaki, Ajima, Shimizu, Ishihata: "Optimal all-to-all
//! communication algorithm on 2D mesh and torus networks"): every rank sends
//! its N−1 blocks to relative offsets (i, j) in an order that keeps every link
//! direction equally loaded, so that a mesh node with 2 engines (NCT = 2) or a
//! torus node with 4 reaches the lower bound ⌊Nx/2⌋⌈Nx/2⌉·Ny (torus: half)
//! without ever synchronising. The order of the sends in the program IS the
//! order the engines take them (FIFO); sends have no dependencies and every
//! receive is posted at once.
//!
//! Destinations are SIGNED offsets, and each send names its offset as its route
//! (`Schedule::offset_route`): on a torus the sign picks the direction and |i|
//! hops are taken (so +N/2 and −N/2 go opposite ways round an even ring); on a
//! mesh an offset that wraps reaches (x + i) mod N along the only path.
//!
//! The steps, per shape class (the paper's Table 1, Nx ≥ Ny, "odd×even" means
//! Nx odd and Ny even), with S = ⌊(Ny−1)/2⌋ (the largest odd square inside is
//! (2S+1)×(2S+1)):
//!
//! | shape             | mesh (NCT = 2)          | torus (NCT = 4)                |
//! |-------------------|-------------------------|--------------------------------|
//! | square, odd       | 1, 2                    | 1, 2T                          |
//! | square, even      | 1, 2, 3                 | 1, 2T, 3_T                     |
//! | odd × odd         | 1, 2, 3_Odd             | 1, 2T, 3_Odd                   |
//! | even × odd        | 1, 2, 3_Odd, 4_Odd      | 1, 2T, 3_Odd, 4_OddT (ours)    |
//! | odd/even × even   | 1, 2, 3_Even, 4_Even, 5 | 1, 2T, then ours (regrouped)   |
//!
//! Corrections to the printed pseudo-code (checked in the seeds README):
//! - Step 4_Even's loop runs i = Ny/2+1 ..= ⌊(Nx−1)/2⌋ (printed ⌊Nx/2 − 1⌋,
//!   which misses the column (Nx−1)/2 when Nx is odd).
//! - Step 3_T's loop starts at i = 1 (from 0 it would send each of the nodes
//!   (N/2, 0) and (0, N/2) three times, ±N/2 being the same node).
//! - Torus Step 2 ("2T"): the printed groups of four, (i,j), (−j,−i), (i,−j),
//!   (−j,i), load +x with 2i and −x with 2j. We send the same set regrouped as
//!   (i,j), (−i,−j), (−j,i), (j,−i): each group loads +x, −x, +y and −y with
//!   i+j each, which is what makes NCT = 4 reach T_lb/2.
//!
//! Shapes the paper leaves open on the torus (rectangles with an even side)
//! are ours: the same destinations as the mesh steps, with the half-ring
//! offsets (±Nx/2 when Nx is even, ±Ny/2 when Ny is even) signed so that as
//! many go − as + (a half-ring destination may be reached either way), and
//! grouped in fours that load both directions of x alike (see the comments in
//! [`order`]). The static per-direction link load then equals T_lb/2 whenever
//! a half-ring set has an even size (odd×even, even×even). For even×odd the Ny
//! blocks at x-offset Nx/2 cannot split evenly between the directions within
//! one rank: a translation-invariant order loads one direction with T_lb/2 +
//! Nx/4 blocks. So the order is not translation-invariant there: ranks at odd
//! x send the lone (Nx/2, 0) as (−Nx/2, 0), which balances the two directions
//! over every Nx/2 consecutive sources when 4 divides Nx (time T_lb/2) and to
//! one block when it does not (T_lb/2 + 1/2, T_lb/2 being a half-integer).
//! Blocks of two elements or more close that last block: the lone block
//! then goes in two messages, half each way (exactly T_lb/2 for even blocks,
//! within one element for odd ones).
//!
//! Every order of this file lands exactly on its link-load bound for all
//! shapes 1..12 × 1..12 (unit links and blocks, FIFO engines): T_lb on the
//! mesh with 2 engines, T_lb/2 on the torus with 4; `tests/suite/algorithms/alltoall_times.rs`
//! checks the simulated times. On even×odd tori the odd ranks send the lone
//! half-ring block the other way round: sent the same way by every rank, it
//! costs Nx/4 more. Placing the last send of the odd×even torus matters too:
//! a lone (0, Ny/2) at the end costs Ny/2 more.
//!
//! Nx < Ny: the paper assumes Nx ≥ Ny. We run it on the transposed grid: the
//! paper's x is the topology's longer dimension. Routing in the network stays
//! the topology's dimension order (so the paper's Y is then routed first);
//! the link loads, and hence the bound, are the same.
//! 1-wide shapes (Ny = 1, including 1D grids): S = 0, so Steps 1 and 2 are
//! empty and Steps 3_Odd/4_Odd send (i, 0), (−i, 0) pairs and finally
//! (Nx/2, 0): the optimal ring/line exchange. A grid that wraps in only one
//! of its two dimensions gets the mesh order.
//!
//! Three dimensions of size > 1: the 3D order of [`super::a2at3d`] (torus
//! for 6 engines, mesh for 3; a grid that does not wrap in all three gets the
//! mesh order). More than three, and Tofu (whose routes are not signed
//! offsets), are unsupported.

use super::{a2at3d, grid_of, self_copy, GridShape, Wrap};
use crate::error::Result;
use crate::{Algorithm, Request};
use crate::{Applies, OpCount, RankNeed, RootNeed, TopologyNeed};
use smallvec::SmallVec;
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, OpId, Program, Region, Schedule};
use topocoll_topology::Kind;

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Alltoall, "a2at", "A2AT: signed-offset order that reaches the 2D mesh (2 engines) / torus (4 engines) bound; 3D: mesh 3, torus 6", build).applies(Applies { topology: TopologyNeed::OffsetGrid { max_dims: 3 }, ranks: RankNeed::Any, root: RootNeed::Any }).ops(OpCount::PerPair);

/// A2AT with its groups kept in step: the sends of each group of `engines`
/// consecutive sends (the engine count the order is made for: 4 on a 2D
/// torus, 2 on a 2D mesh, 6 and 3 in 3D) wait until the rank has received
/// every block of the previous group. Without skew it runs as A2AT does;
/// a rank that starts early waits for its late sources instead of running
/// its next group into their links.
pub const SYNCED: Algorithm = Algorithm::new(
    CollectiveKind::Alltoall,
    "a2at_sync",
    "A2AT with each group's sends waiting for the previous group's receives (for start skew)",
    build_synced,
)
.applies(Applies {
    topology: TopologyNeed::OffsetGrid { max_dims: 3 },
    ranks: RankNeed::Any,
    root: RootNeed::Any,
})
.ops(OpCount::PerPair);

fn build(req: &Request) -> Result<Schedule> {
    build_with(req, false)
}

fn build_synced(req: &Request) -> Result<Schedule> {
    build_with(req, true)
}

/// One slot of a rank's order: the block it sends to `dst` and the block
/// `src` sends it in the same slot, in one message each, or (a split lone
/// block) in two.
struct Slot {
    dst: usize,
    src: usize,
    route: u32,
    halves: Option<Halves>,
}

/// A lone half-ring block split in two messages.
struct Halves {
    /// Elements of this rank's block that go +x (tag 0); the rest go −x.
    mine: u64,
    /// The same for the block `src` sends this rank.
    theirs: u64,
    /// The −x route of the second message.
    minus_route: u32,
}

impl Slot {
    fn push_sends(&self, prog: &mut Program, b: u64, deps: &[OpId]) {
        let out = self.dst as u64 * b;
        let parts: SmallVec<[(u32, u64, u64, u32); 2]> = match self.halves {
            None => [(0, out, b, self.route)].into_iter().collect(),
            Some(Halves {
                mine, minus_route, ..
            }) => [
                (0, out, mine, self.route),
                (1, out + mine, b - mine, minus_route),
            ]
            .into_iter()
            .collect(),
        };
        for (tag, offset, count, route) in parts {
            let send = Op::send_routed(self.dst as u32, tag, Region::input(offset, count), route);
            prog.push(send, deps);
        }
    }

    /// Pushes the slot's receives; returns their op ids.
    fn push_recvs(&self, prog: &mut Program, b: u64) -> SmallVec<[OpId; 2]> {
        let inn = self.src as u64 * b;
        let parts: SmallVec<[(u32, u64, u64); 2]> = match self.halves {
            None => [(0, inn, b)].into_iter().collect(),
            Some(Halves { theirs, .. }) => [(0, inn, theirs), (1, inn + theirs, b - theirs)]
                .into_iter()
                .collect(),
        };
        parts
            .into_iter()
            .map(|(tag, offset, count)| {
                let recv = Op::recv(self.src as u32, tag, Region::output(offset, count));
                prog.push(recv, &[])
            })
            .collect()
    }
}

/// The A2AT send order of one rank in the paper's frame: offsets (i, j) along
/// (x, y) with `nx ≥ ny ≥ 1`, the 4-engine torus variant or the 2-engine
/// mesh one. Every other node of the nx×ny grid appears exactly once
/// (modulo the sides).
pub fn order(nx: usize, ny: usize, wrap: Wrap) -> Vec<(i64, i64)> {
    let torus = wrap == Wrap::Torus;
    assert!(nx >= ny && ny >= 1, "a2at::order needs nx >= ny >= 1");
    let (nx, ny) = (nx as i64, ny as i64);
    let mut v: Vec<(i64, i64)> = Vec::with_capacity((nx * ny) as usize);
    let s = (ny - 1) / 2;
    // Step 1: the axes of the odd square, x and y together.
    for i in 1..=s {
        v.extend([(i, 0), (0, i), (-i, 0), (0, -i)]);
    }
    // Step 2: the four quadrants of the odd square.
    for i in 1..=s {
        for j in 1..=s {
            if torus {
                // Regrouped: +x, −x, +y, −y each carry i+j.
                v.extend([(i, j), (-i, -j), (-j, i), (j, -i)]);
            } else {
                // As printed: pairs (i,j)+(−j,−i) and (i,−j)+(−j,i), each
                // loading x and y with i+j on a mesh.
                v.extend([(i, j), (-j, -i), (i, -j), (-j, i)]);
            }
        }
    }
    if nx == ny {
        square_rest(&mut v, ny, torus);
    } else if ny % 2 == 1 {
        odd_rest(&mut v, nx, s, torus);
    } else if !torus {
        mesh_even_rest(&mut v, nx, ny);
    } else {
        torus_even_rest(&mut v, nx, ny);
    }
    v
}

/// A square's steps after the first two (Nx = Ny): Step 3 on a mesh,
/// Step 3_T on a torus, when N is even.
fn square_rest(v: &mut Vec<(i64, i64)>, ny: i64, torus: bool) {
    if ny % 2 == 0 {
        let h = ny / 2;
        if torus {
            // Step 3_T (loop from 1, not 0).
            for i in 1..h {
                v.extend([(h, i), (-i, -h), (-h, -i), (i, h)]);
            }
            v.extend([(h, 0), (0, h), (-h, -h)]);
        } else {
            // Step 3.
            for i in 1..h {
                v.extend([(h, i), (-i, h), (h, -i), (i, h)]);
            }
            v.extend([(h, 0), (0, h), (h, h)]);
        }
    }
}

/// Ny odd, Nx > Ny: Step 3_Odd, and Step 4_Odd when Nx is even (S =
/// (Ny−1)/2).
fn odd_rest(v: &mut Vec<(i64, i64)>, nx: i64, s: i64, torus: bool) {
    let s2 = (nx - 1) / 2;
    // Step 3_Odd: the columns beyond the square, x-bound at 2i per pair.
    for i in s + 1..=s2 {
        for j in 1..=s {
            v.extend([(i, j), (-i, -j), (i, -j), (-i, j)]);
        }
        v.extend([(i, 0), (-i, 0)]);
    }
    if nx % 2 == 0 {
        // Step 4_Odd: the column Nx/2. On the torus half of it goes −x.
        let hx = nx / 2;
        let sign = if torus { -1 } else { 1 };
        for i in 1..=s {
            v.extend([(hx, i), (sign * hx, -i)]);
        }
        v.push((hx, 0));
    }
}

/// A mesh with Ny even, Nx > Ny: Steps 3_Even, 4_Even and 5.
fn mesh_even_rest(v: &mut Vec<(i64, i64)>, nx: i64, ny: i64) {
    let s2 = (nx - 1) / 2;
    let hy = ny / 2;
    let hx = nx / 2;
    // Step 3_Even.
    for i in 1..hy {
        v.extend([(hy, i), (-i, hy), (hy, -i), (i, -hy)]);
    }
    v.extend([(hy, 0), (0, hy), (hy, hy), (-hy, hy)]);
    // Step 4_Even, loop bound ⌊(Nx−1)/2⌋.
    for i in hy + 1..=s2 {
        for j in 1..hy {
            v.extend([(i, j), (-i, -j), (i, -j), (-i, j)]);
        }
        v.extend([(i, 0), (-i, 0), (i, hy), (-i, hy)]);
    }
    // Step 5.
    if nx % 2 == 0 {
        for i in 1..hy {
            v.extend([(hx, i), (hx, -i)]);
        }
        v.extend([(hx, 0), (hx, hy)]);
    }
    for i in 1..hy {
        v.extend([(-hy, i), (-hy, -i)]);
    }
    v.push((-hy, 0));
}

/// A torus with Ny even, Nx > Ny (ours).
fn torus_even_rest(v: &mut Vec<(i64, i64)>, nx: i64, ny: i64) {
    let s2 = (nx - 1) / 2;
    let hy = ny / 2;
    let hx = nx / 2;
    // Torus, Ny even, Nx > Ny (open in the paper). Row y ≡ hy is a half ring:
    // its entries alternate between +hy and −hy. Columns ±hy first, in groups
    // that load +x, −x, +y and −y alike.
    for i in 1..hy {
        v.extend([(hy, i), (-hy, -i), (-i, hy), (i, -hy)]);
    }
    if nx % 2 == 0 {
        for i in 1..hy {
            v.extend([(hy, -i), (-hy, i)]);
        }
        v.extend([(hy, 0), (-hy, 0), (hy, hy), (-hy, -hy)]);
        // Columns hy+1 ..= Nx/2 − 1, both ways.
        for i in hy + 1..=s2 {
            for j in 1..hy {
                v.extend([(i, j), (-i, -j), (i, -j), (-i, j)]);
            }
            v.extend([(i, 0), (-i, 0), (i, hy), (-i, -hy)]);
        }
        // Column Nx/2, half of it reached going −x; its half-row entry goes
        // −y to balance (0, hy).
        for i in 1..hy {
            v.extend([(hx, i), (-hx, -i)]);
        }
        v.extend([(hx, 0), (-hx, -hy), (0, hy)]);
        return;
    }
    // Nx odd. Ending as above, with (0, hy) alone after the last group of
    // four, leaves the x links idle for hy at the end (the simulated time is
    // T_lb/2 + hy); instead the last five sends share the x and y links.
    // Columns c = hy ..= (Nx−1)/2 split into pairs A_c = (c,0), (−c,−hy) and
    // B_c = (c,hy), (−c,0), each loading +x and −x alike; a group B_c + A_c'
    // loads all four directions alike.
    for i in hy + 1..=s2 {
        for j in 1..hy {
            v.extend([(i, j), (-i, -j), (i, -j), (-i, j)]);
        }
    }
    let a = |c: i64| [(c, 0), (-c, -hy)];
    let b = |c: i64| [(c, hy), (-c, 0)];
    let mut h: Vec<[(i64, i64); 2]> = (1..hy).map(|i| [(hy, -i), (-hy, i)]).collect();
    let pairs_of_h = h.len() / 2 * 2;
    for pair in h.drain(..pairs_of_h) {
        v.extend(pair);
    }
    // B of the last column goes with a leftover H pair, or waits for the end.
    let lone = match h.pop() {
        Some(last) => {
            v.extend(last);
            v.extend(b(s2));
            None
        }
        None => Some(b(s2)),
    };
    for c in hy..s2 {
        v.extend(b(c));
        v.extend(a(c + 1));
    }
    if let Some(pair) = lone {
        v.extend(pair);
    }
    // A_hy with (0, hy) between its two sends.
    v.extend([(hy, 0), (0, hy), (-hy, -hy)]);
}

/// The A2AT order of a grid's sends and what it was made for.
struct Frame {
    /// Each send's offset as (dimension, component) pairs.
    offsets: Vec<Vec<(usize, i64)>>,
    /// The one send of each rank that goes half way round an even ring and
    /// nowhere else, when the order has it alone (2D even×odd torus: (Nx/2, 0);
    /// 3D torus with one even side): its dimension and place in the order.
    lone_half_ring: Option<(usize, usize)>,
    /// The engine count the order is made for.
    design_engines: usize,
}

/// The order of the sends on a grid whose dimensions of size > 1 are `big`
/// (at most 3): the 3D order in the topology's order, or the 2D order with
/// the paper's x the longer dimension.
fn frame_of(shape: &GridShape, big: &[usize]) -> Frame {
    let mut lone_half_ring: Option<(usize, usize)> = None;
    let design_engines;
    let offsets: Vec<Vec<(usize, i64)>> = if let [a, b, c] = big[..] {
        // Three dimensions: the 3D order (a2at3d), in the topology's order.
        let torus = big.iter().all(|&d| shape.wrap[d]);
        let n = [shape.dims[a], shape.dims[b], shape.dims[c]];
        let order = a2at3d::order(n, Wrap::of(torus));
        design_engines = if torus { 6 } else { 3 };
        let even: Vec<usize> = (0..3).filter(|&q| n[q].is_multiple_of(2)).collect();
        if let (true, &[e]) = (torus, &even[..]) {
            let h = (n[e] / 2) as i64;
            lone_half_ring = order
                .iter()
                .position(|v| (0..3).all(|q| v[q].abs() == if q == e { h } else { 0 }))
                .map(|k| ([a, b, c][e], k));
        }
        order
            .into_iter()
            .map(|v| vec![(a, v[0]), (b, v[1]), (c, v[2])])
            .collect()
    } else {
        let (dx, dy) = match big {
            [] => (None, None),
            [a] => (Some(*a), None),
            [a, b] if shape.dims[*a] >= shape.dims[*b] => (Some(*a), Some(*b)),
            // Nx < Ny: transpose, the paper's x is the topology's dimension b.
            [a, b] => (Some(*b), Some(*a)),
            _ => unreachable!(),
        };
        let nx = dx.map_or(1, |d| shape.dims[d]);
        let ny = dy.map_or(1, |d| shape.dims[d]);
        let torus = dx.is_none_or(|d| shape.wrap[d]) && dy.is_none_or(|d| shape.wrap[d]);
        let order = order(nx, ny, Wrap::of(torus));
        design_engines = if torus { 4 } else { 2 };
        if let (Some(d), true) = (dx, torus && nx > ny && nx % 2 == 0 && ny % 2 == 1) {
            let hx = (nx / 2) as i64;
            lone_half_ring = order.iter().position(|&o| o == (hx, 0)).map(|k| (d, k));
        }
        order
            .into_iter()
            .map(|(i, j)| {
                dx.map(|d| (d, i))
                    .into_iter()
                    .chain(dy.map(|d| (d, j)))
                    .collect()
            })
            .collect()
    };
    Frame {
        offsets,
        lone_half_ring,
        design_engines,
    }
}

fn build_with(req: &Request, synced: bool) -> Result<Schedule> {
    let alg = if synced { &SYNCED } else { &ALGORITHM };
    let (topo, shape) = grid_of(req, alg)?;
    if !matches!(topo.kind, Kind::Grid(_)) {
        return Err(req.unsupported(
            alg,
            format!(
                "needs a mesh or torus whose routes follow signed offsets, not {}",
                topo.describe()
            ),
        ));
    }
    // The dimensions that matter (size > 1); the paper's x is the longer one.
    let big: Vec<usize> = (0..shape.dims.len())
        .filter(|&d| shape.dims[d] > 1)
        .collect();
    if big.len() > 3 {
        return Err(req.unsupported(
            alg,
            format!(
                "A2AT is defined on 2D and 3D grids; {:?} has {} dimensions of size > 1",
                shape.dims,
                big.len()
            ),
        ));
    }
    let Frame {
        offsets: frame,
        lone_half_ring,
        design_engines,
    } = frame_of(&shape, &big);

    let mut s = req.schedule(alg);
    // Route id and rank delta per send, shared by every rank's program.
    let nd = shape.dims.len();
    let routes: Vec<(u32, Vec<i64>)> = frame
        .iter()
        .map(|parts| {
            let mut off = vec![0i64; nd];
            for &(d, c) in parts {
                off[d] = c;
            }
            (s.offset_route(&off), off)
        })
        .collect();
    // The even×odd torus: each rank sends Ny = 2S+1 blocks at x-offset Nx/2,
    // S each way and (Nx/2, 0) last. If every rank sent that one +x, the +x
    // links would carry Nx/2 more blocks than the −x ones (the order's only
    // imbalance; the time was T_lb/2 + Nx/4). Ranks at odd x send it −x (the
    // same node): over any Nx/2 consecutive sources, half go each way when
    // Nx/2 is even, and all but one block balance when it is odd. The same
    // holds for the lone half-ring send of a 3D torus with one even side.
    // (dimension, place in the order, route the other way round).
    let flipped = lone_half_ring.map(|(d, k)| {
        let mut off = routes[k].1.clone();
        off[d] = -off[d];
        (d, k, s.offset_route(&off))
    });
    let p = req.ranks;
    let b = req.count;
    // When Nx/2 is odd that leaves one block of imbalance (T_lb/2 + 1/2). A
    // block of two or more elements closes it: every rank sends part of its
    // lone block +x (tag 0) and the rest −x (tag 1), half each way. With an
    // odd block the larger part goes +x from even x and −x from odd x, so the
    // directions differ by one element, not one block.
    let split = flipped.is_some_and(|(d, _, _)| (shape.dims[d] / 2) % 2 == 1 && b >= 2);
    // The part of the lone block a rank at coordinate `x` sends +x.
    let plus_part = |x: usize| {
        if x.is_multiple_of(2) {
            b.div_ceil(2)
        } else {
            b / 2
        }
    };
    let mut to = vec![0usize; nd];
    // The rank at `sign` × `off` from coordinates `me`.
    let mut at = |me: &[usize], off: &[i64], sign: i64| {
        for d in 0..nd {
            let k = shape.dims[d] as i64;
            to[d] = (me[d] as i64 + sign * off[d]).rem_euclid(k) as usize;
        }
        shape.rank(&to)
    };
    let mut slot_of_source = vec![0usize; p];
    let mut slots: Vec<Slot> = Vec::with_capacity(routes.len());
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.ops.reserve(2 * p - 1);
        self_copy(prog, r, b);
        let me = shape.coords(r);
        slots.clear();
        for (k, (route, off)) in routes.iter().enumerate() {
            // A half-ring offset leads to the same rank either way round, so
            // the source of slot k is the rank at −offset whichever way it sends.
            let (dst, src) = (at(&me, off, 1), at(&me, off, -1));
            slot_of_source[src] = k;
            let mut slot = Slot {
                dst,
                src,
                route: *route,
                halves: None,
            };
            if let Some((d, _, minus_route)) = flipped.filter(|f| f.1 == k) {
                if split {
                    slot.halves = Some(Halves {
                        mine: plus_part(me[d]),
                        theirs: plus_part(shape.coords(src)[d]),
                        minus_route,
                    });
                } else if me[d] % 2 == 1 {
                    slot.route = minus_route;
                }
            }
            slots.push(slot);
        }
        match synced.then_some(design_engines) {
            // A2AT proper: every send at once (the engines take them in
            // order), then every receive, by source rank.
            None => {
                for slot in &slots {
                    slot.push_sends(prog, b, &[]);
                }
                for q in (0..p).filter(|&q| q != r) {
                    slots[slot_of_source[q]].push_recvs(prog, b);
                }
            }
            // Synchronised: each group's sends wait for the previous group's
            // receives.
            Some(g) => {
                let mut previous: Vec<OpId> = Vec::new();
                for group in slots.chunks(g) {
                    for slot in group {
                        slot.push_sends(prog, b, &previous);
                    }
                    previous.clear();
                    for slot in group {
                        previous.extend(slot.push_recvs(prog, b));
                    }
                }
            }
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::{order, Wrap};
    use std::collections::HashSet;

    /// Every destination exactly once, for every shape and both variants.
    #[test]
    fn covers_each_destination_once() {
        for nx in 1..=14usize {
            for ny in 1..=nx {
                for wrap in [Wrap::Mesh, Wrap::Torus] {
                    let o = order(nx, ny, wrap);
                    let mut seen = HashSet::new();
                    for &(i, j) in &o {
                        assert!(i.unsigned_abs() < nx as u64 && j.unsigned_abs() < ny as u64);
                        let d = (i.rem_euclid(nx as i64), j.rem_euclid(ny as i64));
                        assert_ne!(d, (0, 0), "{nx}x{ny} {wrap:?}: self-send");
                        assert!(seen.insert(d), "{nx}x{ny} {wrap:?}: {d:?} twice");
                    }
                    assert_eq!(o.len(), nx * ny - 1, "{nx}x{ny} {wrap:?}");
                }
            }
        }
    }
}
