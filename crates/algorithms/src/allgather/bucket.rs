//! Bucket allgather (Jain and Sabharwal, ICS 2010): on a mesh or torus of
//! any dimension count, a ring allgather along the first dimension, then
//! along the second on what the first gathered (a slab of blocks a step),
//! and so on: after dimension j a rank holds the blocks of its
//! (j + 1)-dimensional slice. Its dual, the bucket reduce-scatter, runs the
//! dimensions the other way, and the bucket allreduce is the two in turn
//! (`reduce_scatter::bucket`, `allreduce::bucket`): this file is the
//! builder of all three.
//!
//! # Every port busy
//!
//! One such sweep keeps one link of a rank busy at a time. So each block is
//! cut in 2D parts (D the dimensions longer than 1): part 2i + e runs the
//! dimensions in the rotated order i, i + 1, …, and its rings the + way
//! (e = 0) or the − way (e = 1). At every moment the parts use different
//! dimensions and directions, and over the whole run each of a rank's 2D
//! links carries the same bytes: on a torus the allgather reaches the
//! injection bound m·(P − 1)/(2D·b) as the blocks grow (given 2D engines).
//!
//! # Layout
//!
//! Each part lives in its own run of Scratch, its slots in the order of
//! their ranks' offsets from the rank's own coordinates, the part's first
//! dimension fastest: then what a ring step of dimension j moves (the
//! blocks at one offset t along it, every offset along the dimensions
//! before it, offset 0 after it) is one contiguous slab, one message. A
//! slab landing is copied out to its blocks in the output. Blocks need not
//! be equal (the reductions' standard chunks), so slot offsets are prefix
//! sums, computed per rank and part.
//!
//! Each ring step waits for both operations of the step before in its
//! part; the parts run independently. Ring hops use the grid's +1/−1
//! links by signed offset on `mesh:`/`torus:` grids, so a ring of two uses
//! both cables.

use crate::alltoall::grid_of;
use crate::error::fail;
use crate::error::Result;
use crate::pipelined::MAX_MATERIALISED_OPS;
use crate::{Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::{chunk, CollectiveKind, Op, OpId, Program, Region, Schedule};
use topocoll_topology::{GridShape, Kind};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allgather, "bucket", "dimension-wise rings on a mesh or torus, 2D parts in rotated dimension orders both ways (every port busy)", build).applies(APPLIES);

/// Where the bucket algorithms apply: a mesh or torus, one rank a node.
pub(crate) const APPLIES: Applies = Applies {
    topology: TopologyNeed::Grid,
    ranks: RankNeed::Any,
    root: RootNeed::Any,
};

fn build(req: &Request) -> Result<Schedule> {
    bucket(req, &ALGORITHM, Mode::Allgather)
}

/// Which of the three bucket collectives to build.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Allgather,
    ReduceScatter,
    Allreduce,
}

/// One part's sweep on one rank: its dimensions in order and the layout
/// of its slots.
struct Part {
    /// Its dimensions (grid axes), in the order its allgather runs them.
    order: Vec<usize>,
    /// Its ring direction: +1 or −1.
    dir: i64,
    /// First Scratch element of its slots.
    base: u64,
    /// Index of the part among the 2D (tags, slices of a block).
    index: u64,
}

/// The rank's view: its coordinates and the grid.
struct Ctx<'a> {
    shape: &'a GridShape,
    parts: u64,
    /// (start, len) of block b in the output.
    blocks: &'a dyn Fn(usize) -> (u64, u64),
    /// Route per axis for a +1 and a −1 hop (0: the default route).
    plus: Vec<u32>,
    minus: Vec<u32>,
    /// Ring steps each part takes (tags: part · steps + step).
    steps: u64,
}

impl Ctx<'_> {
    /// The output region of part `k` of block `b`.
    fn piece(&self, b: usize, k: u64) -> Region {
        let (at, len) = (self.blocks)(b);
        let (off, n) = chunk(len, self.parts, k);
        Region::output(at + off, n)
    }

    /// The rank `delta` away from `coords` along `axis`, wrapping.
    fn neighbour(&self, coords: &[usize], axis: usize, delta: i64) -> usize {
        let d = self.shape.dims[axis] as i64;
        let mut c = coords.to_vec();
        c[axis] = (c[axis] as i64 + delta).rem_euclid(d) as usize;
        self.shape.rank(&c)
    }
}

