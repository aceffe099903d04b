//! A workload as one schedule: each rank's actions become its program, in
//! order, and each collective call the program of the chosen algorithm's
//! schedule, built and verified once per distinct call.
//!
//! Why one schedule: the simulator already prices any schedule on any
//! network under the node model, so a workload's messages and its
//! collectives share the links and the CPUs exactly as a collective's own
//! messages do, and no second engine has to agree with the first.
//!
//! The semantics, rank by rank. The *frontier* is what the rank's next
//! action waits for:
//! - compute and sleep: an op of the CPU (flops over the host's speed);
//! - a blocking send: below the eager limit it returns at once (the message
//!   goes on its own), from it on when the message has arrived; a blocking
//!   receive: when its message has arrived;
//! - `isend`, `irecv`: the message goes, the rank goes on; the request waits
//!   in a queue of its (source, destination, tag) until a `wait` takes the
//!   oldest one or `waitall` takes them all. A wait that finds none returns
//!   at once;
//! - a collective call: every op of the rank's program in the algorithm's
//!   schedule, the first ones after the frontier; the call returns when its
//!   last ops are done.
//!
//! A step that names the steps it comes after (a graph's dependencies, as
//! Chakra's traces give them) starts from their frontiers, not the rank's
//! last: its frontier when it is done is what its successors wait for.
//!
//! Messages match by (source, destination, tag, communicator) in order, as
//! MPI's do; a receive takes the size of the send it matches. A call on a
//! communicator runs the algorithm's schedule on the communicator's ranks,
//! each of its ranks renamed into the world rank it is. Collective messages
//! are tagged apart from the application's, and each communicator's apart
//! from the others'.

use crate::action::{Action, Call, Mode, Rooted, Step, Workload};
use crate::choice::{Choice, Picked, Sends, Served};
use crate::error::fail;
use crate::error::{Error, Result};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use topocoll_algorithms::{self as algorithms, Request};
use topocoll_schedule::{Collective, Dtype, Op, OpId, Program, ReduceOp, Region, Schedule, Sizes};
use topocoll_topology::Topology;

/// SMPI's `smpi/send-is-detached-thresh`: a blocking send of fewer bytes
/// returns at once.
pub const SMPI_EAGER_BYTES: u64 = 65_536;

/// Tags at and above this one are the collectives' own.
const COLLECTIVE_TAGS: u32 = 1 << 31;

/// How a workload's actions take time.
#[derive(Clone, Debug)]
pub struct Semantics {
    /// A blocking send of fewer bytes returns at once.
    pub eager_bytes: u64,
    /// Every host's speed, flops per second; `None`: each host's own, as
    /// the network's file gives it (`Topology::speed`), and a trace that
    /// computes on a host of no known speed is refused.
    pub flops: Option<f64>,
}

impl Default for Semantics {
    fn default() -> Semantics {
        Semantics {
            eager_bytes: SMPI_EAGER_BYTES,
            flops: None,
        }
    }
}

/// The SMPI options [`Semantics::simgrid_option`] takes.
pub const SIMGRID_SEMANTICS_KEYS: [&str; 5] = [
    "smpi/send-is-detached-thresh",
    "smpi/async-small-thresh",
    "smpi/os",
    "smpi/or",
    "smpi/ois",
];

