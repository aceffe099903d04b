//! Cut bounds: the least time any schedule of a collective can take on a
//! network, from its links' bandwidths alone (no latency, no engines, no
//! overhead), computed exactly by maximum flows.
//!
//! With directed links of bandwidth b, ranks R (N of them) on nodes, and
//! for a node set S, B_in(S) and B_out(S) the bandwidth of the links
//! entering and leaving S (a half-duplex link, one link that both
//! directions cross, counts once either way):
//!
//! - bcast from r, M bytes: every byte must enter every S that holds a
//!   rank but not r, so T ≥ M / B_in(S). The largest such bound is M over
//!   the least cut between r's node and another rank's node (Menger; for
//!   the whole broadcast it is also reachable, by Edmonds' branching
//!   theorem).
//! - reduce to r: the same with B_out(S).
//! - allgather, m bytes a rank: the blocks of the |R \ S| ranks outside S
//!   must all enter S, so T ≥ m · |R \ S| / B_in(S) over every S holding a
//!   rank but not all.
//! - reduce_scatter, M bytes in all: every rank in S needs the
//!   contribution of every rank outside S to its chunk, and in any
//!   reduction, all of it leaves through the cut in some form: T ≥ (M/N) ·
//!   |R \ S| / B_out(S) (the allgather's bound on the reversed network).
//! - allreduce, M bytes: the reduce_scatter bound of M plus the allgather
//!   bound of M/N: the least time of any allreduce built from a
//!   reduce-scatter followed by an allgather (not a bound on every
//!   allreduce: a reduce to one rank and a broadcast may beat it).
//!
//! The allgather bound is a maximum ratio over node sets. It is found by
//! Dinkelbach's method: for a trial time t, a super source feeds each
//! rank's node m bytes a rank, links carry t · b, and every rank's node
//! must receive m · N from the source; a rank whose maximum flow falls
//! short names, by its minimum cut, a set S whose ratio exceeds t, which
//! becomes the next trial. The trials rise strictly and there are finitely
//! many sets, so it ends, on the exact maximum.

use crate::error::fail;
use crate::error::Result;
use crate::maxflow::FlowNet;
use topocoll_base::limits::{pace, Deadline};
use topocoll_schedule::Collective;
use topocoll_topology::{Kind, NodeId, Topology};

/// A cut bound and the node set that sets it.
#[derive(Clone, Debug, PartialEq)]
pub struct CutBound {
    /// Seconds: no schedule of the collective on this network is faster.
    pub seconds: f64,
    /// The node set S whose cut gives the bound (for allreduce, the
    /// reduce_scatter half's).
    pub cut: Vec<NodeId>,
}

/// What a link can carry, all flows together: its bandwidth, or for a
/// FATPIPE link (each flow gets the whole bandwidth, whatever else crosses
/// it) the bandwidth of N² flows, more than any collective on N ranks puts
/// on it at once.
pub fn capacity(topo: &Topology, l: usize) -> f64 {
    let bw = topo.links[l].bandwidth;
    if topo.fatpipe().get(l).copied().unwrap_or(false) {
        let n = topo.num_ranks() as f64;
        bw * n * n
    } else {
        bw
    }
}

/// The directed connections of a network: every link from its `from` to
/// its `to`, and for a half-duplex link (one link both directions cross)
/// also the other way. Each entry is (from, to, [`capacity`]).
///
/// A SimGrid platform whose `<link>`s are routed host by host gives links
/// that join no nodes, and so no connections between its hosts; there the
/// connections are those of the route graph ([`route_arcs`]), whose extra
/// nodes are numbered after the topology's.
pub fn arcs(topo: &Topology) -> Vec<(NodeId, NodeId, f64)> {
    let direct = node_arcs(topo);
    if routes_given(topo) && !joined(topo, &direct) {
        return route_arcs(topo);
    }
    direct
}

/// Whether the network's links join its nodes (every topology's but a
/// SimGrid platform routed host by host over links that join none; see
/// [`arcs`]), so that a chain of links from node to node is a path.
pub(crate) fn links_join_nodes(topo: &Topology) -> bool {
    !routes_given(topo) || joined(topo, &node_arcs(topo))
}

/// Whether routes are given host pair by host pair (a SimGrid platform's)
/// rather than found in the network's links.
fn routes_given(topo: &Topology) -> bool {
    match &topo.kind {
        Kind::Graph(g) | Kind::Tree(g) => g.routes_given(),
        _ => false,
    }
}

