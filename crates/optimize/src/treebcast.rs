//! Optimal broadcast on tree-structured networks (Hourai, Nishida and
//! Oyanagi, "Optimal Broadcast Scheduling on Tree-structured Networks",
//! IPSJ Transactions on Advanced Computing Systems, 2004).
//!
//! The model (docs/treebcast.md): hosts and switches joined by a tree whose
//! edges have a bandwidth and a latency per direction, full duplex (two
//! resources) or half duplex (one). A transfer of D bytes from s to r takes
//! the unique path h_1 … h_n at its bottleneck rate b and books hop i at
//! rate b during [t0 + o_i, t0 + o_i + D/b), o_i the latencies up to hop i
//! (`sim::calendar`); r holds the message at t0 + o_n + D/b. A schedule is
//! a sequence of (sender, receiver) pairs, each starting at the earliest t0
//! at or after its sender's receipt and the previous transfer's start at
//! which its bookings fit. The optimum is the least time at which every
//! host holds the message, over all sequences (NP-hard: 3-PARTITION).
//!
//! The solver is a depth-first branch and bound over those sequences,
//! transfers in start order, with:
//! - **RCut**: receivers in one orbit of the tree's automorphisms that fix
//!   every holder are interchangeable (the state maps onto itself), so one
//!   per orbit is tried (`iso`, holders labelled apart).
//! - **SCut**: senders in one orbit of the automorphisms that fix every
//!   non-holder and map the state onto itself (holders labelled by their
//!   receipt time, edges by their live bookings) are interchangeable.
//! - **Bounds** (`--no-bound` drops all but the running makespan): every
//!   non-holder's earliest receipt without contention; and, for the whole
//!   tree and for every subtree that holds nothing yet, a count of how fast
//!   holders can multiply: a host's j-th transfer cannot arrive before j·D
//!   bytes have left it through its links, and every transfer into a
//!   subtree crosses the link into it.
//! - **Memo**: a state (holders, receipt times, the last start, bookings
//!   still live) explored once need not be explored again: everything below
//!   it was found or shown no better than the incumbent, which only falls.
//!
//! Every pruning keeps the optimum exact; the test suite checks each
//! against an independent exhaustive search. A heuristic (earliest finish
//! first, and farthest receiver first) gives the first incumbent and, on
//! trees too large to solve, the answer, with its gap to the lower bound.

use super::iso::{Labeller, Rooted};
use crate::error::fail;
use crate::error::Result;
use std::hash::{Hash, Hasher};
use std::time::Instant;
use topocoll_algorithms::{bcast, Algorithm, Request};
use topocoll_base::param;
use topocoll_schedule::{Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll_sim::calendar::{Calendar, Hop};
use topocoll_sim::{simulate, Sharing, SimConfig};
use topocoll_topology::{Graph, Kind, LinkId, NodeId, NodeKind, Topology};

/// Most hosts the exact search takes (holders are a 64-bit set); larger
/// trees get the heuristic and its gap to the lower bound.
pub const MAX_EXACT_HOSTS: usize = 64;

/// Which prunings the search uses.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub rcut: bool,
    pub scut: bool,
    pub bound: bool,
    pub memo: bool,
    /// Stop after this long with the best schedule found (not proven).
    pub time_limit_s: f64,
    /// Stop at this instant instead (a caller whose limit also covers
    /// building the problem: `optimize --time-limit`).
    pub deadline: Option<Instant>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rcut: true,
            scut: true,
            bound: true,
            memo: true,
            time_limit_s: 60.0,
            deadline: None,
        }
    }
}

/// Bounds on the work of building a [`Problem`], checked before the work
/// they bound: its tables (a path between every two hosts, each a list of
/// hops: hosts² paths, and as many hops as the pairs' distances add up to)
/// are counted from the tree before any is allocated, and the building
/// stops at the deadline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub deadline: Option<Instant>,
    /// Most bytes the problem's tables may take.
    pub memory_bytes: Option<u64>,
}

impl Limits {
    /// Half the memory available (the search and its memo need the rest),
    /// and `deadline`.
    pub fn with_deadline(deadline: Instant) -> Limits {
        Limits {
            deadline: Some(deadline),
            memory_bytes: topocoll_base::memory::available().map(|m| m / 2),
        }
    }

    fn check_time(&self, doing: &str) -> Result<()> {
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(param!(
                "time-limit",
                " ran out while {doing}, before the search started; give more time"
            )),
            _ => Ok(()),
        }
    }
}

/// One transfer of a broadcast schedule (ranks; seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    pub from: usize,
    pub to: usize,
    pub start_s: f64,
    pub end_s: f64,
}

/// A broadcast schedule and how it was found.
#[derive(Clone, Debug)]
pub struct Solution {
    /// When the last host holds the message.
    pub time_s: f64,
    /// In start order.
    pub transfers: Vec<Transfer>,
    /// The search finished: no schedule is faster.
    pub proven_optimal: bool,
    pub nodes_explored: u64,
    /// The search's wall time (the lower bound, the heuristic and the
    /// branch and bound; [`crate::timed`]), not building the problem.
    pub solve_s: f64,
    /// The lower bound before any transfer.
    pub lower_bound_s: f64,
    /// The heuristic's time (the first incumbent).
    pub heuristic_s: f64,
}

/// A transfer's path between two hosts.
#[derive(Clone, Debug)]
struct Path {
    hops: Vec<Hop>,
    rate: f64,
    /// D / rate.
    dur: f64,
    /// Latency to the receiver plus `dur`: the time without contention.
    total: f64,
}

/// A subtree behind one directed edge: every transfer into it from outside
/// crosses that edge's resource.
#[derive(Clone, Debug)]
struct Cut {
    link: LinkId,
    /// The node at the far end of the edge.
    head: NodeId,
    hosts: Vec<u32>,
    /// The best case of its hosts handing the message on.
    inside: Producer,
}

/// A subtree that sends out through one link: every transfer from a host
/// inside to a host outside crosses that link (`out`: its bandwidth, the
/// least latency to it, the least time of such a transfer).
#[derive(Clone, Debug)]
struct Unit {
    hosts: Vec<u32>,
    out: Producer,
    /// The least time of any transfer into it from outside.
    in_total: f64,
}

