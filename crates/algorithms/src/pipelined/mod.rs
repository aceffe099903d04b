//! Segment-pipelined reduce and broadcast over one or more spanning trees (a
//! shared helper): Trinaryx3 (one tree per torus dimension, the buffer split
//! between them) and the baselines (one binomial tree or a chain, the whole
//! buffer).
//!
//! # How the ops are generated (and how to stream them)
//!
//! The buffer is split into one part per tree ([`Pipeline::parts`]); each part
//! into segments of [`Pipeline::seg_elems`] elements (the last one shorter). All
//! the ops one rank runs for one segment of one tree form a **block**, and a
//! block is a small function of (rank, tree, segment): [`Pipeline::block`]
//! reads only a [`RankView`] (the rank's parent, its children in reduction
//! order, their routes and the rank's scratch layout, precomputed once per rank
//! and tree by [`Pipeline::view`]) and the segment's region. A block's
//! dependencies point only inside the block (segments touch disjoint elements
//! and have their own tags), so blocks can be produced lazily, in any amount,
//! and concatenated; the number of ops in a block ([`Pipeline::block_len`])
//! does not depend on the segment, so the op id where a block starts is
//! arithmetic. [`Pipeline::block_order`] fixes the order of a rank's blocks
//! (segments outer, trees inner, so the trees advance together and a rank's
//! sends enter its engines oldest segment first). There are two consumers:
//! [`Pipeline::materialise`] writes the programs out, and [`PipelineStream`]
//! computes any op, its dependencies, successors and message partner on
//! demand from one block template per rank and tree (the segment only shifts
//! regions and tags), which is how the simulator runs a 1 GiB allreduce on
//! 9,216 ranks without holding its 650 M operations.
//!
//! # A block
//!
//! With children `c_1 … c_m` in reduction order (lower subtree height first),
//! for the segment's region `seg` of the Output buffer:
//!
//! * reduce: receive-combine from `c_1` straight into `seg`; receive each other
//!   child into its own Scratch slot (posted at once, no waiting) and combine it
//!   into `seg` in order, each combine waiting for the previous one, so the
//!   result is `((own ∘ c_1) ∘ c_2) ∘ …` whatever the arrival order; then send
//!   `seg` to the parent.
//! * broadcast: receive `seg` from the parent (in an allreduce, after the
//!   reduce send, which read it), then send it to the children deepest subtree
//!   first (`c_m` … `c_1`); at the root of an allreduce the sends wait for the
//!   last combine, so a segment goes down as soon as the root has reduced it.
//!
//! Tags: `(segment · trees + tree) · 2 + phase` (phase 0 up, 1 down): unique
//! for every message of every (source, destination) pair.

use super::trees::{torus_trees, Tree, NO_AXIS, NO_PARENT};
use super::{Algorithm, Applies, OpCount, RankNeed, Request, RootNeed, TopologyNeed};
use crate::error::fail;
use crate::error::Result;
use smallvec::SmallVec;
use topocoll_base::param;
use topocoll_schedule::lookahead::{ring_distance, Lookahead};
use topocoll_schedule::{Op, OpId, OpKind, OpSource, Region, Schedule, Transfer};
use topocoll_topology::Kind;

mod stream;
pub use stream::PipelineStream;

/// Default pipeline segment (bytes) when the request gives none.
pub const DEFAULT_SEGMENT_BYTES: u64 = 64 << 10;

/// Most operations a materialised schedule may hold (about 4 GB of memory);
/// larger runs need a streaming generator built on [`Pipeline::block`].
pub const MAX_MATERIALISED_OPS: u64 = 1 << 26;

/// A neighbour in one tree and the route to use towards it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    pub rank: u32,
    /// `Op::Send::route` for a send to this peer.
    pub route: u32,
}

/// What one rank needs to know about one tree to generate its blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankView {
    pub tree: u32,
    pub parent: Option<Peer>,
    /// Reduction order: lower subtree height first. Broadcast sends go in reverse.
    pub children: SmallVec<[Peer; 4]>,
    /// First Scratch element of this tree's child slots on this rank.
    pub scratch_base: u64,
}

