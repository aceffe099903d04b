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
//! Messages match by (source, destination, tag) in order, as MPI's do on
//! one communicator; a receive takes the size of the send it matches.
//! Collective messages are tagged apart from the application's.

use crate::action::{Action, Call, Mode, Step, Workload};
use crate::choice::{Choice, Sends};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use topocoll_algorithms::{self as algorithms, Request};
use topocoll_base::error::{Error, Result};
use topocoll_base::invalid;
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

/// A workload's schedule and what its calls ran.
pub struct Built {
    pub schedule: Schedule,
    /// Each distinct call (collective, bytes, algorithm) and how often it ran.
    pub calls: Vec<CallSummary>,
    /// Point-to-point messages.
    pub messages: u64,
    /// Bytes of those messages.
    pub message_bytes: u64,
}

/// One distinct collective call of a workload.
#[derive(Clone, Debug)]
pub struct CallSummary {
    pub collective: Collective,
    pub bytes: u64,
    pub algorithm: &'static str,
    pub calls: u64,
}

/// One distinct call's schedule, and where its routes go in the workload's.
struct Distinct {
    schedule: Schedule,
    sends: Sends,
    summary: CallSummary,
    /// Route k of the call is route `route[k]` of the workload.
    route: Vec<u32>,
}

/// Builds the workload's schedule on `topo` (whose rank count must be the
/// workload's), each collective served as `choice` says.
pub fn build(w: &Workload, topo: &Topology, choice: &Choice, sem: &Semantics) -> Result<Built> {
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
    let (calls, mut distinct) = calls(w, topo, choice)?;
    let mut s = Schedule::new(
        Collective::Barrier,
        p,
        0,
        Dtype::U8,
        ReduceOp::Sum,
        "workload",
    );
    merge_routes(&mut s, &mut distinct);
    let mut tags: FxHashMap<i64, u32> = FxHashMap::default();
    let mut counted = Counted::default();
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
        };
        s.programs[r] = program(&mine, steps, &distinct, sem, &mut tags, &mut counted)?;
    }
    if tags.len() as u64 >= COLLECTIVE_TAGS as u64 {
        return Err(invalid!("the trace uses more than 2^31 distinct tags"));
    }
    let summary = distinct.into_iter().map(|d| d.summary).collect();
    Ok(Built {
        schedule: s,
        calls: summary,
        messages: counted.messages,
        message_bytes: counted.bytes,
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
    /// Its collective calls, as indices into the distinct calls.
    calls: &'a [usize],
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
    tags: &mut FxHashMap<i64, u32>,
    counted: &mut Counted,
) -> Result<Program> {
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
                bytes,
                mode,
            } => {
                let op = Op::send(*to, tag_of(tags, *tag), Region::scratch(0, *bytes));
                rank.scratch(*bytes);
                counted.messages += 1;
                counted.bytes += bytes;
                let id = rank.push(op);
                match mode {
                    Mode::Immediate => rank.pending(mine.r as u32, *to, *tag, id),
                    Mode::Blocking if *bytes >= sem.eager_bytes => rank.frontier = vec![id],
                    Mode::Blocking => {}
                }
            }
            Action::Recv {
                from, tag, mode, ..
            } => {
                let bytes = *recv_sizes.next().expect("a size for every receive");
                let op = Op::Recv {
                    peer: *from,
                    tag: tag_of(tags, *tag),
                    region: Region::scratch(0, bytes),
                    combine: false,
                };
                rank.scratch(bytes);
                let id = rank.push(op);
                match mode {
                    Mode::Immediate => rank.pending(*from, mine.r as u32, *tag, id),
                    Mode::Blocking => rank.frontier = vec![id],
                }
            }
            Action::Wait { src, dst, tag } => {
                if let Some(id) = rank
                    .requests
                    .get_mut(&(*src, *dst, *tag))
                    .and_then(VecDeque::pop_front)
                {
                    rank.frontier.push(id);
                }
            }
            Action::WaitAll => {
                let mut all: Vec<OpId> = rank.requests.drain().flat_map(|(_, q)| q).collect();
                all.sort_unstable();
                rank.frontier.extend(all);
            }
            Action::SendRecv {
                to,
                send_bytes,
                from,
                ..
            } => {
                let bytes = *recv_sizes.next().expect("a size for every receive");
                let t = tag_of(tags, 0);
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
                rank.frontier = vec![a, b];
            }
            Action::Call(call) => {
                let k = *my_calls.next().expect("every call counted");
                rank.embed(&distinct[k], mine.r, sem.eager_bytes);
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
    Ok(rank.program)
}

/// Refuses a network whose rank count is not the trace's.
pub(crate) fn check_ranks(ranks: usize, topo: &Topology) -> Result<()> {
    if topo.num_ranks() != ranks {
        return Err(invalid!(
            "the trace has {ranks} ranks but topology {} has {} (place them with --map or --ranks-per-node)",
            topo.name,
            topo.num_ranks()
        ));
    }
    Ok(())
}

/// The IR tag of an application's tag.
fn tag_of(tags: &mut FxHashMap<i64, u32>, tag: i64) -> u32 {
    let n = tags.len() as u32;
    *tags.entry(tag).or_insert(n)
}

/// A rank's program as it is built.
#[derive(Default)]
struct Rank {
    program: Program,
    /// What the next action waits for.
    frontier: Vec<OpId>,
    /// Pending requests by (source, destination, tag), oldest first.
    requests: FxHashMap<(u32, u32, i64), VecDeque<OpId>>,
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

    fn pending(&mut self, src: u32, dst: u32, tag: i64, id: OpId) {
        self.requests
            .entry((src, dst, tag))
            .or_default()
            .push_back(id);
    }

    fn scratch(&mut self, bytes: u64) {
        self.program.scratch = self.program.scratch.max(bytes);
    }

    /// Rank `r`'s program of a call, after the frontier; the frontier
    /// becomes its last ops (those no other op of it waits for). A call
    /// that sends as SMPI's blocking calls do sends its messages of at least
    /// `eager` bytes one after another, each waiting for the one before, and
    /// posts each receive when the one before it is done.
    fn embed(&mut self, d: &Distinct, r: usize, eager: u64) {
        let sub = &d.schedule.programs[r];
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
                    deps.push(base + j);
                }
            }
            // SMPI's blocking calls: a large send after the one before it, a
            // receive after the one before it (posted only then, so under
            // rendezvous its message waits for it).
            let chain = match (d.sends, op) {
                (Sends::Blocking, Op::Send { region, .. }) if region.count >= eager => {
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
            let id = self.program.push(retag(*op, &d.route), &deps);
            if let Some(slot) = chain {
                *slot = Some(id);
            }
        }
        self.program.scratch = self.program.scratch.max(sub.scratch);
        if !sub.is_empty() {
            self.frontier = (0..sub.len())
                .filter(|&i| !waited[i])
                .map(|i| base + i as OpId)
                .collect();
        }
    }
}