/// Whether `arcs` join every rank's node to every other's (both ways from
/// the first).
fn joined(topo: &Topology, arcs: &[(NodeId, NodeId, f64)]) -> bool {
    let n = topo.num_nodes;
    let Some(&first) = topo.rank_node.first() else {
        return true;
    };
    let reach = |forward: bool| {
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(a, b, _) in arcs {
            let (a, b) = if forward { (a, b) } else { (b, a) };
            next[a as usize].push(b as usize);
        }
        let mut seen = vec![false; n];
        let mut stack = vec![first as usize];
        seen[first as usize] = true;
        while let Some(v) = stack.pop() {
            for &w in &next[v] {
                if !seen[w] {
                    seen[w] = true;
                    stack.push(w);
                }
            }
        }
        topo.rank_node.iter().all(|&v| seen[v as usize])
    };
    reach(true) && reach(false)
}

/// The route graph: each link is a pair of nodes of its own, entry to
/// exit with the link's capacity (numbered after the topology's nodes,
/// 2l and 2l + 1 past them); each pair of ranks' nodes is joined through
/// the links of its route in order, by arcs too wide to bind. It carries
/// every route, so every schedule's traffic, and also paths that join
/// pieces of different routes: those can only lower the bounds, which
/// stay bounds.
pub fn route_arcs(topo: &Topology) -> Vec<(NodeId, NodeId, f64)> {
    let base = topo.num_nodes as u64;
    let wide = 2.0
        * (0..topo.links.len())
            .map(|l| capacity(topo, l))
            .sum::<f64>()
        + 1.0;
    let mut rep: Vec<Option<usize>> = vec![None; topo.num_nodes];
    for (r, &v) in topo.rank_node.iter().enumerate() {
        rep[v as usize].get_or_insert(r);
    }
    let hosts: Vec<(usize, usize)> = rep
        .iter()
        .enumerate()
        .filter_map(|(v, r)| r.map(|r| (v, r)))
        .collect();
    let mut used = vec![false; topo.links.len()];
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut route = Vec::new();
    for &(u, ru) in &hosts {
        for &(v, rv) in &hosts {
            if u == v {
                continue;
            }
            route.clear();
            topo.route(ru, rv, &mut route);
            if route.is_empty() {
                continue;
            }
            let mut at = u as u64;
            for &l in &route {
                used[l as usize] = true;
                let entry = base + 2 * l as u64;
                if seen.insert((at, entry)) {
                    out.push((at as NodeId, entry as NodeId, wide));
                }
                at = entry + 1;
            }
            if seen.insert((at, v as u64)) {
                out.push((at as NodeId, v as NodeId, wide));
            }
        }
    }
    for (l, _) in used.iter().enumerate().filter(|(_, &u)| u) {
        let entry = base + 2 * l as u64;
        out.push((entry as NodeId, (entry + 1) as NodeId, capacity(topo, l)));
    }
    out
}

/// Nodes of a network of `arcs`: the topology's and any the arcs add.
pub(crate) fn total_nodes(topo: &Topology, arcs: &[(NodeId, NodeId, f64)]) -> usize {
    arcs.iter()
        .map(|&(a, b, _)| a.max(b) as usize + 1)
        .max()
        .unwrap_or(0)
        .max(topo.num_nodes)
}

/// [`arcs`] between the topology's nodes: its links' ends.
fn node_arcs(topo: &Topology) -> Vec<(NodeId, NodeId, f64)> {
    let mut out: Vec<(NodeId, NodeId, f64)> = Vec::with_capacity(topo.links.len());
    for (id, l) in topo.links.iter().enumerate() {
        // A node's own link for its ranks' messages stays inside the node:
        // it crosses no cut between nodes.
        if l.from == l.to {
            continue;
        }
        let cap = capacity(topo, id);
        out.push((l.from, l.to, cap));
        if topo.both_ways(id as u32) {
            out.push((l.to, l.from, cap));
        }
    }
    out
}

/// Ranks held by each node.
fn ranks_on(topo: &Topology) -> Vec<usize> {
    let mut k = vec![0usize; topo.num_nodes];
    for &n in &topo.rank_node {
        k[n as usize] += 1;
    }
    k
}

/// The cut bound of `collective` on `topo`, `size_bytes` read as
/// `simulate --size` reads it (the block for allgather, the buffer for the
/// others).
pub fn cut_bound(topo: &Topology, collective: Collective, size_bytes: u64) -> Result<CutBound> {
    cut_bound_within(topo, collective, size_bytes, &Deadline::NONE)
}

