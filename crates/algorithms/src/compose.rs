//! Node-aware composition, shared by every collective's `node_aware`
//! algorithm (`algorithms/<collective>/node_aware.rs`): where the topology
//! places several ranks on a node (`--ranks-per-node K`, `--map`), a
//! collective runs in phases, as Open MPI's HAN, MPICH's SMP-aware
//! collectives and SimGrid's `smp_*` do: a gather or reduce to each node's
//! leader, the collective among the N leaders with any rank-based algorithm
//! of the registry (`--inter`), and the spread inside each node.
//!
//! Each phase is a schedule built by a registered algorithm on a
//! sub-request (N leaders, or a node's K ranks) and embedded in the whole
//! one ([`Composer::embed`]): its ranks renamed, its buffers' regions moved
//! to where the phase keeps its data, its tags moved past the earlier
//! phases', and its first operations made to wait for the rank's last
//! operations of the phase before. The verifier proves the composed
//! schedule by the collective's meaning like any other.
//!
//! A node's leader is its lowest rank, but in the root's node, where it is
//! the root. Nodes are numbered in the order of their lowest rank.

use super::{find, of, Algorithm, Applies, Request};
use crate::error::Result;
use topocoll_base::param;
use topocoll_schedule::{
    chunk, Buf, Collective, CollectiveKind, Op, OpId, Region, Schedule, Sizes,
};

/// Which placements a composition takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeNeed {
    /// Some node holds several ranks; nodes may hold different counts.
    Shared,
    /// As many ranks on every node that holds any (several).
    Equal,
    /// [`NodeNeed::Equal`], and each node's ranks' chunks of a
    /// reduce-scatter make up the chunk the leaders' reduce-scatter gives
    /// that node (always so when the ranks divide the count).
    EqualChunks,
    /// Each node holds a run of consecutive ranks (a block placement;
    /// nodes may hold different counts), so that a prefix in rank order
    /// splits into a prefix inside each node and one over the nodes.
    Consecutive,
    /// [`NodeNeed::Equal`], and in the multi-leader reduce-scatter's order
    /// of the ranks ([`slice_order`]) the chunks of the N ranks that lead
    /// slice t make up slice t, each one the chunk the leaders'
    /// reduce-scatter gives it (always so when the ranks divide the count).
    SliceChunks,
}

/// The ranks of each node that holds any.
#[derive(Clone, Debug)]
pub(crate) struct Nodes {
    /// Each node's ranks in rank order; nodes in the order of their
    /// lowest rank.
    pub members: Vec<Vec<usize>>,
    /// The node (index into `members`) of each rank.
    pub node_of: Vec<usize>,
}

impl Nodes {
    /// The nodes of `req`'s topology (every rank alone without one).
    fn of(req: &Request) -> Nodes {
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut node_of = Vec::with_capacity(req.ranks);
        let mut index = rustc_hash::FxHashMap::default();
        for r in 0..req.ranks {
            let host = req.topology.map_or(r as u64, |t| u64::from(t.rank_node[r]));
            let at = *index.entry(host).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            });
            members[at].push(r);
            node_of.push(at);
        }
        Nodes { members, node_of }
    }

    pub fn count(&self) -> usize {
        self.members.len()
    }

    /// Ranks per node, where every node holds as many.
    pub fn per_node(&self) -> usize {
        self.members[0].len()
    }

    /// Each node's leader: its lowest rank, or `root` in the root's node.
    pub fn leaders(&self, root: Option<usize>) -> Vec<usize> {
        let mut out: Vec<usize> = self.members.iter().map(|m| m[0]).collect();
        if let Some(r) = root {
            out[self.node_of[r]] = r;
        }
        out
    }

    /// The ranks of local index `t`, node by node (nodes of K ranks
    /// each): those that lead slice t in the multi-leader forms.
    pub fn index(&self, t: usize) -> Vec<usize> {
        self.members.iter().map(|m| m[t]).collect()
    }

    /// Whether the nodes' ranks, node after node, are the ranks in order
    /// (each node a run of consecutive ranks; nodes may differ in size).
    pub fn in_rank_order(&self) -> bool {
        self.members
            .iter()
            .flatten()
            .enumerate()
            .all(|(i, &r)| i == r)
    }

    /// Whether node j holds ranks jK .. jK+K−1 (a block placement), so
    /// that the leaders' blocks are the whole collective's in rank order.
    pub fn contiguous(&self) -> bool {
        let k = self.per_node();
        self.members
            .iter()
            .enumerate()
            .all(|(j, m)| m.iter().enumerate().all(|(t, &r)| r == j * k + t))
    }
}

