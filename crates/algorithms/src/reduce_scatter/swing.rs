//! Swing's reduce-scatter, the first half of its bandwidth-optimal
//! allreduce (De Sensi et al., NSDI 2024): at step s = 0, 1, … a rank
//! sends π(r, s) = r ± ρ(s) the half of what it holds that the peer keeps
//! and receive-combines the peer's copy of its own half
//! (`algorithms::butterfly`). The chunks are first copied into Scratch in
//! the butterfly's block order (neighbouring ones in one copy), where each
//! step's message is one contiguous run; a rank ends with its own chunk
//! there and copies it back. Each chunk is combined on one rank in an order
//! the schedule fixes.
//!
//! * `swing`: rank-based, any network; for P not a power of two the
//!   paper's own scheme (`algorithms::butterfly`, "Rings that are not a
//!   power of two"): an even P takes ⌈log2 P⌉ steps, a block handed on at
//!   the latest step that reaches it; for an odd P rank P − 1 first hands
//!   its buffer to P − 2, which receive-combines it and hands back its
//!   chunk at the end.
//! * `swing_torus`: on a mesh or torus of any shape, per-dimension Swing
//!   steps, each chunk cut into 2·D parts, one per port, each reduced by
//!   its own Swing (see `allreduce::swing_bw`). Odd dimensions first fold
//!   their last coordinate in, as `swing_bw_torus` does ([`Shrink::even`]):
//!   a rank that sits out hands its whole buffer to its neighbour, which
//!   combines it in, and gets its chunk back from the participant that
//!   reduced it, one message a port.