/// A broadcast problem on a tree network.
pub struct Problem {
    pub hosts: usize,
    pub root: usize,
    /// The hosts that hold the message at time 0: the root, or several for
    /// the many-source form of the paper's NP-hardness reduction.
    pub sources: Vec<usize>,
    pub size_bytes: f64,
    /// Host names, by rank.
    pub names: Vec<String>,
    capacity: Vec<f64>,
    /// `paths[s * hosts + r]`.
    paths: Vec<Path>,
    /// Summed latency from each host to each node (`lat_to[s * nodes + v]`).
    lat_to: Vec<f64>,
    nodes: usize,
    /// Per host: how fast it can hand the message on.
    host: Vec<Producer>,
    /// The best of those over all hosts: how a new holder multiplies at best.
    best_host: Producer,
    cuts: Vec<Cut>,
    /// Partitions of the hosts into subtrees, one per level above the
    /// hosts (SMP nodes, then clusters, ...): each subtree must be entered
    /// once, and a subtree sends out no faster than its link out.
    levels: Vec<Vec<Unit>>,
    /// The tree rooted at its centre, each node's host (or none), and the
    /// links to and from each node's parent (for SCut's labels).
    rooted: Rooted,
    node_host: Vec<Option<u32>>,
    host_node: Vec<NodeId>,
    up_down: Vec<Option<(LinkId, LinkId)>>,
}

impl Problem {
    /// The broadcast of `size_bytes` from rank `root` on a tree topology.
    pub fn new(topo: &Topology, root: usize, size_bytes: u64) -> Result<Problem> {
        Problem::with_sources(topo, &[root], size_bytes)
    }

    /// The same, with every rank in `sources` holding the message at time 0
    /// (the first counts as the root).
    pub fn with_sources(topo: &Topology, sources: &[usize], size_bytes: u64) -> Result<Problem> {
        Problem::within(topo, sources, size_bytes, &Limits::default())
    }

    /// The bytes a problem's tables take on `topo`, counted from the tree
    /// alone: the paths between every two hosts with their hops, each
    /// host's latency to each node, and the hosts behind each edge (for
    /// the bounds). The count saturates rather than overflow.
    pub fn estimate_bytes(topo: &Topology) -> Result<u64> {
        let g = tree_network(topo)?;
        let hosts = topo.num_ranks() as u64;
        let nodes = g.num_nodes() as u64;
        // Hosts on each side of every edge: a path between two hosts
        // crosses the edge once per pair split by it, each way.
        let mut below = vec![0u64; g.num_nodes()];
        let mut order = Vec::with_capacity(g.num_nodes());
        let mut parent = vec![u32::MAX; g.num_nodes()];
        let mut stack = vec![0 as NodeId];
        parent[0] = 0;
        while let Some(v) = stack.pop() {
            order.push(v);
            for &(u, _) in g.neighbours(v) {
                if parent[u as usize] == u32::MAX {
                    parent[u as usize] = v;
                    stack.push(u);
                }
            }
        }
        let mut hops: u64 = 0;
        let mut sides: u64 = 0;
        for &v in order.iter().rev() {
            if g.kinds[v as usize] == NodeKind::Host {
                below[v as usize] += 1;
            }
            if v != 0 {
                let b = below[v as usize];
                below[parent[v as usize] as usize] += b;
                hops = hops.saturating_add(
                    2u64.saturating_mul(b)
                        .saturating_mul(hosts.saturating_sub(b)),
                );
                sides = sides.saturating_add(hosts);
            }
        }
        let path = std::mem::size_of::<Path>() as u64;
        let hop = std::mem::size_of::<Hop>() as u64;
        Ok(hosts
            .saturating_mul(hosts)
            .saturating_mul(path)
            .saturating_add(hops.saturating_mul(hop))
            .saturating_add(hosts.saturating_mul(nodes).saturating_mul(8))
            .saturating_add(sides.saturating_mul(4)))
    }

    /// [`Problem::with_sources`] within `limits`: refused before anything
    /// is allocated when its tables would take more than the memory
    /// allowed, and stopped when the deadline passes.
    pub fn within(
        topo: &Topology,
        sources: &[usize],
        size_bytes: u64,
        limits: &Limits,
    ) -> Result<Problem> {
        if let Some(most) = limits.memory_bytes {
            let need = Problem::estimate_bytes(topo)?;
            if need > most {
                return Err(fail!(Optimize, Problem,
                    "{}: the optimal broadcast's tables for {} hosts need {:.1} GiB, more than the {:.1} GiB allowed (half the memory available); use a smaller tree",
                    topo.name,
                    topo.num_ranks(),
                    topocoll_base::memory::gib(need),
                    topocoll_base::memory::gib(most)
                ));
            }
        }
        let root = *sources
            .first()
            .ok_or_else(|| fail!(Optimize, Problem, "a broadcast needs a root"))?;
        let g = tree_network(topo)?;
        let hosts = topo.num_ranks();
        if let Some(bad) = sources.iter().find(|&&r| r >= hosts) {
            return Err(param!(
                "root",
                " {bad} is not a rank: the tree has {hosts} hosts (ranks 0 to {})",
                hosts - 1
            ));
        }
        if size_bytes == 0 {
            return Err(param!("size", " must be at least 1 byte"));
        }
        let d = size_bytes as f64;
        let nodes = g.num_nodes();
        let capacity: Vec<f64> = topo.links.iter().map(|l| l.bandwidth).collect();
        let mut node_host = vec![None; nodes];
        for (r, &n) in topo.rank_node.iter().enumerate() {
            node_host[n as usize] = Some(r as u32);
        }
        let paths = host_paths(topo, &capacity, d, limits)?;
        limits.check_time("finding the paths between hosts")?;
        let lat_to = latencies_to_nodes(topo, g);
        let host = host_producers(topo, g, &capacity, &paths);
        limits.check_time("finding each host's nearest")?;
        let cuts = edge_cuts(g, &node_host, &host);
        limits.check_time("cutting the tree at each edge")?;
        // The tree rooted at its centre, edges labelled by their parameters.
        let adj: Vec<Vec<u32>> = (0..nodes as NodeId)
            .map(|n| g.neighbours(n).iter().map(|&(m, _)| m).collect())
            .collect();
        let link_between = |a: NodeId, b: NodeId| -> LinkId {
            g.neighbours(a)
                .iter()
                .find(|&&(m, _)| m == b)
                .map(|&(_, l)| l)
                .expect("neighbours")
        };
        let mut edge_ids = Labeller::default();
        let rooted = Rooted::at_centre(&adj, |a, b| {
            let (up, down) = (link_between(a, b), link_between(b, a));
            let (u, w) = (&topo.links[up as usize], &topo.links[down as usize]);
            edge_ids.intern(&[
                u.bandwidth.to_bits(),
                u.latency.to_bits(),
                w.bandwidth.to_bits(),
                w.latency.to_bits(),
                (up == down) as u64,
            ])
        });
        let levels = unit_levels(
            &rooted,
            &topo.rank_node,
            &node_host,
            &capacity,
            &lat_to,
            nodes,
            &paths,
            &host,
            &link_between,
        );
        limits.check_time("grouping the hosts into subtrees")?;
        let best_host = Producer::best_of(host.iter().copied());
        let up_down = (0..nodes as NodeId)
            .map(|v| {
                rooted
                    .parent(v)
                    .map(|p| (link_between(v, p), link_between(p, v)))
            })
            .collect();
        Ok(Problem {
            hosts,
            root,
            sources: sources.to_vec(),
            size_bytes: d,
            names: topo
                .rank_node
                .iter()
                .map(|&n| g.names[n as usize].clone())
                .collect(),
            capacity,
            paths,
            lat_to,
            nodes,
            host,
            best_host,
            cuts,
            levels,
            rooted,
            node_host,
            host_node: topo.rank_node.clone(),
            up_down,
        })
    }

