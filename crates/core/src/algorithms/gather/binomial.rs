//! Binomial-tree gather (MPICH's), the binomial scatter reversed: with
//! relative rank v = (r − root) mod P, a rank collects in Scratch, in
//! relative order, its own block and its children's subtrees (child v + m
//! for m = 1, 2, 4, … below lowbit(v)), then sends the whole of its subtree
//! to v − lowbit(v). The root copies the collected blocks into its output
//! rotated back (it collects straight into its output when it is rank 0).

use super::super::scatter::binomial::low;
use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "gather",
    name: "binomial",
    summary: "binomial tree: each rank collects its children's subtrees, smallest first, and sends its own to its parent",
    build,
    stream: None,
    segmented: false,
    lanes: false,
};

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let c = req.count;
    let root = req.collective.root().unwrap_or(0) as usize;
    let members: Vec<usize> = (0..p).map(|v| (root + v) % p).collect();
    if root == 0 {
        tree(
            &mut s.programs,
            &members,
            c,
            0,
            Region::output(0, p as u64 * c),
        );
        return Ok(s);
    }
    s.programs[root].scratch = p as u64 * c;
    let done = tree(
        &mut s.programs,
        &members,
        c,
        0,
        Region::scratch(0, p as u64 * c),
    );
    let prog = &mut s.programs[root];
    let first = (p - root) as u64 * c;
    prog.push(
        Op::copy(
            Region::scratch(0, first),
            Region::output(root as u64 * c, first),
        ),
        &done,
    );
    prog.push(
        Op::copy(
            Region::scratch(first, root as u64 * c),
            Region::output(0, root as u64 * c),
        ),
        &done,
    );
    Ok(s)
}

/// A binomial gather among `members` (relative rank v is `members[v]`) of
/// blocks of `c` elements, with messages tagged `tag`: every member but the
/// first collects its subtree's blocks, in relative order, in Scratch from
/// offset 0 (a leaf sends its input), and `members[0]` collects all of them
/// in `into`, in relative order. Returns the ops `members[0]` collects with.
pub(crate) fn tree(
    progs: &mut [crate::schedule::Program],
    members: &[usize],
    c: u64,
    tag: u32,
    into: Region,
) -> Vec<OpId> {
    let p = members.len();
    let mut root_done = Vec::new();
    for (v, &r) in members.iter().enumerate() {
        let prog = &mut progs[r];
        let low = low(v, p);
        let sub = low.min(p - v) as u64;
        if v != 0 && sub == 1 {
            prog.push(
                Op::send(members[v - low] as u32, tag, Region::input(0, c)),
                &[],
            );
            continue;
        }
        let base = if v == 0 {
            into
        } else {
            prog.scratch = prog.scratch.max(sub * c);
            Region::scratch(0, sub * c)
        };
        let at = |j: u64, k: u64| Region::new(base.buf, base.offset + j * c, k * c);
        let mut done: Vec<OpId> = vec![prog.push(Op::copy(Region::input(0, c), at(0, 1)), &[])];
        let mut m = 1;
        while m < low && v + m < p {
            let k = m.min(p - v - m) as u64;
            done.push(prog.push(Op::recv(members[v + m] as u32, tag, at(m as u64, k)), &[]));
            m <<= 1;
        }
        if v == 0 {
            root_done = done;
        } else {
            prog.push(Op::send(members[v - low] as u32, tag, at(0, sub)), &done);
        }
    }
    root_done
}
