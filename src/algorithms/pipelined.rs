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
use super::Request;
use crate::error::Result;
use crate::invalid;
use crate::schedule::{ring_distance, Op, OpId, OpKind, OpSource, Region, Schedule, Transfer};
use crate::topology::Kind;
use smallvec::SmallVec;

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
    /// Reduce up the trees (children to parents).
    pub reduce: bool,
    /// Broadcast down the trees (parents to children).
    pub bcast: bool,
    /// Route ids per grid axis for a hop to the + neighbour (down the trees)
    /// and to the − neighbour (up); empty for default routes.
    pub down_routes: Vec<u32>,
    pub up_routes: Vec<u32>,
}

impl Pipeline {
    /// A pipeline; `parts[t]` is the slice of the buffer tree `t` carries.
    pub fn new(
        trees: Vec<Tree>,
        parts: Vec<(u64, u64)>,
        seg_elems: u64,
        reduce: bool,
        bcast: bool,
    ) -> Result<Pipeline> {
        if trees.len() != parts.len() || trees.is_empty() {
            return Err(invalid!("pipeline: one buffer part per tree is needed"));
        }
        if seg_elems == 0 {
            return Err(invalid!(
                "pipeline: segments must hold at least one element"
            ));
        }
        let pl = Pipeline {
            trees,
            parts,
            seg_elems,
            reduce,
            bcast,
            down_routes: Vec::new(),
            up_routes: Vec::new(),
        };
        let max_segs = (0..pl.trees.len())
            .map(|t| pl.segments(t))
            .max()
            .unwrap_or(0);
        if max_segs
            .checked_mul(pl.trees.len() as u64 * 2)
            .is_none_or(|tags| tags > u32::MAX as u64)
        {
            return Err(invalid!(
                "--segment: {max_segs} segments per tree are too many to tag; use larger segments"
            ));
        }
        Ok(pl)
    }

