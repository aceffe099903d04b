//! The schedule IR: per-rank programs of operations with dependencies.
//!
//! A schedule implements one collective on P ranks. Each rank has a program:
//! a list of operations, each naming the earlier operations of the same rank it
//! waits for. Sends and receives match by (source, destination, tag); the k-th
//! send of a (source, destination, tag) in program order meets the k-th
//! receive of it, and the verifier insists that operations sharing a key are
//! ordered by dependencies, so every transport matches them the same way.
//!
//! Regions are counted in elements of the schedule's element type. Which
//! buffers exist and what they hold at the start and the end is fixed by the
//! collective (see [`Collective`]).

pub mod error;
pub mod lookahead;

mod collective;
mod format;
mod graph;
mod reverse;
mod sizes;
mod source;
mod sync;
mod verify;

pub use collective::{
    chunk, Collective, CollectiveKind, Dtype, Expect, ReduceOp, Term, COLLECTIVES,
};
pub use error::{Error, Result, ScheduleKind, VerifyError, VerifyKind};

/// Largest buffer a schedule may describe (bytes), so offsets never overflow.
pub const MAX_BUFFER_BYTES: u64 = 1 << 50;

pub use topocoll_base::limits::MAX_RANKS;

/// The collectives with a line each.
pub fn collective_names() -> &'static [(&'static str, &'static str)] {
    &COLLECTIVES
}
pub use format::{
    from_goal, from_goal_lines, from_json, from_json_reader, from_msccl_xml, msccl_header, to_goal,
    to_json, to_msccl_xml, to_msccl_xml_for, FileFormat, MscclBytes, MscclExport, MscclHeader,
    MscclImport, ScheduleFile, FORMAT,
};
pub use graph::{dependency_counts, match_messages, Successors};
pub use reverse::{dual, reverse, reverse_checked};
pub use sizes::{check_pair_ranks, Generator, Sizes, SizesShape, HOT_SHARE, MAX_PAIR_RANKS};
pub use source::{Materialised, OpKind, OpSource, Transfer};
pub use verify::{check_ranks_fit, verify, VerifyReport};

use serde::{Deserialize, Serialize};
use topocoll_topology::LinkId;

/// Which of a rank's buffers a region lies in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Buf {
    /// The send buffer (alltoall, allgather, scatter, gather).
    Input,
    /// The receive buffer; in-place collectives (bcast and the reductions) start in it.
    Output,
    /// Temporary space, `Program::scratch` elements.
    Scratch,
}

/// A contiguous run of elements in one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Region {
    pub buf: Buf,
    pub offset: u64,
    pub count: u64,
}

impl Region {
    pub fn new(buf: Buf, offset: u64, count: u64) -> Region {
        Region { buf, offset, count }
    }
    pub fn input(offset: u64, count: u64) -> Region {
        Region::new(Buf::Input, offset, count)
    }
    pub fn output(offset: u64, count: u64) -> Region {
        Region::new(Buf::Output, offset, count)
    }
    pub fn scratch(offset: u64, count: u64) -> Region {
        Region::new(Buf::Scratch, offset, count)
    }
    /// One past the last element; `u64::MAX` where that would not fit (no
    /// buffer is that long, so such a region is past its buffer's end).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.count)
    }
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// One operation of a rank's program.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Op {
    /// Send a region to `peer`. `route` 0 takes the topology's default route;
    /// k in 1..=offsets.len() takes the signed-offset route
    /// `Schedule::offsets[k-1]` (grids only), which the simulator checks
    /// leads to `peer`; k in offsets.len()+1..=offsets.len()+paths.len()
    /// takes the explicit path `Schedule::paths[k-1-offsets.len()]`, which
    /// must be a path of the topology from the sender's node to the
    /// receiver's (see [`Schedule::paths`]).
    Send {
        peer: u32,
        tag: u32,
        region: Region,
        #[serde(default, skip_serializing_if = "is_zero")]
        route: u32,
    },
    /// Receive from `peer` into a region; with `combine`, `dst = dst ∘ received`.
    Recv {
        peer: u32,
        tag: u32,
        region: Region,
        combine: bool,
    },
    /// Local copy `dst = src` (same count).
    Copy { src: Region, dst: Region },
    /// Local reduction `dst = dst ∘ src` (same count).
    Combine { src: Region, dst: Region },
    /// Pure cost: the node's CPU is busy this long; moves no data.
    Compute { seconds: f64 },
}

impl Op {
    /// Send `region` to `peer` with `tag`, on the topology's default route.
    pub const fn send(peer: u32, tag: u32, region: Region) -> Op {
        Op::send_routed(peer, tag, region, 0)
    }

    /// Send `region` to `peer` with `tag` on route `route` (see [`Op::Send`]).
    pub const fn send_routed(peer: u32, tag: u32, region: Region, route: u32) -> Op {
        Op::Send {
            peer,
            tag,
            region,
            route,
        }
    }

    /// Receive from `peer` with `tag` into `region`, overwriting it.
    pub const fn recv(peer: u32, tag: u32, region: Region) -> Op {
        Op::recv_with(peer, tag, region, false)
    }