use crate::butterfly::{self, Blocks, Butterfly, Layout, Shrink};
use crate::compose::joined_copies;
use crate::error::Result;
use crate::{Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::{chunk, Buf, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::ReduceScatter, "swing", "Swing: hand rank ± ρ(s) the blocks it keeps, nearest first, ⌈log2 P⌉ steps (odd P: one rank folds in)", build);

pub const TORUS: Algorithm = Algorithm::new(CollectiveKind::ReduceScatter, "swing_torus", "Swing reduce-scatter on a mesh or torus of any shape, one part of each chunk per port (odd dimensions fold one coordinate in)", build_torus).applies(Applies {
        topology: TopologyNeed::Grid,
        ranks: RankNeed::Any,
        root: RootNeed::Any,
    });

fn build(req: &Request) -> Result<Schedule> {
    ring(req, &ALGORITHM)
}

/// The rank-based Swing reduce-scatter as `alg`'s schedule (Bine's is the
/// same on a power of two).
pub(crate) fn ring(req: &Request, alg: &Algorithm) -> Result<Schedule> {
    let mut s = req.schedule(alg);
    let (p, n) = (req.ranks, req.count);
    if p == 1 || n == 0 {
        return Ok(s);
    }
    // An odd count: rank p − 1 sits out, folded into p − 2.
    let np = p - p % 2;
    let bf = Butterfly::ring(np)?;
    let at = |r: u64| {
        if r >= p as u64 {
            n
        } else {
            chunk(n, p as u64, r).0
        }
    };
    // Participant q's ranks: q, and p − 1 with the last.
    let first = |g: usize| (if g == np { p } else { g }) as u64;
    let pieces = (0..np)
        .map(|g| (at(first(g)), at(first(g + 1)) - at(first(g))))
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
    let own = |r: usize| Region::output(at(r as u64), at(r as u64 + 1) - at(r as u64));
    let all = Region::output(0, n);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        if r == np {
            // The rank that sits out: hand over the buffer, get its chunk back.
            let send = prog.push(Op::send(r as u32 - 1, 0, all), &[]);
            prog.push(Op::recv(r as u32 - 1, last, own(r)), &[send]);
            continue;
        }
        prog.scratch = layout.len() + 2 * stage_len;
        let absorbed: Vec<u32> = if r + 1 == np && np < p {
            vec![prog.push(Op::recv_combine(r as u32 + 1, 0, all), &[])]
        } else {
            Vec::new()
        };
        let mut deps = layout.copies_in(prog, Buf::Output, &absorbed);
        butterfly::reduce_scatter(prog, &bf, r, &blocks, 1, &mut deps);
        let mine = layout.region(bf.pos(r), bf.pos(r) + 1);
        let back = prog.push(Op::copy(mine, layout.piece(r)), &deps);
        if r + 1 == np && np < p {
            prog.push(Op::send(r as u32 + 1, last, own(r + 1)), &[back]);
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
    let (p, n) = (req.ranks, req.count);
    if p == 1 || n == 0 {
        return Ok(s);
    }
    let ports = butterfly::ports(&dims)?;
    let real = |q: usize| q as u32;
    let mut layouts = Vec::new();
    let mut base = 0;
    for (j, bf) in ports.iter().enumerate() {
        let pieces = (0..p as u64)
            .map(|b| {
                let (at, len) = chunk(n, p as u64, b);
                let (off, part) = chunk(len, ports.len() as u64, j as u64);
                (at + off, part)
            })
            .collect();
        let layout = Layout::new(bf, base, pieces);
        base += layout.len();
        layouts.push(layout);
    }
    // Each port's two stages after the layouts.
    let mut stages = Vec::new();
    for (bf, layout) in ports.iter().zip(&layouts) {
        let len = butterfly::stage_len(bf, &|a, b| layout.region(a, b));
        stages.push((base, len));
        base += 2 * len;
    }
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.scratch = base;
        for (j, (bf, layout)) in ports.iter().zip(&layouts).enumerate() {
            if layout.len() == 0 {
                continue;
            }
            let region = |a: usize, b: usize| layout.region(a, b);
            let blocks = Blocks {
                region: &region,
                real: &real,
                stage: stages[j].0,
                stage_len: stages[j].1,
            };
            let mut deps = layout.copies_in(prog, Buf::Output, &[]);
            butterfly::reduce_scatter(prog, bf, r, &blocks, j as u32 * bf.steps(), &mut deps);
            let mine = layout.region(bf.pos(r), bf.pos(r) + 1);
            if mine.count > 0 {
                prog.push(Op::copy(mine, layout.piece(r)), &deps);
            }
        }
    }
    Ok(s)
}

/// `swing_torus` on a grid with odd dimensions: the ranks of each odd
/// dimension's last coordinate fold their buffers into their neighbours'
/// (combined, dimension by dimension: [`Shrink::fold_in`]); each
/// participant reduces, per port, the parts of its set of ranks' chunks
/// ([`Shrink::sets`]) as one piece of its port's Swing, keeps its own part
/// and sends each rank folded into it its part.
fn folded_torus(req: &Request, shrink: &Shrink) -> Result<Schedule> {
    let mut s = req.schedule(&TORUS);
    let (p, n) = (req.ranks, req.count);
    if n == 0 {
        return Ok(s);
    }
    let ports = butterfly::ports(&shrink.kept())?;
    let np = ports.len() as u64;
    let sets = shrink.sets(p);
    let real = |q: usize| shrink.real(q);
    // Part j of rank b's chunk, in the Output.
    let part = |b: usize, j: usize| {
        let (at, len) = chunk(n, p as u64, b as u64);
        let (off, part) = chunk(len, np, j as u64);
        Region::output(at + off, part)
    };
    let piece = |x: usize, j: usize| sets[x].iter().map(|&m| part(m, j).count).sum::<u64>();
    let mut owner = vec![0; p];
    for (x, set) in sets.iter().enumerate() {
        if shrink.participant(x).is_some() {
            for &m in set {
                owner[m] = x;
            }
        }
    }
    let mut layouts = Vec::new();
    let mut base = 0;
    for (j, bf) in ports.iter().enumerate() {
        let pieces = (0..bf.len())
            .map(|q| (0, piece(real(q) as usize, j)))
            .collect();
        let layout = Layout::new(bf, base, pieces);
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
    // Tags: the ports' Swings, the folding in, then one a port for the
    // chunks' way back.
    let tag_in = ports.len() as u32 * steps;
    let all = Region::output(0, n);
    for (r, prog) in s.programs.iter_mut().enumerate() {
        prog.scratch = base + n;
        let (deps, out) = shrink.fold_in(prog, r, all, Region::scratch(base, n), tag_in);
        let Some(q) = shrink.participant(r) else {
            debug_assert!(out.is_some());
            for j in 0..ports.len() {
                let mine = part(r, j);
                if mine.count > 0 {
                    let back = Op::recv(owner[r] as u32, tag_in + 1 + j as u32, mine);
                    prog.push(back, &deps);
                }
            }
            continue;
        };
        for (j, (bf, layout)) in ports.iter().zip(&layouts).enumerate() {
            if layout.len() == 0 {
                continue;
            }
            // Every participant's piece: its set's parts in order.
            let mut moves = Vec::new();
            for i in 0..bf.len() {
                let mut at = layout.region(i, i + 1).offset;
                for &m in &sets[real(bf.at(i)) as usize] {
                    let from = part(m, j);
                    moves.push((from, Region::scratch(at, from.count)));
                    at += from.count;
                }
            }
            let mut d: Vec<_> = joined_copies(moves)
                .into_iter()
                .map(|op| prog.push(op, &deps))
                .collect();
            let region = |a: usize, b: usize| layout.region(a, b);
            let blocks = Blocks {
                region: &region,
                real: &real,
                stage: stages[j].0,
                stage_len: stages[j].1,
            };
            butterfly::reduce_scatter(prog, bf, q, &blocks, j as u32 * steps, &mut d);
            let mut at = layout.region(bf.pos(q), bf.pos(q) + 1).offset;
            for &m in &sets[r] {
                let to = part(m, j);
                let held = Region::scratch(at, to.count);
                at += to.count;
                if to.count == 0 {
                    continue;
                }
                let op = if m == r {
                    Op::copy(held, to)
                } else {
                    Op::send(m as u32, tag_in + 1 + j as u32, held)
                };
                prog.push(op, &d);
            }
        }
    }
    Ok(s)
}