impl Semantics {
    /// Takes one of SimGrid's SMPI options that set how calls take time,
    /// `KEY`:`VALUE`, and says whether `key` is one: the eager threshold
    /// (`smpi/send-is-detached-thresh`), and the small-message costs
    /// (`smpi/os`, `smpi/or`, `smpi/ois`) and asynchronous small sends
    /// (`smpi/async-small-thresh`) at SimGrid's defaults, none, which are
    /// what is priced (other values are refused).
    pub fn simgrid_option(&mut self, key: &str, value: &str) -> Result<bool> {
        match key {
            "smpi/send-is-detached-thresh" => {
                self.eager_bytes = value.trim().parse().map_err(|_| {
                    fail!(Workload, Config, "--cfg={key}:{value}: not a byte count")
                })?;
            }
            "smpi/async-small-thresh" if value.trim() == "0" => {}
            "smpi/os" | "smpi/or" | "smpi/ois"
                if value
                    .split([':', ';'])
                    .all(|f| f.trim().parse::<f64>().is_ok_and(|x| x == 0.0)) => {}
            "smpi/async-small-thresh" | "smpi/os" | "smpi/or" | "smpi/ois" => {
                return Err(fail!(Workload, Config,
                    "--cfg={key}:{value}: only SimGrid's default (no cost, no asynchronous small sends) is priced"
                ))
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A workload's schedule and what its calls ran.
pub struct Built {
    pub schedule: Schedule,
    /// Each distinct call (collective, bytes, algorithm) and how often it ran.
    pub calls: Vec<CallSummary>,
    /// Point-to-point messages.
    pub messages: u64,
    /// Bytes of those messages.
    pub message_bytes: u64,
    /// Where each call's ops are, to time them once simulated.
    pub detail: Detail,
}

/// Where each collective call's ops sit in the workload's schedule.
#[derive(Clone, Debug, Default)]
pub struct Detail {
    /// Each rank's calls, in order.
    pub calls: Vec<Vec<CallOps>>,
    /// Each call (an index every rank of its communicator shares): its
    /// row of [`Built::calls`].
    pub call_row: Vec<usize>,
    /// Each row's schedule: an index into `schedules`.
    pub row_schedule: Vec<usize>,
    /// The distinct calls' schedules.
    pub schedules: Vec<Schedule>,
}

/// One rank's ops of one call.
#[derive(Clone, Debug)]
pub struct CallOps {
    /// The call: an index into [`Detail::call_row`].
    pub call: u32,
    /// Its ops, `first..end` of the rank's program.
    pub first: OpId,
    pub end: OpId,
    /// The ops the call's first ops wait for (the rank enters the call when
    /// they are done; none: at its start).
    pub entry: Vec<OpId>,
}

/// One distinct collective call of a workload.
#[derive(Clone, Debug)]
pub struct CallSummary {
    pub collective: Collective,
    pub bytes: u64,
    pub algorithm: &'static str,
    /// The pipeline segment `auto` picked for it (none: the algorithm's own).
    pub segment_bytes: Option<u64>,
    pub calls: u64,
    /// The communicator: an index into the workload's `comms` (0, the
    /// world), and its world ranks in its order when it is not the world.
    pub comm: u32,
    pub comm_ranks: Option<Vec<u32>>,
    /// A gatherv or scatterv replayed as the alltoallv of its blocks.
    pub rooted: Option<Rooted>,
}

impl CallSummary {
    /// The collective's name as the trace calls it (`gatherv` for a
    /// gatherv replayed as an alltoallv).
    pub fn name(&self) -> &'static str {
        self.rooted.map_or(self.collective.name(), |r| r.name())
    }

    /// Its root, if it has one.
    pub fn root(&self) -> Option<u32> {
        self.rooted
            .map(|r| r.root())
            .or_else(|| self.collective.root())
    }
}

/// One distinct call's schedule, and where its routes go in the workload's.
struct Distinct {
    schedule: Schedule,
    sends: Sends,
    /// Route k of the call is route `route[k]` of the workload.
    route: Vec<u32>,
}

/// One rank's part in one collective call: the distinct schedule, the
/// communicator and the rank's place in it, and the call.
#[derive(Clone, Copy)]
struct Part {
    distinct: usize,
    comm: u32,
    rank: u32,
    call: u32,
}

/// Builds the workload's schedule on `topo` (whose rank count must be the
/// workload's), each collective served as `choice` says.
pub fn build(w: &Workload, topo: &Topology, choice: &Choice, sem: &Semantics) -> Result<Built> {
    build_with(w, topo, &|_| choice, sem)
}

/// [`build`] with each communicator's calls served as the choice
/// `choose(comm)` says (a job file's jobs, each its own).
pub fn build_with<'c>(
    w: &Workload,
    topo: &Topology,
    choose: &dyn Fn(u32) -> &'c Choice,
    sem: &Semantics,
) -> Result<Built> {
    let p = w.ranks();
    check_ranks(p, topo)?;
    if let Some(f) = sem.flops {
        if !(f.is_finite() && f > 0.0) {
            return Err(topocoll_base::param!(
                "flops",
                " must be a positive number of flops per second"
            ));
        }
    }
    let sizes = receive_sizes(w)?;
    let Matched {
        parts: calls,
        mut distinct,
        summary,
        call_row,
        row_distinct,
    } = calls(w, topo, choose)?;
    let mut s = Schedule::new(
        Collective::Barrier,
        p,
        0,
        Dtype::U8,
        ReduceOp::Sum,
        "workload",
    );
    merge_routes(&mut s, &mut distinct);
    let mut tags: FxHashMap<(u32, i64), u32> = FxHashMap::default();
    let mut coll = CollectiveTags::new(&distinct)?;
    let mut counted = Counted::default();
    let mut call_ops = Vec::with_capacity(p);
    for (r, steps) in w.programs.iter().enumerate() {
        let known = sem.flops.or_else(|| {
            let s = topo.speed.get(topo.rank_node[r] as usize).copied()?;
            (s > 0.0).then_some(s)
        });
        let mine = Mine {
            r,
            file: &w.files[r],
            speed: known,
            sizes: &sizes[r],
            calls: &calls[r],
            comms: &w.comms,
        };
        let tags = Tags {
            app: &mut tags,
            coll: &mut coll,
        };
        let (prog, ops) = program(&mine, steps, &distinct, sem, tags, &mut counted)?;
        s.programs[r] = prog;
        call_ops.push(ops);
    }
    if tags.len() as u64 >= COLLECTIVE_TAGS as u64 {
        return Err(fail!(
            Workload,
            Trace,
            "the trace uses more than 2^31 distinct tags"
        ));
    }
    Ok(Built {
        schedule: s,
        calls: summary,
        messages: counted.messages,
        message_bytes: counted.bytes,
        detail: Detail {
            calls: call_ops,
            call_row,
            row_schedule: row_distinct,
            schedules: distinct.into_iter().map(|d| d.schedule).collect(),
        },
    })
}

/// The point-to-point messages of a workload and their bytes.
#[derive(Default)]
struct Counted {
    messages: u64,
    bytes: u64,
}

/// What one rank's program is built from beside its steps.
struct Mine<'a> {
    r: usize,
    file: &'a str,
    /// Its host's speed, flops per second, if known.
    speed: Option<f64>,
    /// The size of each of its receives, in order.
    sizes: &'a [u64],
    /// Its collective calls, in order.
    calls: &'a [Part],
    /// The workload's communicators.
    comms: &'a [Vec<u32>],
}

/// The IR tags of a workload: the application's by (communicator, tag),
/// the same for every rank, and the collectives'.
struct Tags<'a> {
    app: &'a mut FxHashMap<(u32, i64), u32>,
    coll: &'a mut CollectiveTags,
}