/// The nodes of `req`, once its placement is one `alg` takes
/// (`Error::Unsupported` with the reason otherwise). This is the
/// registry's check ([`super::TopologyNeed::Nodes`]) and the builders'.
pub(crate) fn nodes(req: &Request, alg: &Algorithm, need: NodeNeed) -> Result<Nodes> {
    let place =
        "needs ranks placed several to a node (--topology with --ranks-per-node K or --map)";
    if req.topology.is_none() {
        return Err(req.unsupported(alg, place));
    }
    let nodes = Nodes::of(req);
    if nodes.members.iter().all(|m| m.len() == 1) {
        return Err(req.unsupported(
            alg,
            format!("every node holds one rank, so there is nothing to compose: it {place}"),
        ));
    }
    if need == NodeNeed::Shared {
        return Ok(nodes);
    }
    if need == NodeNeed::Consecutive {
        for (j, m) in nodes.members.iter().enumerate() {
            if let Some(w) = m.windows(2).find(|w| w[1] != w[0] + 1) {
                return Err(req.unsupported(
                    alg,
                    format!(
                        "node {j} holds ranks {} and {} but none between: a prefix in rank order splits by node only where every node holds a run of consecutive ranks (--map block)",
                        w[0], w[1]
                    ),
                ));
            }
        }
        return Ok(nodes);
    }
    let (lo, hi) = nodes.members.iter().fold((usize::MAX, 0), |(lo, hi), m| {
        (lo.min(m.len()), hi.max(m.len()))
    });
    if lo != hi {
        return Err(req.unsupported(
            alg,
            format!(
                "its nodes hold {lo} to {hi} ranks; it needs as many on every node (--ranks-per-node K, or a --map that fills the nodes evenly)"
            ),
        ));
    }
    if need == NodeNeed::SliceChunks {
        slice_chunks(req, alg, &nodes)?;
    }
    if need == NodeNeed::EqualChunks {
        let (p, n, count) = (req.ranks as u64, nodes.count() as u64, req.count);
        for (j, m) in nodes.members.iter().enumerate() {
            let mine: u64 = m.iter().map(|&r| chunk(count, p, r as u64).1).sum();
            let given = chunk(count, n, j as u64).1;
            if mine != given {
                return Err(req.unsupported(
                    alg,
                    format!(
                        "node {j}'s ranks' chunks of the {count} elements make {mine}, but the leaders' reduce_scatter gives it {given}: give a count that the {p} ranks divide"
                    ),
                ));
            }
        }
    }
    Ok(nodes)
}

/// The check of [`NodeNeed::SliceChunks`].
fn slice_chunks(req: &Request, alg: &Algorithm, nodes: &Nodes) -> Result<()> {
    let (p, n, k, count) = (
        req.ranks as u64,
        nodes.count() as u64,
        nodes.per_node() as u64,
        req.count,
    );
    let order = slice_order(nodes);
    for t in 0..k {
        let (slice, len) = chunk(count, k, t);
        let mut at = slice;
        for j in 0..n {
            let r = order[(t * n + j) as usize] as u64;
            let (sub, sublen) = chunk(len, n, j);
            let mine = chunk(count, p, r).1;
            if slice + sub != at || sublen != mine {
                return Err(req.unsupported(
                    alg,
                    format!(
                        "rank {r}'s chunk of the {count} elements is {mine}, but the reduce_scatter of slice {t} among the nodes' ranks {t} gives it {sublen}: give a count that the {p} ranks divide"
                    ),
                ));
            }
            at += mine;
        }
    }
    Ok(())
}

/// A node-aware composition's entry: `collective`'s `node_aware`, for the
/// placements `need` takes, its leaders running `inter` unless `--inter`
/// names another. Every composition is named, placed and led so, which its
/// entry then need not spell out.
pub(crate) const fn node_aware(
    collective: CollectiveKind,
    summary: &'static str,
    build: fn(&Request) -> Result<Schedule>,
    need: NodeNeed,
    inter: &'static Algorithm,
) -> Algorithm {
    Algorithm::new(collective, "node_aware", summary, build)
        .applies(Applies::nodes(need))
        .composes(inter)
}

/// The multi-leader form of `single`, a [`node_aware`] entry:
/// `node_aware_multi` of the same collective and leaders' default, for the
/// placements `need` takes.
pub(crate) const fn node_aware_multi(
    single: Algorithm,
    summary: &'static str,
    build: fn(&Request) -> Result<Schedule>,
    need: NodeNeed,
) -> Algorithm {
    Algorithm {
        name: "node_aware_multi",
        summary,
        build,
        applies: Applies::nodes(need),
        ..single
    }
}