/// One op of a block, its dependencies local to the block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockOp {
    pub op: Op,
    deps: [u32; 2],
    ndeps: u8,
}

impl BlockOp {
    /// Indices (within the block) of the ops this one waits for.
    pub fn deps(&self) -> &[u32] {
        &self.deps[..self.ndeps as usize]
    }
}

/// A segment-pipelined reduce, broadcast or both over spanning trees.
#[derive(Clone, Debug)]
pub struct Pipeline {
    pub trees: Vec<Tree>,
    /// (first element, elements) of the buffer each tree carries.
    pub parts: Vec<(u64, u64)>,
    /// Elements per segment (≥ 1).
    pub seg_elems: u64,
    /// Which way the data goes: up the trees (children to parents), down
    /// them (parents to children), or both.
    pub phases: Phases,
    /// Route ids per grid axis for a hop to the + neighbour (down the trees)
    /// and to the − neighbour (up); empty for default routes.
    pub down_routes: Vec<u32>,
    pub up_routes: Vec<u32>,
    /// Route ids per tree and rank for the hop from its parent down to it
    /// and back up (`[down, up]`), where each tree edge has its own path
    /// (`Schedule::add_path`); empty for the routes above.
    pub hop_routes: Vec<Vec<[u32; 2]>>,
}

impl Pipeline {
    /// A pipeline; `parts[t]` is the slice of the buffer tree `t` carries.
    pub fn new(
        trees: Vec<Tree>,
        parts: Vec<(u64, u64)>,
        seg_elems: u64,
        phases: Phases,
    ) -> Result<Pipeline> {
        if trees.len() != parts.len() || trees.is_empty() {
            return Err(fail!(
                Algorithm,
                Pipeline,
                "pipeline: one buffer part per tree is needed"
            ));
        }
        if seg_elems == 0 {
            return Err(fail!(
                Algorithm,
                Pipeline,
                "pipeline: segments must hold at least one element"
            ));
        }
        let pl = Pipeline {
            trees,
            parts,
            seg_elems,
            phases,
            down_routes: Vec::new(),
            up_routes: Vec::new(),
            hop_routes: Vec::new(),
        };
        let max_segs = (0..pl.trees.len())
            .map(|t| pl.segments(t))
            .max()
            .unwrap_or(0);
        if max_segs
            .checked_mul(pl.trees.len() as u64 * 2)
            .is_none_or(|tags| tags > u32::MAX as u64)
        {
            return Err(param!(
                "segment",
                ": {max_segs} segments per tree are too many to tag; use larger segments"
            ));
        }
        Ok(pl)
    }

    /// Splits `count` elements into one standard part per tree.
    pub fn split(count: u64, trees: usize) -> Vec<(u64, u64)> {
        (0..trees as u64)
            .map(|t| topocoll_schedule::chunk(count, trees as u64, t))
            .collect()
    }

    /// Elements per segment for a segment size in bytes (at least one element).
    pub fn seg_elems_for(segment_bytes: Option<u64>, default: u64, elem_bytes: u64) -> u64 {
        (segment_bytes.unwrap_or(default) / elem_bytes).max(1)
    }

    /// Segments tree `t` carries.
    pub fn segments(&self, t: usize) -> u64 {
        self.parts[t].1.div_ceil(self.seg_elems)
    }

    /// (offset within the tree's part, elements) of segment `s` of tree `t`.
    pub fn segment(&self, t: usize, s: u64) -> (u64, u64) {
        let off = s * self.seg_elems;
        (off, self.seg_elems.min(self.parts[t].1 - off))
    }

    /// The tag of segment `s` of tree `t`, phase 0 (up) or 1 (down).
    pub fn tag(&self, t: usize, s: u64, phase: u32) -> u32 {
        ((s * self.trees.len() as u64 + t as u64) * 2 + phase as u64) as u32
    }

    fn route(routes: &[u32], axis: u8) -> u32 {
        if axis == NO_AXIS {
            0
        } else {
            routes.get(axis as usize).copied().unwrap_or(0)
        }
    }

