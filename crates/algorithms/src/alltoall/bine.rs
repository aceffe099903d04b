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
//! source, is copied out in rank order.
//!
//! The reference code takes only powers of two (HLC-Lab/pico,
//! `libbine/libbine_alltoall.c`, `alltoall_bine`, whose steps and block
//! halves follow log2 P), so on P = 2^S + e ranks the ranks fold as its
//! allreduce folds them (`libbine/libbine_allreduce.c`): the first 2e ranks
//! pair up, the odd one of each pair hands its whole input to its even
//! neighbour first and gets its P blocks from it last, and the 2^S
//! participants run the butterfly with a participant's blocks standing
//! for both ranks of its pair: a row holds, per source rank, the blocks to
//! each rank of the destination's pair, so the messages stay one run each.

use crate::butterfly::Butterfly;
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, OpId, Program, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Alltoall, "bine", "Bine: log2 P steps, P/2 blocks to rank ± ρ(s) in one message each, nearest first (P not a power of two: neighbours pair up, one hands its blocks in)", build);

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

/// Copies (src, dst, len), each pair merged with the one before where both
/// runs continue it; each waits for `deps`.
fn copies(prog: &mut Program, list: &[(Region, Region)], deps: &[OpId]) -> Vec<OpId> {
    let mut runs: Vec<(Region, Region)> = Vec::new();
    for &(a, b) in list {
        if a.count == 0 {
            continue;
        }
        match runs.last_mut() {
            Some((s, d))
                if s.buf == a.buf
                    && d.buf == b.buf
                    && s.offset + s.count == a.offset
                    && d.offset + d.count == b.offset =>
            {
                s.count += a.count;
                d.count += b.count;
            }
            _ => runs.push((a, b)),
        }
    }
    runs.into_iter()
        .map(|(a, b)| prog.push(Op::copy(a, b), deps))
        .collect()
}

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    let mut s = req.schedule(&ALGORITHM);
    let (p, c) = (req.ranks, req.count);
    if c == 0 {
        return Ok(s);
    }
    let n = 1usize << p.ilog2();
    let e = p - n;
    let bf = Butterfly::ring(n)?;
    let steps = bf.steps();
    // Participant q stands for ranks first(q)..first(q + 1): 2q and 2q + 1
    // below e, q + e from there.
    let first = |q: usize| if q < e { 2 * q } else { q + e };
    let w = |q: usize| (first(q + 1) - first(q)) as u64;
    // wp[i]: the ranks of the participants at places before i.
    let mut wp = vec![0u64; n + 1];
    for i in 0..n {
        wp[i + 1] = wp[i] + w(bf.at(i));
    }
    // ws[k][x]: the source ranks x holds after steps 0..k.
    let mut ws = vec![(0..n).map(w).collect::<Vec<u64>>()];
    for k in 0..steps as usize {
        let next = (0..n)
            .map(|x| ws[k][x] + ws[k][bf.peer(x, k as u32)])
            .collect();
        ws.push(next);
    }
    let pc = p as u64 * c;
    let tag = steps;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        if r < 2 * e && r % 2 == 1 {
            // Sits out: its blocks go through its even neighbour.
            prog.push(Op::send(r as u32 - 1, tag, Region::input(0, pc)), &[]);
            prog.push(Op::recv(r as u32 - 1, tag, Region::output(0, pc)), &[]);
            continue;
        }
        let x = if r < 2 * e { r / 2 } else { r - e };
        let pair = w(x) == 2;
        // Elements of x's rows at step k (its run's destinations by the
        // sources it holds), and of what it receives.
        let held = |k: u32| {
            let (a, b) = bf.block(x, k);
            (wp[b] - wp[a]) * ws[k as usize][x] * c
        };
        let got = |k: u32| {
            let (a, b) = bf.block(x, k + 1);
            (wp[b] - wp[a]) * ws[k as usize][bf.peer(x, k)] * c
        };
        let big = (0..=steps).map(held).max().unwrap_or(0);
        let most = (0..steps).map(got).max().unwrap_or(0);
        // Scratch: two buffers of rows (this step's and the next), the
        // received half, and the partner's input (its outgoing blocks at
        // the end).
        let buf = |k: u32| u64::from(k % 2) * big;
        let recvd = 2 * big;
        let theirs = recvd + most;
        prog.scratch = theirs + if pair { pc } else { 0 };
        let mut start = Vec::new();
        if pair {
            let into = Region::scratch(theirs, pc);
            start.push(prog.push(Op::recv(r as u32 + 1, tag, into), &[]));
        }
        // Step 0: one row per destination participant in block order, its
        // ranks' blocks from x's own ranks (own input, then the partner's).
        let mut list = Vec::new();
        let mut at = buf(0);
        for i in 0..n {
            let y = bf.at(i);
            let (d, len) = (first(y) as u64 * c, w(y) * c);
            list.push((Region::input(d, len), Region::scratch(at, len)));
            at += len;
            if pair {
                list.push((Region::scratch(theirs + d, len), Region::scratch(at, len)));
                at += len;
            }
        }
        let mut deps = copies(prog, &list, &start);
        let mut sent: Vec<OpId> = Vec::new();
        for k in 0..steps {
            let y = bf.peer(x, k);
            let (cur, next) = (buf(k), buf(k + 1));
            let (mine, peers) = (ws[k as usize][x], ws[k as usize][y]);
            let (a, _) = bf.block(x, k);
            let (g, g_end) = bf.block(y, k + 1);
            let (h, h_end) = bf.block(x, k + 1);
            let give = Region::scratch(
                cur + (wp[g] - wp[a]) * mine * c,
                (wp[g_end] - wp[g]) * mine * c,
            );
            let send = prog.push(Op::send(first(y) as u32, k, give), &deps);
            let into = Region::scratch(recvd, got(k));
            let recv = prog.push(Op::recv(first(y) as u32, k, into), &deps);
            let mut wait = vec![send, recv];
            wait.append(&mut sent);
            sent.push(send);
            let mut list = Vec::with_capacity(2 * (h_end - h));
            for i in h..h_end {
                let (wy, before) = (w(bf.at(i)), wp[i] - wp[h]);
                let to = next + before * (mine + peers) * c;
                let kept = cur + (wp[i] - wp[a]) * mine * c;
                let (lk, lt) = (wy * mine * c, wy * peers * c);
                list.push((Region::scratch(kept, lk), Region::scratch(to, lk)));
                let from = recvd + before * peers * c;
                list.push((Region::scratch(from, lt), Region::scratch(to + lk, lt)));
            }
            deps = copies(prog, &list, &wait);
        }
        // The last row: for every source rank, in `sources` order, its
        // blocks to x's ranks; x's own go out, its partner's are packed in
        // rank order and sent.
        let mut from = Vec::with_capacity(n);
        sources(&bf, x, steps, &mut from);
        let row = buf(steps);
        let (mut out, mut pack) = (Vec::with_capacity(p), Vec::new());
        let mut t = 0u64;
        for z in from {
            for src in first(z)..first(z + 1) {
                let at = row + t * w(x) * c;
                out.push((Region::scratch(at, c), Region::output(src as u64 * c, c)));
                if pair {
                    let to = Region::scratch(theirs + src as u64 * c, c);
                    pack.push((Region::scratch(at + c, c), to));
                }
                t += 1;
            }
        }
        deps.extend(sent);
        copies(prog, &out, &deps);
        if pair {
            let packed = copies(prog, &pack, &deps);
            let all = Region::scratch(theirs, pc);
            prog.push(Op::send(r as u32 + 1, tag, all), &packed);
        }
    }
    Ok(s)
}