    fn path(&self, s: usize, r: usize) -> &Path {
        &self.paths[s * self.hosts + r]
    }

    /// The time of a sequence of (sender, receiver) pairs under the model,
    /// with each transfer's start and end; an error if a sender does not
    /// hold the message or a receiver already does.
    pub fn evaluate(&self, sequence: &[(usize, usize)]) -> Result<Solution> {
        let mut st = State::new(self);
        for &(s, r) in sequence {
            if s >= self.hosts || r >= self.hosts {
                return Err(fail!(Optimize, Problem, "transfer {s} -> {r}: not a rank"));
            }
            if !st.holds(s) || st.holds(r) {
                return Err(fail!(
                    Optimize,
                    Problem,
                    "transfer {s} -> {r}: the sender must hold the message and the receiver not"
                ));
            }
            let t0 = st.start(self, s, r);
            st.apply(self, s, r, t0);
        }
        Ok(st.solution(self))
    }

    /// The lower bound of the state before any transfer.
    pub fn lower_bound(&self) -> f64 {
        let st = State::new(self);
        st.lower_bound(self, &mut Vec::new())
    }
}

/// A partial schedule: who holds the message since when, the bookings, the
/// last start.
#[derive(Clone)]
struct State {
    recv: Vec<f64>,
    holders: usize,
    t_last: f64,
    cal: Calendar,
    seq: Vec<(u32, u32, f64)>,
}

impl State {
    fn new(p: &Problem) -> State {
        let mut recv = vec![f64::INFINITY; p.hosts];
        for &s in &p.sources {
            recv[s] = 0.0;
        }
        State {
            holders: recv.iter().filter(|t| t.is_finite()).count(),
            recv,
            t_last: 0.0,
            cal: Calendar::new(p.capacity.clone()),
            seq: Vec::new(),
        }
    }

    fn holds(&self, h: usize) -> bool {
        self.recv[h].is_finite()
    }

    /// When s → r would start.
    fn start(&self, p: &Problem, s: usize, r: usize) -> f64 {
        let path = p.path(s, r);
        self.cal.earliest(
            &path.hops,
            path.rate,
            path.dur,
            self.recv[s].max(self.t_last),
        )
    }

    fn apply(&mut self, p: &Problem, s: usize, r: usize, t0: f64) {
        let path = p.path(s, r);
        self.cal.book(&path.hops, path.rate, path.dur, t0);
        self.recv[r] = t0 + path.total;
        self.holders += 1;
        self.seq.push((s as u32, r as u32, self.t_last));
        self.t_last = t0;
    }

    fn undo(&mut self, p: &Problem) {
        let (s, r, t_last) = self.seq.pop().expect("a transfer to undo");
        self.cal.unbook(&p.path(s as usize, r as usize).hops);
        self.recv[r as usize] = f64::INFINITY;
        self.holders -= 1;
        self.t_last = t_last;
    }

    fn makespan(&self) -> f64 {
        self.recv
            .iter()
            .copied()
            .filter(|t| t.is_finite())
            .fold(0.0, f64::max)
    }

    fn solution(&self, p: &Problem) -> Solution {
        let transfers = self
            .seq
            .iter()
            .enumerate()
            .map(|(k, &(s, r, _))| {
                let start = self.seq.get(k + 1).map_or(self.t_last, |n| n.2);
                Transfer {
                    from: s as usize,
                    to: r as usize,
                    start_s: start,
                    end_s: start + p.path(s as usize, r as usize).total,
                }
            })
            .collect();
        Solution {
            time_s: self.makespan(),
            transfers,
            proven_optimal: false,
            nodes_explored: 0,
            solve_s: 0.0,
            lower_bound_s: 0.0,
            heuristic_s: 0.0,
        }
    }

    /// A lower bound on the time of every completion of this state.
    /// `earliest` is scratch.
    fn lower_bound(&self, p: &Problem, earliest: &mut Vec<f64>) -> f64 {
        let n = p.hosts;
        let d = p.size_bytes;
        let t = self.t_last;
        let avail = |s: usize| self.recv[s].max(t);
        let mut lb = self.makespan();
        // Each non-holder's earliest receipt without contention (a relay
        // never beats the direct path: latencies add up and the bottleneck
        // of the direct path is on one of the two legs).
        earliest.clear();
        earliest.resize(n, f64::INFINITY);
        for (r, e) in earliest.iter_mut().enumerate() {
            if self.holds(r) {
                continue;
            }
            *e = (0..n)
                .filter(|&s| self.holds(s))
                .map(|s| avail(s) + p.path(s, r).total)
                .fold(f64::INFINITY, f64::min);
            lb = lb.max(*e);
        }
        // How fast holders multiply, over the whole tree.
        let missing = n - self.holders;
        let seeds = (0..n)
            .filter(|&s| self.holds(s))
            .map(|s| (avail(s), p.host[s]));
        lb = lb.max(multiply(missing, d, seeds, None, &p.best_host, &[]));
        // How fast subtrees (SMP nodes, clusters) get their first holder.
        let mut floors = Vec::new();
        for units in &p.levels {
            floors.clear();
            let mut seeds = Vec::new();
            let mut in_totals = Vec::new();
            let mut newborn = Producer::NONE;
            for u in units {
                let held = u
                    .hosts
                    .iter()
                    .filter(|&&h| self.holds(h as usize))
                    .map(|&h| avail(h as usize))
                    .fold(f64::INFINITY, f64::min);
                if held.is_finite() {
                    seeds.push((held, u.out));
                } else {
                    floors.push(
                        u.hosts
                            .iter()
                            .map(|&h| earliest[h as usize])
                            .fold(f64::INFINITY, f64::min),
                    );
                    in_totals.push(u.in_total);
                    newborn = newborn.or(u.out);
                }
            }
            lb = lb.max(two_waves(&seeds, &floors, &in_totals, d));
            floors.sort_by(f64::total_cmp);
            lb = lb.max(multiply(
                floors.len(),
                d,
                seeds.into_iter(),
                None,
                &newborn,
                &floors,
            ));
        }
        // And into every subtree that holds nothing yet.
        for c in &p.cuts {
            if c.hosts.iter().any(|&h| self.holds(h as usize)) {
                continue;
            }
            let first = c
                .hosts
                .iter()
                .map(|&h| earliest[h as usize])
                .fold(f64::INFINITY, f64::min);
            let at_edge = (0..n)
                .filter(|&s| self.holds(s))
                .map(|s| avail(s) + p.lat_to[s * p.nodes + c.head as usize])
                .fold(f64::INFINITY, f64::min);
            let gate = Gate {
                first,
                at_edge,
                step: d / p.capacity[c.link as usize],
            };
            lb = lb.max(multiply(
                c.hosts.len(),
                d,
                std::iter::empty::<(f64, Producer)>(),
                Some(gate),
                &c.inside,
                &[],
            ));
        }
        lb
    }
}