    /// Scratch elements tree `t` needs on a rank with `children` children:
    /// a slot of the tree's part for every child but the first (reduce only).
    fn scratch_for(&self, t: usize, children: usize) -> u64 {
        if self.phases.reduces() {
            children.saturating_sub(1) as u64 * self.parts[t].1
        } else {
            0
        }
    }

    /// The rank's view of tree `t`.
    pub fn view(&self, rank: usize, t: usize) -> RankView {
        let scratch_base = (0..t)
            .map(|u| self.scratch_for(u, self.trees[u].children(rank).len()))
            .sum();
        self.view_at(rank, t, scratch_base)
    }

    fn view_at(&self, rank: usize, t: usize, scratch_base: u64) -> RankView {
        let tree = &self.trees[t];
        let hop = |r: usize, way: usize| match self.hop_routes.get(t) {
            Some(routes) => routes[r][way],
            None if way == 0 => Self::route(&self.down_routes, tree.axis[r]),
            None => Self::route(&self.up_routes, tree.axis[r]),
        };
        let parent = tree.parent_of(rank).map(|up| Peer {
            rank: up,
            route: hop(rank, 1),
        });
        let children = tree
            .children(rank)
            .iter()
            .map(|&c| Peer {
                rank: c,
                route: hop(c as usize, 0),
            })
            .collect();
        RankView {
            tree: t as u32,
            parent,
            children,
            scratch_base,
        }
    }

    /// Scratch elements a rank needs.
    pub fn scratch(&self, rank: usize) -> u64 {
        (0..self.trees.len())
            .map(|t| self.scratch_for(t, self.trees[t].children(rank).len()))
            .sum()
    }

    /// Ops in every block of this view (the same for every segment).
    pub fn block_len(&self, v: &RankView) -> usize {
        let m = v.children.len();
        let has_parent = usize::from(v.parent.is_some());
        let mut n = 0;
        if self.phases.reduces() {
            n += if m > 0 { 1 + 2 * (m - 1) } else { 0 } + has_parent;
        }
        if self.phases.bcasts() {
            n += has_parent + m;
        }
        n
    }

    /// The ops of `view`'s rank for segment `s` of its tree, into `out`
    /// (cleared first); dependencies are indices into `out`.
    pub fn block(&self, v: &RankView, s: u64, out: &mut Vec<BlockOp>) {
        out.clear();
        let t = v.tree as usize;
        let (off, len) = self.segment(t, s);
        let seg = Region::output(self.parts[t].0 + off, len);
        let mut push = |op: Op, deps: &[u32]| -> u32 {
            let mut d = [0u32; 2];
            d[..deps.len()].copy_from_slice(deps);
            out.push(BlockOp {
                op,
                deps: d,
                ndeps: deps.len() as u8,
            });
            out.len() as u32 - 1
        };
        // The last op that wrote `seg` (or read it, for the reduce send).
        let mut last: Option<u32> = None;
        if self.phases.reduces() {
            let up_tag = self.tag(t, s, 0);
            for (j, c) in v.children.iter().enumerate() {
                if j == 0 {
                    last = Some(push(Op::recv_combine(c.rank, up_tag, seg), &[]));
                } else {
                    let slot = Region::scratch(
                        v.scratch_base + (j as u64 - 1) * self.parts[t].1 + off,
                        len,
                    );
                    let recv = push(Op::recv(c.rank, up_tag, slot), &[]);
                    let prev = last.expect("the first child came before");
                    last = Some(push(Op::combine(slot, seg), &[prev, recv]));
                }
            }
            if let Some(p) = v.parent {
                let deps: SmallVec<[u32; 1]> = last.into_iter().collect();
                last = Some(push(Op::send_routed(p.rank, up_tag, seg, p.route), &deps));
            }
        }
        if self.phases.bcasts() {
            let down_tag = self.tag(t, s, 1);
            if let Some(p) = v.parent {
                let deps: SmallVec<[u32; 1]> = last.into_iter().collect();
                last = Some(push(Op::recv(p.rank, down_tag, seg), &deps));
            }
            let deps: SmallVec<[u32; 1]> = last.into_iter().collect();
            for c in v.children.iter().rev() {
                push(Op::send_routed(c.rank, down_tag, seg, c.route), &deps);
            }
        }
    }

