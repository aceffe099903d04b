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
//! * `swing_torus`: on a mesh or torus of any shape, per-dimension Swing
//!   steps, and each block cut into 2·D parts, one per port, each gathered
//!   by its own Swing (see `allreduce::swing_bw`). Odd dimensions first
//!   fold their last coordinate in, as `swing_bw_torus` does
//!   ([`Shrink::even`]): a rank that sits out hands the blocks it holds
//!   (its own and those folded into it) to its neighbour, one message a
//!   port, and gets the whole output back at the end.

use crate::butterfly::{self, Blocks, Butterfly, Layout, Shrink};
use crate::compose::joined_copies;
use crate::error::Result;
use crate::{Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::{chunk, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allgather, "swing", "Swing: swap the blocks held with rank ± ρ(s), farthest first, ⌈log2 P⌉ steps (odd P: one rank folds in)", build);

pub const TORUS: Algorithm = Algorithm::new(CollectiveKind::Allgather, "swing_torus", "Swing allgather on a mesh or torus of any shape, one part of each block per port (odd dimensions fold one coordinate in)", build_torus).applies(Applies {
        topology: TopologyNeed::Grid,
        ranks: RankNeed::Any,
        root: RootNeed::Any,
    });

fn build(req: &Request) -> Result<Schedule> {
    ring(req, &ALGORITHM)
}

/// The rank-based Swing allgather as `alg`'s schedule (Bine's allgather is
/// the same on a power of two).
pub(crate) fn ring(req: &Request, alg: &Algorithm) -> Result<Schedule> {
    let mut s = req.schedule(alg);
    let (p, c) = (req.ranks, req.count);
    if c == 0 {
        return Ok(s);
    }
    // An odd count: rank p − 1 sits out, folded into p − 2.
    let np = (p - p % 2).max(1);
    let bf = Butterfly::ring(np)?;
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
        let done = layout.copies_out(prog, &deps);
        if folds && r + 1 == np {
            prog.push(Op::send(r as u32 + 1, last, all), &done);
        }
    }
    Ok(s)
}

fn build_torus(req: &Request) -> Result<Schedule> {
    let dims = butterfly::grid_dims(req, &TORUS)?;
    let shrink = Shrink::even(&dims);
    if shrink.folds() {
        return folded_torus(req, &shrink);
    }
    let mut s = req.schedule(&TORUS);
    let (p, c) = (req.ranks, req.count);
    if c == 0 {
        return Ok(s);
    }
    let ports = butterfly::ports(&dims)?;
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
            layout.copies_out(prog, &deps);
        }
    }
    Ok(s)
}

/// `swing_torus` on a grid with odd dimensions: the ranks of each odd
/// dimension's last coordinate fold into their neighbours (dimension by
/// dimension, [`Shrink::takes_in`]); each participant gathers, per port,
/// the parts of its set of ranks' blocks ([`Shrink::sets`]: its own, then
/// those of the ranks folded into it) as one piece of its port's Swing;
/// the copies put every rank's part in place, and the whole output goes
/// back to the ranks that sat out ([`Shrink::fold_out`]).
fn folded_torus(req: &Request, shrink: &Shrink) -> Result<Schedule> {
    let mut s = req.schedule(&TORUS);
    let (p, c) = (req.ranks, req.count);
    if c == 0 {
        return Ok(s);
    }
    let ports = butterfly::ports(&shrink.kept())?;
    let sets = shrink.sets(p);
    let real = |q: usize| shrink.real(q);
    let size = |q: usize| sets[real(q) as usize].len() as u64;
    let parts: Vec<(u64, u64)> = (0..ports.len())
        .map(|j| chunk(c, ports.len() as u64, j as u64))
        .collect();
    let mut layouts = Vec::new();
    let mut base = 0;
    for (bf, &(_, len)) in ports.iter().zip(&parts) {
        let layout = Layout::new(
            bf,
            base,
            (0..bf.len()).map(|q| (0, size(q) * len)).collect(),
        );
        base += layout.len();
        layouts.push(layout);
    }
    let mut stages = Vec::new();
    for (bf, layout) in ports.iter().zip(&layouts) {
        let len = butterfly::stage_len(bf, &|a, b| layout.region(a, b));
        stages.push((base, len));
        base += 2 * len;
    }
    let steps = ports[0].steps();
    // Tags: the ports' Swings, then one a port for the folding in, then
    // the output's way back.
    let tag_in = ports.len() as u32 * steps;
    let tag_out = tag_in + ports.len() as u32;
    let all = Region::output(0, p as u64 * c);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let (from, out) = shrink.takes_in(r);
        let q = shrink.participant(r);
        let mine = sets[r].len() as u64;
        // A rank that sits out holds its set in scratch after the stages,
        // port by port.
        prog.scratch = base + if q.is_none() { mine * c } else { 0 };
        let mut done = Vec::new();
        for (j, &(at, len)) in parts.iter().enumerate() {
            if len == 0 {
                continue;
            }
            let held = match q {
                Some(q) => {
                    layouts[j]
                        .region(ports[j].pos(q), ports[j].pos(q) + 1)
                        .offset
                }
                None => base + mine * at,
            };
            let tag = tag_in + j as u32;
            let mut deps = vec![prog.push(
                Op::copy(Region::input(at, len), Region::scratch(held, len)),
                &[],
            )];
            let mut k = 1;
            for &f in &from {
                let n = sets[f].len() as u64;
                let into = Region::scratch(held + k * len, n * len);
                deps.push(prog.push(Op::recv(f as u32, tag, into), &[]));
                k += n;
            }
            let Some(q) = q else {
                let (_, to) = out.expect("a rank that is no participant sits out");
                let held = Region::scratch(held, mine * len);
                done.push(prog.push(Op::send(to as u32, tag, held), &deps));
                continue;
            };
            let (bf, layout) = (&ports[j], &layouts[j]);
            let region = |a: usize, b: usize| layout.region(a, b);
            let blocks = Blocks {
                region: &region,
                real: &real,
                stage: stages[j].0,
                stage_len: stages[j].1,
            };
            butterfly::allgather(prog, bf, q, &blocks, j as u32 * steps, &mut deps);
            // Every participant's piece holds its set's parts in order.
            let mut moves = Vec::new();
            for i in 0..bf.len() {
                let place = layout.region(i, i + 1).offset;
                for (k, &m) in sets[real(bf.at(i)) as usize].iter().enumerate() {
                    moves.push((
                        Region::scratch(place + k as u64 * len, len),
                        Region::output(m as u64 * c + at, len),
                    ));
                }
            }
            for op in joined_copies(moves) {
                done.push(prog.push(op, &deps));
            }
        }
        shrink.fold_out(prog, r, all, tag_out, out.map(|(d, _)| d), &done);
    }
    Ok(s)
}