    /// Receive from `peer` with `tag` and combine into `region`:
    /// `region = region ∘ received`.
    pub const fn recv_combine(peer: u32, tag: u32, region: Region) -> Op {
        Op::recv_with(peer, tag, region, true)
    }

    /// A receive that combines when `combine` is set (see [`Op::Recv`]).
    pub const fn recv_with(peer: u32, tag: u32, region: Region, combine: bool) -> Op {
        Op::Recv {
            peer,
            tag,
            region,
            combine,
        }
    }

    /// Local copy `dst = src`.
    pub const fn copy(src: Region, dst: Region) -> Op {
        Op::Copy { src, dst }
    }

    /// Local reduction `dst = dst ∘ src`.
    pub const fn combine(src: Region, dst: Region) -> Op {
        Op::Combine { src, dst }
    }

    /// Short human description, for error messages.
    pub fn describe(&self) -> String {
        fn r(r: &Region) -> String {
            match r.offset.checked_add(r.count) {
                Some(end) => format!("{:?}[{}..{end}]", r.buf, r.offset),
                None => format!("{:?}[{}, {} elements]", r.buf, r.offset, r.count),
            }
            .to_lowercase()
        }
        match self {
            Op::Send {
                peer, tag, region, ..
            } => {
                format!("send {} to rank {peer} tag {tag}", r(region))
            }
            Op::Recv {
                peer,
                tag,
                region,
                combine,
            } => format!(
                "{} {} from rank {peer} tag {tag}",
                if *combine {
                    "recv-combine into"
                } else {
                    "recv into"
                },
                r(region)
            ),
            Op::Copy { src, dst } => format!("copy {} to {}", r(src), r(dst)),
            Op::Combine { src, dst } => format!("combine {} into {}", r(src), r(dst)),
            Op::Compute { seconds } => format!("compute {seconds} s"),
        }
    }
}

/// Index of an operation within its rank's program.
pub type OpId = u32;

/// What is wrong with op `i`'s references, if anything: a dependency that is
/// not an earlier op, a route past the schedule's `offsets` offset routes
/// and `paths` explicit paths, a peer that is not one of `ranks`. The
/// verifier reports these, and so does the JSON import, because the
/// simulator (told not to verify) indexes by them.
pub(crate) fn reference_fault(
    op: &Op,
    i: usize,
    deps: &[OpId],
    ranks: usize,
    (offsets, paths): (usize, usize),
) -> Option<String> {
    if let Some(d) = deps.iter().find(|&&d| d as usize >= i) {
        return Some(format!(
            "depends on op {d}, which is not an earlier operation"
        ));
    }
    if let Op::Send { route, .. } = op {
        if *route as u64 > offsets as u64 + paths as u64 {
            return Some(format!(
                "route {route} is not in the schedule's {offsets} offset route(s) and {paths} path(s)"
            ));
        }
    }
    match op {
        Op::Send { peer, .. } | Op::Recv { peer, .. } if *peer as usize >= ranks => {
            Some(format!("peer {peer} is not a rank"))
        }
        _ => None,
    }
}

/// One rank's program. Dependencies are stored flat (compressed rows) so that
/// a million-operation schedule stays compact.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    pub ops: Vec<Op>,
    /// Dependencies of op i are `deps[dep_end[i-1]..dep_end[i]]`.
    dep_end: Vec<u32>,
    deps: Vec<OpId>,
    /// Elements of scratch space this rank needs.
    pub scratch: u64,
}