/// [`cut_bound`], giving up with a `time_limit` error (checked between
/// max flows) once `deadline` passes.
pub fn cut_bound_within(
    topo: &Topology,
    collective: Collective,
    size_bytes: u64,
    deadline: &Deadline,
) -> Result<CutBound> {
    cut_bound_on(topo, &arcs(topo), collective, size_bytes, deadline)
}

/// [`cut_bound`] with the network's connections given: `arcs` as
/// [`arcs`] lists them, their bandwidths perhaps changed (a half-duplex
/// cable split between its two directions, [`crate::split_bound`]).
pub(crate) fn cut_bound_on(
    topo: &Topology,
    arcs: &[(NodeId, NodeId, f64)],
    collective: Collective,
    size_bytes: u64,
    deadline: &Deadline,
) -> Result<CutBound> {
    let m = size_bytes as f64;
    let n = topo.num_ranks();
    let d = deadline;
    match collective {
        Collective::Bcast { root } => rooted(topo, arcs, root, m, false, d),
        Collective::Reduce { root } => rooted(topo, arcs, root, m, true, d),
        Collective::Allgather => spread(topo, arcs, m, false, d),
        Collective::ReduceScatter => spread(topo, arcs, m / n as f64, true, d),
        Collective::Allreduce => {
            let rs = spread(topo, arcs, m / n as f64, true, d)?;
            let ag = spread(topo, arcs, m / n as f64, false, d)?;
            Ok(CutBound {
                seconds: rs.seconds + ag.seconds,
                cut: rs.cut,
            })
        }
        other => {
            Err(fail!(Optimize, Problem,
            "the cut bound covers bcast, reduce, allgather, reduce_scatter and allreduce, not {}",
            other.name()
        ))
        }
    }
}

/// A network of `arcs` (reversed for `reverse`), with
/// `extra` more nodes after the topology's; and each arc as built: (from,
/// to, bandwidth, its index in the network).
fn network(
    topo: &Topology,
    arcs: &[(NodeId, NodeId, f64)],
    reverse: bool,
    extra: usize,
) -> (FlowNet, Vec<(usize, usize, f64, usize)>) {
    let mut net = FlowNet::new(total_nodes(topo, arcs) + extra);
    let built = arcs
        .iter()
        .map(|&(a, b, bw)| {
            let (a, b) = if reverse { (b, a) } else { (a, b) };
            let (a, b) = (a as usize, b as usize);
            (a, b, bw, net.add_arc(a, b, bw))
        })
        .collect();
    (net, built)
}

/// The first rank on `node` (for messages).
fn rank_of(topo: &Topology, node: usize) -> usize {
    topo.rank_node
        .iter()
        .position(|&x| x as usize == node)
        .unwrap_or(0)
}

fn disconnected(topo: &Topology, a: usize, b: usize) -> crate::error::Error {
    fail!(
        Optimize,
        Problem,
        "topology {}: no path carries data from rank {} ({}) to rank {} ({})",
        topo.name,
        rank_of(topo, a),
        topo.node_name(a as NodeId),
        rank_of(topo, b),
        topo.node_name(b as NodeId)
    )
}

/// bcast (`reverse` false) or reduce (true) of `m` bytes at `root`.
fn rooted(
    topo: &Topology,
    arcs: &[(NodeId, NodeId, f64)],
    root: u32,
    m: f64,
    reverse: bool,
    deadline: &Deadline,
) -> Result<CutBound> {
    let Some(&root_node) = topo.rank_node.get(root as usize) else {
        return Err(fail!(
            Optimize,
            Problem,
            "root {root} is not a rank of {} ({} ranks)",
            topo.name,
            topo.num_ranks()
        ));
    };
    let root_node = root_node as usize;
    let (mut net, _) = network(topo, arcs, reverse, 0);
    let held = ranks_on(topo);
    let mut best = CutBound {
        seconds: 0.0,
        cut: Vec::new(),
    };
    let sinks = held.iter().filter(|&&k| k > 0).count().saturating_sub(1);
    let started = std::time::Instant::now();
    let mut done = 0usize;
    for (v, &k) in held.iter().enumerate() {
        if k == 0 || v == root_node {
            continue;
        }
        deadline.check(|| {
            format!(
                "computing the cut bound: {done} of its {sinks} max flows took {}",
                pace(started, done, sinks)
            )
        })?;
        done += 1;
        let f = net.max_flow(root_node, v);
        if f <= 0.0 {
            let (a, b) = if reverse {
                (v, root_node)
            } else {
                (root_node, v)
            };
            return Err(disconnected(topo, a, b));
        }
        let t = m / f;
        if t > best.seconds || best.cut.is_empty() {
            let side = net.source_side();
            best = CutBound {
                seconds: t,
                cut: (0..topo.num_nodes)
                    .filter(|&x| !side[x])
                    .map(|x| x as NodeId)
                    .collect(),
            };
        }
    }
    Ok(best)
}

