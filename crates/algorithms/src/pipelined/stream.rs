//! The pipeline as a generator ([`PipelineStream`]): any op of any rank,
//! its dependencies, successors and message partner, computed on demand
//! from one block template per rank and tree (the compressed op codec the
//! simulator reads a 1 GiB allreduce through).

use super::*;
use crate::error::fail;

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

/// Each rank's blocks' ops, by tree.
type BlockOps = Vec<Vec<Vec<TemplateOp>>>;

/// Each rank's blocks (where each tree's block sits in a round), and its
/// blocks' ops by tree, with absolute peers until interned; sets each
/// program's scratch.
fn rank_blocks(
    header: &mut Schedule,
    pl: &Pipeline,
    segs: &[u64],
    full_rounds: u64,
    rounds: u64,
) -> Result<(Vec<RankBlocks>, BlockOps)> {
    let nt = segs.len();
    let mut block = Vec::new();
    let mut ranks = Vec::with_capacity(header.ranks);
    let mut blocks: BlockOps = Vec::with_capacity(header.ranks);
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
                ops = block_template(pl, r, t, &mut block)?;
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
            return Err(fail!(Algorithm, Pipeline,
                "pipeline stream: rank {r} would run more than 2^32 operations; use larger --segment"
            ));
        }
        // (Below 2^32 when the rank has a full round, by the check above.)
        rb.round = Divisor::new(rb.round_len.min(u32::MAX as u64) as u32);
        ranks.push(rb);
        blocks.push(rank_blocks);
    }
    Ok((ranks, blocks))
}

/// The ops of rank `r`'s block of tree `t` in segment 0, with their
/// successors in the block (`block`: room to build it in).
fn block_template(
    pl: &Pipeline,
    r: usize,
    t: usize,
    block: &mut Vec<BlockOp>,
) -> Result<Vec<TemplateOp>> {
    pl.block(&pl.view(r, t), 0, block);
    let mut ops: Vec<TemplateOp> = block
        .iter()
        .map(|b| TemplateOp {
            op: b.op,
            deps: b.deps().len() as u8,
            succ: SmallVec::new(),
            peer_op: u32::MAX,
        })
        .collect();
    for (k, b) in block.iter().enumerate() {
        if b.deps().is_empty() && !matches!(b.op, Op::Send { .. } | Op::Recv { .. }) {
            return Err(fail!(
                Algorithm,
                Pipeline,
                "pipeline stream: only sends and receives may start a block"
            ));
        }
        for &d in b.deps() {
            ops[d as usize].succ.push(k as u8);
        }
    }
    Ok(ops)
}

/// Matches each send of a template to its receive in the peer's template
/// (a message is unique per (source, destination, tag)).
fn match_sends(blocks: &mut [Vec<Vec<TemplateOp>>]) -> Result<()> {
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
                    .ok_or_else(|| fail!(Algorithm, Pipeline, "pipeline stream: rank {r}'s send to {peer} (tag {tag}) has no receive"))?;
                matched.push((r, t, k, j as u32));
            }
        }
    }
    for (r, t, k, j) in matched {
        blocks[r][t][k].peer_op = j;
    }
    Ok(())
}

/// Peers made relative to the rank, then one template per distinct block:
/// the templates, each rank's blocks pointed at theirs.
fn intern_templates(blocks: BlockOps, ranks: &mut [RankBlocks]) -> Vec<Vec<TemplateOp>> {
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
    templates
}

/// The smallest send not gated (`Lookahead::min_ungated_send_count`), and
/// each tree's gated segment (`u64::MAX` for none). Every segment but a
/// tree's last is a full one, and every send of a segment after the first
/// waits for the same send of the segment before: a last segment shorter
/// than every other send is gated by the full one before it. A tree of one
/// segment has no such send.
fn gating(pl: &Pipeline, segs: &[u64]) -> (Option<u64>, Vec<u64>) {
    let nt = segs.len();
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
    (ungated_min, gated_segment)
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
pub(super) struct TreeBlock {
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
pub(super) struct RankBlocks {
    pub(super) trees: SmallVec<[TreeBlock; 3]>,
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
pub(super) struct Divisor {
    d: u32,
    /// `2^64 / d` rounded up; 0 for d = 1 (2^64 does not fit, and the
    /// quotient is the dividend).
    m: u64,
}

impl Divisor {
    pub(super) fn new(d: u32) -> Divisor {
        Divisor {
            d,
            m: if d > 1 { u64::MAX / d as u64 + 1 } else { 0 },
        }
    }

    /// (n / d, n % d).
    #[inline(always)]
    pub(super) fn div_rem(self, n: u32) -> (u32, u32) {
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
    pub(super) shapes: Vec<RankBlocks>,
    /// The distinct block templates. Every op the simulator reaches is
    /// decoded from one: the 27,648 blocks of the Trinaryx3 allreduce on
    /// the 48×6×32 torus share 60 templates, which stay in cache, where a
    /// template per block missed it at nearly every decode (1.1× faster).
    /// Template t's ops are `template_ops[template_start[t]..]`, its
    /// blocks' length of them.
    pub(super) template_start: Vec<u32>,
    /// Rounds in which every tree has a segment.
    full_rounds: u64,
    /// Each tree's segments (`Pipeline::segments`, a division, kept).
    tree_segments: Vec<u64>,
    /// Each tree's segment whose sends are gated (`Lookahead::gated_transfer`): its
    /// last, when that one is shorter than `ungated_min`; `u64::MAX` for
    /// none.
    gated_segment: Vec<u64>,
    /// `Lookahead::min_ungated_send_count`.
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
            return Err(fail!(Algorithm, Pipeline,
                "pipeline stream: trees differ by more than one segment ({full_rounds} to {rounds})"
            ));
        }
        let (mut ranks, mut blocks) = rank_blocks(&mut header, &pl, &segs, full_rounds, rounds)?;
        match_sends(&mut blocks)?;
        let templates = intern_templates(blocks, &mut ranks);
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
        let (ungated_min, gated_segment) = gating(&pl, &segs);
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
    pub(super) fn blocks(&self, r: usize) -> &RankBlocks {
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

    fn transfer(&self, r: usize, i: OpId) -> Transfer {
        self.gated_transfer(r, i).0
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
}

impl Lookahead for PipelineStream {
    fn far_successor(&self, r: usize, i: OpId) -> Option<OpId> {
        // A send of a full round waits for nothing else a round later
        // (`successors`): the same op of the next round, if that round
        // is full. (A hint: near the end it may name another op.)
        let rb = self.blocks(r);
        let next = i as u64 + rb.round_len;
        (next < self.full_rounds * rb.round_len).then_some(next as OpId)
    }

    fn gated_transfer(&self, r: usize, i: OpId) -> (Transfer, Option<OpId>) {
        let at = self.locate(r, i);
        let Op::Send { peer, route, .. } = at.o.op else {
            panic!("op {i} of rank {r} is not a send");
        };
        let transfer = Transfer {
            peer: self.absolute(r, peer),
            // As `decode` sets the region's count.
            count: self.pipeline().segment(at.t, at.s).1,
            route,
            recv: self.partner_of(r, &at),
        };
        let gated = (at.s + 1 == self.gated_segment[at.t])
            .then(|| (self.block_start(at.rb, at.t, at.s + 1) + at.k as u64) as OpId);
        (transfer, gated)
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