/// Subtrees that hold nothing are entered either by the subtrees that hold
/// the message now (their links out give them slots, `Producer::slot`)
/// or later, from a host of another such subtree, which holds the message
/// no earlier than that subtree's `floor` and needs at least the
/// subtree's `in_total` to get it in. The k entries served now need k
/// slots; every other subtree waits for its second wave. The bound is the
/// best split.
fn two_waves(seeds: &[(f64, Producer)], floors: &[f64], in_totals: &[f64], d: f64) -> f64 {
    let m = floors.len();
    if m == 0 {
        return 0.0;
    }
    // The first and second smallest floors: the earliest another subtree
    // can hold the message.
    let (mut f1, mut f2, mut at) = (f64::INFINITY, f64::INFINITY, usize::MAX);
    for (i, &f) in floors.iter().enumerate() {
        if f < f1 {
            (f2, f1, at) = (f1, f, i);
        } else if f < f2 {
            f2 = f;
        }
    }
    let mut late: Vec<f64> = (0..m)
        .map(|i| if i == at { f2 } else { f1 } + in_totals[i])
        .collect();
    late.sort_by(|a, b| b.total_cmp(a));
    // The m earliest slots of the subtrees that hold the message.
    let mut slots = Vec::with_capacity(m);
    let mut next: Vec<u32> = vec![1; seeds.len()];
    while slots.len() < m {
        let best = (0..seeds.len())
            .map(|i| (seeds[i].1.slot(seeds[i].0, next[i], d), i))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let Some((t, i)) = best else {
            break;
        };
        slots.push(t);
        next[i] += 1;
    }
    (0..=m)
        .map(|k| {
            let served = if k == 0 {
                0.0
            } else {
                slots.get(k - 1).copied().unwrap_or(f64::INFINITY)
            };
            let waiting = late.get(k).copied().unwrap_or(0.0);
            served.max(waiting)
        })
        .fold(f64::INFINITY, f64::min)
}

/// What bounds how fast a holder hands the message on: the j-th transfer
/// it sends arrives no earlier than its availability plus the larger of
/// (its least first-hop latency + j·D / the bandwidth of its links) and its
/// least contention-free time to another host.
#[derive(Clone, Copy, Debug)]
struct Producer {
    out_cap: f64,
    first_lat: f64,
    min_total: f64,
}

impl Producer {
    /// No producer at all (the start of a best case).
    const NONE: Producer = Producer {
        out_cap: 0.0,
        first_lat: f64::INFINITY,
        min_total: f64::INFINITY,
    };

    /// The best case of two: the most bandwidth, the least latency and
    /// the least time.
    fn or(self, o: Producer) -> Producer {
        Producer {
            out_cap: self.out_cap.max(o.out_cap),
            first_lat: self.first_lat.min(o.first_lat),
            min_total: self.min_total.min(o.min_total),
        }
    }

    fn best_of(all: impl Iterator<Item = Producer>) -> Producer {
        all.fold(Producer::NONE, Producer::or)
    }

    fn slot(&self, avail: f64, j: u32, d: f64) -> f64 {
        avail + (self.first_lat + j as f64 * d / self.out_cap).max(self.min_total)
    }
}

/// Transfers into a subtree from outside all cross one link: the j-th
/// arrives no earlier than the first possible arrival, nor than the time
/// the message can reach the link plus j·D / its bandwidth.
#[derive(Clone, Copy)]
struct Gate {
    first: f64,
    at_edge: f64,
    step: f64,
}

/// The earliest time `missing` new holders can all hold the message, if
/// every holder produced new ones as fast as `Producer::slot` allows and
/// every new holder produced like `newborn`: each new holder takes the
/// earliest slot left. Real schedules can only be slower. The i-th new
/// holder is also no earlier than `floors[i]` (sorted), where given.
fn multiply(
    missing: usize,
    d: f64,
    seeds: impl Iterator<Item = (f64, Producer)>,
    gate: Option<Gate>,
    newborn: &Producer,
    floors: &[f64],
) -> f64 {
    if missing == 0 {
        return 0.0;
    }
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    // (slot time, producer index, j); producer usize::MAX is the gate.
    let mut producers: Vec<(f64, Producer)> = Vec::new();
    let mut heap: BinaryHeap<Reverse<(u64, usize, u32)>> = BinaryHeap::new();
    let key = |t: f64| t.max(0.0).to_bits();
    for (avail, prod) in seeds {
        heap.push(Reverse((key(prod.slot(avail, 1, d)), producers.len(), 1)));
        producers.push((avail, prod));
    }
    if let Some(g) = gate {
        heap.push(Reverse((
            key(g.first.max(g.at_edge + g.step)),
            usize::MAX,
            1,
        )));
    }
    let newborn_useful = newborn.min_total.is_finite() && newborn.out_cap > 0.0;
    let mut last = 0.0;
    for i in 0..missing {
        let Some(Reverse((t, who, j))) = heap.pop() else {
            return f64::INFINITY;
        };
        let t = f64::from_bits(t).max(floors.get(i).copied().unwrap_or(0.0));
        last = t;
        if who == usize::MAX {
            let g = gate.expect("the gate");
            let next = g.first.max(g.at_edge + (j + 1) as f64 * g.step);
            heap.push(Reverse((key(next), usize::MAX, j + 1)));
        } else {
            let (avail, prod) = producers[who];
            heap.push(Reverse((key(prod.slot(avail, j + 1, d)), who, j + 1)));
        }
        if newborn_useful {
            heap.push(Reverse((key(newborn.slot(t, 1, d)), producers.len(), 1)));
            producers.push((t, *newborn));
        }
    }
    last
}