    /// Total ops the materialised schedule would hold.
    pub fn total_ops(&self) -> u64 {
        let p = self.trees[0].len();
        (0..p)
            .map(|r| {
                (0..self.trees.len())
                    .map(|t| self.block_len(&self.view(r, t)) as u64 * self.segments(t))
                    .sum::<u64>()
            })
            .sum()
    }

    /// The (tree, segment) of each block of a rank's program, in program
    /// order: segments outer, trees inner (trees with fewer segments drop out
    /// at the end). The same for every rank.
    pub fn block_order(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let nt = self.trees.len();
        let max_segs = (0..nt).map(|t| self.segments(t)).max().unwrap_or(0);
        (0..max_segs).flat_map(move |seg| {
            (0..nt)
                .filter(move |&t| seg < self.segments(t))
                .map(move |t| (t, seg))
        })
    }

    /// Writes every rank's program into `s`, blocks in [`Pipeline::block_order`].
    pub fn materialise(&self, s: &mut Schedule) -> Result<()> {
        let total = self.total_ops();
        if total > MAX_MATERIALISED_OPS {
            return Err(fail!(Algorithm, Pipeline,
                "{total} operations are too many to materialise (at most {MAX_MATERIALISED_OPS}); use larger --segment or a smaller --size"
            ));
        }
        let mut block = Vec::new();
        let mut deps: SmallVec<[u32; 3]> = SmallVec::new();
        for (r, prog) in s.programs.iter_mut().enumerate() {
            let views: Vec<RankView> = (0..self.trees.len()).map(|t| self.view(r, t)).collect();
            prog.scratch = self.scratch(r);
            // First op of each tree's previous block: a tree edge carries one
            // segment at a time, so each send also waits for the same send of
            // the previous segment (blocks of a tree all have the same layout).
            let mut previous: Vec<Option<u32>> = vec![None; self.trees.len()];
            for (t, seg) in self.block_order() {
                self.block(&views[t], seg, &mut block);
                let first = prog.len() as u32;
                for (k, b) in block.iter().enumerate() {
                    deps.clear();
                    deps.extend(b.deps().iter().map(|d| d + first));
                    deps.extend(edge_order_dep(&b.op, k, previous[t]));
                    prog.push(b.op, &deps);
                }
                previous[t] = Some(first);
            }
        }
        Ok(())
    }
}

/// The dependency that keeps one segment at a time on a tree edge: op `k` of
/// a block, if it is a send, waits for op `k` of the same tree's previous block
/// (which starts at op `previous`). Blocks of a tree all have the same layout.
pub fn edge_order_dep(op: &Op, k: usize, previous: Option<u32>) -> Option<u32> {
    match (op, previous) {
        (Op::Send { .. }, Some(prev)) => Some(prev + k as u32),
        _ => None,
    }
}

/// A pipelined algorithm's schedule before it is written out: the header
/// (collective, ranks, offset routes) and the pipeline (none when there is
/// nothing to move: one rank or an empty buffer).
pub struct Plan {
    pub header: Schedule,
    pub pipeline: Option<Pipeline>,
}

impl Plan {
    /// The schedule with every operation written out.
    pub fn materialise(self) -> Result<Schedule> {
        let mut s = self.header;
        if let Some(pl) = &self.pipeline {
            pl.materialise(&mut s)?;
        }
        Ok(s)
    }

    /// The schedule as a generator of its operations.
    pub fn stream(self) -> Result<PipelineStream> {
        PipelineStream::new(self.header, self.pipeline)
    }
}

/// The trees a pipelined algorithm runs over, from the root its collective
/// names (rank 0 for an allreduce).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trees {
    /// Trinaryx3's edge-disjoint torus trees, the buffer split between them
    /// ([`trinaryx3`]; `--segment`, default 64 KiB).
    Torus,
    /// One binomial tree carrying the whole buffer, pipelined in `--segment`
    /// pieces (or this default; `None`: one piece unless `--segment` asks).
    Binomial(Option<u64>),
    /// One chain root → root+1 → … carrying the whole buffer, as `Binomial`.
    Chain(Option<u64>),
}

