//! Swing's allgather, the second half of its bandwidth-optimal allreduce
//! (De Sensi et al., NSDI 2024): at step s = S−1, …, 0 a rank swaps all it
//! holds with π(r, s) = r ± ρ(s) (`algorithms::butterfly`), the farthest
//! first. The blocks are gathered in Scratch in the butterfly's block
//! order, where each step's message is one contiguous run, and copied into
//! the Output in rank order at the end (neighbouring blocks in one copy).
//!
//! * `swing`: rank-based, any network; for P not a power of two the
//!   paper's own scheme, the reduce-scatter's reversed (`algorithms::
//!   butterfly`): ⌈log2 P⌉ steps on an even P; for an odd P rank P − 1
//!   hands its block to P − 2 and gets everything back.
//! * `swing_torus`: on a mesh or torus whose every dimension is even (or
//!   1), per-dimension Swing steps, and each block cut into 2·D parts, one
//!   per port, each gathered by its own Swing (see `allreduce::swing_bw`).

use crate::algorithms::butterfly::{self, Blocks, Butterfly, Layout};
use crate::algorithms::{Algorithm, Request};
use crate::algorithms::{Applies, Counterparts, OpCount, RankNeed, RootNeed, TopologyNeed};
use crate::error::Result;
use crate::schedule::{chunk, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Allgather,
    name: "swing",
    summary: "Swing: swap the blocks held with rank ± ρ(s), farthest first, ⌈log2 P⌉ steps (odd P: one rank folds in)",
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
    collective: CollectiveKind::Allgather,
    name: "swing_torus",
    summary:
        "Swing allgather on a mesh or torus of even dimensions, one part of each block per port",
    build: build_torus,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: Applies {
        topology: TopologyNeed::EvenGrid,
        ranks: RankNeed::Any,
        root: RootNeed::Any,
    },
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

fn build(req: &Request) -> Result<Schedule> {
    ring(req, ALGORITHM.name)
}

/// The rank-based Swing allgather, named `name` (Bine's allgather is the
/// same on a power of two).
pub(crate) fn ring(req: &Request, name: &str) -> Result<Schedule> {
    let mut s = req.schedule(name);
    let (p, c) = (req.ranks, req.count);
    if c == 0 {
        return Ok(s);
    }
    // An odd count: rank p − 1 sits out, folded into p − 2.
    let np = (p - p % 2).max(1);
    let bf = Butterfly::ring(np, false)?;
    // Participant q's ranks: q, and p − 1 with the last.
    let first = |g: usize| (if g == np { p } else { g }) as u64;
    let pieces = (0..np)
        .map(|g| (first(g) * c, (first(g + 1) - first(g)) * c))
        .collect();
    let layout = Layout::new(&bf, 0, pieces);
    let region = |a: usize, b: usize| layout.region(a, b);
    let real = |q: usize| q as u32;
    let stage_len = butterfly::stage_len(&bf, &region);
    let blocks = Blocks {
        region: &region,
        real: &real,
        stage: layout.len(),
        stage_len,
    };
    let last = 1 + bf.steps();
    let all = Region::output(0, p as u64 * c);
    let folds = np < p;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        if r == np {
            // The rank that sits out: hand over its block, get everything back.
            prog.push(Op::send(r as u32 - 1, 0, Region::input(0, c)), &[]);
            prog.push(Op::recv(r as u32 - 1, last, all), &[]);
            continue;
        }
        prog.scratch = layout.len() + 2 * stage_len;
        let mine = layout.region(bf.pos(r), bf.pos(r) + 1);
        let mut deps = if folds && r + 1 == np {
            let (lo, hi) = (
                Region::scratch(mine.offset, c),
                Region::scratch(mine.offset + c, c),
            );
            vec![
                prog.push(Op::copy(Region::input(0, c), lo), &[]),
                prog.push(Op::recv(r as u32 + 1, 0, hi), &[]),
            ]
        } else {
            vec![prog.push(Op::copy(Region::input(0, c), mine), &[])]
        };
        butterfly::allgather(prog, &bf, r, &blocks, 1, &mut deps);
        let done = layout.copies(prog, false, &deps);
        if folds && r + 1 == np {
            prog.push(Op::send(r as u32 + 1, last, all), &done);
        }
    }
    Ok(s)
}

fn build_torus(req: &Request) -> Result<Schedule> {
    let dims = butterfly::even_grid_dims(req, TORUS.name)?;
    let mut s = req.schedule(TORUS.name);
    let (p, c) = (req.ranks, req.count);
    if c == 0 {
        return Ok(s);
    }
    let ports = butterfly::ports(&dims, false)?;
    let real = |q: usize| q as u32;
    let mut layouts = Vec::new();
    let mut base = 0;
    for (j, bf) in ports.iter().enumerate() {
        let (at, len) = chunk(c, ports.len() as u64, j as u64);
        let layout = Layout::new(bf, base, (0..p).map(|b| (b as u64 * c + at, len)).collect());
        base += layout.len();
        layouts.push((layout, at, len));
    }
    // Each port's two stages after the layouts.
    let mut stages = Vec::new();
    for (bf, (layout, _, _)) in ports.iter().zip(&layouts) {
        let len = butterfly::stage_len(bf, &|a, b| layout.region(a, b));
        stages.push((base, len));
        base += 2 * len;
    }
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.scratch = base;
        for (j, (bf, (layout, at, len))) in ports.iter().zip(&layouts).enumerate() {
            if *len == 0 {
                continue;
            }
            let region = |a: usize, b: usize| layout.region(a, b);
            let blocks = Blocks {
                region: &region,
                real: &real,
                stage: stages[j].0,
                stage_len: stages[j].1,
            };
            let mine = layout.region(bf.pos(r), bf.pos(r) + 1);
            let mut deps = vec![prog.push(Op::copy(Region::input(*at, *len), mine), &[])];
            butterfly::allgather(prog, bf, r, &blocks, j as u32 * bf.steps(), &mut deps);
            layout.copies(prog, false, &deps);
        }
    }
    Ok(s)
}