/// What a node-aware composition starts from: the request's nodes, placed
/// as `alg`'s entry needs them (`TopologyNeed::Nodes`), and the algorithm
/// its leaders run (`--inter`, or the entry's default).
pub(crate) fn setup(req: &Request, alg: &'static Algorithm) -> Result<(Nodes, &'static Algorithm)> {
    let (super::TopologyNeed::Nodes(need), Some(default)) = (alg.applies.topology, alg.inter)
    else {
        return Err(req.unsupported(alg, "it is no node-aware composition"));
    };
    Ok((nodes(req, alg, need)?, inter(req, default)?))
}

/// What a single-leader composition starts from: each node's leader
/// gathers or reduces its node's data, the leaders run the collective
/// among themselves, and each leader spreads the result in its node. Every
/// single-leader form needs the nodes, the leaders' algorithm and who
/// leads, so [`leaders`] works them out once for all of them.
pub(crate) struct Leaders {
    pub nodes: Nodes,
    /// The algorithm the leaders run (`--inter`, or the entry's default).
    pub inter: &'static Algorithm,
    /// Each node's leader ([`Nodes::leaders`]): the root in the root's
    /// node, the lowest rank in the others.
    pub ranks: Vec<usize>,
}

/// The [`Leaders`] of `alg`'s composition for `req` ([`setup`]).
pub(crate) fn leaders(req: &Request, alg: &'static Algorithm) -> Result<Leaders> {
    let (nodes, inter) = setup(req, alg)?;
    let ranks = nodes.leaders(req.collective.root().map(|r| r as usize));
    Ok(Leaders {
        nodes,
        inter,
        ranks,
    })
}

/// The start of a rooted composition of blocks (gather, scatter): its
/// [`Leaders`], where the nodes' blocks of `req.count` elements sit
/// ([`Packed::blocks`]), and the composer.
pub(crate) fn rooted_blocks(
    req: &Request,
    alg: &'static Algorithm,
) -> Result<(Leaders, Packed, Composer)> {
    let lead = leaders(req, alg)?;
    let at = Packed::blocks(&lead.nodes, req.count);
    Ok((lead, at, Composer::new(req, alg)))
}

impl Leaders {
    /// Each node's phase: `alg` (a rooted collective: a gather, scatter,
    /// reduce or bcast) among the node's ranks, rooted at its leader, on
    /// `count` elements, its buffers where `frame` puts them.
    pub fn within_nodes(
        &self,
        cp: &mut Composer,
        req: &Request,
        alg: &'static Algorithm,
        count: u64,
        frame: Frame,
    ) -> Result<()> {
        each_node(&self.nodes, &self.ranks, |m, lead| {
            let collective = alg.collective.with_root(lead as u32);
            let sub = phase(req, alg, collective, m.len(), count)?;
            cp.embed(&sub, m, frame)
        })
    }

    /// The leaders' phase: [`Leaders::inter`] among the N leaders, the
    /// collective [`among_nodes`] names, on `count` elements, its buffers
    /// where `frame` puts them.
    pub fn among(&self, cp: &mut Composer, req: &Request, count: u64, frame: Frame) -> Result<()> {
        let top = among_nodes(req, &self.nodes);
        let sub = phase(req, self.inter, top, self.nodes.count(), count)?;
        cp.embed(&sub, &self.ranks, frame)
    }

    /// Makes every leader's scratch at least `len` elements.
    pub fn reserve(&self, cp: &mut Composer, len: u64) {
        for &l in &self.ranks {
            cp.reserve(l, len);
        }
    }
}

/// The collective that runs among the nodes (their leaders, or their ranks
/// of one index): the request's ([`leaders_collective`]), rooted at the
/// root's node.
pub(crate) fn among_nodes(req: &Request, nodes: &Nodes) -> Collective {
    let home = req
        .collective
        .root()
        .map_or(0, |r| nodes.node_of[r as usize]);
    leaders_collective(req.collective.kind()).with_root(home as u32)
}

/// The algorithm the leaders run: `req.inter`, or `default`; an error
/// naming the choices when it is not one of them.
pub(crate) fn inter(req: &Request, default: &'static Algorithm) -> Result<&'static Algorithm> {
    let alg = req.inter.unwrap_or(default);
    check_inter(req.collective.kind(), alg)?;
    Ok(alg)
}

/// The collective the leaders of `collective`'s composition run: the same
/// one, but for scan, whose leaders run an exscan of the nodes' totals.
pub fn leaders_collective(collective: CollectiveKind) -> CollectiveKind {
    match collective {
        CollectiveKind::Scan => CollectiveKind::Exscan,
        other => other,
    }
}

/// Whether `a` may run among the leaders: rank-based (the leaders have no
/// network of their own), not itself a composition, every rank the same
/// bits (each node gets its leader's).
fn may_lead(a: &Algorithm) -> bool {
    a.applies.topology == super::TopologyNeed::Any
        && !a.takes_inter()
        && a.ranks_agree()
        && !a.lanes
}

/// The algorithms `--inter` may name for `collective`.
pub fn inter_choices(collective: CollectiveKind) -> Vec<&'static str> {
    of(leaders_collective(collective))
        .filter(|a| may_lead(a))
        .map(|a| a.name)
        .collect()
}