/// Which way the data goes down the trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phases {
    /// Down from the root.
    Bcast,
    /// Up to the root, combined on the way.
    Reduce,
    /// Up, then back down from the root as each segment is reduced.
    Allreduce,
}

impl Phases {
    /// Whether the data goes up the trees, combined on the way.
    pub fn reduces(self) -> bool {
        matches!(self, Phases::Reduce | Phases::Allreduce)
    }

    /// Whether the data goes down the trees from the root.
    pub fn bcasts(self) -> bool {
        matches!(self, Phases::Bcast | Phases::Allreduce)
    }
}

/// A pipelined algorithm's plan for a request: `trees` from the request's
/// root carrying `phases`, as `alg`'s.
pub fn plan(req: &Request, alg: &Algorithm, trees: Trees, phases: Phases) -> Result<Plan> {
    let root = req.collective.root().unwrap_or(0) as usize;
    let (tree, default_segment) = match trees {
        Trees::Torus => return trinaryx3(req, alg, root, phases),
        Trees::Binomial(segment) => (super::trees::binomial_tree(req.ranks, root)?, segment),
        Trees::Chain(segment) => (super::trees::chain_tree(req.ranks, root)?, segment),
    };
    single_tree(req, alg, tree, phases, default_segment)
}

/// Defines a pipelined algorithm's `build` (the schedule written out) and
/// `stream` (its generator), the two functions its `ALGORITHM` names, from
/// its [`Trees`] and [`Phases`] (see [`plan`]).
macro_rules! algorithm {
    ($trees:expr, $phases:expr) => {
        fn build(req: &$crate::Request) -> $crate::error::Result<::topocoll_schedule::Schedule> {
            $crate::pipelined::plan(req, &ALGORITHM, $trees, $phases)?.materialise()
        }

        fn stream(req: &$crate::Request) -> $crate::error::Result<$crate::Stream> {
            let plan = $crate::pipelined::plan(req, &ALGORITHM, $trees, $phases)?;
            Ok($crate::Stream::Pipeline(plan.stream()?))
        }
    };
}
pub(crate) use algorithm;

/// A Trinaryx3 entry, `collective`'s `trinaryx3`: the torus trees (its
/// builders `algorithm!(Trees::Torus, ...)`), pipelined in `--segment`
/// segments, generated op by op, on a torus. The broadcast, reduce and
/// allreduce differ only in their phases and words.
pub(crate) const fn trinaryx3_entry(
    collective: topocoll_schedule::CollectiveKind,
    summary: &'static str,
    build: fn(&Request) -> Result<Schedule>,
    stream: fn(&Request) -> Result<crate::Stream>,
) -> Algorithm {
    Algorithm::new(collective, "trinaryx3", summary, build)
        .stream(stream)
        .segmented()
        .applies(Applies {
            topology: TopologyNeed::Torus,
            ranks: RankNeed::Any,
            root: RootNeed::Any,
        })
        .ops(OpCount::Generated)
}