/// Relative difference under which two times are the same.
const SAME: f64 = 1e-12;

/// The depth-first branch and bound.
struct Search<'p> {
    p: &'p Problem,
    opts: Options,
    best: f64,
    best_seq: Vec<(usize, usize)>,
    nodes: u64,
    deadline: Instant,
    stopped: bool,
    seen: std::collections::HashSet<u128>,
    labeller: Labeller,
    scratch: Vec<f64>,
    orbit: Vec<u32>,
    label: Vec<u64>,
    key: Vec<u64>,
}

/// Memo entries kept at most (16 bytes each).
const MAX_MEMO: usize = 1 << 24;

impl<'p> Search<'p> {
    fn dfs(&mut self, st: &mut State) {
        self.nodes += 1;
        if self.nodes.is_multiple_of(1024) && Instant::now() > self.deadline {
            self.stopped = true;
        }
        if self.stopped {
            return;
        }
        let p = self.p;
        if st.holders == p.hosts {
            let t = st.makespan();
            if t < self.best * (1.0 - SAME) {
                self.best = t;
                self.best_seq = st
                    .seq
                    .iter()
                    .map(|&(s, r, _)| (s as usize, r as usize))
                    .collect();
            }
            return;
        }
        let lb = if self.opts.bound {
            st.lower_bound(p, &mut self.scratch)
        } else {
            st.makespan()
        };
        if lb >= self.best * (1.0 - SAME) {
            return;
        }
        let memo_key = if self.opts.memo {
            let k = self.state_key(st);
            if self.seen.contains(&k) {
                return;
            }
            Some(k)
        } else {
            None
        };
        let receivers = self.representatives(st, false);
        let senders = self.representatives(st, true);
        let mut cands: Vec<(f64, f64, f64, usize, usize)> = Vec::new();
        for &r in &receivers {
            let far = senders
                .iter()
                .map(|&s| p.path(s, r).total)
                .fold(f64::INFINITY, f64::min);
            for &s in &senders {
                let t0 = st.start(p, s, r);
                if t0 + p.path(s, r).total >= self.best * (1.0 - SAME) {
                    continue;
                }
                cands.push((-far, t0, p.path(s, r).total, s, r));
            }
        }
        // The paper's order: far receivers first, then the earliest start,
        // then the nearest pair.
        cands.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.total_cmp(&b.2))
                .then(a.4.cmp(&b.4))
                .then(a.3.cmp(&b.3))
        });
        for (_, t0, _, s, r) in cands {
            st.apply(p, s, r, t0);
            self.dfs(st);
            st.undo(p);
            if self.stopped {
                return;
            }
        }
        if let Some(k) = memo_key {
            if self.seen.len() < MAX_MEMO {
                self.seen.insert(k);
            }
        }
    }

    /// Holders (`senders`) or non-holders, one per symmetry orbit when the
    /// matching cut is on.
    fn representatives(&mut self, st: &State, senders: bool) -> Vec<usize> {
        let p = self.p;
        let wanted = |h: usize| st.holds(h) == senders;
        let cut = if senders {
            self.opts.scut
        } else {
            self.opts.rcut
        };
        if !cut {
            return (0..p.hosts).filter(|&h| wanted(h)).collect();
        }
        if senders {
            // Holders are only interchangeable when they received at the
            // same instant: without two such, every orbit is one holder.
            let mut times: Vec<u64> = (0..p.hosts)
                .filter(|&h| st.holds(h))
                .map(|h| st.recv[h].to_bits())
                .collect();
            times.sort_unstable();
            if times.windows(2).all(|w| w[0] != w[1]) {
                return (0..p.hosts).filter(|&h| wanted(h)).collect();
            }
        }
        self.labeller.clear();
        self.label.clear();
        for v in 0..p.nodes {
            // RCut labels holders apart and non-holders alike; SCut the
            // other way round, holders by their receipt time.
            let l = match p.node_host[v] {
                None => 0,
                Some(h) if st.holds(h as usize) != senders => 2 + h as u64,
                Some(_) => 1,
            };
            let l = if senders {
                // The live bookings of the edge to the parent, both ways.
                let mut key = std::mem::take(&mut self.key);
                key.clear();
                key.push(l);
                if let Some(h) = p.node_host[v].filter(|&h| st.holds(h as usize)) {
                    key.push(st.recv[h as usize].to_bits());
                }
                if let Some((up, down)) = p.up_down[v] {
                    key.push(u64::MAX);
                    st.cal.live_after(up, st.t_last, &mut key);
                    key.push(u64::MAX);
                    st.cal.live_after(down, st.t_last, &mut key);
                }
                let id = self.labeller.intern(&key) as u64;
                self.key = key;
                id
            } else {
                l
            };
            self.label.push(l);
        }
        self.labeller
            .orbits(&p.rooted, &self.label, &mut self.orbit);
        let mut seen_orbits = std::collections::HashSet::new();
        (0..p.hosts)
            .filter(|&h| wanted(h) && seen_orbits.insert(self.orbit[p.host_node[h] as usize]))
            .collect()
    }

    /// 128 bits of the state's future: holders and their receipt times,
    /// the last start, and every booking still live.
    fn state_key(&mut self, st: &State) -> u128 {
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.push(st.t_last.to_bits());
        for t in &st.recv {
            key.push(t.to_bits());
        }
        for l in 0..self.p.capacity.len() as u32 {
            key.push(u64::MAX - l as u64);
            st.cal.live_after(l, st.t_last, &mut key);
        }
        let mut a = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut a);
        let mut b = std::collections::hash_map::DefaultHasher::new();
        0x9e37_79b9_7f4a_7c15u64.hash(&mut b);
        key.hash(&mut b);
        self.key = key;
        ((a.finish() as u128) << 64) | b.finish() as u128
    }
}

/// The optimal broadcast (or the best found within the time limit), with
/// `solve_s` the search's wall time ([`crate::timed`]).
pub fn solve(p: &Problem, opts: &Options) -> Solution {
    let (mut sol, solve_s) = crate::timed(|| branch_and_bound(p, opts));
    sol.solve_s = solve_s;
    sol
}

