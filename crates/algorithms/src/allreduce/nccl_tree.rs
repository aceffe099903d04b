//! NCCL's tree allreduce (`runTreeSplit`, src/device/all_reduce.h) over
//! its channels: the first half of the channels on the first tree of
//! NCCL's double binary tree, the rest on the second (`connectTrees`,
//! `ncclGetDtree`), each tree a chain through each server's ranks in the
//! channel's order joined server to server by the binary tree
//! (`crate::nccl::tree_of`). A channel's part goes in chunks of NCCL's
//! tree chunk (one 512 KiB step with Simple): up the tree, each rank
//! combining its children's chunk into its own before sending it to its
//! parent, and down as soon as the root has it; the reduction up and the
//! broadcast down run side by side (NCCL splits a channel's threads
//! between them). Each chunk is reduced once, at the root, then copied:
//! every rank gets the same bits.

use crate::error::Result;
use crate::nccl::{self, Pattern};
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Allreduce,
    "nccl_tree",
    "NCCL's double binary tree: half the channels on each tree, chunks reduced up and broadcast down at once",
    build,
)
.channels();

fn build(req: &Request) -> Result<Schedule> {
    let mut w = nccl::Writer::new(req, &ALGORITHM, 2)?;
    let (p, n) = (req.ranks, req.count);
    // Chains 2c (up, and the root's one) and 2c + 1 (down).
    let steps = nccl::chunks(req, &w.ch, n, |len| {
        nccl::chunk_elems(req, &w.ch, Pattern::Tree, len, 1)
    });
    nccl::check_ops(req, &ALGORITHM, steps * 4 * p as u128)?;
    for c in 0..w.ch.count() {
        let tree = w.ch.tree(c);
        let (off, len) = nccl::part(n, req.dtype.size(), w.ch.count(), c);
        if len == 0 || p == 1 {
            continue;
        }
        let chunk = nccl::chunk_elems(req, &w.ch, Pattern::Tree, len, 1);
        let tag = c as u32;
        let (up, down) = (2 * c, 2 * c + 1);
        let mut at = 0;
        while at < len {
            let region = Region::output(off + at, chunk.min(len - at));
            for (me, node) in tree.nodes.iter().enumerate() {
                for &d in &node.down {
                    w.push(me, up, Op::recv_combine(d as u32, tag, region), &[]);
                }
                let reduced = match node.up {
                    Some(u) => {
                        let sent = w.send((c, up), (me, u), region, &[]);
                        w.push(me, down, Op::recv(u as u32, tag, region), &[sent]);
                        down
                    }
                    None => up,
                };
                for &d in &node.down {
                    w.send((c, reduced), (me, d), region, &[]);
                }
            }
            at += chunk;
        }
    }
    Ok(w.finish())
}