/// Trinaryx3 on the request's torus: the trees of
/// [`super::trees::torus_trees`] rooted at `root`, the buffer split in one part
/// per tree, each pipelined in `--segment` pieces (default 64 KiB). On a
/// `torus:`/`mesh:` grid every hop is routed by its signed offset (+1 down the
/// trees, −1 up), so a ring of two uses its two cables for the two directions.
pub fn trinaryx3(req: &Request, alg: &Algorithm, root: usize, phases: Phases) -> Result<Plan> {
    let torus_hint = "needs a torus topology (--topology torus:XxYxZ or tofu:XxYxZ)";
    let Some(topo) = req.topology else {
        return Err(req.unsupported(alg, torus_hint));
    };
    let Some(shape) = topo.grid_shape() else {
        return Err(req.unsupported(alg, format!("{}: {torus_hint}", topo.name)));
    };
    if shape.size() != req.ranks {
        return Err(req.unsupported(
            alg,
            format!("{} ranks on a grid of {}", req.ranks, shape.size()),
        ));
    }
    let trees = torus_trees(&shape, root).map_err(|e| req.unsupported(alg, e.to_string()))?;
    let mut s = req.schedule(alg);
    if req.count == 0 || req.ranks == 1 {
        return Ok(Plan {
            header: s,
            pipeline: None,
        });
    }
    let seg = Pipeline::seg_elems_for(req.segment_bytes, DEFAULT_SEGMENT_BYTES, req.dtype.size());
    let parts = Pipeline::split(req.count, trees.len());
    let mut pl = Pipeline::new(trees, parts, seg, phases)?;
    if matches!(topo.kind, Kind::Grid(_)) {
        let nd = shape.dims.len();
        for a in 0..nd {
            let mut off = vec![0i64; nd];
            off[a] = 1;
            pl.down_routes.push(s.offset_route(&off));
            off[a] = -1;
            pl.up_routes.push(s.offset_route(&off));
        }
    }
    Ok(Plan {
        header: s,
        pipeline: Some(pl),
    })
}