/// A call's op in the workload: its tag among the collectives' tags, its
/// route renumbered.
fn retag(op: Op, route: &[u32]) -> Op {
    match op {
        Op::Send {
            peer,
            tag,
            region,
            route: k,
        } => Op::Send {
            peer,
            tag: COLLECTIVE_TAGS | tag,
            region,
            route: route[k as usize],
        },
        Op::Recv {
            peer,
            tag,
            region,
            combine,
        } => Op::Recv {
            peer,
            tag: COLLECTIVE_TAGS | tag,
            region,
            combine,
        },
        other => other,
    }
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
/// it matches (by source, destination and tag, in order).
fn receive_sizes(w: &Workload) -> Result<Vec<Vec<u64>>> {
    type Key = (u32, u32, i64);
    let mut sent: FxHashMap<Key, VecDeque<(u64, usize, u64)>> = FxHashMap::default();
    for (r, steps) in w.programs.iter().enumerate() {
        for step in steps {
            match step.action {
                Action::Send { to, tag, bytes, .. } => sent
                    .entry((r as u32, to, tag))
                    .or_default()
                    .push_back((bytes, r, step.line)),
                Action::SendRecv { to, send_bytes, .. } => sent
                    .entry((r as u32, to, 0))
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
            let (from, tag) = match step.action {
                Action::Recv { from, tag, .. } => (from, tag),
                Action::SendRecv { from, .. } => (from, 0),
                _ => continue,
            };
            match sent.get_mut(&(from, r as u32, tag)).and_then(VecDeque::pop_front) {
                Some((bytes, ..)) => mine.push(bytes),
                None => {
                    return Err(Error::parse(
                        &w.files[r],
                        step.line,
                        format!(
                            "rank {r} receives from rank {from} with tag {tag}, but rank {from} sends it no such message (it would wait forever)"
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
    if let Some(&(r, line, (_, to, tag))) = left.first() {
        return Err(Error::parse(
            &w.files[r],
            line,
            format!("rank {r} sends to rank {to} with tag {tag}, but rank {to} never receives it"),
        ));
    }
    Ok(sizes)
}

/// Each rank's calls as indices into the distinct calls, and the distinct
/// calls' schedules, built and verified once each.
fn calls(
    w: &Workload,
    topo: &Topology,
    choice: &Choice,
) -> Result<(Vec<Vec<usize>>, Vec<Distinct>)> {
    let p = w.ranks();
    let per_rank: Vec<Vec<(&Call, u64)>> = w
        .programs
        .iter()
        .map(|steps| {
            steps
                .iter()
                .filter_map(|s| match &s.action {
                    Action::Call(c) => Some((c, s.line)),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let n = per_rank[0].len();
    for (r, mine) in per_rank.iter().enumerate() {
        if mine.len() != n {
            let (short, long) = if mine.len() < n { (r, 0) } else { (0, r) };
            let k = per_rank[short].len();
            let (c, line) = per_rank[long][k];
            return Err(Error::parse(
                &w.files[long],
                line,
                format!(
                    "rank {long}'s collective call {} ({}) is never made by rank {short}, which makes {k} (the ranks would wait forever)",
                    k + 1,
                    c.collective.name()
                ),
            ));
        }
    }
    let mut index: FxHashMap<(usize, u32, u64, Vec<u64>, usize), usize> = FxHashMap::default();
    let mut distinct: Vec<Distinct> = Vec::new();
    let mut of_rank: Vec<Vec<usize>> = (0..p).map(|_| Vec::with_capacity(n)).collect();
    for k in 0..n {
        let (first, first_line) = per_rank[0][k];
        for (r, mine) in per_rank.iter().enumerate().skip(1) {
            let (c, line) = mine[k];
            let v = first.collective == Collective::Alltoallv;
            if c.collective != first.collective || (!v && c.bytes != first.bytes) {
                return Err(Error::parse(
                    &w.files[r],
                    line,
                    format!(
                        "collective call {}: rank {r} calls {} where rank 0 ({}:{first_line}) calls {}",
                        k + 1,
                        describe(c),
                        w.files[0],
                        describe(first)
                    ),
                ));
            }
        }
        let counts: Vec<u64> = match first.collective {
            Collective::Alltoallv => per_rank
                .iter()
                .flat_map(|m| m[k].0.counts.iter().copied())
                .collect(),
            _ => first.counts.clone(),
        };
        let (alg, sends) = choice.entry(first.collective.kind())?;
        let key = (
            first.collective.kind() as usize,
            first.collective.root().unwrap_or(0),
            first.bytes,
            counts,
            alg as *const _ as usize,
        );
        let at = match index.get(&key) {
            Some(&i) => i,
            None => {
                let schedule = schedule_of(first, &key.3, p, topo, alg).map_err(|e| {
                    Error::parse(
                        &w.files[0],
                        first_line,
                        format!("collective call {} ({}): {e}", k + 1, describe(first)),
                    )
                })?;
                distinct.push(Distinct {
                    schedule,
                    sends,
                    summary: CallSummary {
                        collective: first.collective,
                        bytes: first.bytes,
                        algorithm: alg.name,
                        calls: 0,
                    },
                    route: Vec::new(),
                });
                index.insert(key, distinct.len() - 1);
                distinct.len() - 1
            }
        };
        distinct[at].summary.calls += 1;
        for mine in of_rank.iter_mut() {
            mine.push(at);
        }
    }
    Ok((of_rank, distinct))
}

fn describe(c: &Call) -> String {
    match c.collective.root() {
        Some(root) => format!(
            "{} of {} bytes from root {root}",
            c.collective.name(),
            c.bytes
        ),
        None => format!("{} of {} bytes", c.collective.name(), c.bytes),
    }
}

/// A call's schedule on `p` ranks by `alg`, verified.
fn schedule_of(
    c: &Call,
    counts: &[u64],
    p: usize,
    topo: &Topology,
    alg: &'static algorithms::Algorithm,
) -> Result<Schedule> {
    let mut req = Request::new(
        c.collective,
        p,
        c.bytes,
        Dtype::U8,
        ReduceOp::Sum,
        Some(topo),
    )?;
    match c.collective {
        Collective::Alltoallv => {
            req = req.with_sizes(Arc::new(Sizes::per_pair(p, counts.to_vec())?))?;
        }
        Collective::Allgatherv => {
            req = req.with_sizes(Arc::new(Sizes::per_rank(counts.to_vec())?))?;
        }
        _ => {}
    }
    let s = algorithms::build(alg, &req)?;
    topocoll_schedule::verify(&s)?;
    if s.programs.iter().flat_map(|prog| prog.ops.iter()).any(
        |op| matches!(op, Op::Send { tag, .. } | Op::Recv { tag, .. } if *tag >= COLLECTIVE_TAGS),
    ) {
        return Err(invalid!("its schedule uses tags of 2^31 and more"));
    }
    Ok(s)
}