    /// Splits `count` elements into one standard part per tree.
    pub fn split(count: u64, trees: usize) -> Vec<(u64, u64)> {
        (0..trees as u64)
            .map(|t| crate::schedule::chunk(count, trees as u64, t))
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
        if self.reduce {
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
        let parent = tree.parent_of(rank).map(|up| Peer {
            rank: up,
            route: Self::route(&self.up_routes, tree.axis[rank]),
        });
        let children = tree
            .children(rank)
            .iter()
            .map(|&c| Peer {
                rank: c,
                route: Self::route(&self.down_routes, tree.axis[c as usize]),
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
        if self.reduce {
            n += if m > 0 { 1 + 2 * (m - 1) } else { 0 } + has_parent;
        }
        if self.bcast {
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
        if self.reduce {
            let up_tag = self.tag(t, s, 0);
            for (j, c) in v.children.iter().enumerate() {
                if j == 0 {
                    last = Some(push(
                        Op::Recv {
                            peer: c.rank,
                            tag: up_tag,
                            region: seg,
                            combine: true,
                        },
                        &[],
                    ));
                } else {
                    let slot = Region::scratch(
                        v.scratch_base + (j as u64 - 1) * self.parts[t].1 + off,
                        len,
                    );
                    let recv = push(
                        Op::Recv {
                            peer: c.rank,
                            tag: up_tag,
                            region: slot,
                            combine: false,
                        },
                        &[],
                    );
                    let prev = last.expect("the first child came before");
                    last = Some(push(
                        Op::Combine {
                            src: slot,
                            dst: seg,
                        },
                        &[prev, recv],
                    ));
                }
            }
            if let Some(p) = v.parent {
                let deps: SmallVec<[u32; 1]> = last.into_iter().collect();
                last = Some(push(
                    Op::Send {
                        peer: p.rank,
                        tag: up_tag,
                        region: seg,
                        route: p.route,
                    },
                    &deps,
                ));
            }
        }
        if self.bcast {
            let down_tag = self.tag(t, s, 1);
            if let Some(p) = v.parent {
                let deps: SmallVec<[u32; 1]> = last.into_iter().collect();
                last = Some(push(
                    Op::Recv {
                        peer: p.rank,
                        tag: down_tag,
                        region: seg,
                        combine: false,
                    },
                    &deps,
                ));
            }
            let deps: SmallVec<[u32; 1]> = last.into_iter().collect();
            for c in v.children.iter().rev() {
                push(
                    Op::Send {
                        peer: c.rank,
                        tag: down_tag,
                        region: seg,
                        route: c.route,
                    },
                    &deps,
                );
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
            return Err(invalid!(
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

/// Trinaryx3 on the request's torus: the trees of
/// [`super::trees::torus_trees`] rooted at `root`, the buffer split in one part
/// per tree, each pipelined in `--segment` pieces (default 64 KiB). On a
/// `torus:`/`mesh:` grid every hop is routed by its signed offset (+1 down the
/// trees, −1 up), so a ring of two uses its two cables for the two directions.
pub fn trinaryx3(
    req: &Request,
    name: &str,
    root: usize,
    reduce: bool,
    bcast: bool,
) -> Result<Plan> {
    let torus_hint = "needs a torus topology (--topology torus:XxYxZ or tofu:XxYxZ)";
    let Some(topo) = req.topology else {
        return Err(req.unsupported(name, torus_hint));
    };
    let Some(shape) = topo.grid_shape() else {
        return Err(req.unsupported(name, format!("{}: {torus_hint}", topo.name)));
    };
    if shape.size() != req.ranks {
        return Err(req.unsupported(
            name,
            format!("{} ranks on a grid of {}", req.ranks, shape.size()),
        ));
    }
    let trees = torus_trees(&shape, root).map_err(|e| req.unsupported(name, e.to_string()))?;
    let mut s = req.schedule(name);
    if req.count == 0 || req.ranks == 1 {
        return Ok(Plan {
            header: s,
            pipeline: None,
        });
    }
    let seg = Pipeline::seg_elems_for(req.segment_bytes, DEFAULT_SEGMENT_BYTES, req.dtype.size());
    let parts = Pipeline::split(req.count, trees.len());
    let mut pl = Pipeline::new(trees, parts, seg, reduce, bcast)?;
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
    name: &str,
    tree: Tree,
    reduce: bool,
    bcast: bool,
    default_segment: Option<u64>,
) -> Result<Plan> {
    let s = req.schedule(name);
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
    let pl = Pipeline::new(vec![tree], vec![(0, req.count)], seg, reduce, bcast)?;
    Ok(Plan {
        header: s,
        pipeline: Some(pl),
    })
}

/// The index of the item with `key` in `items`, `item` pushed there if the
/// key is new.
fn intern<K: std::hash::Hash + Eq, T>(
    index: &mut std::collections::HashMap<K, u32>,
    items: &mut Vec<T>,
    key: K,
    item: T,
) -> u32 {
    *index.entry(key).or_insert_with(|| {
        items.push(item);
        items.len() as u32 - 1
    })
}

/// One op of a block template (the block of segment 0). The peer of a
/// send or receive is stored relative to the rank, `(peer − rank) mod P`,
/// so that ranks whose blocks differ only by where they sit share one
/// template.
#[derive(Clone, Debug)]
struct TemplateOp {
    op: Op,
    /// Dependencies inside the block.
    deps: u8,
    /// Ops of the block that wait for this one, in increasing order.
    succ: SmallVec<[u8; 4]>,
    /// For a send: the index of the receive it meets in the peer's block of
    /// the same tree and segment.
    peer_op: u32,
}

impl TemplateOp {
    /// The dependencies of this op in segment `s`: a send also waits for the
    /// same send of segment `s − 1` ([`edge_order_dep`]).
    #[inline(always)]
    fn dep_count(&self, s: u64) -> u32 {
        self.deps as u32 + u32::from(s > 0 && matches!(self.op, Op::Send { .. }))
    }
}

/// One rank's block of one tree, and where it sits in a round (the blocks of
/// one segment of every tree, in tree order).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct TreeBlock {
    /// The block's template (`PipelineStream::templates`) and its length
    /// (the template's, kept here so that `locate` need not read it).
    template: u32,
    len: u32,
    /// First op of the block in a full round, and in the last round when
    /// that one is partial (some trees have one segment fewer).
    start: u64,
    start_last: u64,
}

/// A rank's blocks: shared, like templates, by every rank whose blocks
/// have the same templates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct RankBlocks {
    trees: SmallVec<[TreeBlock; 3]>,
    round_len: u64,
    last_round_len: u64,
    /// `round_len` as a divisor (`locate` divides by it at every decode).
    round: Divisor,
    /// Each op of a full round, and of the last round when it is partial:
    /// `locate` reads where it would search.
    slots: Vec<Slot>,
    last_slots: Vec<Slot>,
}

/// Where an op of a round sits: its tree, its index in the tree's block,
/// and its template op in `PipelineStream::template_ops`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Slot {
    tree: u8,
    k: u32,
    op: u32,
}

/// A 32-bit divisor with its reciprocal: a quotient by a multiplication
/// and a shift, where a division takes several times as long (Lemire,
/// Kaser and Kurz, "Faster remainder by direct computation", 2019: exact
/// for every 32-bit dividend).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Divisor {
    d: u32,
    /// `2^64 / d` rounded up; 0 for d = 1 (2^64 does not fit, and the
    /// quotient is the dividend).
    m: u64,
}

impl Divisor {
    fn new(d: u32) -> Divisor {
        Divisor {
            d,
            m: if d > 1 { u64::MAX / d as u64 + 1 } else { 0 },
        }
    }

    /// (n / d, n % d).
    #[inline(always)]
    fn div_rem(self, n: u32) -> (u32, u32) {
        let q = if self.m == 0 {
            n
        } else {
            ((self.m as u128 * n as u128) >> 64) as u32
        };
        (q, n - q * self.d)
    }
}

/// A pipeline read op by op ([`OpSource`]): the same programs as
/// [`Pipeline::materialise`] writes (a test checks it op by op), computed
/// on demand. Op `k` of the block of (tree `t`, segment `s`) is op `k` of the
/// segment-0 template with its regions moved `s` segments on, its count the
/// segment's, and its tag `2·s·trees` higher; a send also waits for the same
/// send of segment `s − 1` ([`edge_order_dep`]).
pub struct PipelineStream {
    header: Schedule,
    pl: Option<Pipeline>,
    /// Each rank's blocks, as an index into `shapes`: 4 bytes per rank,
    /// read at every decode, in cache where a rank's own 96 bytes were not.
    rank_shape: Vec<u32>,
    shapes: Vec<RankBlocks>,
    /// The distinct block templates. Every op the simulator reaches is
    /// decoded from one: the 27,648 blocks of the Trinaryx3 allreduce on
    /// the 48×6×32 torus share 60 templates, which stay in cache, where a
    /// template per block missed it at nearly every decode (1.1× faster).
    /// Template t's ops are `template_ops[template_start[t]..]`, its
    /// blocks' length of them.
    template_start: Vec<u32>,
    /// Rounds in which every tree has a segment.
    full_rounds: u64,
    /// Each tree's segments (`Pipeline::segments`, a division, kept).
    tree_segments: Vec<u64>,
    /// Each tree's segment whose sends are gated (`Transfer::gated`): its
    /// last, when that one is shorter than `ungated_min`; `u64::MAX` for
    /// none.
    gated_segment: Vec<u64>,
    /// `OpSource::min_ungated_send_count`.
    ungated_min: Option<u64>,
    /// Every template's ops, one after another: a decode reads its template
    /// op in one step from its slot (`Slot::op`).
    template_ops: Vec<TemplateOp>,
    /// Whether one more, partial, round follows (some trees have a segment more).
    partial_round: bool,
}

impl PipelineStream {
    pub fn new(mut header: Schedule, pl: Option<Pipeline>) -> Result<PipelineStream> {
        let Some(pl) = pl else {
            return Ok(PipelineStream {
                rank_shape: vec![0; header.ranks],
                shapes: vec![RankBlocks::default()],
                header,
                pl: None,
                template_start: Vec::new(),
                full_rounds: 0,
                tree_segments: Vec::new(),
                gated_segment: Vec::new(),
                ungated_min: None,
                template_ops: Vec::new(),
                partial_round: false,
            });
        };
        let nt = pl.trees.len();
        let segs: Vec<u64> = (0..nt).map(|t| pl.segments(t)).collect();
        let full_rounds = segs.iter().copied().min().unwrap_or(0);
        let rounds = segs.iter().copied().max().unwrap_or(0);
        if rounds > full_rounds + 1 {
            return Err(invalid!(
                "pipeline stream: trees differ by more than one segment ({full_rounds} to {rounds})"
            ));
        }
        let mut block = Vec::new();
        let mut ranks = Vec::with_capacity(header.ranks);
        // Each rank's blocks, by tree, with absolute peers until interned.
        let mut blocks: Vec<Vec<Vec<TemplateOp>>> = Vec::with_capacity(header.ranks);
        for (r, prog) in header.programs.iter_mut().enumerate() {
            prog.scratch = pl.scratch(r);
            let mut rb = RankBlocks::default();
            let mut rank_blocks = Vec::with_capacity(nt);
            for (t, &nseg) in segs.iter().enumerate() {
                let mut tb = TreeBlock {
                    start: rb.round_len,
                    start_last: rb.last_round_len,
                    ..TreeBlock::default()
                };
                let mut ops = Vec::new();
                if nseg > 0 {
                    pl.block(&pl.view(r, t), 0, &mut block);
                    ops = block
                        .iter()
                        .map(|b| TemplateOp {
                            op: b.op,
                            deps: b.deps().len() as u8,
                            succ: SmallVec::new(),
                            peer_op: u32::MAX,
                        })
                        .collect();
                    for (k, b) in block.iter().enumerate() {
                        if b.deps().is_empty() && !matches!(b.op, Op::Send { .. } | Op::Recv { .. })
                        {
                            return Err(invalid!(
                                "pipeline stream: only sends and receives may start a block"
                            ));
                        }
                        for &d in b.deps() {
                            ops[d as usize].succ.push(k as u8);
                        }
                    }
                    tb.len = ops.len() as u32;
                    let len = ops.len() as u64;
                    rb.round_len += len;
                    if nseg == rounds {
                        rb.last_round_len += len;
                    }
                }
                rb.trees.push(tb);
                rank_blocks.push(ops);
            }
            if full_rounds * rb.round_len + rb.last_round_len > OpId::MAX as u64 {
                return Err(invalid!(
                    "pipeline stream: rank {r} would run more than 2^32 operations; use larger --segment"
                ));
            }
            // (Below 2^32 when the rank has a full round, by the check above.)
            rb.round = Divisor::new(rb.round_len.min(u32::MAX as u64) as u32);
            ranks.push(rb);
            blocks.push(rank_blocks);
        }
        // Match each send of a template to its receive in the peer's template
        // (a message is unique per (source, destination, tag)).
        let mut matched = Vec::new();
        for (r, rank_blocks) in blocks.iter().enumerate() {
            for (t, ops) in rank_blocks.iter().enumerate() {
                for (k, o) in ops.iter().enumerate() {
                    let Op::Send { peer, tag, .. } = o.op else {
                        continue;
                    };
                    let j = blocks[peer as usize][t]
                        .iter()
                        .position(|o| matches!(o.op, Op::Recv { peer: p, tag: g, .. } if p as usize == r && g == tag))
                        .ok_or_else(|| invalid!("pipeline stream: rank {r}'s send to {peer} (tag {tag}) has no receive"))?;
                    matched.push((r, t, k, j as u32));
                }
            }
        }
        for (r, t, k, j) in matched {
            blocks[r][t][k].peer_op = j;
        }
        // Peers relative to the rank, then one template per distinct block.
        let p = ranks.len();
        let mut templates = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (r, rank_blocks) in blocks.into_iter().enumerate() {
            for (t, mut ops) in rank_blocks.into_iter().enumerate() {
                for o in &mut ops {
                    if let Op::Send { peer, .. } | Op::Recv { peer, .. } = &mut o.op {
                        *peer = ((*peer as usize + p - r) % p) as u32;
                    }
                }
                // (An op can hold an f64, so ops are not `Hash`; their debug
                // text, which prints every field and every f64 exactly, is.)
                let key = format!("{ops:?}");
                ranks[r].trees[t].template = intern(&mut index, &mut templates, key, ops);
            }
        }
        let mut shapes = Vec::new();
        let mut shape_index = std::collections::HashMap::new();
        let rank_shape = ranks
            .into_iter()
            .map(|rb| intern(&mut shape_index, &mut shapes, rb.clone(), rb))
            .collect();
        let mut template_start = Vec::with_capacity(templates.len());
        let mut template_ops = Vec::new();
        for ops in templates {
            template_start.push(template_ops.len() as u32);
            template_ops.extend(ops);
        }
        for rb in &mut shapes {
            for (t, tb) in rb.trees.iter().enumerate() {
                let first = template_start
                    .get(tb.template as usize)
                    .copied()
                    .unwrap_or(0);
                let slots = (0..tb.len).map(|k| Slot {
                    tree: t as u8,
                    k,
                    op: first + k,
                });
                rb.slots.extend(slots.clone());
                if segs[t] == rounds && rounds > full_rounds {
                    rb.last_slots.extend(slots);
                }
            }
        }
        // Every segment but a tree's last is a full one, and every send of a
        // segment after the first waits for the same send of the segment
        // before: a last segment shorter than every other send is gated by
        // the full one before it. A tree of one segment has no such send.
        let ungated_min = (0..nt)
            .filter(|&t| segs[t] > 0)
            .map(|t| pl.segment(t, 0).1)
            .min();
        let gated_segment = (0..nt)
            .map(|t| {
                let last = segs[t].saturating_sub(1);
                match ungated_min {
                    Some(min) if last > 0 && pl.segment(t, last).1 < min => last,
                    _ => u64::MAX,
                }
            })
            .collect();
        Ok(PipelineStream {
            gated_segment,
            ungated_min,
            header,
            pl: Some(pl),
            rank_shape,
            shapes,
            template_start,
            full_rounds,
            tree_segments: segs,
            template_ops,
            partial_round: rounds > full_rounds,
        })
    }

    /// The collective, ranks and routes, without the pipeline.
    pub fn into_header(self) -> Schedule {
        self.header
    }

    fn pipeline(&self) -> &Pipeline {
        self.pl.as_ref().expect("a stream with ops has a pipeline")
    }

    /// Rank `r`'s blocks.
    fn blocks(&self, r: usize) -> &RankBlocks {
        &self.shapes[self.rank_shape[r] as usize]
    }

    /// Rank `r`'s block template of tree `t`.
    fn template(&self, r: usize, t: usize) -> &[TemplateOp] {
        let tb = &self.blocks(r).trees[t];
        let first = self.template_start[tb.template as usize] as usize;
        &self.template_ops[first..first + tb.len as usize]
    }

    /// The rank a template's relative peer names, seen from rank `r`.
    fn absolute(&self, r: usize, relative: u32) -> u32 {
        // Both are below P: one subtraction, not a division.
        let a = r + relative as usize;
        let p = self.rank_shape.len();
        (if a >= p { a - p } else { a }) as u32
    }

    /// The first op of the block of tree `t`, segment `s`, of a rank with
    /// blocks `rb`.
    fn block_start(&self, rb: &RankBlocks, t: usize, s: u64) -> u64 {
        if s < self.full_rounds {
            s * rb.round_len + rb.trees[t].start
        } else {
            self.full_rounds * rb.round_len + rb.trees[t].start_last
        }
    }

    /// Where op `i` of rank `r` sits, and its template op. (Every decode
    /// starts here: inlined, with the tree read from a table.)
    #[inline(always)]
    fn locate(&self, r: usize, i: OpId) -> Located<'_> {
        let rb = self.blocks(r);
        let i = i as u64;
        let full = self.full_rounds * rb.round_len;
        let (s, slot) = if i < full {
            // Both fit in 32 bits (`new` bounds a rank's ops by `OpId::MAX`).
            let (s, off) = rb.round.div_rem(i as u32);
            (s as u64, rb.slots[off as usize])
        } else {
            (self.full_rounds, rb.last_slots[(i - full) as usize])
        };
        Located {
            rb,
            t: slot.tree as usize,
            s,
            k: slot.k,
            o: &self.template_ops[slot.op as usize],
        }
    }

    /// The op at `at` of rank `r`: its template op moved to its segment.
    #[inline(always)]
    fn decode(&self, r: usize, at: &Located) -> Op {
        let Located { t, s, o, .. } = *at;
        let pl = self.pipeline();
        let shift = s * pl.seg_elems;
        let count = pl.segment(t, s).1;
        let tag_shift = (2 * s * pl.trees.len() as u64) as u32;
        let mut op = o.op;
        let mv = |g: &mut Region| {
            g.offset += shift;
            g.count = count;
        };
        match &mut op {
            Op::Send {
                peer, tag, region, ..
            }
            | Op::Recv {
                peer, tag, region, ..
            } => {
                *peer = self.absolute(r, *peer);
                *tag += tag_shift;
                mv(region);
            }
            Op::Combine { src, dst } | Op::Copy { src, dst } => {
                mv(src);
                mv(dst);
            }
            Op::Compute { .. } => {}
        }
        op
    }

    /// For a send at `at` of rank `r`: the receive it meets.
    fn partner_of(&self, r: usize, at: &Located) -> OpId {
        let Op::Send { peer, .. } = at.o.op else {
            return OpId::MAX;
        };
        let peer = self.absolute(r, peer) as usize;
        (self.block_start(self.blocks(peer), at.t, at.s) + at.o.peer_op as u64) as OpId
    }
}

/// Op i of a rank: its blocks, tree, segment, index in the block and
/// template op.
#[derive(Clone, Copy)]
struct Located<'a> {
    rb: &'a RankBlocks,
    t: usize,
    s: u64,
    k: u32,
    o: &'a TemplateOp,
}

impl OpSource for PipelineStream {
    fn header(&self) -> &Schedule {
        &self.header
    }

    fn len(&self, r: usize) -> u64 {
        let rb = self.blocks(r);
        self.full_rounds * rb.round_len
            + if self.partial_round {
                rb.last_round_len
            } else {
                0
            }
    }

    fn op(&self, r: usize, i: OpId) -> Op {
        self.decode(r, &self.locate(r, i))
    }

    fn dep_count(&self, r: usize, i: OpId) -> u32 {
        let Located { s, o, .. } = self.locate(r, i);
        o.dep_count(s)
    }

    fn dep_counts(&self, r: usize, ops: std::ops::Range<OpId>, mut f: impl FnMut(u32)) {
        // As `dep_count`, stepping through the slots of a round instead of
        // locating each op.
        let rb = self.blocks(r);
        let full = self.full_rounds * rb.round_len;
        let (mut i, end) = (ops.start as u64, ops.end as u64);
        if i < full {
            let (s, off) = rb.round.div_rem(i as u32);
            let (mut s, mut off) = (s as u64, off as usize);
            while i < end.min(full) {
                f(self.template_ops[rb.slots[off].op as usize].dep_count(s));
                i += 1;
                off += 1;
                if off == rb.slots.len() {
                    off = 0;
                    s += 1;
                }
            }
        }
        while i < end {
            let slot = rb.last_slots[(i - full) as usize];
            f(self.template_ops[slot.op as usize].dep_count(self.full_rounds));
            i += 1;
        }
    }

    fn successors(&self, r: usize, i: OpId, mut f: impl FnMut(OpId)) {
        let Located { rb, t, s, k, o } = self.locate(r, i);
        let base = self.block_start(rb, t, s);
        for &j in &o.succ {
            f((base + j as u64) as OpId);
        }
        if matches!(o.op, Op::Send { .. }) && s + 1 < self.tree_segments[t] {
            f((self.block_start(rb, t, s + 1) + k as u64) as OpId);
        }
    }

    fn partner(&self, r: usize, i: OpId) -> OpId {
        self.partner_of(r, &self.locate(r, i))
    }

    fn kind(&self, r: usize, i: OpId) -> OpKind {
        match self.locate(r, i).o.op {
            Op::Send { .. } => OpKind::Send,
            Op::Recv { .. } => OpKind::Recv,
            _ => OpKind::Other,
        }
    }

    fn combines(&self, r: usize, i: OpId) -> Option<u64> {
        let Located { t, s, o, .. } = self.locate(r, i);
        match o.op {
            // As `decode` sets the region's count.
            Op::Recv { combine: true, .. } => Some(self.pipeline().segment(t, s).1),
            _ => None,
        }
    }

    fn far_successor(&self, r: usize, i: OpId) -> Option<OpId> {
        // A send of a full round waits for nothing else a round later
        // (`successors`): the same op of the next round, if that round
        // is full. (A hint: near the end it may name another op.)
        let rb = self.blocks(r);
        let next = i as u64 + rb.round_len;
        (next < self.full_rounds * rb.round_len).then_some(next as OpId)
    }

    fn transfer(&self, r: usize, i: OpId) -> Transfer {
        let at = self.locate(r, i);
        let Op::Send { peer, route, .. } = at.o.op else {
            panic!("op {i} of rank {r} is not a send");
        };
        Transfer {
            peer: self.absolute(r, peer),
            // As `decode` sets the region's count.
            count: self.pipeline().segment(at.t, at.s).1,
            route,
            recv: self.partner_of(r, &at),
            gated: (at.s + 1 == self.gated_segment[at.t])
                .then(|| (self.block_start(at.rb, at.t, at.s + 1) + at.k as u64) as OpId),
        }
    }

    fn initial(&self, r: usize, out: &mut Vec<OpId>) {
        // Only segment 0 has ops without dependencies other than receives:
        // later sends wait for their predecessor, and combines for receives.
        for (t, tb) in self.blocks(r).trees.iter().enumerate() {
            if tb.len == 0 {
                continue;
            }
            let base = self.block_start(self.blocks(r), t, 0);
            for (k, o) in self.template(r, t).iter().enumerate() {
                if o.deps == 0 && !matches!(o.op, Op::Recv { .. }) {
                    out.push((base + k as u64) as OpId);
                }
            }
        }
    }
    fn min_send_count(&self) -> Option<u64> {
        // Every op carries its segment's elements, and a tree's last
        // segment is its smallest (a lower bound, as a tree may not send).
        let pl = self.pl.as_ref()?;
        (0..pl.trees.len())
            .filter(|&t| pl.segments(t) > 0)
            .map(|t| pl.segment(t, pl.segments(t) - 1).1)
            .min()
    }

    fn min_ungated_send_count(&self) -> Option<u64> {
        self.ungated_min
    }

    fn farthest_peer(&self) -> Option<u64> {
        // Ranks send only along their trees' edges, up or down.
        self.min_send_count()?;
        let pl = self.pl.as_ref()?;
        let ranks = self.header.ranks as u64;
        pl.trees
            .iter()
            .enumerate()
            .filter(|&(t, _)| pl.segments(t) > 0)
            .flat_map(|(_, tree)| {
                tree.parent
                    .iter()
                    .enumerate()
                    .filter(|&(_, &up)| up != NO_PARENT)
                    .map(move |(r, &up)| ring_distance(r as u64, u64::from(up), ranks))
            })
            .max()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_divisor_divides_as_the_processor_does() {
        use super::Divisor;
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
    use crate::algorithms::trees::{binomial_tree, torus_trees};
    use crate::topology::GridShape;

    #[test]
    fn block_lengths_match_blocks() {
        let shape = GridShape {
            dims: vec![3, 4, 2],
            wrap: vec![true; 3],
        };
        let trees = torus_trees(&shape, 5).unwrap();
        for (reduce, bcast) in [(true, false), (false, true), (true, true)] {
            let pl =
                Pipeline::new(trees.clone(), Pipeline::split(100, 3), 7, reduce, bcast).unwrap();
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
        use crate::schedule::{Collective, Dtype, ReduceOp};
        let shape = GridShape {
            dims: vec![4, 3, 2],
            wrap: vec![true; 3],
        };
        let trees = torus_trees(&shape, 7).unwrap();
        let pl = Pipeline::new(trees, Pipeline::split(101, 3), 6, true, true).unwrap();
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
        use crate::schedule::{Collective, Dtype, ReduceOp};
        let shape = GridShape {
            dims: dims.to_vec(),
            wrap: vec![true; dims.len()],
        };
        let trees = torus_trees(&shape, 0).unwrap();
        let pl = Pipeline::new(trees, Pipeline::split(3000, 3), 100, true, true).unwrap();
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
        let pl = Pipeline::new(vec![t], vec![(0, 10)], 10, true, false).unwrap();
        let v = pl.view(0, 0);
        let ranks: Vec<u32> = v.children.iter().map(|c| c.rank).collect();
        assert_eq!(ranks, vec![1, 2, 4, 8]);
        assert_eq!(pl.scratch(0), 30);
    }
}
