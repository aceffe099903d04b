//! Spanning trees for the tree collectives (a shared helper, not an algorithm).
//!
//! * [`torus_trees`]: the edge-disjoint spanning trees of Trinaryx3 (the
//!   allreduce paper, §4.1, and the EDF broadcast it cites), one per dimension
//!   of size > 1 of a torus (two on 2D, three on 3D), for any root.
//! * [`binomial_tree`] and [`chain_tree`]: the baselines' trees.
//! * [`check_trees`]: an independent proof that a set of torus trees is
//!   spanning and edge-disjoint, with their heights.
//!
//! # The torus construction (checked, see the seeds README)
//!
//! Let the dimensions of size > 1 be `A = [a_0, …, a_{n−1}]`. Tree k takes the
//! axes in the cyclic order `A[k], A[k+1], …` (only cyclic orders give disjoint
//! trees). Writing `o_i(v)` for v's offset from the root along the i-th axis of
//! the tree's order, `(c(v) − c(root)) mod d`:
//!
//! 1. the root's line along the first axis is a chain running the + way from the
//!    root: `root → root+1 → … → root+(d−1)`;
//! 2. each later axis i adds, from every node already connected **except the
//!    root**, a chain running the + way; so node v with `o_0(v) ≠ 0` hangs off
//!    `v − e_{a_i}` where i is the last axis with `o_i(v) ≠ 0`;
//! 3. what is left is the root's plane `o_0 = 0` (less the root), closed by one
//!    + hop along the first axis from the −1 neighbour: parent `v − e_{a_0}`.
//!
//! Every tree edge is a + hop (parent → child is `+e_a`), so a broadcast down
//! the trees uses only + links and a reduction up them only − links.
//! Height: `Σ (d − 1) + 1` over the dimensions of size > 1 when there are two or
//! more (`X+Y+Z−2` on a 3D torus: 84 on 48×6×32), `d − 1` on a ring.
//!
//! Disjointness, in short: a + edge along axis m is used by tree `k = m` only if
//! it enters the root's plane or lies on the root's line; by a tree `k ≠ m` only
//! if its head has `o_k ≠ 0`, `o_m ≠ 0` and `o_j = 0` for the axes strictly
//! between m and k in cyclic order, and two such conditions always contradict.
//!
//! # Rings of two
//!
//! On a ring of 2 the + and − neighbours are the same node. A directed edge is
//! taken to be the ordered pair (from, to) of nodes. The trees' edges are all +
//! hops, one per (node, axis), so they stay pairwise disjoint as (from, to)
//! pairs on every size ≥ 2, and so do their reverses. What a ring of 2 loses is
//! the separation between the broadcast's edges and the reduction's: the +
//! hop 1→0 (through the wrap) and the − hop 1→0 join the same nodes.
//! [`check_trees`] counts those shared pairs (`shared_down_up`). On a
//! `torus:` grid a ring of 2 has two parallel cables (the + link and the wrap
//! link), and the schedules route every hop by its signed offset, so the
//! pipelined allreduce still never puts two flows on one link; on Tofu's virtual
//! torus a ring of 2 (X = 1 or Z = 1) is a single a/c cable, shared by the
//! reduce and broadcast directions.
//!
//! Dimensions of size 1 carry no edges and are skipped (a 4×4×1 torus gets the
//! two trees of the 4×4 torus). A single node gets one tree with no edges.
//! Meshes are not supported: a + chain needs the wrap link.

use crate::error::fail;
use crate::error::{Error, Result};
use rustc_hash::FxHashSet;
use topocoll_topology::GridShape;

/// `Tree::parent` of the root.
pub const NO_PARENT: u32 = u32::MAX;
/// `Tree::axis` of the root, and of every node of a tree that is not on a grid.
pub const NO_AXIS: u8 = u8::MAX;