/// Whether `alg` may run among the leaders of `collective`'s composition:
/// an algorithm of the leaders' collective that may lead, or a one-line
/// error naming the choices.
pub fn check_inter(collective: CollectiveKind, alg: &'static Algorithm) -> Result<()> {
    if alg.collective == leaders_collective(collective) && may_lead(alg) {
        return Ok(());
    }
    inter_choice(collective, alg.name).map(|_| ())
}

/// The algorithm `name` as the leaders' `collective`, or a one-line error
/// naming the choices: `--inter` parsed.
pub fn inter_choice(collective: CollectiveKind, name: &str) -> Result<&'static Algorithm> {
    let choices = inter_choices(collective);
    let collective = leaders_collective(collective);
    match find(collective, name) {
        Ok(a) if may_lead(a) => Ok(a),
        found => Err(param!(
            "inter",
            " {name}: {} (the leaders' {collective} takes one of: {})",
            match found {
                Ok(a) if a.takes_inter() => "a composition cannot lead another".to_string(),
                Ok(a) if !a.ranks_agree() =>
                    "its ranks' sums differ in their last bits, so the nodes' would too".to_string(),
                Ok(_) => "it needs a network, and the leaders run on ranks alone".to_string(),
                Err(_) => format!(
                    "no such {collective} algorithm{}",
                    topocoll_base::error::did_you_mean(name, choices.iter().copied())
                ),
            },
            choices.join(", ")
        )),
    }
}

/// Builds `alg` for `collective` on `ranks` ranks of `count` elements,
/// with `req`'s element type and operator and no network.
pub(crate) fn phase(
    req: &Request,
    alg: &'static Algorithm,
    collective: Collective,
    ranks: usize,
    count: u64,
) -> Result<Schedule> {
    phase_with(req, alg, collective, ranks, count, None)
}

/// Builds `alg` for the v-collective `collective` with the counts `sizes`
/// (their ranks), with `req`'s element type and no network: the leaders'
/// phase of the node-aware alltoallv and allgatherv.
pub(crate) fn phase_sized(
    req: &Request,
    alg: &'static Algorithm,
    collective: Collective,
    sizes: Sizes,
) -> Result<Schedule> {
    let (ranks, count) = (sizes.ranks(), sizes.max_block());
    phase_with(
        req,
        alg,
        collective,
        ranks,
        count,
        Some(std::sync::Arc::new(sizes)),
    )
}

fn phase_with(
    req: &Request,
    alg: &'static Algorithm,
    collective: Collective,
    ranks: usize,
    count: u64,
    sizes: Option<std::sync::Arc<Sizes>>,
) -> Result<Schedule> {
    let sub = Request {
        collective,
        ranks,
        count,
        dtype: req.dtype,
        op: req.op,
        topology: None,
        segment_bytes: None,
        lanes: None,
        radix: None,
        inter: None,
        sizes,
        channels: None,
        protocol: None,
    };
    super::build(alg, &sub)
}

/// Where a phase's buffers lie in the whole schedule's ranks: its input,
/// output and scratch regions move to these buffers at these offsets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub input: (Buf, u64),
    pub output: (Buf, u64),
    /// Where its scratch starts in the rank's scratch.
    pub scratch: u64,
}

impl Frame {
    /// The phase's buffers are the collective's own.
    pub const SAME: Frame = Frame {
        input: (Buf::Input, 0),
        output: (Buf::Output, 0),
        scratch: 0,
    };

    fn region(&self, r: Region) -> Region {
        let (buf, base) = match r.buf {
            Buf::Input => self.input,
            Buf::Output => self.output,
            Buf::Scratch => (Buf::Scratch, self.scratch),
        };
        Region::new(buf, base + r.offset, r.count)
    }
}

/// A schedule put together from phases, each rank's ops after its ops of
/// the phase before.
pub(crate) struct Composer {
    pub s: Schedule,
    /// Each rank's last operations so far (nothing of its later depends on
    /// them yet): what its next phase waits for.
    after: Vec<Vec<OpId>>,
    /// The first tag of this phase, and the largest it uses.
    tag: u32,
    top: u32,
}

impl Composer {
    pub fn new(req: &Request, alg: &Algorithm) -> Composer {
        Composer {
            s: req.schedule(alg),
            after: vec![Vec::new(); req.ranks],
            tag: 0,
            top: 0,
        }
    }

    /// Ends a phase: the next one's tags come after this one's.
    pub fn next_phase(&mut self) -> Result<()> {
        self.tag = self
            .top
            .checked_add(1)
            .ok_or_else(|| -> crate::error::Error {
                param!("inter", ": the phases use more than 2^32 tags")
            })?;
        self.top = self.tag;
        Ok(())
    }

