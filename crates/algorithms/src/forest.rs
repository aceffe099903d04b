//! A schedule given as the trees that carry it: what synthesis finds
//! (spanning trees, the part of the buffer each carries, the chunk size and
//! the order), from which every operation follows. It is a few hundred
//! kilobytes where the operations it stands for take hundreds of
//! megabytes, and [`Forest::expand`] writes the same operations, bit for
//! bit, every time: the file (`topocoll-forest/1`, [`Forest::to_json`],
//! [`from_json_reader`]) is read back by `verify`, `simulate --schedule`
//! and `run --schedule` to the same time and the same results.
//!
//! # Layout
//!
//! A forest is a list of [`Stage`]s. A stage is one segment-pipelined
//! [`Pipeline`] per root ([`crate::pipelined`]), carrying that root's
//! [`Piece`] of the collective:
//! - [`Piece::Whole`]: one root's trees carry the whole buffer (a bcast, a
//!   reduce, an allreduce through one root); its stage is the only one;
//! - [`Piece::Block`]: every root's block of an allgather's output, which
//!   the root first copies in from its input;
//! - [`Piece::Chunk`]: every root's chunk of the buffer
//!   ([`topocoll_schedule::chunk`]), reduced to it or broadcast from it.
//!
//! A spread stage's pipelines are laid side by side in each rank's
//! program, root after root, their tags, scratch and regions moved apart.
//! A stage marked [`Stage::after_previous`] starts, at each rank and for
//! each root, when the previous stage's ops for that root there are done:
//! an allreduce as a reduce-scatter up one packing's trees, then an
//! allgather down another's. The explicit paths tree edges take (switched
//! networks) are [`Forest::paths`], route `k + 1` for path `k`.

use crate::error::fail;
use crate::error::{Error, Result};
use crate::pipelined::{Phases, Pipeline};
use crate::trees::{Tree, NO_AXIS, NO_PARENT};
use crate::Request;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use topocoll_schedule::{Buf, Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll_topology::LinkId;

/// The format's name and version, written first in every forest file.
pub const FORMAT: &str = "topocoll-forest/1";

/// The label expanded schedules carry.
pub const LABEL: &str = "synthesized";

/// What a stage's root carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Piece {
    /// The whole buffer, from or to one root.
    Whole,
    /// The root's block of an allgather's output, copied in from its input.
    Block,
    /// The root's chunk of the buffer, in place.
    Chunk,
}

/// One pipeline per root, carrying the root's piece.
#[derive(Clone, Debug)]
pub struct Stage {
    pub piece: Piece,
    /// Which way every pipeline of the stage carries the data.
    pub phases: Phases,
    /// Each root's ops at each rank wait for the previous stage's last
    /// ops of the same root there.
    pub after_previous: bool,
    /// (root, its pipeline), roots in increasing order, roots whose piece
    /// is empty left out.
    pub pipelines: Vec<(u32, Pipeline)>,
}

/// A schedule as trees; see the module doc.
#[derive(Clone, Debug)]
pub struct Forest {
    pub collective: Collective,
    pub ranks: usize,
    /// Elements, as [`Schedule::count`].
    pub count: u64,
    pub dtype: Dtype,
    pub op: ReduceOp,
    pub stages: Vec<Stage>,
    pub paths: Vec<Vec<LinkId>>,
}

/// Each root's ops at each rank that no other op of its pipeline waits
/// for: `[root][rank]`, indices into the rank's program.
type Ends = Vec<Vec<Vec<u32>>>;

impl Forest {
    /// An empty forest (no stages) of `req`'s collective, ranks, count,
    /// element type and operator.
    pub fn new(req: &Request) -> Forest {
        Forest {
            collective: req.collective,
            ranks: req.ranks,
            count: req.count,
            dtype: req.dtype,
            op: req.op,
            stages: Vec::new(),
            paths: Vec::new(),
        }
    }

    /// Operations the pipelines hold.
    pub fn pipeline_ops(&self) -> u64 {
        self.stages
            .iter()
            .flat_map(|st| st.pipelines.iter())
            .map(|(_, pl)| pl.total_ops())
            .sum()
    }

    /// Operations the expanded schedule holds: the pipelines' and each
    /// allgather root's copy of its block into place.
    pub fn total_ops(&self) -> u64 {
        self.pipeline_ops()
            + self
                .stages
                .iter()
                .filter(|st| st.piece == Piece::Block)
                .map(|st| st.pipelines.len() as u64)
                .sum::<u64>()
    }