/// A spanning tree over ranks `0..P`.
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    pub root: u32,
    /// Parent of each rank, [`NO_PARENT`] for the root.
    pub parent: Vec<u32>,
    /// For grid trees, the axis of the edge parent → rank (the rank is its
    /// parent's + neighbour along it); [`NO_AXIS`] otherwise.
    pub axis: Vec<u8>,
    /// Edges from each rank down to the farthest leaf of its subtree.
    pub height: Vec<u32>,
    /// Edges from the root to each rank.
    pub depth: Vec<u32>,
    child_start: Vec<u32>,
    child_list: Vec<u32>,
}

impl Tree {
    /// Builds a tree from parent pointers, checking that it spans all ranks.
    /// Children are kept in reduction order: lower subtree height first, ties by rank.
    pub fn from_parents(root: u32, parent: Vec<u32>, axis: Vec<u8>) -> Result<Tree> {
        let p = parent.len();
        if root as usize >= p || parent[root as usize] != NO_PARENT || axis.len() != p {
            return Err(fail!(
                Algorithm,
                Request,
                "tree: root {root} is not a parentless rank of {p}"
            ));
        }
        // Depths by walking up to a known depth; a walk longer than P is a cycle.
        const UNKNOWN: u32 = u32::MAX;
        let mut depth = vec![UNKNOWN; p];
        depth[root as usize] = 0;
        let mut path = Vec::new();
        for v in 0..p {
            let mut u = v;
            path.clear();
            while depth[u] == UNKNOWN {
                path.push(u);
                let up = parent[u];
                if up == NO_PARENT || up as usize >= p || path.len() > p {
                    return Err(fail!(
                        Algorithm,
                        Request,
                        "tree rooted at {root}: rank {v} does not reach the root"
                    ));
                }
                u = up as usize;
            }
            let mut d = depth[u];
            for &w in path.iter().rev() {
                d += 1;
                depth[w] = d;
            }
        }
        // Heights, deepest ranks first.
        let mut order: Vec<u32> = (0..p as u32).collect();
        order.sort_unstable_by_key(|&v| std::cmp::Reverse(depth[v as usize]));
        let mut height = vec![0u32; p];
        for &v in &order {
            let up = parent[v as usize];
            if up != NO_PARENT {
                let h = height[v as usize] + 1;
                if h > height[up as usize] {
                    height[up as usize] = h;
                }
            }
        }
        // Children lists (compressed rows), in reduction order.
        let mut child_start = vec![0u32; p + 1];
        for &up in &parent {
            if up != NO_PARENT {
                child_start[up as usize + 1] += 1;
            }
        }
        for i in 0..p {
            child_start[i + 1] += child_start[i];
        }
        let mut fill = child_start.clone();
        let mut child_list = vec![0u32; child_start[p] as usize];
        for (v, &up) in parent.iter().enumerate() {
            if up != NO_PARENT {
                child_list[fill[up as usize] as usize] = v as u32;
                fill[up as usize] += 1;
            }
        }
        for v in 0..p {
            let (a, b) = (child_start[v] as usize, child_start[v + 1] as usize);
            child_list[a..b].sort_unstable_by_key(|&c| (height[c as usize], c));
        }
        Ok(Tree {
            root,
            parent,
            axis,
            height,
            depth,
            child_start,
            child_list,
        })
    }

    /// Number of ranks.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The children of `v` in reduction order: lower subtree height first (the
    /// paper's static reduction order), ties by rank. A broadcast sends in the
    /// reverse order, deepest subtree first.
    pub fn children(&self, v: usize) -> &[u32] {
        &self.child_list[self.child_start[v] as usize..self.child_start[v + 1] as usize]
    }

    /// The parent of `v`, if it is not the root.
    pub fn parent_of(&self, v: usize) -> Option<u32> {
        let up = self.parent[v];
        (up != NO_PARENT).then_some(up)
    }

    /// Height of the whole tree (edges from the root to the farthest leaf).
    pub fn tree_height(&self) -> u32 {
        self.height[self.root as usize]
    }
}