/// allgather of `m` bytes a rank (`reverse` false), or reduce_scatter of
/// `m` bytes a chunk (true): the largest m · |R \ S| / B(S), by
/// Dinkelbach's method (see the module's comment).
fn spread(
    topo: &Topology,
    arcs: &[(NodeId, NodeId, f64)],
    m: f64,
    reverse: bool,
    deadline: &Deadline,
) -> Result<CutBound> {
    let held = ranks_on(topo);
    let n = topo.num_ranks();
    let nodes: Vec<usize> = (0..topo.num_nodes).filter(|&v| held[v] > 0).collect();
    if nodes.len() < 2 || m == 0.0 {
        return Ok(CutBound {
            seconds: 0.0,
            cut: Vec::new(),
        });
    }
    let total = total_nodes(topo, arcs);
    let source = total;
    let (mut net, arcs) = network(topo, arcs, reverse, 1);
    for &v in &nodes {
        net.add_arc(source, v, m * held[v] as f64);
    }
    let need = m * n as f64;
    // The ratio of a sink side S: m · |R \ S| / B_in(S) on the network
    // as built (B_out on the topology when reversed).
    let ratio = |inside: &[bool]| -> (f64, f64) {
        let outside_ranks: usize = nodes
            .iter()
            .filter(|&&v| !inside[v])
            .map(|&v| held[v])
            .sum();
        let b_in: f64 = arcs
            .iter()
            .filter(|&&(x, y, _, _)| !inside[x] && inside[y])
            .map(|&(_, _, b, _)| b)
            .sum();
        (m * outside_ranks as f64, b_in)
    };
    // Start from the best single node.
    let mut best: Option<(f64, Vec<bool>)> = None;
    for &v in &nodes {
        let mut inside = vec![false; total];
        inside[v] = true;
        let (data, b) = ratio(&inside);
        if b <= 0.0 {
            let other = *nodes.iter().find(|&&u| u != v).expect("two nodes");
            let (a, z) = if reverse { (v, other) } else { (other, v) };
            return Err(disconnected(topo, a, z));
        }
        if best.as_ref().is_none_or(|(t, _)| data / b > *t) {
            best = Some((data / b, inside));
        }
    }
    let (mut t, mut inside) = best.expect("two nodes");
    loop {
        for &(_, _, bw, id) in &arcs {
            net.set_capacity(id, t * bw);
        }
        let mut raised = false;
        for (done, &v) in nodes.iter().enumerate() {
            deadline.check(|| {
                format!(
                    "computing the cut bound: a trial of {} max flows had done {done}",
                    nodes.len()
                )
            })?;
            let f = net.max_flow(source, v);
            if f < need * (1.0 - 1e-12) {
                let side = net.source_side();
                let sink: Vec<bool> = (0..total).map(|x| !side[x]).collect();
                let (data, b) = ratio(&sink);
                // Rounding in the flow can name the whole network (every
                // rank inside): no set, so no raise from this rank.
                let Some(&other) = nodes.iter().find(|&&u| !sink[u]) else {
                    continue;
                };
                if b <= 0.0 {
                    let (a, z) = if reverse { (v, other) } else { (other, v) };
                    return Err(disconnected(topo, a, z));
                }
                if data / b > t {
                    t = data / b;
                    inside = sink;
                    raised = true;
                    break;
                }
            }
        }
        if !raised {
            break;
        }
    }
    Ok(CutBound {
        seconds: t,
        cut: (0..topo.num_nodes)
            .filter(|&x| inside[x])
            .map(|x| x as NodeId)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use topocoll_topology::parse_spec;

    /// Brute force over every node set, as the bounds are defined.
    fn brute(topo: &Topology, c: Collective, m: f64) -> f64 {
        let held = ranks_on(topo);
        let arcs = arcs(topo);
        let n = topo.num_ranks() as f64;
        let nn = topo.num_nodes;
        let mut best_in: Vec<(f64, f64)> = Vec::new(); // (ranks outside, B_in) per S
        let mut best_out: Vec<(f64, f64)> = Vec::new();
        let mut holds_root = Vec::new();
        let root = c.root().map(|r| topo.rank_node[r as usize] as usize);
        for mask in 1u64..(1 << nn) - 1 {
            let inside = |v: usize| mask & (1 << v) != 0;
            let in_ranks: usize = (0..nn).filter(|&v| inside(v)).map(|v| held[v]).sum();
            if in_ranks == 0 {
                continue;
            }
            let b_in: f64 = arcs
                .iter()
                .filter(|&&(a, b, _)| !inside(a as usize) && inside(b as usize))
                .map(|x| x.2)
                .sum();
            let b_out: f64 = arcs
                .iter()
                .filter(|&&(a, b, _)| inside(a as usize) && !inside(b as usize))
                .map(|x| x.2)
                .sum();
            let outside = n - in_ranks as f64;
            best_in.push((outside, b_in));
            best_out.push((outside, b_out));
            holds_root.push(root.is_some_and(inside));
        }
        let max = |it: &mut dyn Iterator<Item = f64>| it.fold(0.0, f64::max);
        match c {
            Collective::Bcast { .. } => max(&mut best_in
                .iter()
                .zip(&holds_root)
                .filter(|(_, &h)| !h)
                .map(|(&(_, b), _)| m / b)),
            Collective::Reduce { .. } => max(&mut best_out
                .iter()
                .zip(&holds_root)
                .filter(|(_, &h)| !h)
                .map(|(&(_, b), _)| m / b)),
            Collective::Allgather => max(&mut best_in
                .iter()
                .filter(|(o, _)| *o > 0.0)
                .map(|&(o, b)| m * o / b)),
            Collective::ReduceScatter => max(&mut best_out
                .iter()
                .filter(|(o, _)| *o > 0.0)
                .map(|&(o, b)| m / n * o / b)),
            Collective::Allreduce => {
                brute(topo, Collective::ReduceScatter, m)
                    + brute(topo, Collective::Allgather, m / n)
            }
            _ => unreachable!(),
        }
    }

    /// Every collective's bound against the brute force on `t`.
    fn check_all(t: &Topology, what: &str) {
        let size = 45 * 1024;
        let last = t.num_ranks() as u32 - 1;
        for c in [
            Collective::Bcast { root: 0 },
            Collective::Bcast { root: last },
            Collective::Reduce { root: last / 2 },
            Collective::Allgather,
            Collective::ReduceScatter,
            Collective::Allreduce,
        ] {
            let got = cut_bound(t, c, size).unwrap().seconds;
            let want = brute(t, c, size as f64);
            assert!(
                (got - want).abs() <= 1e-9 * want,
                "{what} {}: {got} vs {want}",
                c.name()
            );
        }
    }

    #[test]
    fn bounds_equal_the_brute_force_maximum_over_node_sets() {
        for spec in ["torus:3x3", "mesh:2x3", "hypercube:3", "torus:5"] {
            check_all(&parse_spec(spec).unwrap(), spec);
        }
    }

    /// Random connected graphs of 3 to 9 nodes, some of them switches,
    /// with bandwidths of their own each way and half-duplex edges.
    #[test]
    fn bounds_equal_the_brute_force_on_random_heterogeneous_graphs() {
        let mut rng = topocoll_testkit::Rng::new(0x9e3779b97f4a7c15);
        let shape = topocoll_testkit::RandomGraph {
            min_nodes: 3,
            extra_nodes: 7,
            switch_one_in: 4,
            extra_edges_per_node: 2,
            half: topocoll_testkit::HalfDuplex::OneIn(3),
        };
        for case in 0..120 {
            let toml = shape.toml(&mut rng);
            let t = topocoll_topology::parse_toml("random", &toml)
                .unwrap_or_else(|e| panic!("case {case}: {e}\n{toml}"));
            check_all(&t, &format!("case {case}\n{toml}"));
        }
    }

    #[test]
    fn a_disconnected_pair_is_named() {
        let toml = "kind = \"graph\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
                    [[edge]]\na = \"a\"\nb = \"b\"\nbandwidth_ab = 1e9\nbandwidth_ba = 0\n";
        let Ok(t) = topocoll_topology::parse_toml("oneway", toml) else {
            return; // a zero bandwidth is refused when the file is read
        };
        let e = cut_bound(&t, Collective::Bcast { root: 1 }, 100).unwrap_err();
        assert!(e.to_string().contains("rank 1"), "{e}");
    }
}