/// The collectives' IR tags: a call on the world keeps its schedule's tag
/// past `COLLECTIVE_TAGS`; a call on another communicator gets tags of its
/// own past those, one per (communicator, schedule tag).
struct CollectiveTags {
    next: u64,
    of: FxHashMap<(u32, u32), u32>,
}

impl CollectiveTags {
    fn new(distinct: &[Distinct]) -> Result<CollectiveTags> {
        let top = distinct
            .iter()
            .flat_map(|d| d.schedule.programs.iter().flat_map(|p| p.ops.iter()))
            .filter_map(|op| match op {
                Op::Send { tag, .. } | Op::Recv { tag, .. } => Some(*tag as u64 + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        Ok(CollectiveTags {
            next: COLLECTIVE_TAGS as u64 + top,
            of: FxHashMap::default(),
        })
    }

    fn tag(&mut self, comm: u32, tag: u32) -> Result<u32> {
        if comm == 0 {
            return Ok(COLLECTIVE_TAGS | tag);
        }
        if let Some(&t) = self.of.get(&(comm, tag)) {
            return Ok(t);
        }
        let t = u32::try_from(self.next).map_err(|_| {
            fail!(
                Workload,
                Trace,
                "the trace's collectives on communicators need more than 2^31 tags"
            )
        })?;
        self.next += 1;
        self.of.insert((comm, tag), t);
        Ok(t)
    }
}

impl Mine<'_> {
    /// The host's speed, or the refusal of `what`, which computes at `line`.
    fn speed(&self, line: u64, what: &str) -> Result<f64> {
        self.speed.ok_or_else(|| {
            Error::parse(
                self.file,
                line,
                format!(
                    "{what} computes on rank {}, whose host has no known speed (give --flops)",
                    self.r
                ),
            )
        })
    }
}

/// One rank's program: its steps in order, each as the module's semantics
/// say; `tags` numbers the application's tags, the same for every rank.
fn program(
    mine: &Mine,
    steps: &[Step],
    distinct: &[Distinct],
    sem: &Semantics,
    tags: Tags,
    counted: &mut Counted,
) -> Result<(Program, Vec<CallOps>)> {
    let mut ops = Vec::with_capacity(mine.calls.len());
    let mut rank = Rank::default();
    let mut recv_sizes = mine.sizes.iter();
    let mut my_calls = mine.calls.iter();
    // A graph's steps: what each one's successors wait for.
    let mut done: Vec<Vec<OpId>> = Vec::new();
    let graph = steps.iter().any(|s| s.after.is_some());
    for step in steps {
        if let Some(after) = &step.after {
            rank.frontier.clear();
            for &k in after {
                let before = done.get(k as usize).ok_or_else(|| {
                    Error::parse(
                        mine.file,
                        step.line,
                        format!(
                            "rank {}'s step comes after step {k}, which is not before it",
                            mine.r
                        ),
                    )
                })?;
                rank.frontier.extend_from_slice(before);
            }
            rank.frontier.sort_unstable();
            rank.frontier.dedup();
        }
        match &step.action {
            Action::Compute { flops } => {
                if *flops > 0.0 {
                    let seconds = flops / mine.speed(step.line, "compute: the trace")?;
                    rank.blocking(Op::Compute { seconds });
                }
            }
            Action::Sleep { seconds } => {
                if *seconds > 0.0 {
                    rank.blocking(Op::Compute { seconds: *seconds });
                }
            }
            Action::Send {
                to,
                tag,
                comm,
                bytes,
                mode,
            } => {
                let t = tag_of(tags.app, *comm, *tag);
                let op = Op::send(*to, t, Region::scratch(0, *bytes));
                rank.scratch(*bytes);
                counted.messages += 1;
                counted.bytes += bytes;
                let id = rank.push(op);
                match mode {
                    Mode::Immediate => rank.pending(
                        (mine.r as u32, *to, *comm, *tag),
                        (*bytes >= sem.eager_bytes).then_some(id),
                    ),
                    Mode::Blocking if *bytes >= sem.eager_bytes => rank.frontier = vec![id],
                    Mode::Blocking => {}
                }
            }
            Action::Recv {
                from,
                tag,
                comm,
                mode,
                ..
            } => {
                let bytes = *recv_sizes.next().expect("a size for every receive");
                let op = Op::Recv {
                    peer: *from,
                    tag: tag_of(tags.app, *comm, *tag),
                    region: Region::scratch(0, bytes),
                    combine: false,
                };
                rank.scratch(bytes);
                let id = rank.push(op);
                match mode {
                    Mode::Immediate => rank.pending((*from, mine.r as u32, *comm, *tag), Some(id)),
                    Mode::Blocking => rank.frontier = vec![id],
                }
            }
            Action::Wait {
                src,
                dst,
                tag,
                comm,
            } => {
                if let Some(Some(id)) = rank
                    .requests
                    .get_mut(&(*src, *dst, *comm, *tag))
                    .and_then(VecDeque::pop_front)
                {
                    rank.frontier.push(id);
                }
            }
            Action::WaitAll => {
                let mut all: Vec<OpId> = rank
                    .requests
                    .drain()
                    .flat_map(|(_, q)| q.into_iter().flatten())
                    .collect();
                all.sort_unstable();
                rank.frontier.extend(all);
            }
            Action::SendRecv {
                comm,
                to,
                send_bytes,
                from,
                ..
            } => {
                let bytes = *recv_sizes.next().expect("a size for every receive");
                let t = tag_of(tags.app, *comm, 0);
                rank.scratch(*send_bytes.max(&bytes));
                counted.messages += 1;
                counted.bytes += send_bytes;
                let a = rank.push(Op::send(*to, t, Region::scratch(0, *send_bytes)));
                let b = rank.push(Op::Recv {
                    peer: *from,
                    tag: t,
                    region: Region::scratch(0, bytes),
                    combine: false,
                });
                // Its send, when eager, is done once posted.
                rank.frontier = if *send_bytes >= sem.eager_bytes {
                    vec![a, b]
                } else {
                    vec![b]
                };
            }
            Action::Call(call) => {
                let part = *my_calls.next().expect("every call counted");
                let ranks = &mine.comms[part.comm as usize];
                let (entry, first) = (rank.frontier.clone(), rank.program.len() as OpId);
                rank.embed(
                    &distinct[part.distinct],
                    part,
                    ranks,
                    tags.coll,
                    sem.eager_bytes,
                )?;
                ops.push(CallOps {
                    call: part.call,
                    first,
                    end: rank.program.len() as OpId,
                    entry,
                });
                if call.flops > 0.0 {
                    let what = format!("{}: the call", call.collective.name());
                    let seconds = call.flops / mine.speed(step.line, &what)?;
                    rank.blocking(Op::Compute { seconds });
                }
            }
        }
        if graph {
            done.push(rank.frontier.clone());
        }
    }
    Ok((rank.program, ops))
}

/// Refuses a network whose rank count is not the trace's.
pub(crate) fn check_ranks(ranks: usize, topo: &Topology) -> Result<()> {
    if topo.num_ranks() != ranks {
        return Err(fail!(Workload, Trace,
            "the trace has {ranks} ranks but topology {} has {} (place them with --map or --ranks-per-node)",
            topo.name,
            topo.num_ranks()
        ));
    }
    Ok(())
}

/// The IR tag of an application's tag on a communicator.
fn tag_of(tags: &mut FxHashMap<(u32, i64), u32>, comm: u32, tag: i64) -> u32 {
    let n = tags.len() as u32;
    *tags.entry((comm, tag)).or_insert(n)
}

/// A rank's program as it is built.
#[derive(Default)]
struct Rank {
    program: Program,
    /// What the next action waits for.
    frontier: Vec<OpId>,
    /// Pending requests by (source, destination, communicator, tag),
    /// oldest first: the op a wait on it waits for, or none for an eager
    /// isend, done once posted (SMPI's detached sends).
    requests: FxHashMap<(u32, u32, u32, i64), VecDeque<Option<OpId>>>,
}

impl Rank {
    fn push(&mut self, op: Op) -> OpId {
        self.program.push(op, &self.frontier)
    }

    /// An op the next action waits for.
    fn blocking(&mut self, op: Op) {
        let id = self.push(op);
        self.frontier = vec![id];
    }

    fn pending(&mut self, key: (u32, u32, u32, i64), id: Option<OpId>) {
        self.requests.entry(key).or_default().push_back(id);
    }

    fn scratch(&mut self, bytes: u64) {
        self.program.scratch = self.program.scratch.max(bytes);
    }

    /// The rank's program of a call (`part`: rank `part.rank` of the
    /// communicator whose world ranks are `ranks`), after the frontier; the
    /// frontier becomes its last ops (those no other op of it waits for; for
    /// an eager send among them, the ops it waits for). A
    /// call that sends as SMPI's blocking calls do sends its messages of at
    /// least `eager` bytes one after another, each waiting for the one
    /// before, and posts each receive when the one before it is done.
    fn embed(
        &mut self,
        d: &Distinct,
        part: Part,
        ranks: &[u32],
        tags: &mut CollectiveTags,
        eager: u64,
    ) -> Result<()> {
        let sub = &d.schedule.programs[part.rank as usize];
        let base = self.program.len() as OpId;
        let mut waited = vec![false; sub.len()];
        let mut deps: Vec<OpId> = Vec::new();
        let mut last_large: Option<OpId> = None;
        let mut last_recv: Option<OpId> = None;
        for (i, op) in sub.ops.iter().enumerate() {
            deps.clear();
            let own = sub.deps(i);
            if own.is_empty() {
                deps.extend_from_slice(&self.frontier);
            } else {
                for &j in own {
                    waited[j as usize] = true;
                    // SMPI's blocking calls: an eager send is done for its
                    // sender once posted, so what waits for it waits for
                    // what it waited for.
                    if d.sends != Sends::AsScheduled && is_eager(&sub.ops[j as usize], eager) {
                        for &k in self.program.deps(base as usize + j as usize) {
                            if !deps.contains(&k) {
                                deps.push(k);
                            }
                        }
                    } else {
                        deps.push(base + j);
                    }
                }
            }
            // SMPI's blocking calls: a large send after the one before it, a
            // receive after the one before it (posted only then, so under
            // rendezvous its message waits for it).
            let chain = match (d.sends, op) {
                (Sends::Blocking | Sends::BlockingSends, Op::Send { .. })
                    if !is_eager(op, eager) =>
                {
                    Some(&mut last_large)
                }
                (Sends::Blocking, Op::Recv { .. }) => Some(&mut last_recv),
                _ => None,
            };
            if let Some(&Some(prev)) = chain.as_deref() {
                if !deps.contains(&prev) {
                    deps.push(prev);
                }
            }
            let op = retag(*op, &d.route, part.comm, ranks, tags)?;
            let id = self.program.push(op, &deps);
            if let Some(slot) = chain {
                *slot = Some(id);
            }
        }
        self.program.scratch = self.program.scratch.max(sub.scratch);
        if !sub.is_empty() {
            // The rank leaves the call when its last ops are done, but an
            // eager send is done for its sender once posted (as a trace's
            // own blocking sends are): in its place, what it waited for.
            let mut exit = Vec::new();
            for i in (0..sub.len()).filter(|&i| !waited[i]) {
                let id = base + i as OpId;
                if is_eager(&sub.ops[i], eager) {
                    exit.extend_from_slice(self.program.deps(id as usize));
                } else {
                    exit.push(id);
                }
            }
            exit.sort_unstable();
            exit.dedup();
            self.frontier = exit;
        }
        Ok(())
    }
}

/// Whether `op` is a send of fewer than `eager` bytes (a call's schedule
/// counts bytes): done for its sender once posted, as SMPI's detached
/// sends are.
fn is_eager(op: &Op, eager: u64) -> bool {
    matches!(op, Op::Send { region, .. } if region.count < eager)
}

/// A call's op in the workload: its peer the world rank it is (the
/// communicator's world ranks are `ranks`), its tag among the collectives'
/// tags of the communicator, its route renumbered.
fn retag(op: Op, route: &[u32], comm: u32, ranks: &[u32], tags: &mut CollectiveTags) -> Result<Op> {
    Ok(match op {
        Op::Send {
            peer,
            tag,
            region,
            route: k,
        } => Op::Send {
            peer: ranks[peer as usize],
            tag: tags.tag(comm, tag)?,
            region,
            route: route[k as usize],
        },
        Op::Recv {
            peer,
            tag,
            region,
            combine,
        } => Op::Recv {
            peer: ranks[peer as usize],
            tag: tags.tag(comm, tag)?,
            region,
            combine,
        },
        other => other,
    })
}

/// Puts every distinct call's offsets, then its paths, into the workload's
/// lists and says where each of its routes went.
fn merge_routes(s: &mut Schedule, distinct: &mut [Distinct]) {
    let mut offset_at = Vec::with_capacity(distinct.len());
    for d in distinct.iter() {
        offset_at.push(s.offsets.len() as u32);
        s.offsets.extend(d.schedule.offsets.iter().cloned());
    }
    let offsets = s.offsets.len() as u32;
    for (d, &o) in distinct.iter_mut().zip(&offset_at) {
        let path_at = s.paths.len() as u32;
        s.paths.extend(d.schedule.paths.iter().cloned());
        let own = d.schedule.offsets.len() as u32;
        let routes = own + d.schedule.paths.len() as u32;
        d.route = (0..=routes)
            .map(|k| match k {
                0 => 0,
                k if k <= own => o + k,
                k => offsets + path_at + (k - own),
            })
            .collect();
    }
}

/// The size of every receive of each rank, in order: the size of the send
/// it matches (by source, destination, tag and communicator, in order).
fn receive_sizes(w: &Workload) -> Result<Vec<Vec<u64>>> {
    type Key = (u32, u32, u32, i64);
    let mut sent: FxHashMap<Key, VecDeque<(u64, usize, u64)>> = FxHashMap::default();
    for (r, steps) in w.programs.iter().enumerate() {
        for step in steps {
            match step.action {
                Action::Send {
                    to,
                    tag,
                    comm,
                    bytes,
                    ..
                } => sent
                    .entry((r as u32, to, comm, tag))
                    .or_default()
                    .push_back((bytes, r, step.line)),
                Action::SendRecv {
                    comm,
                    to,
                    send_bytes,
                    ..
                } => sent
                    .entry((r as u32, to, comm, 0))
                    .or_default()
                    .push_back((send_bytes, r, step.line)),
                _ => {}
            }
        }
    }
    let mut sizes = Vec::with_capacity(w.ranks());
    for (r, steps) in w.programs.iter().enumerate() {
        let mut mine = Vec::new();
        for step in steps {
            let (from, tag, comm) = match step.action {
                Action::Recv {
                    from, tag, comm, ..
                } => (from, tag, comm),
                Action::SendRecv { from, comm, .. } => (from, 0, comm),
                _ => continue,
            };
            match sent
                .get_mut(&(from, r as u32, comm, tag))
                .and_then(VecDeque::pop_front)
            {
                Some((bytes, ..)) => mine.push(bytes),
                None => {
                    return Err(Error::parse(
                        &w.files[r],
                        step.line,
                        format!(
                            "rank {r} receives from rank {from} with tag {tag}{}, but rank {from} sends it no such message (it would wait forever)",
                            on_comm(w, comm)
                        ),
                    ))
                }
            }
        }
        sizes.push(mine);
    }
    let mut left: Vec<(usize, u64, Key)> = sent
        .into_iter()
        .filter_map(|(k, q)| q.front().map(|&(_, r, line)| (r, line, k)))
        .collect();
    left.sort_unstable();
    if let Some(&(r, line, (_, to, comm, tag))) = left.first() {
        return Err(Error::parse(
            &w.files[r],
            line,
            format!(
                "rank {r} sends to rank {to} with tag {tag}{}, but rank {to} never receives it",
                on_comm(w, comm)
            ),
        ));
    }
    Ok(sizes)
}

/// " on the communicator of ranks [...]", or nothing for the world.
fn on_comm(w: &Workload, comm: u32) -> String {
    if comm == 0 {
        return String::new();
    }
    let ranks = w.comm(comm);
    let shown: Vec<String> = ranks.iter().take(8).map(u32::to_string).collect();
    let more = if ranks.len() > 8 { ", ..." } else { "" };
    format!(
        " on the communicator of world ranks [{}{more}]",
        shown.join(", ")
    )
}

/// Each rank's calls in order, the distinct calls' schedules (built and
/// verified once each), and the distinct calls' summaries by communicator.
/// The k-th call of every rank of a communicator on it is one call, and
/// they must agree on its collective, root and size.
fn calls<'c>(w: &Workload, topo: &Topology, choose: &dyn Fn(u32) -> &'c Choice) -> Result<Matched> {
    let p = w.ranks();
    // Each rank's calls, and their indices by communicator.
    let mut per_rank: Vec<Vec<(&Call, u64)>> = Vec::with_capacity(p);
    let mut by_comm: Vec<FxHashMap<u32, Vec<usize>>> = Vec::with_capacity(p);
    for steps in &w.programs {
        let mine: Vec<(&Call, u64)> = steps
            .iter()
            .filter_map(|s| match &s.action {
                Action::Call(c) => Some((c, s.line)),
                _ => None,
            })
            .collect();
        let mut on: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
        for (i, (c, _)) in mine.iter().enumerate() {
            on.entry(c.comm).or_default().push(i);
        }
        per_rank.push(mine);
        by_comm.push(on);
    }
    let none = Vec::new();
    let mut index: FxHashMap<CallKey, usize> = FxHashMap::default();
    let mut summaries: FxHashMap<(usize, u32), usize> = FxHashMap::default();
    let mut distinct: Vec<Distinct> = Vec::new();
    let mut summary: Vec<CallSummary> = Vec::new();
    let mut call_row: Vec<usize> = Vec::new();
    let mut row_distinct: Vec<usize> = Vec::new();
    let mut of_rank: Vec<Vec<Option<Part>>> =
        per_rank.iter().map(|m| vec![None; m.len()]).collect();
    for (c, members) in w.comms.iter().enumerate() {
        let on: Vec<&Vec<usize>> = members
            .iter()
            .map(|&m| by_comm[m as usize].get(&(c as u32)).unwrap_or(&none))
            .collect();
        agree_count(w, members, &on, &per_rank)?;
        let world = members.len() == p && members.iter().enumerate().all(|(i, &m)| i == m as usize);
        let placed = world || w.worlds.contains(&(c as u32));
        for k in 0..on.first().map_or(0, |o| o.len()) {
            let m0 = members[0] as usize;
            let (first, first_line) = per_rank[m0][on[0][k]];
            for (i, &m) in members.iter().enumerate().skip(1) {
                let (call, line) = per_rank[m as usize][on[i][k]];
                let v = first.collective == Collective::Alltoallv;
                if call.collective != first.collective
                    || call.rooted != first.rooted
                    || (!v && call.bytes != first.bytes)
                {
                    return Err(Error::parse(
                        &w.files[m as usize],
                        line,
                        format!(
                            "collective call {}{}: rank {m} calls {} where rank {m0} ({}:{first_line}) calls {}",
                            k + 1,
                            on_comm(w, c as u32),
                            describe(call),
                            w.files[m0],
                            describe(first)
                        ),
                    ));
                }
            }
            let counts: Vec<u64> = match first.collective {
                Collective::Alltoallv => members
                    .iter()
                    .zip(&on)
                    .flat_map(|(&m, o)| per_rank[m as usize][o[k]].0.counts.iter().copied())
                    .collect(),
                _ => first.counts.clone(),
            };
            // SMPI's gatherv and scatterv have no algorithms to choose from:
            // every message posted at once, the linear alltoallv's.
            let served = match first.rooted {
                Some(_) => Ok(Served {
                    picked: Picked {
                        algorithm: &algorithms::alltoallv::linear::ALGORITHM,
                        segment_bytes: None,
                    },
                    sends: Sends::AsScheduled,
                }),
                None => choose(c as u32).serve(first.collective, first.bytes, members.len(), world),
            }
            .map_err(|e| {
                Error::parse(
                    &w.files[m0],
                    first_line,
                    format!("collective call {}{}: {e}", k + 1, on_comm(w, c as u32)),
                )
            })?;
            let key = CallKey {
                kind: first.collective.kind() as usize,
                root: first.collective.root().unwrap_or(0),
                bytes: first.bytes,
                counts,
                alg: served.picked.algorithm.name,
                segment_bytes: served.picked.segment_bytes,
                rooted: first.rooted,
                on: match (world, placed) {
                    (true, _) => On::World,
                    (false, true) => On::Placed(members.clone()),
                    (false, false) => On::Ranks(members.len()),
                },
            };
            let at = match index.get(&key) {
                Some(&i) => i,
                None => {
                    // A communicator of other ranks than the world's runs a
                    // rank-based schedule, as the node-aware compositions'
                    // phases do.
                    let job;
                    let on_topo = match &key.on {
                        On::World => Some(topo),
                        On::Placed(ranks) => {
                            job = topo.with_ranks(ranks);
                            Some(&job)
                        }
                        On::Ranks(_) => None,
                    };
                    let schedule =
                        schedule_of(first, &key.counts, members.len(), on_topo, served.picked)
                            .map_err(|e| {
                                Error::parse(
                                    &w.files[m0],
                                    first_line,
                                    format!(
                                        "collective call {}{} ({}): {e}",
                                        k + 1,
                                        on_comm(w, c as u32),
                                        describe(first)
                                    ),
                                )
                            })?;
                    distinct.push(Distinct {
                        schedule,
                        sends: served.sends,
                        route: Vec::new(),
                    });
                    index.insert(key, distinct.len() - 1);
                    distinct.len() - 1
                }
            };
            let row = *summaries.entry((at, c as u32)).or_insert_with(|| {
                summary.push(CallSummary {
                    collective: first.collective,
                    bytes: first.bytes,
                    algorithm: served.picked.algorithm.name,
                    segment_bytes: served.picked.segment_bytes,
                    calls: 0,
                    comm: c as u32,
                    comm_ranks: (c != 0).then(|| members.clone()),
                    rooted: first.rooted,
                });
                row_distinct.push(at);
                summary.len() - 1
            });
            summary[row].calls += 1;
            let call = call_row.len() as u32;
            call_row.push(row);
            for (i, &m) in members.iter().enumerate() {
                of_rank[m as usize][on[i][k]] = Some(Part {
                    distinct: at,
                    comm: c as u32,
                    rank: i as u32,
                    call,
                });
            }
        }
    }
    let of_rank = of_rank
        .into_iter()
        .map(|m| {
            m.into_iter()
                .map(|p| p.expect("every call matched"))
                .collect()
        })
        .collect();
    Ok(Matched {
        parts: of_rank,
        distinct,
        summary,
        call_row,
        row_distinct,
    })
}

/// The calls of a workload matched across the ranks of each communicator.
struct Matched {
    /// Each rank's calls, in order.
    parts: Vec<Vec<Part>>,
    /// The distinct calls' schedules.
    distinct: Vec<Distinct>,
    /// The distinct calls by communicator.
    summary: Vec<CallSummary>,
    /// Each call's row of `summary`, and each row's distinct schedule.
    call_row: Vec<usize>,
    row_distinct: Vec<usize>,
}

/// What makes two calls one distinct schedule: the collective, its root,
/// size and counts, the algorithm, and what it runs on.
#[derive(Clone, PartialEq, Eq, Hash)]
struct CallKey {
    kind: usize,
    root: u32,
    bytes: u64,
    counts: Vec<u64>,
    /// The algorithm, by its name (unique within its collective).
    alg: &'static str,
    segment_bytes: Option<u64>,
    rooted: Option<Rooted>,
    on: On,
}

/// What a call's schedule is built on.
#[derive(Clone, PartialEq, Eq, Hash)]
enum On {
    /// The world's ranks: the network as placed.
    World,
    /// A job's world among others': the network with these ranks placed.
    Placed(Vec<u32>),
    /// Any other communicator, of this many ranks: no network (rank-based).
    Ranks(usize),
}

/// Refuses a communicator whose ranks make different numbers of calls on it.
fn agree_count(
    w: &Workload,
    members: &[u32],
    on: &[&Vec<usize>],
    per_rank: &[Vec<(&Call, u64)>],
) -> Result<()> {
    let n = on[0].len();
    for (i, mine) in on.iter().enumerate() {
        if mine.len() != n {
            let (short, long) = if mine.len() < n { (i, 0) } else { (0, i) };
            let k = on[short].len();
            let (s, l) = (members[short] as usize, members[long] as usize);
            let (c, line) = per_rank[l][on[long][k]];
            return Err(Error::parse(
                &w.files[l],
                line,
                format!(
                    "rank {l}'s collective call {} ({}){} is never made by rank {s}, which makes {k} (the ranks would wait forever)",
                    k + 1,
                    c.collective.name(),
                    on_comm(w, c.comm)
                ),
            ));
        }
    }
    Ok(())
}

fn describe(c: &Call) -> String {
    if let Some(r) = c.rooted {
        return format!("{} of {} bytes from root {}", r.name(), c.bytes, r.root());
    }
    match c.collective.root() {
        Some(root) => format!(
            "{} of {} bytes from root {root}",
            c.collective.name(),
            c.bytes
        ),
        None => format!("{} of {} bytes", c.collective.name(), c.bytes),
    }
}

/// A call's schedule on `p` ranks by `alg`, verified (on `topo`, or
/// rank-based without one).
fn schedule_of(
    c: &Call,
    counts: &[u64],
    p: usize,
    topo: Option<&Topology>,
    picked: Picked,
) -> Result<Schedule> {
    let mut req = Request::new(c.collective, p, c.bytes, Dtype::U8, ReduceOp::Sum, topo)?;
    req.segment_bytes = picked.segment_bytes;
    match c.collective {
        Collective::Alltoallv => {
            req = req.with_sizes(Arc::new(Sizes::per_pair(p, counts.to_vec())?))?;
        }
        Collective::Allgatherv => {
            req = req.with_sizes(Arc::new(Sizes::per_rank(counts.to_vec())?))?;
        }
        _ => {}
    }
    let s = algorithms::build(picked.algorithm, &req)?;
    topocoll_schedule::verify(&s)?;
    if s.programs.iter().flat_map(|prog| prog.ops.iter()).any(
        |op| matches!(op, Op::Send { tag, .. } | Op::Recv { tag, .. } if *tag >= COLLECTIVE_TAGS),
    ) {
        return Err(fail!(
            Workload,
            Trace,
            "its schedule uses tags of 2^31 and more"
        ));
    }
    Ok(s)
}