/// The heuristic, then the search from its schedule.
fn branch_and_bound(p: &Problem, opts: &Options) -> Solution {
    let deadline = opts.deadline.unwrap_or_else(|| {
        Instant::now() + std::time::Duration::from_secs_f64(opts.time_limit_s.clamp(0.0, 1e9))
    });
    let lower_bound_s = p.lower_bound();
    let first = heuristic_until(p, Some(deadline));
    let heuristic_s = first.time_s;
    // A heuristic that meets the lower bound is optimal, and the search
    // stops there; without the bounds (`--no-bound`) it prunes with the
    // makespan alone, and so searches on.
    let done =
        first.transfers.is_empty() || (opts.bound && heuristic_s <= lower_bound_s * (1.0 + SAME));
    if p.hosts > MAX_EXACT_HOSTS || done {
        return Solution {
            proven_optimal: done,
            lower_bound_s,
            heuristic_s,
            ..first
        };
    }
    let mut search = Search {
        p,
        opts: *opts,
        best: heuristic_s,
        best_seq: first.transfers.iter().map(|t| (t.from, t.to)).collect(),
        nodes: 0,
        deadline,
        stopped: false,
        seen: Default::default(),
        labeller: Labeller::default(),
        scratch: Vec::new(),
        orbit: Vec::new(),
        label: Vec::new(),
        key: Vec::new(),
    };
    let mut st = State::new(p);
    search.dfs(&mut st);
    let best = p
        .evaluate(&search.best_seq)
        .expect("the search's schedules are valid sequences");
    Solution {
        proven_optimal: !search.stopped,
        nodes_explored: search.nodes,
        lower_bound_s,
        heuristic_s,
        ..best
    }
}

/// A fast schedule: the best of two greedy rules and a binomial tree over
/// the ranks, then, on trees small enough to search exactly, improved by
/// local search. Each greedy step looks at a few receivers, each with its
/// few contention-free nearest holders, and commits the pair that
/// finishes first: among the receivers that can finish first (earliest
/// finish first), or among those farthest from every holder.
pub fn heuristic(p: &Problem) -> Solution {
    heuristic_until(p, None)
}

/// [`heuristic`], cut short at `deadline`: the binomial tree (or the first
/// greedy rule, with several sources) is always finished, the rest only
/// while time remains.
fn heuristic_until(p: &Problem, deadline: Option<Instant>) -> Solution {
    let mut all = Vec::new();
    if p.sources.len() == 1 {
        if let Ok(b) = p.evaluate(&binomial_sequence(p.hosts, p.root)) {
            all.push(b);
        }
    }
    let first = if all.is_empty() { None } else { deadline };
    all.extend(greedy(p, false, first));
    all.extend(greedy(p, true, deadline));
    let mut best = all
        .into_iter()
        .reduce(|a, b| if b.time_s < a.time_s { b } else { a })
        .expect("the first rule always finishes");
    if p.hosts <= MAX_EXACT_HOSTS {
        best = improve(p, best, deadline);
    }
    best
}

/// MPICH's binomial tree from `root` (largest subtree first), as a
/// sequence in rounds.
fn binomial_sequence(n: usize, root: usize) -> Vec<(usize, usize)> {
    let mut seq = Vec::new();
    let mut step = n.next_power_of_two() / 2;
    while step > 0 {
        for v in (0..n).step_by(2 * step) {
            if v + step < n {
                seq.push(((v + root) % n, (v + step + root) % n));
            }
        }
        step /= 2;
    }
    seq
}

/// Hill climbing over sequences: move a transfer earlier, or give it
/// another sender, while the time (then the sum of receipt times) falls.
fn improve(p: &Problem, start: Solution, deadline: Option<Instant>) -> Solution {
    let score = |s: &Solution| (s.time_s, s.transfers.iter().map(|t| t.end_s).sum::<f64>());
    let better = |a: (f64, f64), b: (f64, f64)| {
        a.0 < b.0 * (1.0 - SAME) || (a.0 <= b.0 * (1.0 + SAME) && a.1 < b.1 * (1.0 - SAME))
    };
    let mut best = start;
    let mut seq: Vec<(usize, usize)> = best.transfers.iter().map(|t| (t.from, t.to)).collect();
    // Each evaluation replays the sequence: about 16 M transfers' worth of
    // replays in all (about a second), however many hosts.
    let n = p.hosts.max(1);
    let mut budget = ((1usize << 24) / (n * n)).max(1000);
    'climb: loop {
        let now = score(&best);
        for i in 0..seq.len() {
            // Another sender (a host that held the message before transfer
            // i), or an earlier place in the sequence.
            let base = seq.clone();
            let senders = base[..i]
                .iter()
                .map(|t| t.1)
                .chain(p.sources.iter().copied())
                .filter(|&s| s != base[i].0);
            let resent = senders.map(|s| {
                let mut c = base.clone();
                c[i].0 = s;
                c
            });
            let moved = (0..i).map(|k| {
                let mut c = base.clone();
                let t = c.remove(i);
                c.insert(k, t);
                c
            });
            for cand in resent.chain(moved) {
                budget = budget.saturating_sub(1);
                if let Ok(sol) = p.evaluate(&cand) {
                    if better(score(&sol), now) {
                        (best, seq) = (sol, cand);
                        continue 'climb;
                    }
                }
            }
            if budget == 0 || deadline.is_some_and(|d| Instant::now() > d) {
                break 'climb;
            }
        }
        break;
    }
    best
}