/// Builds the bucket `mode` for the request as `alg`'s schedule.
pub(crate) fn bucket(req: &Request, alg: &Algorithm, mode: Mode) -> Result<Schedule> {
    let (topo, shape) = grid_of(req, alg)?;
    let mut s = req.schedule(alg);
    let p = req.ranks;
    let axes: Vec<usize> = (0..shape.dims.len())
        .filter(|&a| shape.dims[a] > 1)
        .collect();
    let c = req.count;
    let n = req.count;
    let uniform = move |b: usize| (b as u64 * c, c);
    let standard = move |b: usize| chunk(n, p as u64, b as u64);
    let blocks: &dyn Fn(usize) -> (u64, u64) = if mode == Mode::Allgather {
        &uniform
    } else {
        &standard
    };
    if axes.is_empty() || req.count == 0 {
        if mode == Mode::Allgather && p == 1 {
            s.programs[0].push(Op::copy(Region::input(0, c), Region::output(0, c)), &[]);
        }
        return Ok(s);
    }
    let parts = 2 * axes.len() as u64;
    // The longest block (the first): a part no block has an element of is
    // left out on every rank.
    let longest = blocks(0).1;
    let live: Vec<u64> = (0..parts)
        .filter(|&k| chunk(longest, parts, k).1 > 0)
        .collect();
    let ring: u64 = axes.iter().map(|&a| shape.dims[a] as u64 - 1).sum();
    let sweeps = if mode == Mode::Allreduce { 2 } else { 1 };
    // Checked before the work it bounds: each live part a rank runs 2 ops
    // a ring step and a copy a slot (twice in an allreduce).
    let per_part = sweeps * (2 * ring + p as u64);
    let ops = (p as u64).checked_mul(live.len() as u64 * per_part);
    if ops.is_none_or(|ops| ops > MAX_MATERIALISED_OPS) {
        return Err(fail!(
            Algorithm,
            Request,
            "{} {} on {p} ranks: too many operations to write out (at most {MAX_MATERIALISED_OPS})",
            req.collective.name(),
            alg.name
        ));
    }
    let (mut plus, mut minus) = (vec![0; shape.dims.len()], vec![0; shape.dims.len()]);
    if matches!(topo.kind, Kind::Grid(_)) {
        for &a in &axes {
            if shape.wrap[a] {
                let mut off = vec![0i64; shape.dims.len()];
                off[a] = 1;
                plus[a] = s.offset_route(&off);
                off[a] = -1;
                minus[a] = s.offset_route(&off);
            }
        }
    }
    let ctx = Ctx {
        shape: &shape,
        parts,
        blocks,
        plus,
        minus,
        steps: sweeps * ring,
    };
    // Every part's slots together hold every block once.
    let scratch_of = |k: u64| (0..p).map(|b| chunk(blocks(b).1, parts, k).1).sum::<u64>();
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let coords = shape.coords(r);
        let mut base = 0;
        if mode == Mode::Allgather {
            prog.push(
                Op::copy(Region::input(0, c), Region::output(r as u64 * c, c)),
                &[],
            );
        }
        for &k in &live {
            let i = (k / 2) as usize;
            let order = (0..axes.len())
                .map(|j| axes[(i + j) % axes.len()])
                .collect();
            let part = Part {
                order,
                dir: if k % 2 == 0 { 1 } else { -1 },
                base,
                index: k,
            };
            run_part(&ctx, prog, &coords, &part, mode);
            base += scratch_of(k);
        }
        prog.scratch = base;
    }
    Ok(s)
}