    /// A tag of this phase's own, for the ops a builder writes itself.
    pub fn tag(&self) -> u32 {
        self.tag
    }

    /// Makes rank `rank`'s scratch at least `len` elements.
    pub fn reserve(&mut self, rank: usize, len: u64) {
        let p = &mut self.s.programs[rank];
        p.scratch = p.scratch.max(len);
    }

    /// Adds `sub`'s programs to the ranks `ranks` (sub-rank i is
    /// `ranks[i]`), their regions moved by `frame`. Ops of `sub` that wait
    /// for nothing wait for the rank's last ops so far; the ops of `sub`
    /// that nothing waits for become its last ops.
    pub fn embed(&mut self, sub: &Schedule, ranks: &[usize], frame: Frame) -> Result<()> {
        for (i, prog) in sub.programs.iter().enumerate() {
            if prog.is_empty() {
                continue;
            }
            let r = ranks[i];
            let first = self.s.programs[r].len() as OpId;
            let mut waited = vec![false; prog.len()];
            let entry = std::mem::take(&mut self.after[r]);
            for (k, op) in prog.ops.iter().enumerate() {
                let deps: Vec<OpId> = prog.deps(k).iter().map(|&d| d + first).collect();
                for &d in prog.deps(k) {
                    waited[d as usize] = true;
                }
                let op = self.moved(op, ranks, frame)?;
                let deps = if deps.is_empty() { &entry } else { &deps };
                self.s.programs[r].push(op, deps);
            }
            self.after[r] = (0..prog.len())
                .filter(|&k| !waited[k])
                .map(|k| k as OpId + first)
                .collect();
            if prog.scratch > 0 {
                self.reserve(r, frame.scratch + prog.scratch);
            }
        }
        Ok(())
    }

    /// `op` of a phase as the whole schedule's.
    fn moved(&mut self, op: &Op, ranks: &[usize], frame: Frame) -> Result<Op> {
        let mut tag_of = |t: u32| -> Result<u32> {
            let t = self
                .tag
                .checked_add(t)
                .ok_or_else(|| -> crate::error::Error {
                    param!("inter", ": the phases use more than 2^32 tags")
                })?;
            self.top = self.top.max(t);
            Ok(t)
        };
        Ok(match *op {
            // A phase runs without a network, so its routes are the default.
            Op::Send {
                peer, tag, region, ..
            } => Op::send(
                ranks[peer as usize] as u32,
                tag_of(tag)?,
                frame.region(region),
            ),
            Op::Recv {
                peer,
                tag,
                region,
                combine,
            } => Op::recv_with(
                ranks[peer as usize] as u32,
                tag_of(tag)?,
                frame.region(region),
                combine,
            ),
            Op::Copy { src, dst } => Op::copy(frame.region(src), frame.region(dst)),
            Op::Combine { src, dst } => Op::combine(frame.region(src), frame.region(dst)),
            Op::Compute { seconds } => Op::Compute { seconds },
        })
    }

    /// Adds `ops` to rank `rank`, side by side, each after the rank's last
    /// ops so far; they become its last ops.
    pub fn step(&mut self, rank: usize, ops: &[Op]) {
        if ops.is_empty() {
            return;
        }
        let entry = std::mem::take(&mut self.after[rank]);
        for op in ops {
            let id = self.s.programs[rank].push(*op, &entry);
            self.after[rank].push(id);
        }
    }

    /// Makes every rank's scratch at least `len` elements and adds `ops`
    /// to each: the copies every rank of a multi-leader form makes between
    /// its buffer and slice order.
    pub fn step_all(&mut self, len: u64, ops: &[Op]) {
        for r in 0..self.s.ranks {
            self.reserve(r, len);
            self.step(r, ops);
        }
    }

    pub fn finish(self) -> Schedule {
        self.s
    }
}

/// Runs `f` on the node's ranks with the node's leader's position among
/// them: the phases inside each node.
pub(crate) fn each_node(
    nodes: &Nodes,
    leaders: &[usize],
    mut f: impl FnMut(&[usize], usize) -> Result<()>,
) -> Result<()> {
    for (j, m) in nodes.members.iter().enumerate() {
        let lead = m.iter().position(|&r| r == leaders[j]).unwrap_or(0);
        f(m, lead)?;
    }
    Ok(())
}

/// Where a single-leader composition of blocks (gather, scatter, allgather,
/// allgatherv) keeps them at a leader: its node's blocks in its scratch
/// [0, node); and where the nodes' blocks one node after another are not
/// the collective's buffer in rank order (a placement other than a block
/// one), every node's blocks in node order after them, [node, node + all),
/// which the leader copies to or from rank order. The phases' own scratch
/// starts after both, at `base`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Packed {
    /// Elements of the most any node's blocks take.
    pub node: u64,
    /// Whether every block in node order is the buffer in rank order.
    pub direct: bool,
    pub base: u64,
}