/// The greedy rule's schedule, or none if `deadline` passes first.
fn greedy(p: &Problem, far_first: bool, deadline: Option<Instant>) -> Option<Solution> {
    const RECEIVERS: usize = 8;
    const SENDERS: usize = 4;
    let n = p.hosts;
    let mut st = State::new(p);
    // Contention-free best time for each non-holder.
    let mut cf: Vec<f64> = (0..n)
        .map(|r| {
            p.sources
                .iter()
                .map(|&s| p.path(s, r).total)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let mut holders: Vec<usize> = (0..n).filter(|&h| st.holds(h)).collect();
    let mut waiting: Vec<usize> = (0..n).filter(|&r| !st.holds(r)).collect();
    let mut near: Vec<(f64, usize)> = Vec::new();
    // When each holder's first hop is free again after its last send: the
    // senders to try are the ones that could start soonest, not merely the
    // nearest (those are busy sending to everyone else).
    let mut free: Vec<f64> = vec![0.0; n];
    while !waiting.is_empty() {
        if deadline.is_some_and(|d| Instant::now() > d) {
            return None;
        }
        waiting.sort_by(|&a, &b| {
            let o = cf[a].total_cmp(&cf[b]).then(a.cmp(&b));
            if far_first {
                o.reverse()
            } else {
                o
            }
        });
        let mut best: Option<(f64, f64, usize, usize)> = None;
        for &r in waiting.iter().take(RECEIVERS) {
            near.clear();
            near.extend(
                holders
                    .iter()
                    .map(|&s| (st.recv[s].max(free[s]) + p.path(s, r).total, s)),
            );
            let k = SENDERS.min(near.len());
            near.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for &(_, s) in &near[..k] {
                let t0 = st.start(p, s, r);
                let fin = t0 + p.path(s, r).total;
                if best.is_none_or(|b| (fin, s, r) < (b.0, b.2, b.3)) {
                    best = Some((fin, t0, s, r));
                }
            }
        }
        let (fin, t0, s, r) = best.expect("a receiver waits");
        st.apply(p, s, r, t0);
        if let Some(h) = p.path(s, r).hops.first() {
            free[s] = t0 + h.offset + p.path(s, r).dur;
        }
        st.cal.forget_before(st.t_last);
        holders.push(r);
        waiting.retain(|&w| w != r);
        for &w in &waiting {
            cf[w] = cf[w].min(fin + p.path(r, w).total);
        }
    }
    Some(st.solution(p))
}

/// The schedule of a solution in the IR: each host receives once, then
/// sends in start order; before each send a compute of exactly the wait
/// since the host's previous event keeps the solver's start times, so a
/// simulation under reservation sharing reproduces them.
pub fn to_schedule(p: &Problem, sol: &Solution) -> Schedule {
    let count = p.size_bytes as u64;
    let mut s = Schedule::new(
        Collective::Bcast {
            root: p.root as u32,
        },
        p.hosts,
        count,
        Dtype::U8,
        ReduceOp::Sum,
        "optimal",
    );
    let all = Region::output(0, count);
    let mut last: Vec<(Option<u32>, f64)> = vec![(None, 0.0); p.hosts];
    for t in &sol.transfers {
        let prog = &mut s.programs[t.to];
        let id = prog.push(Op::recv(t.from as u32, 0, all), &[]);
        last[t.to] = (Some(id), t.end_s);
    }
    for t in &sol.transfers {
        let (mut dep, since) = last[t.from];
        let prog = &mut s.programs[t.from];
        let wait = t.start_s - since;
        if wait > 0.0 {
            let deps: Vec<u32> = dep.into_iter().collect();
            dep = Some(prog.push(Op::Compute { seconds: wait }, &deps));
        }
        let deps: Vec<u32> = dep.into_iter().collect();
        prog.push(Op::send(t.to as u32, 0, all), &deps);
        last[t.from] = (dep, t.start_s.max(since));
    }
    s
}

/// The built-in broadcasts the optimum is compared with.
pub const BASELINES: &[&Algorithm] = &[
    &bcast::binomial::ALGORITHM,
    &bcast::binary::ALGORITHM,
    &bcast::scatter_allgather::ALGORITHM,
    &bcast::pipeline::ALGORITHM,
];

/// The simulator's settings that follow the model: reservation sharing,
/// no overhead, and engines enough for a host to send to every other at
/// once.
pub fn model_config() -> SimConfig {
    SimConfig {
        sharing: Sharing::Reservation,
        engines: 64,
        ..SimConfig::default()
    }
}

/// The time of a built-in broadcast algorithm on the same model: its
/// schedule simulated under [`model_config`].
pub fn baseline(
    topo: &Topology,
    algorithm: &Algorithm,
    root: usize,
    size_bytes: u64,
) -> Result<f64> {
    let req = Request::new(
        Collective::Bcast { root: root as u32 },
        topo.num_ranks(),
        size_bytes,
        Dtype::U8,
        ReduceOp::Sum,
        Some(topo),
    )?;
    let s = topocoll_algorithms::build(algorithm, &req)?;
    Ok(simulate(&s, topo, &model_config())?.time_s)
}

/// The times of the [`BASELINES`] that apply, priced until `deadline`: on
/// a thread of their own, so that a simulation still running at the
/// deadline is left behind (its result unused) rather than waited for;
/// with how many were not priced in time.
pub fn baselines_until(
    topo: &Topology,
    root: usize,
    size_bytes: u64,
    deadline: Instant,
) -> (std::collections::BTreeMap<&'static str, f64>, usize) {
    let (tx, rx) = std::sync::mpsc::channel();
    let topo = topo.clone();
    std::thread::spawn(move || {
        for &alg in BASELINES {
            let t = baseline(&topo, alg, root, size_bytes).ok();
            if tx.send((alg.name, t)).is_err() {
                return;
            }
        }
    });
    let mut times = std::collections::BTreeMap::new();
    let mut priced = 0;
    while priced < BASELINES.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok((alg, t)) = rx.recv_timeout(left) else {
            break;
        };
        priced += 1;
        // An algorithm that does not apply to this shape has no time.
        if let Some(t) = t {
            times.insert(alg, t);
        }
    }
    (times, BASELINES.len() - priced)
}

/// The tree network of `topo`, one rank per host: a tree topology, or a
/// graph with one link fewer than nodes.
fn tree_network(topo: &Topology) -> Result<&Graph> {
    if topo.ranks_placed() {
        return Err(fail!(
            Optimize,
            Problem,
            "the optimal tree broadcast takes one rank per host (no --ranks-per-node or --map)"
        ));
    }
    match &topo.kind {
        Kind::Tree(g) => Ok(g),
        Kind::Graph(g)
            if (0..g.num_nodes() as NodeId)
                .map(|n| g.neighbours(n).len())
                .sum::<usize>()
                / 2
                + 1
                == g.num_nodes() =>
        {
            Ok(g)
        }
        _ => Err(fail!(Optimize, Problem,
            "topology {}: optimal broadcast needs a tree network (a TOML file with kind = \"tree\")",
            topo.name
        )),
    }
}

/// The path of a message of `d` bytes between every two hosts
/// (`[s * hosts + r]`).
fn host_paths(topo: &Topology, capacity: &[f64], d: f64, limits: &Limits) -> Result<Vec<Path>> {
    let hosts = topo.num_ranks();
    let mut paths = Vec::with_capacity(hosts * hosts);
    let mut route = Vec::new();
    for s in 0..hosts {
        limits.check_time("finding the paths between hosts")?;
        for r in 0..hosts {
            route.clear();
            if s != r {
                topo.route(s, r, &mut route);
            }
            let mut offset = 0.0;
            let hops: Vec<Hop> = route
                .iter()
                .map(|&l| {
                    offset += topo.links[l as usize].latency;
                    Hop {
                        resource: l,
                        offset,
                    }
                })
                .collect();
            let rate = route
                .iter()
                .map(|&l| capacity[l as usize])
                .fold(f64::INFINITY, f64::min);
            let dur = if route.is_empty() { 0.0 } else { d / rate };
            paths.push(Path {
                hops,
                rate,
                dur,
                total: offset + dur,
            });
        }
    }
    Ok(paths)
}

/// Latency from each host to each node (`[s * nodes + v]`): a walk out
/// from the host.
fn latencies_to_nodes(topo: &Topology, g: &Graph) -> Vec<f64> {
    let (hosts, nodes) = (topo.num_ranks(), g.num_nodes());
    let mut lat_to = vec![0.0; hosts * nodes];
    for (s, &sn) in topo.rank_node.iter().enumerate() {
        let mut stack = vec![(sn, u32::MAX, 0.0)];
        while let Some((v, from, lat)) = stack.pop() {
            lat_to[s * nodes + v as usize] = lat;
            for &(u, l) in g.neighbours(v) {
                if u != from {
                    stack.push((u, v, lat + topo.links[l as usize].latency));
                }
            }
        }
    }
    lat_to
}

/// Per host: how fast it can hand the message on.
fn host_producers(topo: &Topology, g: &Graph, capacity: &[f64], paths: &[Path]) -> Vec<Producer> {
    let hosts = topo.num_ranks();
    let out_resources = |n: NodeId| {
        let mut ls: Vec<LinkId> = g.neighbours(n).iter().map(|&(_, l)| l).collect();
        ls.sort_unstable();
        ls.dedup();
        ls
    };
    topo.rank_node
        .iter()
        .enumerate()
        .map(|(s, &sn)| {
            let ls = out_resources(sn);
            Producer {
                out_cap: ls.iter().map(|&l| capacity[l as usize]).sum::<f64>(),
                first_lat: ls
                    .iter()
                    .map(|&l| topo.links[l as usize].latency)
                    .fold(f64::INFINITY, f64::min),
                min_total: (0..hosts)
                    .filter(|&r| r != s)
                    .map(|r| paths[s * hosts + r].total)
                    .fold(f64::INFINITY, f64::min),
            }
        })
        .collect()
}

/// Every directed edge u → v with hosts on v's side (and not all of them).
fn edge_cuts(g: &Graph, node_host: &[Option<u32>], host: &[Producer]) -> Vec<Cut> {
    let (hosts, nodes) = (host.len(), g.num_nodes());
    let mut cuts = Vec::new();
    for u in 0..nodes as NodeId {
        for &(v, l) in g.neighbours(u) {
            let mut side = Vec::new();
            let mut stack = vec![(v, u)];
            while let Some((x, from)) = stack.pop() {
                if let Some(h) = node_host[x as usize] {
                    side.push(h);
                }
                for &(y, _) in g.neighbours(x) {
                    if y != from {
                        stack.push((y, x));
                    }
                }
            }
            if side.is_empty() || side.len() == hosts {
                continue;
            }
            side.sort_unstable();
            // (Its least time is to any other host: a bound on the time
            // to one inside, and linear in the subtree's size.)
            cuts.push(Cut {
                link: l,
                head: v,
                inside: Producer::best_of(side.iter().map(|&h| host[h as usize])),
                hosts: side,
            });
        }
    }
    cuts
}

/// The partitions of the hosts into subtrees for the bound, one for each
/// level k = 1, 2, 3: each host's subtree is the one rooted k nodes above
/// it (towards the centre, never the centre itself), merged where one
/// holds another. A host at the centre is a subtree alone. Levels that
/// repeat one below, or put every host in one subtree, are left out.
#[allow(clippy::too_many_arguments)]
fn unit_levels(
    rooted: &Rooted,
    rank_node: &[NodeId],
    node_host: &[Option<u32>],
    capacity: &[f64],
    lat_to: &[f64],
    nodes: usize,
    paths: &[Path],
    host: &[Producer],
    link: &dyn Fn(NodeId, NodeId) -> LinkId,
) -> Vec<Vec<Unit>> {
    let hosts = rank_node.len();
    // The chain of a node's ancestors below the centre, itself first.
    let chain = |v: NodeId| -> Vec<NodeId> {
        let mut c = Vec::new();
        let mut x = v;
        while !rooted.roots().contains(&x) {
            c.push(x);
            x = rooted.parent(x).expect("below the centre");
        }
        c
    };
    let in_total = |members: &[u32]| {
        (0..hosts as u32)
            .filter(|s| !members.contains(s))
            .flat_map(|s| members.iter().map(move |&r| (s, r)))
            .map(|(s, r)| paths[s as usize * hosts + r as usize].total)
            .fold(f64::INFINITY, f64::min)
    };
    let mut levels: Vec<Vec<Unit>> = Vec::new();
    let mut last: Option<Vec<NodeId>> = None;
    for k in 1..=3 {
        let mut top: Vec<NodeId> = rank_node
            .iter()
            .map(|&n| {
                let c = chain(n);
                if c.is_empty() {
                    n
                } else {
                    c[k.min(c.len() - 1)]
                }
            })
            .collect();
        let tops: std::collections::HashSet<NodeId> = top.iter().copied().collect();
        for t in top.iter_mut() {
            if let Some(&high) = chain(*t).iter().rev().find(|a| tops.contains(a)) {
                *t = high;
            }
        }
        if last.as_ref() == Some(&top) {
            continue;
        }
        last = Some(top.clone());
        let mut groups: std::collections::BTreeMap<NodeId, Vec<u32>> = Default::default();
        for (h, &t) in top.iter().enumerate() {
            groups.entry(t).or_default().push(h as u32);
        }
        if groups.len() < 2 {
            continue;
        }
        let units = groups
            .into_iter()
            .map(|(t, members)| {
                if rooted.roots().contains(&t) {
                    let h = node_host[t as usize].expect("a centre unit is a host") as usize;
                    return Unit {
                        in_total: in_total(&members),
                        hosts: members,
                        out: host[h],
                    };
                }
                let parent = rooted.parent(t).expect("below the centre");
                let up = link(t, parent);
                let inside: std::collections::HashSet<u32> = members.iter().copied().collect();
                let out_total = members
                    .iter()
                    .flat_map(|&a| (0..hosts as u32).map(move |b| (a, b)))
                    .filter(|(_, b)| !inside.contains(b))
                    .map(|(a, b)| paths[a as usize * hosts + b as usize].total)
                    .fold(f64::INFINITY, f64::min);
                Unit {
                    in_total: in_total(&members),
                    out: Producer {
                        out_cap: capacity[up as usize],
                        first_lat: members
                            .iter()
                            .map(|&h| lat_to[h as usize * nodes + parent as usize])
                            .fold(f64::INFINITY, f64::min),
                        min_total: out_total,
                    },
                    hosts: members,
                }
            })
            .collect();
        levels.push(units);
    }
    levels
}