/// The rank grid's axes of size > 1, checked to be rings (a size-2 axis of a
/// mesh is accepted: its one link each way is a ring of two).
pub fn torus_axes(shape: &GridShape) -> Result<Vec<usize>> {
    let mut axes = Vec::new();
    for (a, (&d, &w)) in shape.dims.iter().zip(&shape.wrap).enumerate() {
        if d > 2 && !w {
            return Err(fail!(
                Algorithm,
                Request,
                "dimension {a} (size {d}) does not wrap: the trees need a torus"
            ));
        }
        if d > 1 {
            axes.push(a);
        }
    }
    if axes.len() >= NO_AXIS as usize {
        return Err(fail!(
            Algorithm,
            Request,
            "{} dimensions are too many",
            axes.len()
        ));
    }
    Ok(axes)
}

/// Strides of a row-major grid (dimension 0 fastest).
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = Vec::with_capacity(dims.len());
    let mut acc = 1;
    for &d in dims {
        s.push(acc);
        acc *= d;
    }
    s
}

/// The parent of `v` in the torus tree whose axis order is `order` (a cyclic
/// rotation of [`torus_axes`]), and the axis of the edge, in closed form: no
/// state beyond the shape is needed, so a streaming generator can call it per
/// rank. `None` for the root.
pub fn torus_parent(
    shape: &GridShape,
    order: &[usize],
    root: usize,
    v: usize,
) -> Option<(usize, usize)> {
    if v == root {
        return None;
    }
    // v's offset from the root along axis a.
    let offset = |a: usize| {
        let stride: usize = shape.dims[..a].iter().product();
        let d = shape.dims[a];
        ((v / stride) % d + d - (root / stride) % d) % d
    };
    let a = if order.len() >= 2 && offset(order[0]) == 0 {
        // The root's plane, closed by a + hop along the first axis.
        order[0]
    } else {
        // On the chain of the last axis along which v is off the root.
        *order.iter().rev().find(|&&a| offset(a) != 0)?
    };
    let stride: usize = shape.dims[..a].iter().product();
    let d = shape.dims[a];
    let c = (v / stride) % d;
    Some((v - c * stride + (c + d - 1) % d * stride, a))
}

/// The edge-disjoint spanning trees of Trinaryx3 on a torus, rooted at `root`:
/// one per dimension of size > 1, tree k taking the axes in cyclic order from
/// the k-th (see the module documentation). A single node gets one empty tree.
pub fn torus_trees(shape: &GridShape, root: usize) -> Result<Vec<Tree>> {
    let p = shape.size();
    if root >= p {
        return Err(fail!(
            Algorithm,
            Request,
            "tree root {root} is not one of the {p} ranks"
        ));
    }
    let axes = torus_axes(shape)?;
    let n = axes.len();
    if n == 0 {
        return Ok(vec![Tree::from_parents(
            root as u32,
            vec![NO_PARENT; p],
            vec![NO_AXIS; p],
        )?]);
    }
    let mut trees = Vec::with_capacity(n);
    for k in 0..n {
        let order: Vec<usize> = (0..n).map(|i| axes[(k + i) % n]).collect();
        let mut parent = vec![NO_PARENT; p];
        let mut axis = vec![NO_AXIS; p];
        for v in 0..p {
            if let Some((up, a)) = torus_parent(shape, &order, root, v) {
                parent[v] = up as u32;
                axis[v] = a as u8;
            }
        }
        trees.push(Tree::from_parents(root as u32, parent, axis)?);
    }
    Ok(trees)
}

/// The height every torus tree of `shape` has: `Σ (d − 1)` over the dimensions
/// of size > 1, plus one for the closing hop when there are two or more.
pub fn torus_tree_height(shape: &GridShape) -> u32 {
    let big: Vec<usize> = shape.dims.iter().copied().filter(|&d| d > 1).collect();
    let sum: usize = big.iter().map(|d| d - 1).sum();
    (sum + usize::from(big.len() >= 2)) as u32
}