impl Packed {
    /// `node` elements of a node's blocks, `all` of every node's; `direct`
    /// when the nodes' blocks in node order are rank order.
    pub fn new(node: u64, all: u64, direct: bool) -> Packed {
        let base = node + if direct { 0 } else { all };
        Packed { node, direct, base }
    }

    /// For blocks of `c` elements on nodes of K ranks each: node j's at
    /// jK·c when node j holds ranks jK..jK+K−1.
    pub fn blocks(nodes: &Nodes, c: u64) -> Packed {
        let (k, p) = (nodes.per_node() as u64, nodes.node_of.len() as u64);
        Packed::new(k * c, p * c, nodes.contiguous())
    }

    /// The phase inside each node that brings its ranks' blocks (their
    /// input) to the leader's scratch.
    pub fn ranks_to_leader(&self) -> Frame {
        Frame {
            input: (Buf::Input, 0),
            output: (Buf::Scratch, 0),
            scratch: self.base,
        }
    }

    /// The phase inside each node that hands its ranks their blocks (their
    /// output) from the leader's scratch.
    pub fn leader_to_ranks(&self) -> Frame {
        Frame {
            input: (Buf::Scratch, 0),
            output: (Buf::Output, 0),
            scratch: self.base,
        }
    }

    /// The leaders' phase from their nodes' blocks to every block: the
    /// output, or scratch in node order.
    pub fn node_to_all(&self) -> Frame {
        Frame {
            input: (Buf::Scratch, 0),
            output: self.all(Buf::Output),
            scratch: self.base,
        }
    }

    /// The leaders' phase from every block (the input, or scratch in node
    /// order) to their nodes' blocks.
    pub fn all_to_node(&self) -> Frame {
        Frame {
            input: self.all(Buf::Input),
            output: (Buf::Scratch, 0),
            scratch: self.base,
        }
    }

    /// Where every block lies in node order: `own` itself where that is
    /// rank order, else scratch after the node's blocks.
    fn all(&self, own: Buf) -> (Buf, u64) {
        if self.direct {
            (own, 0)
        } else {
            (Buf::Scratch, self.node)
        }
    }
}

/// The blocks of `c` elements in node order in scratch from `at` (node
/// j's rank t's at `at + (jK + t)·c`) paired with the same blocks in rank
/// order in `ranked` (rank r's at r·c): (node order, rank order) pairs,
/// node by node, for copies either way.
pub(crate) fn node_moves(nodes: &Nodes, c: u64, at: u64, ranked: Buf) -> Vec<(Region, Region)> {
    let k = nodes.per_node() as u64;
    let mut moves = Vec::new();
    for (j, m) in nodes.members.iter().enumerate() {
        for (t, &r) in m.iter().enumerate() {
            let from = at + (j as u64 * k + t as u64) * c;
            moves.push((
                Region::scratch(from, c),
                Region::new(ranked, r as u64 * c, c),
            ));
        }
    }
    moves
}

/// Copies of the blocks in node order (scratch from `at`) to rank order in
/// the output, one a block.
pub(crate) fn to_rank_order(nodes: &Nodes, c: u64, at: u64) -> Vec<Op> {
    node_moves(nodes, c, at, Buf::Output)
        .into_iter()
        .map(|(node, ranked)| Op::copy(node, ranked))
        .collect()
}

/// The ring reduce-scatter inside each node (nodes of K ranks each), its
/// buffers where `frame` puts them: rank t of a node ends with slice t
/// (chunk t of K) reduced over its node. The multi-leader reductions'
/// first phase.
pub(crate) fn ring_reduce_slices(
    c: &mut Composer,
    req: &Request,
    nodes: &Nodes,
    frame: Frame,
) -> Result<()> {
    let ring = &crate::reduce_scatter::ring::ALGORITHM;
    let collective = Collective::ReduceScatter;
    let sub = phase(req, ring, collective, nodes.per_node(), req.count)?;
    for m in &nodes.members {
        c.embed(&sub, m, frame)?;
    }
    Ok(())
}

/// The multi-leader forms' phase among the nodes for a buffer cut into K
/// slices (chunk t of K of the request's elements): K runs of `inter` side
/// by side, slice t's among the nodes' ranks t, the collective
/// [`among_nodes`] names. `frame` places the whole buffer; slice t's run
/// moves its output to the slice.
pub(crate) fn slices_among(
    c: &mut Composer,
    req: &Request,
    nodes: &Nodes,
    inter: &'static Algorithm,
    frame: Frame,
) -> Result<()> {
    let (k, n) = (nodes.per_node() as u64, req.count);
    let top = among_nodes(req, nodes);
    for t in 0..k {
        let (o, l) = chunk(n, k, t);
        let sub = phase(req, inter, top, nodes.count(), l)?;
        let (buf, at) = frame.output;
        let moved = Frame {
            output: (buf, at + o),
            ..frame
        };
        c.embed(&sub, &nodes.index(t as usize), moved)?;
    }
    Ok(())
}

