//! Bine all-to-all (De Sensi et al., SC 2025): a butterfly all-to-all in
//! log2 P steps on Swing's peers, nearest first. At step s a rank holds,
//! for every destination of its current run `B(r, s)` of the butterfly's
//! block order (`algorithms::butterfly`), the blocks of the 2^s sources it
//! has gathered so far; it sends r ± ρ(s) the half of the destinations the
//! peer keeps (P/2 blocks, one message) and receives the peer's sources'
//! blocks for its own half. Blocks are kept destination-major in Scratch
//! (each destination's sources together), so every message is one run; a
//! step's received blocks are interleaved with the kept ones by local
//! copies, and the last step's row, the rank's own blocks from every
//! source, is copied out in rank order. P must be a power of two.

use crate::algorithms::butterfly::{Butterfly, Layout};
use crate::algorithms::{bcast, Algorithm, Request};
use crate::algorithms::{Counterparts, OpCount};
use crate::error::Result;
use crate::schedule::{Buf, CollectiveKind, Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Alltoall,
    name: "bine",
    summary: "Bine: log2 P steps, P/2 blocks to rank ± ρ(s) in one message each, nearest first (P a power of two)",
    build,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: bcast::bine::POWER_OF_TWO,
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

/// The sources whose blocks x holds after the butterfly's steps 0..k, in
/// the order it holds them: its own, then its peers' of each step.
fn sources(bf: &Butterfly, x: usize, k: u32, out: &mut Vec<usize>) {
    if k == 0 {
        out.push(x);
    } else {
        sources(bf, x, k - 1, out);
        sources(bf, bf.peer(x, k - 1), k - 1, out);
    }
}

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    let mut s = req.schedule(ALGORITHM.name);
    let (p, c) = (req.ranks, req.count);
    if c == 0 {
        return Ok(s);
    }
    let bf = Butterfly::ring(p, false)?;
    let pc = p as u64 * c;
    // Scratch: two buffers of P blocks (this step's and the next) and the
    // received half.
    let buf = |k: u32| Region::scratch(u64::from(k % 2) * pc, pc);
    let recvd = Region::scratch(2 * pc, pc / 2);
    let inputs = Layout::new(&bf, 0, (0..p).map(|d| (d as u64 * c, c)).collect());
    for (x, prog) in s.programs.iter_mut().enumerate() {
        prog.scratch = 2 * pc + pc / 2;
        // Step 0: one row per destination in block order, one source each.
        let mut deps = inputs.copies_with(prog, Buf::Input, true, &[]);
        let mut sent: Vec<OpId> = Vec::new();
        for k in 0..bf.steps() {
            let y = bf.peer(x, k) as u32;
            let (cur, next) = (buf(k), buf(k + 1));
            let width = c << k; // one row: 2^k sources
            let (a, _) = bf.block(x, k);
            let (g, _) = bf.block(bf.peer(x, k), k + 1);
            let (h, h_end) = bf.block(x, k + 1);
            let give = Region::scratch(cur.offset + (g - a) as u64 * width, pc / 2);
            let send = prog.push(Op::send(y, k, give), &deps);
            let recv = prog.push(Op::recv(y, k, recvd), &deps);
            let mut wait = vec![send, recv];
            wait.append(&mut sent);
            sent.push(send);
            deps = Vec::with_capacity(2 * (h_end - h));
            for i in 0..(h_end - h) as u64 {
                let row = cur.offset + ((h - a) as u64 + i) * width;
                let to = next.offset + i * 2 * width;
                let kept = Op::copy(Region::scratch(row, width), Region::scratch(to, width));
                let theirs = Region::scratch(recvd.offset + i * width, width);
                deps.push(prog.push(kept, &wait));
                deps.push(prog.push(Op::copy(theirs, Region::scratch(to + width, width)), &wait));
            }
        }
        // The last row: x's blocks from every source, in `sources` order.
        let mut from = Vec::with_capacity(p);
        sources(&bf, x, bf.steps(), &mut from);
        let row = buf(bf.steps()).offset;
        let mut runs: Vec<(u64, u64, u64)> = Vec::new();
        for (t, &src) in from.iter().enumerate() {
            let (at, to) = (row + t as u64 * c, src as u64 * c);
            match runs.last_mut() {
                Some((a, b, l)) if *a + *l == at && *b + *l == to => *l += c,
                _ => runs.push((at, to, c)),
            }
        }
        deps.extend(sent);
        for (at, to, len) in runs {
            prog.push(
                Op::copy(Region::scratch(at, len), Region::output(to, len)),
                &deps,
            );
        }
    }
    Ok(s)
}