    /// Every operation, written out.
    pub fn expand(&self) -> Result<Schedule> {
        let mut s = Schedule::new(
            self.collective,
            self.ranks,
            self.count,
            self.dtype,
            self.op,
            LABEL,
        );
        let mut ends: Option<Ends> = None;
        for stage in &self.stages {
            match stage.piece {
                Piece::Whole => {
                    if let Some((_, pl)) = stage.pipelines.first() {
                        pl.materialise(&mut s)?;
                    }
                }
                Piece::Block | Piece::Chunk => {
                    let after = if stage.after_previous {
                        ends.as_deref()
                    } else {
                        None
                    };
                    ends = Some(self.lay_out(&mut s, stage, after)?);
                }
            }
        }
        for (k, links) in self.paths.iter().enumerate() {
            if s.add_path(links.clone()) != k as u32 + 1 {
                return Err(fail!(Algorithm, Forest, "forest: path {k} is given twice"));
            }
        }
        Ok(s)
    }

    /// The root's piece of the buffer: (first element, elements).
    fn piece(&self, piece: Piece, root: u32) -> (u64, u64) {
        match piece {
            Piece::Whole => (0, self.count),
            Piece::Block => (root as u64 * self.count, self.count),
            Piece::Chunk => topocoll_schedule::chunk(self.count, self.ranks as u64, root as u64),
        }
    }

    /// Writes the forest as one line of JSON ([`FORMAT`] first). Each
    /// pipeline lists its distinct trees once, as parent pointers, and its
    /// parts as (tree, first element, elements).
    pub fn to_json(&self, out: &mut dyn std::io::Write) -> Result<()> {
        let doc = JsonForest {
            format: FORMAT.to_string(),
            collective: serde_json::to_value(self.collective)
                .map_err(|e| fail!(Algorithm, Forest, "forest JSON: {e}"))?,
            ranks: self.ranks,
            count: self.count,
            dtype: self.dtype,
            op: self.op,
            stages: self.stages.iter().map(JsonStage::of).collect(),
            paths: self.paths.clone(),
        };
        serde_json::to_writer(&mut *out, &doc).map_err(|e| match e.io_error_kind() {
            Some(kind) => Error::io("cannot write the forest", std::io::Error::from(kind)),
            None => fail!(Algorithm, Forest, "forest JSON: {e}"),
        })?;
        out.write_all(b"\n")
            .map_err(|e| Error::io("cannot write the forest", e))
    }
}