impl Program {
    /// Appends an operation that waits for `deps` (earlier operations) and
    /// returns its id.
    pub fn push(&mut self, op: Op, deps: &[OpId]) -> OpId {
        let id = self.ops.len() as OpId;
        self.ops.push(op);
        self.deps.extend_from_slice(deps);
        self.dep_end.push(self.deps.len() as u32);
        id
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operations op `i` waits for.
    pub fn deps(&self, i: usize) -> &[OpId] {
        let start = if i == 0 {
            0
        } else {
            self.dep_end[i - 1] as usize
        };
        &self.deps[start..self.dep_end[i] as usize]
    }

    /// Bytes this program holds in memory (for reports and the scale test).
    pub fn heap_bytes(&self) -> usize {
        self.ops.capacity() * std::mem::size_of::<Op>()
            + (self.dep_end.capacity() + self.deps.capacity()) * 4
    }
}

/// What a send's route number names ([`Schedule::route_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteKind<'a> {
    /// Route 0: the topology's own route between the two ranks.
    Default,
    /// A signed offset per dimension (grids).
    Offset(&'a [i64]),
    /// The links crossed, in order.
    Path(&'a [LinkId]),
}

/// A schedule: the collective it implements and each rank's program.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub collective: Collective,
    pub ranks: usize,
    /// Elements: the block each rank sends to each peer for alltoall, allgather,
    /// scatter and gather (an MPI count); the whole buffer for the others.
    pub count: u64,
    pub dtype: Dtype,
    pub op: ReduceOp,
    /// The algorithm that made it.
    pub algorithm: String,
    pub programs: Vec<Program>,
    /// Signed per-dimension offsets that sends may name as their route
    /// (see [`Op::Send`]); shared by all ranks.
    pub offsets: Vec<Vec<i64>>,
    /// Explicit paths that sends may name as their route, after the
    /// offsets: route `offsets.len() + k` (k ≥ 1) is `paths[k-1]`, the
    /// topology's links (`Topology::links` indices) the send crosses, in
    /// order, from the sender's node to the receiver's. The schedule does
    /// not know the network: that a path is one of the topology, from
    /// the right node to the right node, is checked where both are known
    /// (`topocoll_sim::check_routes`, which the simulator and `verify
    /// --topology` call). Empty for schedules routed by the topology.
    pub paths: Vec<Vec<LinkId>>,
    /// A v-collective's counts (alltoallv, allgatherv); `None` for the
    /// others. `count` is then the largest block.
    pub sizes: Option<std::sync::Arc<Sizes>>,
}

impl Schedule {
    /// An empty schedule (no operations yet) for `ranks` ranks.
    pub fn new(
        collective: Collective,
        ranks: usize,
        count: u64,
        dtype: Dtype,
        op: ReduceOp,
        algorithm: &str,
    ) -> Schedule {
        Schedule {
            collective,
            ranks,
            count,
            dtype,
            op,
            algorithm: algorithm.to_string(),
            programs: vec![Program::default(); ranks],
            offsets: Vec::new(),
            paths: Vec::new(),
            sizes: None,
        }
    }

    /// The route id to put in [`Op::Send::route`] for a signed offset,
    /// adding it to the table if it is new.
    pub fn offset_route(&mut self, offset: &[i64]) -> u32 {
        if let Some(i) = self.offsets.iter().position(|o| o == offset) {
            return i as u32 + 1;
        }
        self.offsets.push(offset.to_vec());
        self.offsets.len() as u32
    }

    /// The route id to put in [`Op::Send::route`] for an explicit path
    /// (links in order from the sender's node to the receiver's), adding
    /// it to [`Schedule::paths`] if it is new. The id counts after the
    /// offsets: add every offset route before the first path, or the
    /// path ids move.
    pub fn add_path(&mut self, links: Vec<LinkId>) -> u32 {
        let i = match self.paths.iter().position(|p| *p == links) {
            Some(i) => i,
            None => {
                self.paths.push(links);
                self.paths.len() - 1
            }
        };
        (self.offsets.len() + i + 1) as u32
    }

    /// How many routes sends may name beyond route 0: offset routes, then
    /// paths.
    pub fn route_count(&self) -> usize {
        self.offsets.len() + self.paths.len()
    }

    /// What send route `route` is: the topology's, an offset or a path.
    /// `None` when the schedule has no such route.
    pub fn route_kind(&self, route: u32) -> Option<RouteKind<'_>> {
        let k = route as usize;
        if k == 0 {
            Some(RouteKind::Default)
        } else if k <= self.offsets.len() {
            Some(RouteKind::Offset(&self.offsets[k - 1]))
        } else {
            self.paths
                .get(k - 1 - self.offsets.len())
                .map(|p| RouteKind::Path(p.as_slice()))
        }
    }

    /// Total operations over all ranks.
    pub fn num_ops(&self) -> usize {
        self.programs.iter().map(|p| p.len()).sum()
    }

    /// Number of sends (point-to-point transfers).
    pub fn num_transfers(&self) -> usize {
        self.programs
            .iter()
            .map(|p| {
                p.ops
                    .iter()
                    .filter(|o| matches!(o, Op::Send { .. }))
                    .count()
            })
            .sum()
    }

    /// Bytes the schedule holds in memory.
    pub fn heap_bytes(&self) -> usize {
        self.programs.iter().map(|p| p.heap_bytes()).sum()
    }

    /// Element count of a rank's buffer.
    pub fn buffer_len(&self, rank: usize, buf: Buf) -> u64 {
        match buf {
            Buf::Input => self
                .collective
                .input_len(self.ranks, self.count, rank, self.sizes()),
            Buf::Output => self
                .collective
                .output_len(self.ranks, self.count, rank, self.sizes()),
            Buf::Scratch => self.programs[rank].scratch,
        }
    }

    /// A v-collective's counts.
    pub fn sizes(&self) -> Option<&Sizes> {
        self.sizes.as_deref()
    }

    /// The buffer holding rank's own data at the start, and its length.
    pub fn initial(&self, rank: usize) -> Option<(Buf, u64)> {
        self.collective
            .initial(self.ranks, self.count, rank, self.sizes())
    }

    /// What rank's output must hold at the end (see [`Collective::expected`]).
    pub fn expected(&self, rank: usize) -> Vec<Expect> {
        self.collective
            .expected(self.ranks, self.count, rank, self.sizes())
    }

    /// Size in bytes of one element.
    pub fn elem_bytes(&self) -> u64 {
        self.dtype.size()
    }
}
