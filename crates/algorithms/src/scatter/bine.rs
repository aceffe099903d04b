//! Bine-tree scatter (De Sensi et al., SC 2025): the Bine broadcast's tree
//! (`algorithms::butterfly::bine_tree`), each rank receiving only its
//! subtree's blocks. In the tree's preorder every subtree is one run, so
//! the root first copies its blocks into Scratch in that order
//! (neighbouring ones in one copy), and each rank receives its
//! subtree's run into Scratch (straight into its Output at a leaf), sends
//! each child the child's run, farthest first, and copies its own block
//! out. On P = 2^S + e ranks the first 2e relative ranks pair up (the fold
//! of `bine_tree`): the odd one of a pair sits out, its block travels
//! with its neighbour's, just after it in the preorder, and the neighbour
//! sends it on last.

use crate::butterfly::{bine_tree, Layout, Seat};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{Buf, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Scatter, "bine", "Bine tree: each rank receives its subtree's blocks and passes on its children's, farthest first (P not a power of two: neighbours pair up, one served last)", build);

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    let mut s = req.schedule(&ALGORITHM);
    let (p, c) = (req.ranks, req.count);
    let root = req.collective.root().unwrap_or(0) as usize;
    let tree = bine_tree(p)?;
    let real = |v: usize| (v + root) % p;
    // The root's input blocks in the tree's preorder, each participant's
    // partner just after it (relative rank v's block is real(v)'s).
    let mut order = vec![0; p];
    for q in 0..tree.bf.len() {
        order[tree.pre[q]] = tree.rank(q);
        if let Some(w) = tree.partner(q) {
            order[tree.pre[q] + 1] = w;
        }
    }
    let layout = Layout::ordered(order, 0, (0..p).map(|v| (real(v) as u64 * c, c)).collect());
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        let q = match tree.seat(v) {
            Seat::Runs(q) => q,
            Seat::SitsOut => {
                prog.push(Op::recv(real(v - 1) as u32, 0, Region::output(0, c)), &[]);
                continue;
            }
        };
        // The step of its first send, and what its sends wait for; its
        // subtree's blocks are in Scratch from 0, its own first.
        let (first, deps) = match tree.parent[q] {
            None => {
                prog.scratch = p as u64 * c;
                (0, layout.copies_in(prog, Buf::Input, &[]))
            }
            Some((k, from)) => {
                let sub = tree.size[q] as u64;
                let into = if sub == 1 {
                    Region::output(0, c)
                } else {
                    prog.scratch = sub * c;
                    Region::scratch(0, sub * c)
                };
                let from = real(tree.rank(from)) as u32;
                let recv = prog.push(Op::recv(from, 0, into), &[]);
                if sub == 1 {
                    continue;
                }
                (k + 1, vec![recv])
            }
        };
        let at = |u: usize| (tree.pre[u] - tree.pre[q]) as u64 * c;
        for k in first..tree.bf.steps() {
            let child = tree.bf.peer(q, k);
            let run = Region::scratch(at(child), tree.size[child] as u64 * c);
            prog.push(Op::send(real(tree.rank(child)) as u32, 0, run), &deps);
        }
        if let Some(w) = tree.partner(q) {
            prog.push(Op::send(real(w) as u32, 0, Region::scratch(c, c)), &deps);
        }
        prog.push(Op::copy(Region::scratch(0, c), Region::output(0, c)), &deps);
    }
    Ok(s)
}