impl Forest {
    /// Every root's pipeline of `stage` laid side by side after what `s`
    /// holds (tags, regions and scratch moved apart); where `after` is given,
    /// a root's first ops at a rank wait for the ops it names for that root
    /// and rank. The pipelines' last ops.
    fn lay_out(
        &self,
        s: &mut Schedule,
        stage: &Stage,
        after: Option<&[Vec<Vec<u32>>]>,
    ) -> Result<Ends> {
        let n = s.ranks;
        let gather = stage.piece == Piece::Block;
        // Tags past every tag the schedule already uses.
        let mut tag_base: u64 = s
            .programs
            .iter()
            .flat_map(|p| p.ops.iter())
            .filter_map(|op| match op {
                Op::Send { tag, .. } | Op::Recv { tag, .. } => Some(*tag as u64 + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let mut ends: Ends = vec![vec![Vec::new(); n]; n];
        for (root, pl) in &stage.pipelines {
            let root = *root;
            let (start, len) = self.piece(stage.piece, root);
            let c = if pl.phases.reduces() {
                Collective::Reduce { root }
            } else {
                Collective::Bcast { root }
            };
            let mut b = Schedule::new(c, n, len, s.dtype, s.op, "");
            pl.materialise(&mut b)?;
            let mut span = 0u64;
            for r in 0..n {
                let prog = &b.programs[r];
                let scratch_at = s.programs[r].scratch;
                s.programs[r].scratch += prog.scratch;
                let moved = |reg: Region| match reg.buf {
                    Buf::Output => Region::new(Buf::Output, start + reg.offset, reg.count),
                    Buf::Scratch => Region::new(Buf::Scratch, scratch_at + reg.offset, reg.count),
                    Buf::Input => reg,
                };
                let base = s.programs[r].len() as u32;
                // An allgather's root first copies its block into place.
                let own = if gather && r == root as usize {
                    Some(s.programs[r].push(
                        Op::copy(Region::input(0, len), Region::output(start, len)),
                        &[],
                    ))
                } else {
                    None
                };
                let shift = base + u32::from(own.is_some());
                let mut retag = |t: u32| {
                    span = span.max(t as u64 + 1);
                    checked_tag(tag_base + t as u64)
                };
                for i in 0..prog.len() {
                    let op = match prog.ops[i] {
                        Op::Send {
                            peer,
                            tag,
                            region,
                            route,
                        } => Op::send_routed(peer, retag(tag)?, moved(region), route),
                        Op::Recv {
                            peer,
                            tag,
                            region,
                            combine,
                        } => Op::Recv {
                            peer,
                            tag: retag(tag)?,
                            region: moved(region),
                            combine,
                        },
                        Op::Copy { src, dst } => Op::Copy {
                            src: moved(src),
                            dst: moved(dst),
                        },
                        Op::Combine { src, dst } => Op::Combine {
                            src: moved(src),
                            dst: moved(dst),
                        },
                        other @ Op::Compute { .. } => other,
                    };
                    let mut deps: Vec<u32> = prog.deps(i).iter().map(|&d| d + shift).collect();
                    if deps.is_empty() {
                        deps.extend(own);
                        if let Some(after) = after {
                            deps.extend_from_slice(&after[root as usize][r]);
                        }
                    }
                    s.programs[r].push(op, &deps);
                }
                let mut waited = vec![false; prog.len()];
                for i in 0..prog.len() {
                    for &d in prog.deps(i) {
                        waited[d as usize] = true;
                    }
                }
                ends[root as usize][r] = (0..prog.len())
                    .filter(|&i| !waited[i])
                    .map(|i| i as u32 + shift)
                    .collect();
            }
            tag_base += span;
        }
        Ok(ends)
    }
}

fn checked_tag(t: u64) -> Result<u32> {
    u32::try_from(t).map_err(|_| {
        fail!(
            Algorithm,
            Forest,
            "the forest's schedule needs more than 2^32 tags"
        )
    })
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonForest {
    format: String,
    /// Read as a value first, as the schedule format does.
    collective: serde_json::Value,
    ranks: usize,
    count: u64,
    dtype: Dtype,
    op: ReduceOp,
    stages: Vec<JsonStage>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    paths: Vec<Vec<LinkId>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonStage {
    piece: Piece,
    phases: JsonPhases,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    after_previous: bool,
    pipelines: Vec<JsonPipeline>,
}

#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum JsonPhases {
    Bcast,
    Reduce,
    Allreduce,
}

impl JsonPhases {
    fn of(p: Phases) -> JsonPhases {
        match p {
            Phases::Bcast => JsonPhases::Bcast,
            Phases::Reduce => JsonPhases::Reduce,
            Phases::Allreduce => JsonPhases::Allreduce,
        }
    }

    fn phases(self) -> Phases {
        match self {
            JsonPhases::Bcast => Phases::Bcast,
            JsonPhases::Reduce => Phases::Reduce,
            JsonPhases::Allreduce => Phases::Allreduce,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonPipeline {
    root: u32,
    /// Elements a segment.
    segment: u64,
    /// Each distinct tree's parent of every rank (`null` at the root).
    trees: Vec<Vec<Option<u32>>>,
    /// Each distinct tree's routes for every rank's edge from its parent
    /// and back (`[down, up]`, 0 for the topology's route); left out
    /// where every edge takes the topology's route.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    routes: Vec<Vec<[u32; 2]>>,
    /// (tree, first element, elements) of each part of the root's piece,
    /// in the piece's order.
    parts: Vec<[u64; 3]>,
}

impl JsonStage {
    fn of(st: &Stage) -> JsonStage {
        JsonStage {
            piece: st.piece,
            phases: JsonPhases::of(st.phases),
            after_previous: st.after_previous,
            pipelines: st
                .pipelines
                .iter()
                .map(|(root, pl)| JsonPipeline::of(*root, pl))
                .collect(),
        }
    }
}

/// A distinct tree of a pipeline: its parents and its edges' routes.
type TreeKey<'a> = (&'a [u32], Option<&'a [[u32; 2]]>);

impl JsonPipeline {
    fn of(root: u32, pl: &Pipeline) -> JsonPipeline {
        // A tree repeated (the copies synthesis runs of it) is listed once.
        let mut index: HashMap<TreeKey, u64> = HashMap::new();
        let (mut trees, mut routes, mut parts) = (Vec::new(), Vec::new(), Vec::new());
        for (t, tree) in pl.trees.iter().enumerate() {
            let hops = pl.hop_routes.get(t).map(Vec::as_slice);
            let next = index.len() as u64;
            let k = *index.entry((&tree.parent, hops)).or_insert_with(|| {
                trees.push(
                    tree.parent
                        .iter()
                        .map(|&p| (p != NO_PARENT).then_some(p))
                        .collect(),
                );
                if let Some(h) = hops {
                    routes.push(h.to_vec());
                }
                next
            });
            let (first, len) = pl.parts[t];
            parts.push([k, first, len]);
        }
        JsonPipeline {
            root,
            segment: pl.seg_elems,
            trees,
            routes,
            parts,
        }
    }
}

/// Reads a forest file, checking it field by field: every tree spans the
/// ranks from its pipeline's root, every part lies in the root's piece and
/// the parts cover it in order, every route names a path of the file. The
/// expanded schedule is then the verifier's to prove.
pub fn from_json_reader(reader: impl std::io::Read) -> Result<Forest> {
    let doc: JsonForest = serde_json::from_reader(std::io::BufReader::new(reader))
        .map_err(|e| fail!(Algorithm, Forest, "forest JSON: {e}"))?;
    if doc.format != FORMAT {
        return Err(fail!(
            Algorithm,
            Forest,
            "forest JSON: format '{}' is not {FORMAT}, the one this topocoll reads",
            doc.format
        ));
    }
    let collective: Collective = serde_json::from_value(doc.collective)
        .map_err(|e| fail!(Algorithm, Forest, "forest JSON: collective: {e}"))?;
    if doc.ranks < 2 {
        return Err(fail!(
            Algorithm,
            Forest,
            "forest JSON: ranks must be at least 2"
        ));
    }
    if doc.ranks > u32::MAX as usize {
        return Err(fail!(
            Algorithm,
            Forest,
            "forest JSON: ranks: {} are too many",
            doc.ranks
        ));
    }
    let n = doc.ranks;
    let mut f = Forest {
        collective,
        ranks: n,
        count: doc.count,
        dtype: doc.dtype,
        op: doc.op,
        stages: Vec::new(),
        paths: doc.paths,
    };
    let shapes = shapes_of(collective)?;
    let shape: Vec<(Piece, Phases)> = doc
        .stages
        .iter()
        .map(|st| (st.piece, st.phases.phases()))
        .collect();
    let follows: Vec<bool> = doc.stages.iter().map(|st| st.after_previous).collect();
    if !shape.is_empty() && !shapes.contains(&shape) {
        return Err(fail!(
            Algorithm,
            Forest,
            "forest JSON: a {} is not carried by stages of (piece, phases) {}",
            collective.name(),
            shape
                .iter()
                .map(|(piece, phases)| format!("({piece:?}, {phases:?})").to_lowercase())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if follows
        .iter()
        .enumerate()
        .any(|(i, &after)| after != (i > 0))
    {
        return Err(fail!(
            Algorithm,
            Forest,
            "forest JSON: a stage follows the previous one exactly when it is not the first"
        ));
    }
    for (i, st) in doc.stages.into_iter().enumerate() {
        let at = |what: String| fail!(Algorithm, Forest, "forest JSON: stage {i}: {what}");
        let phases = st.phases.phases();
        let mut pipelines = Vec::new();
        let mut last_root = None;
        for (j, jp) in st.pipelines.into_iter().enumerate() {
            let at = |what: String| at(format!("pipeline {j}: {what}"));
            let root = jp.root;
            if root as usize >= n {
                return Err(at(format!("root {root} is not one of {n} ranks")));
            }
            if last_root.is_some_and(|r| r >= root) {
                return Err(at(format!("root {root} is not past the previous root")));
            }
            last_root = Some(root);
            if st.piece == Piece::Whole && (j > 0 || collective.root().is_some_and(|r| r != root)) {
                return Err(at(format!(
                    "root {root}: a whole buffer goes from or to the collective's one root"
                )));
            }
            let (_, len) = f.piece(st.piece, root);
            let trees: Vec<Tree> = jp
                .trees
                .iter()
                .enumerate()
                .map(|(k, parents)| {
                    if parents.len() != n {
                        return Err(at(format!(
                            "tree {k} gives {} parents for {n} ranks",
                            parents.len()
                        )));
                    }
                    let parent = parents.iter().map(|p| p.unwrap_or(NO_PARENT)).collect();
                    Tree::from_parents(root, parent, vec![NO_AXIS; n])
                        .map_err(|e| at(format!("tree {k}: {e}")))
                })
                .collect::<Result<_>>()?;
            if !jp.routes.is_empty() && jp.routes.len() != trees.len() {
                return Err(at(format!(
                    "routes are given for {} of {} trees",
                    jp.routes.len(),
                    trees.len()
                )));
            }
            for (k, hops) in jp.routes.iter().enumerate() {
                if hops.len() != n {
                    return Err(at(format!("tree {k}'s routes are not one a rank")));
                }
                if let Some(bad) = hops.iter().flatten().find(|&&r| r as usize > f.paths.len()) {
                    return Err(at(format!(
                        "tree {k}: route {bad} names no path (the file has {})",
                        f.paths.len()
                    )));
                }
            }
            if jp.segment == 0 {
                return Err(at("segment must hold at least one element".into()));
            }
            let mut at_elem = 0u64;
            let (mut ts, mut parts, mut hops) = (Vec::new(), Vec::new(), Vec::new());
            for &[k, first, elems] in &jp.parts {
                let tree = trees
                    .get(k as usize)
                    .ok_or_else(|| at(format!("part of tree {k}, which is not given")))?;
                if first != at_elem
                    || elems == 0
                    || first.checked_add(elems).is_none_or(|e| e > len)
                {
                    return Err(at(format!(
                        "part [{k}, {first}, {elems}] does not follow the last part ({at_elem}) \
                         within the piece of {len} elements"
                    )));
                }
                at_elem += elems;
                ts.push(tree.clone());
                parts.push((first, elems));
                if let Some(h) = jp.routes.get(k as usize) {
                    hops.push(h.clone());
                }
            }
            if at_elem != len || len == 0 {
                return Err(at(format!(
                    "the parts cover {at_elem} of the piece's {len} elements"
                )));
            }
            let mut pl =
                Pipeline::new(ts, parts, jp.segment, phases).map_err(|e| at(e.to_string()))?;
            pl.hop_routes = hops;
            pipelines.push((root, pl));
        }
        f.stages.push(Stage {
            piece: st.piece,
            phases,
            after_previous: st.after_previous,
            pipelines,
        });
    }
    // Every output element must be carried: a spread stage needs every
    // root whose piece is not empty, a whole one its root.
    for (i, st) in f.stages.iter().enumerate() {
        let roots: Vec<u32> = match st.piece {
            Piece::Whole => Vec::new(),
            _ => (0..n as u32)
                .filter(|&r| f.piece(st.piece, r).1 > 0)
                .collect(),
        };
        let given: Vec<u32> = st.pipelines.iter().map(|p| p.0).collect();
        if st.piece != Piece::Whole && given != roots {
            return Err(fail!(
                Algorithm,
                Forest,
                "forest JSON: stage {i}: {} roots carry pieces, not every rank with one ({})",
                given.len(),
                roots.len()
            ));
        }
    }
    Ok(f)
}

/// The stage sequences, as (piece, phases), a collective may be carried
/// in.
fn shapes_of(c: Collective) -> Result<Vec<Vec<(Piece, Phases)>>> {
    Ok(match c {
        Collective::Bcast { .. } => vec![vec![(Piece::Whole, Phases::Bcast)]],
        Collective::Reduce { .. } => vec![vec![(Piece::Whole, Phases::Reduce)]],
        Collective::Allreduce => vec![
            vec![(Piece::Whole, Phases::Allreduce)],
            vec![(Piece::Chunk, Phases::Allreduce)],
            vec![
                (Piece::Chunk, Phases::Reduce),
                (Piece::Chunk, Phases::Bcast),
            ],
        ],
        Collective::Allgather => vec![vec![(Piece::Block, Phases::Bcast)]],
        Collective::ReduceScatter => vec![vec![(Piece::Chunk, Phases::Reduce)]],
        other => {
            return Err(fail!(
                Algorithm,
                Forest,
                "forest JSON: a {} is not carried by trees",
                other.name()
            ))
        }
    })
}