/// Binomial tree (as in MPICH): with v = (r − root) mod P, the parent of v is
/// v − lowbit(v) and its children are v + m for m = 1, 2, 4, … < lowbit(v).
pub fn binomial_tree(p: usize, root: usize) -> Result<Tree> {
    if root >= p {
        return Err(fail!(
            Algorithm,
            Request,
            "tree root {root} is not one of the {p} ranks"
        ));
    }
    let mut parent = vec![NO_PARENT; p];
    for (r, up) in parent.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        if v != 0 {
            let low = 1 << v.trailing_zeros();
            *up = ((v - low + root) % p) as u32;
        }
    }
    Tree::from_parents(root as u32, parent, vec![NO_AXIS; p])
}

/// A chain root → root+1 → … → root−1 (mod P).
pub fn chain_tree(p: usize, root: usize) -> Result<Tree> {
    if root >= p {
        return Err(fail!(
            Algorithm,
            Request,
            "tree root {root} is not one of the {p} ranks"
        ));
    }
    let parent = (0..p)
        .map(|r| {
            if r == root {
                NO_PARENT
            } else {
                ((r + p - 1) % p) as u32
            }
        })
        .collect();
    Tree::from_parents(root as u32, parent, vec![NO_AXIS; p])
}

/// A text picture of a tree on a 2D grid: one character per rank, x to the
/// right and y downwards, showing the hop that reaches it: `R` the root, `>`
/// a +x hop (parent on the left, or at the far right across the wrap), `v` a
/// +y hop (parent above, or at the bottom across the wrap), `?` otherwise.
pub fn render_2d(shape: &GridShape, tree: &Tree) -> String {
    let (w, h) = match shape.dims[..] {
        [w] => (w, 1),
        [w, h] => (w, h),
        _ => return String::new(),
    };
    let mut out = String::new();
    for y in 0..h {
        for x in 0..w {
            let v = y * w + x;
            out.push(match (tree.parent_of(v), tree.axis[v]) {
                (None, _) => 'R',
                (Some(_), 0) => '>',
                (Some(_), 1) => 'v',
                _ => '?',
            });
        }
        out.push('\n');
    }
    out
}

/// What [`check_trees`] proved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeReport {
    /// Height of each tree.
    pub heights: Vec<u32>,
    /// Directed (from, to) node pairs used both by a tree edge (broadcast
    /// direction) and by a reversed one (reduction direction); nonzero only
    /// when some ring has size 2.
    pub shared_down_up: usize,
}