/// Which way [`hand`] moves the parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Toward {
    /// From the root's node's ranks to the root.
    Root,
    /// From the root to its node's ranks.
    Ranks,
}

/// The root and the other ranks of its node exchange one part each, all at
/// once, where the multi-leader rooted forms' slices meet the root:
/// `parts(t)` is rank t's region and the root's, `None` where there is no
/// message.
pub(crate) fn hand(
    c: &mut Composer,
    nodes: &Nodes,
    root: usize,
    toward: Toward,
    parts: impl Fn(usize) -> Option<(Region, Region)>,
) {
    let tag = c.tag();
    let home = nodes.node_of[root];
    let mut at_root = Vec::new();
    for (t, &r) in nodes.members[home].iter().enumerate() {
        let Some((theirs, mine)) = parts(t).filter(|_| r != root) else {
            continue;
        };
        let (rank, ours) = match toward {
            Toward::Root => (
                Op::send(root as u32, tag, theirs),
                Op::recv(r as u32, tag, mine),
            ),
            Toward::Ranks => (
                Op::recv(root as u32, tag, theirs),
                Op::send(r as u32, tag, mine),
            ),
        };
        c.step(r, &[rank]);
        at_root.push(ours);
    }
    c.step(root, &at_root);
}

/// A multi-leader form's buffer in [`slice_order`]: the order, and whether
/// it is rank order (a cyclic placement), so that the collective's own
/// buffer is already in slice order and needs no copies to or from it.
pub(crate) struct Sliced {
    pub order: Vec<usize>,
    pub direct: bool,
}

impl Sliced {
    pub fn new(nodes: &Nodes) -> Sliced {
        let order = slice_order(nodes);
        let direct = order.iter().enumerate().all(|(i, &r)| i == r);
        Sliced { order, direct }
    }

    /// The buffer in slice order: `own`, or scratch (from 0) where slice
    /// order is not rank order.
    pub fn buf(&self, own: Buf) -> Buf {
        if self.direct {
            own
        } else {
            Buf::Scratch
        }
    }

    /// Where the phases' scratch starts: after the `len` elements of the
    /// buffer in slice order where that is scratch.
    pub fn base(&self, len: u64) -> u64 {
        if self.direct {
            0
        } else {
            len
        }
    }
}

/// Where the multi-leader gather and scatter keep slice t, the N blocks of
/// the nodes' ranks t, in the root's node: at the root, in its own buffer
/// (gather's output, scatter's input) where slice order is rank order,
/// else in scratch in slice order; at its node's other ranks, in scratch
/// from 0. The two forms are each other's mirror image, so they share it.
pub(crate) struct RootSlices {
    pub root: usize,
    pub sliced: Sliced,
    /// The root's buffer that holds the P blocks.
    own: Buf,
    /// A block's elements, and a slice's: N blocks.
    block: u64,
    len: u64,
    /// Where the phases' scratch starts: after the P blocks.
    pub base: u64,
}

impl RootSlices {
    pub fn new(req: &Request, nodes: &Nodes, own: Buf) -> RootSlices {
        let c = req.count;
        RootSlices {
            root: req.collective.root().unwrap_or(0) as usize,
            sliced: Sliced::new(nodes),
            own,
            block: c,
            len: nodes.count() as u64 * c,
            base: req.ranks as u64 * c,
        }
    }

    /// Slice t at the root.
    fn at_root(&self, t: usize) -> Region {
        Region::new(self.sliced.buf(self.own), t as u64 * self.len, self.len)
    }

    /// The leaders' phases side by side: `inter`'s gather or scatter of
    /// blocks among the N nodes, rooted at the root's node, run among the
    /// nodes' ranks t for each t; `frame` of where its leader keeps the
    /// slice.
    pub fn among(
        &self,
        c: &mut Composer,
        req: &Request,
        nodes: &Nodes,
        inter: &'static Algorithm,
        frame: impl Fn((Buf, u64)) -> Frame,
    ) -> Result<()> {
        let top = among_nodes(req, nodes);
        let sub = phase(req, inter, top, nodes.count(), req.count)?;
        let home = nodes.node_of[self.root];
        for t in 0..nodes.per_node() {
            let group = nodes.index(t);
            let lead = group[home];
            let held = if lead == self.root {
                let at = self.at_root(t);
                (at.buf, at.offset)
            } else {
                (Buf::Scratch, 0)
            };
            c.reserve(lead, self.base);
            c.embed(&sub, &group, frame(held))?;
        }
        Ok(())
    }

