//! Two-tree broadcast (Sanders, Speck and Träff 2009; NCCL's double binary
//! tree): the buffer is cut in two halves, each sent down its own binary
//! tree over the P − 1 other ranks, both hung under the root, in
//! `--segment` pieces (default 64 KiB) that follow each other down (the
//! pipelined trees' helper, `algorithms::pipelined`).
//!
//! # The trees
//!
//! The other ranks get labels 1 … n (n = P − 1; relative rank v = (r −
//! root) mod P is label v in the first tree). Each tree is the in-order
//! binary tree on its labels: label x with t trailing zero bits hangs under
//! whichever of x ± 2^t has t + 1, climbing on past labels above n; its top
//! is the largest power of two ≤ n, which hangs under the root. Leaves are
//! the odd labels, inner nodes the even ones. The second tree relabels v as
//! n + 1 − v (a mirror) when n is even and as v mod n + 1 (a shift) when n
//! is odd; either way an even label becomes odd (the shift's v = n, odd,
//! becomes 1, a leaf of both), so no rank is an inner node of both trees:
//! each rank receives both halves once and
//! sends at most two children's worth of each, so both trees run at full
//! rate together, where one binary tree would send every segment twice from
//! half the ranks.

use crate::error::Result;
use crate::pipelined::{Phases, Pipeline, Plan, DEFAULT_SEGMENT_BYTES};
use crate::trees::{Tree, NO_AXIS, NO_PARENT};
use crate::OpCount;
use crate::{Algorithm, Request, Stream};
use topocoll_schedule::{CollectiveKind, Schedule};

// Neither Open MPI 4.1 nor MPICH 4.0 has a two-tree collective
// (Open MPI's split_binary_tree splits one binary tree's halves).
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Bcast,
    "two_tree",
    "two complementary binary trees, half the buffer each, pipelined in segments (default 64 KiB)",
    build,
)
.stream(stream)
.segmented()
.ops(OpCount::Generated);

fn build(req: &Request) -> Result<Schedule> {
    plan(req, &ALGORITHM, Phases::Bcast)?.materialise()
}

fn stream(req: &Request) -> Result<Stream> {
    Ok(Stream::Pipeline(
        plan(req, &ALGORITHM, Phases::Bcast)?.stream()?,
    ))
}

/// The two-tree plan of `phases` from the request's root (rank 0 for an
/// allreduce), as `alg`'s.
pub(crate) fn plan(req: &Request, alg: &Algorithm, phases: Phases) -> Result<Plan> {
    let header = req.schedule(alg);
    if req.count == 0 || req.ranks == 1 {
        return Ok(Plan {
            header,
            pipeline: None,
        });
    }
    let root = req.collective.root().unwrap_or(0) as usize;
    let seg = Pipeline::seg_elems_for(req.segment_bytes, DEFAULT_SEGMENT_BYTES, req.dtype.size());
    let pl = Pipeline::new(
        two_trees(req.ranks, root)?,
        Pipeline::split(req.count, 2),
        seg,
        phases,
    )?;
    Ok(Plan {
        header,
        pipeline: Some(pl),
    })
}

/// The in-order binary tree's parent of label `x` among labels 1 ..= n
/// (`None` for its top, the largest power of two ≤ n).
fn in_order_parent(mut x: u64, n: u64) -> Option<u64> {
    let top = 1u64 << (63 - n.leading_zeros());
    while x != top {
        let t = x.trailing_zeros();
        // x ± 2^t: the one that is an odd multiple of 2^(t+1).
        x = if (x >> (t + 1)) & 1 == 1 {
            x - (1 << t)
        } else {
            x + (1 << t)
        };
        if x <= n {
            return Some(x);
        }
    }
    None
}

/// The two complementary trees over `p` ≥ 2 ranks rooted at `root` (see
/// the module documentation).
pub fn two_trees(p: usize, root: usize) -> Result<Vec<Tree>> {
    let n = (p - 1) as u64;
    let rank = |v: u64| ((v as usize + root) % p) as u32;
    // (label of relative rank v, relative rank of label x) per tree.
    let mirror = n.is_multiple_of(2);
    let label = |t: usize, v: u64| match (t, mirror) {
        (0, _) => v,
        (_, true) => n + 1 - v,
        (_, false) => v % n + 1,
    };
    let of_label = |t: usize, x: u64| match (t, mirror) {
        (0, _) => x,
        (_, true) => n + 1 - x,
        (_, false) => (x + n - 2) % n + 1,
    };
    (0..2)
        .map(|t| {
            let mut parent = vec![NO_PARENT; p];
            for v in 1..=n {
                parent[rank(v) as usize] = match in_order_parent(label(t, v), n) {
                    Some(up) => rank(of_label(t, up)),
                    None => root as u32,
                };
            }
            Tree::from_parents(root as u32, parent, vec![NO_AXIS; p])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trees_are_binary_and_a_leaf_of_one_is_inner_in_the_other() {
        for p in 2..80 {
            for root in [0, p / 3, p - 1] {
                let [a, b]: [Tree; 2] = two_trees(p, root).unwrap().try_into().unwrap();
                assert_eq!(a.children(root).len(), 1);
                assert_eq!(b.children(root).len(), 1);
                let mut inner_in_both = 0;
                for r in (0..p).filter(|&r| r != root) {
                    assert!(a.children(r).len() <= 2 && b.children(r).len() <= 2);
                    if !a.children(r).is_empty() && !b.children(r).is_empty() {
                        inner_in_both += 1;
                    }
                }
                assert_eq!(inner_in_both, 0, "P {p} root {root}");
                // Logarithmic height (each tree has n = P - 1 labels).
                let h = (usize::BITS - (p - 1).leading_zeros()) + 1;
                assert!(a.tree_height() <= h && b.tree_height() <= h, "P {p}");
            }
        }
    }
}