/// A pipelined reduce and/or broadcast over one rank-based tree carrying the
/// whole buffer; segments of `--segment` bytes, else `default_segment` bytes,
/// else the whole buffer in one piece.
pub fn single_tree(
    req: &Request,
    alg: &Algorithm,
    tree: Tree,
    phases: Phases,
    default_segment: Option<u64>,
) -> Result<Plan> {
    let s = req.schedule(alg);
    if req.count == 0 || req.ranks == 1 {
        return Ok(Plan {
            header: s,
            pipeline: None,
        });
    }
    let elem = req.dtype.size();
    let seg = match req.segment_bytes.or(default_segment) {
        Some(bytes) => (bytes / elem).max(1),
        None => req.count,
    };
    let pl = Pipeline::new(vec![tree], vec![(0, req.count)], seg, phases)?;
    Ok(Plan {
        header: s,
        pipeline: Some(pl),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_divisor_divides_as_the_processor_does() {
        use super::stream::Divisor;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 32) as u32
        };
        let mut divisors: Vec<u32> = (1..=300).collect();
        divisors.extend([641, 4093, 65_535, 65_536, 1 << 31, u32::MAX - 1, u32::MAX]);
        divisors.extend((0..200).map(|_| next().max(1)));
        for d in divisors {
            let div = Divisor::new(d);
            let mut dividends = vec![0, 1, d - 1, d, d.wrapping_add(1), u32::MAX, u32::MAX - 1];
            dividends.extend((0..500).map(|_| next()));
            dividends.extend((0..50).map(|_| next() % 1000));
            for n in dividends {
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }

    use super::*;
    use crate::trees::{binomial_tree, torus_trees};
    use topocoll_topology::GridShape;

    #[test]
    fn block_lengths_match_blocks() {
        let shape = GridShape {
            dims: vec![3, 4, 2],
            wrap: vec![true; 3],
        };
        let trees = torus_trees(&shape, 5).unwrap();
        for phases in [Phases::Reduce, Phases::Bcast, Phases::Allreduce] {
            let pl = Pipeline::new(trees.clone(), Pipeline::split(100, 3), 7, phases).unwrap();
            let mut b = Vec::new();
            for r in 0..shape.size() {
                for t in 0..3 {
                    let v = pl.view(r, t);
                    pl.block(&v, 0, &mut b);
                    assert_eq!(b.len(), pl.block_len(&v));
                }
            }
        }
    }

    /// What a streaming consumer would do (views once per rank, then blocks in
    /// `block_order`, op ids by arithmetic) gives exactly the materialised programs.
    #[test]
    fn streamed_blocks_rebuild_the_programs() {
        use topocoll_schedule::{Collective, Dtype, ReduceOp};
        let shape = GridShape {
            dims: vec![4, 3, 2],
            wrap: vec![true; 3],
        };
        let trees = torus_trees(&shape, 7).unwrap();
        let pl = Pipeline::new(trees, Pipeline::split(101, 3), 6, Phases::Allreduce).unwrap();
        let p = shape.size();
        let mut s = Schedule::new(
            Collective::Allreduce,
            p,
            101,
            Dtype::F64,
            ReduceOp::Sum,
            "t",
        );
        pl.materialise(&mut s).unwrap();
        let mut b = Vec::new();
        for r in 0..p {
            let views: Vec<RankView> = (0..3).map(|t| pl.view(r, t)).collect();
            let prog = &s.programs[r];
            let mut base = 0usize;
            let mut previous: Vec<Option<u32>> = vec![None; 3];
            for (t, seg) in pl.block_order() {
                pl.block(&views[t], seg, &mut b);
                assert_eq!(b.len(), pl.block_len(&views[t]));
                for (k, op) in b.iter().enumerate() {
                    assert_eq!(prog.ops[base + k], op.op);
                    let mut want: Vec<u32> = op.deps().iter().map(|d| d + base as u32).collect();
                    want.extend(edge_order_dep(&op.op, k, previous[t]));
                    assert_eq!(prog.deps(base + k), &want[..]);
                }
                previous[t] = Some(base as u32);
                base += b.len();
            }
            assert_eq!(base, prog.len());
        }
    }

    /// A Trinaryx3-style allreduce stream (three trees, root 0) on a torus.
    fn allreduce_stream(dims: &[usize]) -> (GridShape, PipelineStream) {
        use topocoll_schedule::{Collective, Dtype, ReduceOp};
        let shape = GridShape {
            dims: dims.to_vec(),
            wrap: vec![true; dims.len()],
        };
        let trees = torus_trees(&shape, 0).unwrap();
        let pl = Pipeline::new(trees, Pipeline::split(3000, 3), 100, Phases::Allreduce).unwrap();
        let p = shape.size();
        let s = Schedule::new(
            Collective::Allreduce,
            p,
            3000,
            Dtype::F64,
            ReduceOp::Sum,
            "t",
        );
        (shape, PipelineStream::new(s, Some(pl)).unwrap())
    }

    #[test]
    fn blocks_that_differ_only_in_place_share_a_template() {
        let (shape, st) = allreduce_stream(&[6, 6, 6]);
        let p = shape.size();
        // 648 blocks (216 ranks, 3 trees); a rank's peers are its torus
        // neighbours, so most blocks repeat another's up to translation.
        let blocks: usize = (0..p).map(|r| st.blocks(r).trees.len()).sum();
        assert_eq!(blocks, 648);
        let (templates, shapes) = (st.template_start.len(), st.shapes.len());
        assert!(templates * 4 < blocks, "{templates} templates");
        assert!(shapes * 2 < p, "{shapes} shapes");
        // A shared template still names each rank's own peers.
        for r in 0..p {
            for i in 0..st.len(r) as OpId {
                if let Op::Send { peer, .. } | Op::Recv { peer, .. } = st.op(r, i) {
                    let (a, b) = (shape.coords(r), shape.coords(peer as usize));
                    let hops: usize = (0..3)
                        .map(|d| {
                            let x = a[d].abs_diff(b[d]);
                            x.min(6 - x)
                        })
                        .sum();
                    assert_eq!(hops, 1, "rank {r} op {i} talks to {peer}");
                }
            }
        }
    }

    #[test]
    fn the_papers_torus_needs_60_templates() {
        // The allreduce of `reproduce trinaryx3` (48×6×32, root 0): the
        // figures docs/allreduce.md and docs/PERFORMANCE.md quote.
        let (_, st) = allreduce_stream(&[48, 6, 32]);
        assert_eq!((st.template_start.len(), st.shapes.len()), (60, 73));
    }

    #[test]
    fn reduce_order_is_lower_height_first() {
        let t = binomial_tree(16, 0).unwrap();
        let pl = Pipeline::new(vec![t], vec![(0, 10)], 10, Phases::Reduce).unwrap();
        let v = pl.view(0, 0);
        let ranks: Vec<u32> = v.children.iter().map(|c| c.rank).collect();
        assert_eq!(ranks, vec![1, 2, 4, 8]);
        assert_eq!(pl.scratch(0), 30);
    }
}