/// Proves, independently of how the trees were built, that each tree spans the
/// grid from the same root using only torus links (parent and child are
/// neighbours along one axis, the child the + neighbour), and that the trees
/// are pairwise edge-disjoint as directed (from, to) pairs, both the edges
/// parent → child (broadcast) and their reverses (reduction). Returns the
/// heights, recomputed here.
pub fn check_trees(shape: &GridShape, trees: &[Tree]) -> Result<TreeReport> {
    let fail = |m: String| {
        Error::from(topocoll_schedule::Error::Verify(
            topocoll_schedule::VerifyError::new(
                topocoll_schedule::VerifyKind::Structure,
                format!("trees on {:?}: {m}", shape.dims),
            ),
        ))
    };
    let p = shape.size();
    let st = strides(&shape.dims);
    let coord = |v: usize, a: usize| (v / st[a]) % shape.dims[a];
    let mut down: FxHashSet<(u32, u32)> = FxHashSet::default();
    let mut up: FxHashSet<(u32, u32)> = FxHashSet::default();
    let mut heights = Vec::new();
    let root = trees.first().map(|t| t.root as usize).unwrap_or(0);
    for (k, t) in trees.iter().enumerate() {
        if t.parent.len() != p {
            return Err(fail(format!(
                "tree {k} has {} ranks, not {p}",
                t.parent.len()
            )));
        }
        if t.root as usize != root {
            return Err(fail(format!("tree {k} has root {}, tree 0 {root}", t.root)));
        }
        for v in 0..p {
            let Some(u) = t.parent_of(v) else {
                if v != root {
                    return Err(fail(format!("tree {k}: rank {v} has no parent")));
                }
                continue;
            };
            let u = u as usize;
            if v == root {
                return Err(fail(format!("tree {k}: the root has a parent")));
            }
            // Exactly one axis differs, by +1 (mod d) from parent to child.
            let differ: Vec<usize> = (0..shape.dims.len())
                .filter(|&a| coord(u, a) != coord(v, a))
                .collect();
            let ok = differ.len() == 1 && {
                let a = differ[0];
                let d = shape.dims[a];
                (coord(u, a) + 1) % d == coord(v, a) && (shape.wrap[a] || d == 2 || coord(v, a) > 0)
            };
            if !ok {
                return Err(fail(format!(
                    "tree {k}: edge {u} → {v} is not a + hop to a torus neighbour"
                )));
            }
            if !down.insert((u as u32, v as u32)) {
                return Err(fail(format!(
                    "edge {u} → {v} of tree {k} is used by an earlier tree"
                )));
            }
            if !up.insert((v as u32, u as u32)) {
                return Err(fail(format!(
                    "reduction edge {v} → {u} of tree {k} is used by an earlier tree"
                )));
            }
        }
        // Spanning: every rank reaches the root within P steps; the longest
        // such walk is the height.
        let mut depth = vec![u32::MAX; p];
        depth[root] = 0;
        let mut h = 0;
        for v in 0..p {
            let mut path = Vec::new();
            let mut u = v;
            while depth[u] == u32::MAX {
                path.push(u);
                if path.len() > p {
                    return Err(fail(format!("tree {k}: rank {v} is on a cycle")));
                }
                u = t.parent[u] as usize;
            }
            let mut d = depth[u];
            for &w in path.iter().rev() {
                d += 1;
                depth[w] = d;
            }
            h = h.max(depth[v]);
        }
        heights.push(h);
    }
    let shared_down_up = down.iter().filter(|e| up.contains(e)).count();
    Ok(TreeReport {
        heights,
        shared_down_up,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn torus(dims: &[usize]) -> GridShape {
        GridShape {
            dims: dims.to_vec(),
            wrap: vec![true; dims.len()],
        }
    }

    fn check_all_roots(dims: &[usize]) {
        let shape = torus(dims);
        let want = torus_tree_height(&shape);
        let n_big = dims.iter().filter(|&&d| d > 1).count().max(1);
        let has_two = dims.contains(&2);
        for root in 0..shape.size() {
            let trees = torus_trees(&shape, root).unwrap();
            assert_eq!(trees.len(), n_big, "{dims:?}");
            let rep =
                check_trees(&shape, &trees).unwrap_or_else(|e| panic!("{dims:?} root {root}: {e}"));
            assert!(
                rep.heights.iter().all(|&h| h == want),
                "{dims:?} root {root}: {rep:?}"
            );
            assert!(trees.iter().all(|t| t.tree_height() == want));
            if !has_two {
                assert_eq!(rep.shared_down_up, 0, "{dims:?}");
            }
        }
    }

    #[test]
    fn trees_3d_up_to_6x6x6_every_root() {
        for x in 1..=6 {
            for y in 1..=6 {
                for z in 1..=6 {
                    check_all_roots(&[x, y, z]);
                }
            }
        }
    }

    #[test]
    fn trees_2d_up_to_8x8_and_rings_every_root() {
        for x in 1..=8 {
            check_all_roots(&[x]);
            for y in 1..=8 {
                check_all_roots(&[x, y]);
            }
        }
        // Four dimensions: the cyclic construction generalises.
        check_all_roots(&[3, 2, 4, 3]);
        check_all_roots(&[3, 3, 3, 3]);
    }

    #[test]
    fn height_is_x_plus_y_plus_z_minus_2() {
        for (dims, h) in [
            (vec![48, 6, 32], 84),
            (vec![4, 4, 4], 10),
            (vec![2, 3, 2], 5),
            (vec![4, 4], 7),
            (vec![4, 4, 1], 7),
            (vec![5], 4),
        ] {
            let shape = torus(&dims);
            assert_eq!(torus_tree_height(&shape), h, "{dims:?}");
        }
        let shape = torus(&[48, 6, 32]);
        for root in [0, 4321, 9215] {
            let trees = torus_trees(&shape, root).unwrap();
            let rep = check_trees(&shape, &trees).unwrap();
            assert_eq!(rep.heights, vec![84, 84, 84]);
            assert_eq!(rep.shared_down_up, 0);
            println!("48x6x32 root {root}: tree heights {:?}", rep.heights);
        }
    }

    #[test]
    fn rings_of_two_share_only_between_directions() {
        let shape = torus(&[2, 3, 2]);
        let trees = torus_trees(&shape, 0).unwrap();
        let rep = check_trees(&shape, &trees).unwrap();
        assert!(rep.shared_down_up > 0);
    }

    #[test]
    fn non_cyclic_orders_collide() {
        // The same construction with orders (x,y,z), (y,x,z), (z,x,y): not all cyclic.
        let shape = torus(&[4, 4, 4]);
        let build = |order: &[usize]| {
            let p = shape.size();
            let mut parent = vec![NO_PARENT; p];
            let mut axis = vec![NO_AXIS; p];
            for v in 0..p {
                if let Some((u, a)) = torus_parent(&shape, order, 0, v) {
                    parent[v] = u as u32;
                    axis[v] = a as u8;
                }
            }
            Tree::from_parents(0, parent, axis).unwrap()
        };
        let trees = vec![build(&[0, 1, 2]), build(&[1, 0, 2]), build(&[2, 0, 1])];
        assert!(check_trees(&shape, &trees).is_err());
    }

    #[test]
    fn checker_rejects_broken_trees() {
        let shape = torus(&[4, 4]);
        let mut trees = torus_trees(&shape, 0).unwrap();
        // The same tree twice shares every edge.
        let dup = vec![trees[0].clone(), trees[0].clone()];
        assert!(check_trees(&shape, &dup).is_err());
        // A non-neighbour edge.
        trees[1].parent[5] = 15;
        assert!(check_trees(&shape, &trees).is_err());
    }

    #[test]
    fn baseline_trees() {
        for p in 1..40 {
            for root in [0, p / 2, p - 1] {
                let b = binomial_tree(p, root).unwrap();
                // The deepest relative rank is the one with the most one bits.
                let expect = (0..p).map(|v| v.count_ones()).max().unwrap();
                assert_eq!(b.tree_height(), expect, "p {p}");
                let c = chain_tree(p, root).unwrap();
                assert_eq!(c.tree_height() as usize, p - 1);
                // Children in reduction order: heights ascending.
                for v in 0..p {
                    let h: Vec<u32> = b
                        .children(v)
                        .iter()
                        .map(|&c| b.height[c as usize])
                        .collect();
                    assert!(h.windows(2).all(|w| w[0] <= w[1]));
                }
            }
        }
    }

    /// The pictures in docs/allreduce.md: `cargo test --lib pictures -- --nocapture`.
    #[test]
    fn pictures_of_the_2d_trees() {
        let shape = torus(&[5, 4]);
        let trees = torus_trees(&shape, 6).unwrap();
        let pics: Vec<String> = trees.iter().map(|t| render_2d(&shape, t)).collect();
        for (k, p) in pics.iter().enumerate() {
            println!("5x4 torus, root (1,1), tree {k}:\n{p}");
        }
        assert_eq!(pics[0], "v>vvv\n>R>>>\nv>vvv\nv>vvv\n");
        assert_eq!(pics[1], ">v>>>\nvRvvv\n>v>>>\n>v>>>\n");
    }

    #[test]
    fn meshes_are_rejected() {
        let m = GridShape {
            dims: vec![4, 4],
            wrap: vec![false, false],
        };
        assert!(torus_trees(&m, 0).is_err());
    }
}