    /// The slices handed between the root and its node's other ranks
    /// ([`hand`]); empty slices take no message.
    pub fn hand(&self, c: &mut Composer, nodes: &Nodes, toward: Toward) {
        let part = |t| (self.len > 0).then(|| (Region::scratch(0, self.len), self.at_root(t)));
        hand(c, nodes, self.root, toward, part);
    }

    /// The blocks in slice order (scratch) and in rank order in the root's
    /// buffer: (slice order, rank order) pairs, for [`joined_copies`]
    /// either way.
    pub fn moves(&self) -> Vec<(Region, Region)> {
        slice_moves(&self.sliced.order, self.block, Buf::Scratch, self.own)
    }
}

/// The ring allgather of the K slices `chunk(count, K, t)` inside each node
/// (rank t of a node holds slice t at the start): K−1 steps, each passing
/// on the slice received in the step before. The multi-leader forms' last
/// phase (the slices are uneven, which no registered allgather's blocks are).
pub(crate) fn ring_slices(c: &mut Composer, nodes: &Nodes, count: u64) -> Result<()> {
    ring_slices_in(c, nodes, count, None)
}

/// [`ring_slices`] on the output, or with `scratch` on the rank's scratch
/// from that offset (a buffer in another order than the output's).
pub(crate) fn ring_slices_in(
    c: &mut Composer,
    nodes: &Nodes,
    count: u64,
    scratch: Option<u64>,
) -> Result<()> {
    let at = |o: u64, l: u64| match scratch {
        Some(base) => Region::scratch(base + o, l),
        None => Region::output(o, l),
    };
    let k = nodes.per_node();
    let tag = c.tag();
    for m in &nodes.members {
        for s in 0..k.saturating_sub(1) {
            for (t, &r) in m.iter().enumerate() {
                let (next, prev) = (m[(t + 1) % k], m[(t + k - 1) % k]);
                let (so, sl) = chunk(count, k as u64, ((t + k - s) % k) as u64);
                let (ro, rl) = chunk(count, k as u64, ((t + 2 * k - s - 1) % k) as u64);
                c.step(
                    r,
                    &[
                        Op::send(next as u32, tag, at(so, sl)),
                        Op::recv(prev as u32, tag, at(ro, rl)),
                    ],
                );
            }
        }
    }
    c.next_phase()
}

/// The multi-leader forms' order of the ranks: local index t, then node j
/// (rank t of node 0, of node 1, …, then rank t+1 …), so that slice t of a
/// buffer cut into K holds the blocks of the N ranks that lead slice t.
/// With a cyclic placement this is rank order.
pub(crate) fn slice_order(nodes: &Nodes) -> Vec<usize> {
    (0..nodes.per_node())
        .flat_map(|t| nodes.members.iter().map(move |m| m[t]))
        .collect()
}

/// The blocks of `c` elements in slice order in `sliced` (block i at i·c)
/// paired with the same blocks in rank order in `ranked` (rank r's at
/// r·c): (sliced, ranked) pairs, for [`joined_copies`] either way.
pub(crate) fn slice_moves(
    order: &[usize],
    c: u64,
    sliced: Buf,
    ranked: Buf,
) -> Vec<(Region, Region)> {
    order
        .iter()
        .enumerate()
        .map(|(i, &r)| {
            (
                Region::new(sliced, i as u64 * c, c),
                Region::new(ranked, r as u64 * c, c),
            )
        })
        .collect()
}

/// Copies of runs of elements between two buffers' regions, given as
/// (source, target) pairs of equal lengths, runs consecutive on both sides
/// joined into one copy.
pub(crate) fn joined_copies(mut moves: Vec<(Region, Region)>) -> Vec<Op> {
    moves.retain(|(s, _)| s.count > 0);
    moves.sort_unstable_by_key(|&(_, d)| (d.buf as u8, d.offset));
    let mut ops: Vec<Op> = Vec::new();
    let mut run: Option<(Region, Region)> = None;
    for (src, dst) in moves {
        run = match run {
            Some((s, d))
                if s.buf == src.buf
                    && d.buf == dst.buf
                    && s.offset + s.count == src.offset
                    && d.offset + d.count == dst.offset =>
            {
                Some((
                    Region::new(s.buf, s.offset, s.count + src.count),
                    Region::new(d.buf, d.offset, d.count + dst.count),
                ))
            }
            Some((s, d)) => {
                ops.push(Op::copy(s, d));
                Some((src, dst))
            }
            None => Some((src, dst)),
        };
    }
    if let Some((s, d)) = run {
        ops.push(Op::copy(s, d));
    }
    ops
}
