//! Bine-tree scatter (De Sensi et al., SC 2025): the Bine broadcast's tree
//! (`algorithms::butterfly::bine_tree`), each rank receiving only its
//! subtree's blocks. In the tree's preorder every subtree is one run, so
//! the root first copies its blocks into Scratch in that order
//! (neighbouring ones in one copy), and each rank receives its
//! subtree's run into Scratch (straight into its Output at a leaf), sends
//! each child the child's run, farthest first, and copies its own block
//! out. P must be a power of two.

use crate::algorithms::butterfly::{bine_tree, Layout};
use crate::algorithms::{bcast, Algorithm, Request};
use crate::algorithms::{Counterparts, OpCount};
use crate::error::Result;
use crate::schedule::{Buf, CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Scatter,
    name: "bine",
    summary: "Bine tree: each rank receives its subtree's blocks and passes on its children's, farthest first (P a power of two)",
    build,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: bcast::bine::POWER_OF_TWO,
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    let mut s = req.schedule(ALGORITHM.name);
    let (p, c) = (req.ranks, req.count);
    let root = req.collective.root().unwrap_or(0) as usize;
    let tree = bine_tree(p)?;
    let real = |v: usize| (v + root) % p;
    // The root's input blocks in the tree's preorder (relative rank v's
    // block is real(v)'s).
    let mut order = vec![0; p];
    for v in 0..p {
        order[tree.pre[v]] = v;
    }
    let layout = Layout::ordered(order, 0, (0..p).map(|v| (real(v) as u64 * c, c)).collect());
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        // The step of its first send, and what its sends wait for; its
        // subtree's blocks are in Scratch from 0, its own first.
        let (first, deps) = match tree.parent[v] {
            None => {
                prog.scratch = p as u64 * c;
                (0, layout.copies_with(prog, Buf::Input, true, &[]))
            }
            Some((k, from)) => {
                let sub = tree.size[v] as u64;
                let into = if sub == 1 {
                    Region::output(0, c)
                } else {
                    prog.scratch = sub * c;
                    Region::scratch(0, sub * c)
                };
                let recv = prog.push(Op::recv(real(from) as u32, 0, into), &[]);
                if sub == 1 {
                    continue;
                }
                (k + 1, vec![recv])
            }
        };
        let at = |u: usize| (tree.pre[u] - tree.pre[v]) as u64 * c;
        for k in first..tree.bf.steps() {
            let child = tree.bf.peer(v, k);
            let run = Region::scratch(at(child), tree.size[child] as u64 * c);
            prog.push(Op::send(real(child) as u32, 0, run), &deps);
        }
        prog.push(Op::copy(Region::scratch(0, c), Region::output(0, c)), &deps);
    }
    Ok(s)
}