/// One part's ops on the rank at `coords`.
fn run_part(ctx: &Ctx, prog: &mut Program, coords: &[usize], part: &Part, mode: Mode) {
    let shape = ctx.shape;
    let p = shape.size();
    let k = part.index;
    // Slot i's rank (offsets from `coords`, the part's first axis fastest)
    // and the prefix sums of the slots' lengths.
    let mut owner = Vec::with_capacity(p);
    let mut pre = Vec::with_capacity(p + 1);
    pre.push(0u64);
    let mut offs = vec![0usize; part.order.len()];
    for _ in 0..p {
        let mut c = coords.to_vec();
        for (j, &a) in part.order.iter().enumerate() {
            c[a] = (coords[a] + offs[j]) % shape.dims[a];
        }
        let b = shape.rank(&c);
        owner.push(b);
        pre.push(pre.last().unwrap() + ctx.piece(b, k).count);
        for (j, &a) in part.order.iter().enumerate() {
            offs[j] += 1;
            if offs[j] < shape.dims[a] {
                break;
            }
            offs[j] = 0;
        }
    }
    let slot = |i: usize| Region::scratch(part.base + pre[i], pre[i + 1] - pre[i]);
    let slab =
        |w: usize, t: usize| Region::scratch(part.base + pre[t * w], pre[(t + 1) * w] - pre[t * w]);
    let widths: Vec<usize> = part
        .order
        .iter()
        .scan(1usize, |w, &a| {
            let here = *w;
            *w *= shape.dims[a];
            Some(here)
        })
        .collect();
    let mut last: Vec<OpId>;
    let mut step = 0u64;
    let tag = |step: &mut u64| {
        let t = (k * ctx.steps + *step) as u32;
        *step += 1;
        t
    };
    if mode == Mode::Allgather {
        let (off, len) = chunk((ctx.blocks)(owner[0]).1, ctx.parts, k);
        last = vec![prog.push(Op::copy(Region::input(off, len), slot(0)), &[])];
    } else {
        // Into the slots: every block's piece of this part.
        for (i, &b) in owner.iter().enumerate() {
            prog.push(Op::copy(ctx.piece(b, k), slot(i)), &[]);
        }
        last = (prog.len() as OpId - p as OpId..prog.len() as OpId).collect();
        // Reduce-scatter: the part's dimensions last to first.
        for (j, &a) in part.order.iter().enumerate().rev() {
            let d = shape.dims[a];
            let w = widths[j];
            // Offsets +1+s go to the −dir neighbour, +2+s come from +dir.
            let (to, from) = (
                ctx.neighbour(coords, a, -part.dir),
                ctx.neighbour(coords, a, part.dir),
            );
            let route = if part.dir > 0 {
                ctx.minus[a]
            } else {
                ctx.plus[a]
            };
            let at = |x: usize| ((d as i64 + part.dir * x as i64).rem_euclid(d as i64)) as usize;
            for s in 0..d - 1 {
                let t = tag(&mut step);
                let send = prog.push(
                    Op::send_routed(to as u32, t, slab(w, at(1 + s)), route),
                    &last,
                );
                let recv = prog.push(Op::recv_combine(from as u32, t, slab(w, at(2 + s))), &last);
                last = vec![send, recv];
            }
        }
        if mode == Mode::ReduceScatter {
            prog.push(Op::copy(slot(0), ctx.piece(owner[0], k)), &last);
            return;
        }
        last = vec![prog.push(Op::copy(slot(0), ctx.piece(owner[0], k)), &last)];
    }
    // Allgather: the part's dimensions first to last.
    for (j, &a) in part.order.iter().enumerate() {
        let d = shape.dims[a];
        let w = widths[j];
        // Offset −s goes to the +dir neighbour, −1−s comes from −dir.
        let (to, from) = (
            ctx.neighbour(coords, a, part.dir),
            ctx.neighbour(coords, a, -part.dir),
        );
        let route = if part.dir > 0 {
            ctx.plus[a]
        } else {
            ctx.minus[a]
        };
        let at = |x: usize| ((d as i64 - part.dir * x as i64).rem_euclid(d as i64)) as usize;
        for s in 0..d - 1 {
            let t = tag(&mut step);
            let send = prog.push(Op::send_routed(to as u32, t, slab(w, at(s)), route), &last);
            let (t_in, got) = (at(1 + s), slab(w, at(1 + s)));
            let recv = prog.push(Op::recv(from as u32, t, got), &last);
            for i in t_in * w..(t_in + 1) * w {
                if pre[i + 1] > pre[i] {
                    prog.push(Op::copy(slot(i), ctx.piece(owner[i], k)), &[recv]);
                }
            }
            last = vec![send, recv];
        }
    }
}
