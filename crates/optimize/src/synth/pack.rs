//! Packing spanning trees into a network's links by multiplicative weights
//! (Garg and Könemann's method for fractional packing): every link has a
//! length that grows with the load put on it; each round adds, for every
//! root, the arborescence of least total length (Chu, Liu and Edmonds'
//! algorithm), so later trees avoid the links earlier ones loaded. The
//! weights found are scaled so that no link carries more than its
//! bandwidth; the packing's value is then a time, comparable with the cut
//! bound ([`crate::cut`]).
//!
//! Trees are over ranks: an edge u → v is a message from rank u to rank v
//! on the topology's route, and its length the sum of its route's links'.
//! The candidate edges are the rank pairs whose route crosses no third
//! rank's node (neighbours on a torus; every pair of hosts behind one
//! switch), so a tree never sends data through a rank that could have
//! forwarded it.

use crate::error::fail;
use crate::error::Result;
use topocoll_base::limits::Deadline;
use topocoll_topology::{LinkId, Topology};

/// A candidate edge between two ranks and the links its messages load.
#[derive(Clone, Debug)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    /// The links loaded: the route `from` → `to` ([`edges`]), or where the
    /// edge carries reductions the route back, or both (the synthesis sets
    /// which).
    pub links: Vec<LinkId>,
    /// A path of the edge's own, `from` → `to` and back, where it is not the
    /// topology's route ([`edges_with_paths`]); its sends name it.
    pub path: Option<Box<Path>>,
}

/// A path of an edge's own: the links down (`from` → `to`) and up
/// (`to` → `from`, the same nodes in reverse).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub down: Vec<LinkId>,
    pub up: Vec<LinkId>,
}

/// The candidate edges of a topology (see the module's comment).
pub fn edges(topo: &Topology) -> Vec<Edge> {
    let p = topo.num_ranks();
    let mut holds = vec![u32::MAX; topo.num_nodes];
    for (r, &n) in topo.rank_node.iter().enumerate() {
        if holds[n as usize] == u32::MAX {
            holds[n as usize] = r as u32;
        }
    }
    let mut out = Vec::new();
    let mut route = Vec::new();
    for u in 0..p {
        for v in 0..p {
            if u == v {
                continue;
            }
            route.clear();
            topo.route(u, v, &mut route);
            let (nu, nv) = (topo.rank_node[u], topo.rank_node[v]);
            // Nodes the route passes through, ends excluded.
            let through_rank = route.iter().any(|&l| {
                let to = topo.links[l as usize].to;
                to != nu && to != nv && holds[to as usize] != u32::MAX
            });
            if !through_rank {
                out.push(Edge {
                    from: u as u32,
                    to: v as u32,
                    links: route.clone(),
                    path: None,
                });
            }
        }
    }
    out
}

/// Most paths of its own an edge gets beside the topology's route.
const MAX_PATHS: usize = 4;
/// Paths of an edge's own are at most this many hops longer than the
/// shortest between its ends.
const PATH_SLACK: usize = 2;
/// Most paths found for a pair of nodes before the diverse ones are chosen.
const MAX_FOUND: usize = 64;

/// The candidate edges of [`edges`] and, where switches stand between
/// ranks, edges with paths of their own: for every ordered pair of nodes
/// holding ranks, up to [`MAX_PATHS`] simple paths through nodes that hold
/// none, at most [`PATH_SLACK`] hops longer than the shortest, each chosen
/// to share the fewest links with the route and the paths chosen before.
/// A topology's route sends every message between two hosts one way; where
/// a longer way through switches has bandwidth of its own, only a path of
/// the edge's own can use it. The same as [`edges`] where every node holds
/// a rank, or where links join no nodes (a platform routed host by host).
pub fn edges_with_paths(topo: &Topology) -> Vec<Edge> {
    let mut out = edges(topo);
    if !has_switches(topo) {
        return out;
    }
    let n = topo.num_nodes;
    let mut ranks_of: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (r, &v) in topo.rank_node.iter().enumerate() {
        ranks_of[v as usize].push(r as u32);
    }
    // Hops out of each node: (next node, link), half-duplex links both ways.
    let mut next: Vec<Vec<(u32, LinkId)>> = vec![Vec::new(); n];
    for (id, l) in topo.links.iter().enumerate() {
        if l.from != l.to {
            next[l.from as usize].push((l.to, id as LinkId));
            if topo.both_ways(id as LinkId) {
                next[l.to as usize].push((l.from, id as LinkId));
            }
        }
    }
    let back = |a: u32, b: u32, l: LinkId| -> Option<LinkId> {
        if topo.both_ways(l) {
            return Some(l);
        }
        next[b as usize]
            .iter()
            .filter(|&&(to, _)| to == a)
            .map(|&(_, k)| k)
            .min_by_key(|&k| (k ^ 1 != l, k))
    };
    let hosts: Vec<u32> = (0..n as u32)
        .filter(|&v| !ranks_of[v as usize].is_empty())
        .collect();
    let (mut route, mut route_back) = (Vec::new(), Vec::new());
    for &b in &hosts {
        // Hops to b through rankless nodes only.
        let dist = hops_to(&next, &ranks_of, b);
        for &a in &hosts {
            if a == b || dist[a as usize] == usize::MAX {
                continue;
            }
            let (u, v) = (ranks_of[a as usize][0], ranks_of[b as usize][0]);
            route.clear();
            topo.route(u as usize, v as usize, &mut route);
            route_back.clear();
            topo.route(v as usize, u as usize, &mut route_back);
            let limit = dist[a as usize] + PATH_SLACK;
            // Each path both ways: a reduction takes it back up.
            let found: Vec<Path> = simple_paths(&next, &ranks_of, &dist, a, b, limit)
                .into_iter()
                .filter_map(|hops| {
                    let up: Option<Vec<LinkId>> =
                        hops.iter().rev().map(|&(x, y, l)| back(x, y, l)).collect();
                    Some(Path {
                        down: hops.iter().map(|h| h.2).collect(),
                        up: up?,
                    })
                })
                .collect();
            for path in diverse(found, [&route[..], &route_back[..]].concat()) {
                for &u in &ranks_of[a as usize] {
                    for &v in &ranks_of[b as usize] {
                        out.push(Edge {
                            from: u,
                            to: v,
                            links: path.down.clone(),
                            path: Some(Box::new(path.clone())),
                        });
                    }
                }
            }
        }
    }
    out
}

/// Whether some node holds no rank and links join nodes: where
/// [`edges_with_paths`] may find paths of the edges' own.
pub fn has_switches(topo: &Topology) -> bool {
    let mut holds = vec![false; topo.num_nodes];
    for &v in &topo.rank_node {
        holds[v as usize] = true;
    }
    holds.contains(&false) && crate::cut::links_join_nodes(topo)
}

/// Hops from every node to `b` through nodes holding no rank
/// (`usize::MAX`: none).
fn hops_to(next: &[Vec<(u32, LinkId)>], ranks_of: &[Vec<u32>], b: u32) -> Vec<usize> {
    let n = next.len();
    let mut prev: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (a, hops) in next.iter().enumerate() {
        for &(to, _) in hops {
            prev[to as usize].push(a as u32);
        }
    }
    let mut dist = vec![usize::MAX; n];
    dist[b as usize] = 0;
    let mut queue = std::collections::VecDeque::from([b]);
    while let Some(v) = queue.pop_front() {
        // Only rankless nodes pass paths on; b's neighbours are reached.
        if v != b && !ranks_of[v as usize].is_empty() {
            continue;
        }
        for &w in &prev[v as usize] {
            if dist[w as usize] == usize::MAX {
                dist[w as usize] = dist[v as usize] + 1;
                queue.push_back(w);
            }
        }
    }
    dist
}

/// A hop of a path: (from node, to node, link).
type Hop = (u32, u32, LinkId);

/// Up to [`MAX_FOUND`] simple paths a → b of at most `limit` hops whose
/// inner nodes hold no rank, shortest first.
fn simple_paths(
    next: &[Vec<(u32, LinkId)>],
    ranks_of: &[Vec<u32>],
    dist: &[usize],
    a: u32,
    b: u32,
    limit: usize,
) -> Vec<Vec<Hop>> {
    let mut walk = Walk {
        next,
        ranks_of,
        dist,
        b,
        limit,
        on: vec![false; next.len()],
        path: Vec::new(),
        out: Vec::new(),
    };
    walk.on[a as usize] = true;
    walk.from(a);
    let mut out = walk.out;
    out.sort_by_key(Vec::len);
    out
}

/// The depth-first walk of [`simple_paths`].
struct Walk<'a> {
    next: &'a [Vec<(u32, LinkId)>],
    ranks_of: &'a [Vec<u32>],
    /// Hops to `b` ([`hops_to`]): a walk goes on only where it can end
    /// within `limit`.
    dist: &'a [usize],
    b: u32,
    limit: usize,
    on: Vec<bool>,
    path: Vec<Hop>,
    out: Vec<Vec<Hop>>,
}

impl Walk<'_> {
    fn from(&mut self, at: u32) {
        if at == self.b {
            self.out.push(self.path.clone());
            return;
        }
        for &(to, l) in &self.next[at as usize] {
            let d = self.dist[to as usize];
            if self.out.len() >= MAX_FOUND
                || self.on[to as usize]
                || d == usize::MAX
                || self.path.len() + 1 + d > self.limit
                || (to != self.b && !self.ranks_of[to as usize].is_empty())
            {
                continue;
            }
            self.on[to as usize] = true;
            self.path.push((at, to, l));
            self.from(to);
            self.path.pop();
            self.on[to as usize] = false;
        }
    }
}

/// Up to [`MAX_PATHS`] of `found`, each with a link (either way) off
/// those `used` by the routes and the paths chosen before it: first the one
/// sharing the fewest, shorter first among equals.
fn diverse(mut found: Vec<Path>, mut used: Vec<LinkId>) -> Vec<Path> {
    let links = |p: &Path| p.down.iter().chain(&p.up).copied().collect::<Vec<LinkId>>();
    let mut chosen = Vec::new();
    while chosen.len() < MAX_PATHS {
        // A path wholly on links already used adds no way of its own.
        found.retain(|p| links(p).iter().any(|l| !used.contains(l)));
        let shared = |p: &Path| links(p).iter().filter(|l| used.contains(l)).count();
        let Some(i) = (0..found.len()).min_by_key(|&i| (shared(&found[i]), found[i].down.len()))
        else {
            break;
        };
        let p = found.swap_remove(i);
        used.extend(links(&p));
        chosen.push(p);
    }
    chosen
}

/// A spanning arborescence: the edge (index into the candidates) that
/// enters each rank, `usize::MAX` at the root.
pub type Arborescence = Vec<usize>;

/// The arborescence of least total cost rooted at `root` over ranks
/// `0..n` ([`super::arborescence::least`]), `None` if some rank cannot be
/// reached.
pub fn min_arborescence(
    n: usize,
    root: usize,
    edges: &[Edge],
    cost: &[f64],
) -> Option<Arborescence> {
    let ends: Vec<(u32, u32)> = edges.iter().map(|e| (e.from, e.to)).collect();
    super::arborescence::least(n, root, &ends, cost)
}

/// A packing: trees of each root with their weights (bytes per second
/// each tree carries, all links within their bandwidth).
#[derive(Clone, Debug)]
pub struct Packing {
    /// Per root (in the order asked for): (tree, rate in bytes/s).
    pub trees: Vec<Vec<(Arborescence, f64)>>,
}

/// Packs arborescences for each of `roots` at once, each root getting the
/// same rate (a concurrent packing): `rounds` rounds of one tree per root.
/// Which links a tree edge loads is the edge's own (`Edge::links`), so the
/// caller packs in-trees by giving edges the reverse routes' links.
/// Gives up with a `time_limit` error once `deadline` passes.
pub fn pack(
    topo: &Topology,
    edges: &[Edge],
    roots: &[usize],
    rounds: usize,
    eps: f64,
    deadline: &Deadline,
) -> Result<Packing> {
    let n = topo.num_ranks();
    let bw: Vec<f64> = (0..topo.links.len())
        .map(|l| crate::cut::capacity(topo, l))
        .collect();
    let mut length: Vec<f64> = bw.iter().map(|&b| 1.0 / b).collect();
    let mut found: Vec<Vec<(Arborescence, f64)>> = vec![Vec::new(); roots.len()];
    let mut cost = vec![0.0; edges.len()];
    let mut uses = vec![0u32; bw.len()];
    let started = std::time::Instant::now();
    for round in 0..rounds {
        for (k, &root) in roots.iter().enumerate() {
            deadline.check(|| {
                let (done, all) = (round * roots.len() + k, rounds * roots.len());
                format!(
                    "packing trees: {done} of {all} least arborescences took {}",
                    topocoll_base::limits::pace(started, done, all)
                )
            })?;
            for (c, e) in cost.iter_mut().zip(edges) {
                *c = e.links.iter().map(|&l| length[l as usize]).sum();
            }
            let Some(tree) = min_arborescence(n, root, edges, &cost) else {
                return Err(fail!(
                    Optimize,
                    Problem,
                    "topology {}: some rank cannot be reached from rank {root}",
                    topo.name
                ));
            };
            uses.iter_mut().for_each(|u| *u = 0);
            for &e in tree.iter().filter(|&&e| e != usize::MAX) {
                for &l in &edges[e].links {
                    uses[l as usize] += 1;
                }
            }
            // The most this tree alone could carry: its bottleneck.
            let rate = uses
                .iter()
                .zip(&bw)
                .filter(|(&u, _)| u > 0)
                .map(|(&u, &b)| b / u as f64)
                .fold(f64::INFINITY, f64::min);
            for (l, &u) in uses.iter().enumerate() {
                if u > 0 {
                    length[l] *= 1.0 + eps * rate * u as f64 / bw[l];
                }
            }
            match found[k].iter_mut().find(|(t, _)| *t == tree) {
                Some((_, w)) => *w += rate,
                None => found[k].push((tree, rate)),
            }
        }
    }
    // Each root's trees are normalised to the same total (concurrent),
    // then all scaled so that no link carries more than its bandwidth.
    let totals: Vec<f64> = found.iter().map(|t| t.iter().map(|x| x.1).sum()).collect();
    let least = totals.iter().copied().fold(f64::INFINITY, f64::min);
    let mut load = vec![0.0; bw.len()];
    for (trees, &total) in found.iter_mut().zip(&totals) {
        for (tree, w) in trees.iter_mut() {
            *w *= least / total;
            for &e in tree.iter().filter(|&&e| e != usize::MAX) {
                for &l in &edges[e].links {
                    load[l as usize] += *w;
                }
            }
        }
    }
    let over = load
        .iter()
        .zip(&bw)
        .map(|(&x, &b)| x / b)
        .fold(0.0, f64::max);
    if over > 0.0 {
        for trees in found.iter_mut() {
            for (_, w) in trees.iter_mut() {
                *w /= over;
            }
        }
    }
    Ok(Packing { trees: found })
}

/// Most tableau entries (rows × columns) [`exact`] solves with.
const MAX_TABLEAU: usize = 1 << 22;
/// Most rounds of pricing new trees into one program.
const MAX_PRICING: usize = 64;
/// A new tree is priced in when it gains at least this part of the value.
const PRICE_GAIN: f64 = 1e-6;
/// Most programs [`exact`] solves to make one root's optimum sparse
/// before it keeps the optimum as found.
const MAX_SOLVES: usize = 32;

/// The packing of [`pack`] made exact by linear programming: the trees'
/// weights maximise the rate λ every root gets at once, subject to no
/// link carrying more than its bandwidth, and new trees are priced in by
/// column generation (the least arborescence under the links' duals, the
/// price of a unit of their bandwidth, enters when it costs less than its
/// root's dual) until none gains.
///
/// For one root, the optimum is then made sparse: a schedule can afford
/// few trees, and an optimal vertex may still spread the rate over dozens
/// (35 on an 8×8 torus less 8 cables, whose cut is 3 links). Tree by tree,
/// the heaviest of the residual network's optimum is given as much rate
/// as its bottleneck allows if the rest still reaches the remaining rate,
/// and its optimal weight otherwise; on networks of equal links this
/// finds Edmonds' disjoint trees (3 there). `None` when a program is too
/// large for the dense simplex ([`super::lp`]).
pub fn exact(
    topo: &Topology,
    edges: &[Edge],
    roots: &[usize],
    start: &Packing,
    deadline: &Deadline,
) -> Result<Option<Packing>> {
    if let [root] = roots {
        if let Some(trees) = disjoint(topo, edges, *root) {
            return Ok(Some(Packing { trees: vec![trees] }));
        }
    }
    let mut lp = Program::new(topo, edges, roots);
    let Some(unit) = lp.unit else {
        return Ok(None);
    };
    for (k, trees) in start.trees.iter().enumerate() {
        for (t, _) in trees {
            lp.add(k, t.clone());
        }
    }
    let full = lp.caps.clone();
    let Some((lambda, x)) = lp.solve(&full) else {
        return Ok(None);
    };
    let optimum = |lp: &Program, x: &[f64]| {
        let mut trees: Vec<Vec<(Arborescence, f64)>> = vec![Vec::new(); roots.len()];
        for ((k, t), &w) in lp.cols.iter().zip(x) {
            if w > 1e-9 {
                trees[*k].push((t.clone(), w * unit));
            }
        }
        trees
    };
    if roots.len() > 1 {
        return Ok(Some(Packing {
            trees: optimum(&lp, &x),
        }));
    }
    let fallback = Packing {
        trees: optimum(&lp, &x),
    };
    let tol = lambda * 1e-7;
    let mut caps = full;
    let mut need = lambda;
    let mut chosen: Vec<(Arborescence, f64)> = Vec::new();
    let mut solves = 0;
    while need > tol {
        deadline.check(|| "solving the exact packing".into())?;
        solves += 2;
        if solves > MAX_SOLVES {
            return Ok(Some(fallback));
        }
        let Some((value, x)) = lp.solve(&caps) else {
            return Ok(Some(fallback));
        };
        let Some(j) = (0..x.len()).max_by(|&a, &b| x[a].total_cmp(&x[b])) else {
            return Ok(Some(fallback));
        };
        if value < need - tol || x[j] <= tol {
            return Ok(Some(fallback));
        }
        let uses = lp.uses(&lp.cols[j].1);
        let room = uses
            .iter()
            .map(|&(r, u)| caps[r] / u)
            .fold(f64::INFINITY, f64::min);
        let mut w = x[j];
        let most = room.min(need);
        if most > w + tol {
            let mut rest = caps.clone();
            for &(r, u) in &uses {
                rest[r] = (rest[r] - most * u).max(0.0);
            }
            let enough =
                most >= need - tol || lp.solve(&rest).is_some_and(|(v, _)| v >= need - most - tol);
            if enough {
                w = most;
            }
        }
        for &(r, u) in &uses {
            caps[r] = (caps[r] - w * u).max(0.0);
        }
        need -= w;
        let tree = lp.cols[j].1.clone();
        match chosen.iter_mut().find(|(t, _)| *t == tree) {
            Some((_, had)) => *had += w,
            None => chosen.push((tree, w)),
        }
    }
    let trees = chosen.into_iter().map(|(t, w)| (t, w * unit)).collect();
    Ok(Some(Packing { trees: vec![trees] }))
}

/// Most parallel arcs a link becomes in [`disjoint`].
const MAX_MULTIPLICITY: f64 = 64.0;

/// Edmonds' disjoint trees ([`super::edmonds`]) from `root`, each carrying
/// one unit of bandwidth, where they apply: every edge one link of its
/// own (no switch between ranks, no half-duplex cable that two edges
/// share) and every link a whole number of units, the least bandwidth.
fn disjoint(topo: &Topology, edges: &[Edge], root: usize) -> Option<Vec<(Arborescence, f64)>> {
    let mut owner = vec![usize::MAX; topo.links.len()];
    for (i, e) in edges.iter().enumerate() {
        let [l] = e.links[..] else { return None };
        if std::mem::replace(&mut owner[l as usize], i) != usize::MAX {
            return None;
        }
    }
    let cap = |e: &Edge| crate::cut::capacity(topo, e.links[0] as usize);
    let unit = edges.iter().map(cap).fold(f64::INFINITY, f64::min);
    if !(unit > 0.0 && unit.is_finite()) {
        return None;
    }
    let mut arcs = Vec::new();
    let mut edge_of = Vec::new();
    for (i, e) in edges.iter().enumerate() {
        let m = cap(e) / unit;
        if m > MAX_MULTIPLICITY || (m - m.round()).abs() > 1e-9 * m {
            return None;
        }
        for _ in 0..m.round() as usize {
            arcs.push((e.from, e.to));
            edge_of.push(i);
        }
    }
    let found = super::edmonds::disjoint(topo.num_ranks(), root, &arcs, usize::MAX);
    let mut trees: Vec<(Arborescence, f64)> = Vec::new();
    for t in found {
        let tree: Arborescence = t
            .iter()
            .map(|&a| if a == usize::MAX { a } else { edge_of[a] })
            .collect();
        match trees.iter_mut().find(|(x, _)| *x == tree) {
            Some((_, w)) => *w += unit,
            None => trees.push((tree, unit)),
        }
    }
    (!trees.is_empty()).then_some(trees)
}

/// The concurrent packing's linear program (see [`exact`]): variable λ and
/// one weight per (root, tree) column; a row per link some edge crosses
/// (the trees' loads within its capacity, in units of the largest), then
/// a row per root (λ no more than its trees' total).
struct Program<'a> {
    edges: &'a [Edge],
    roots: &'a [usize],
    ranks: usize,
    row_of: Vec<usize>,
    /// Each link row's capacity, in `unit`s.
    caps: Vec<f64>,
    /// Bytes/s of a unit of weight: the largest capacity (`None`: none).
    unit: Option<f64>,
    cols: Vec<(usize, Arborescence)>,
}

impl<'a> Program<'a> {
    fn new(topo: &Topology, edges: &'a [Edge], roots: &'a [usize]) -> Program<'a> {
        let mut row_of = vec![usize::MAX; topo.links.len()];
        let mut caps = Vec::new();
        for e in edges {
            for &l in &e.links {
                if row_of[l as usize] == usize::MAX {
                    row_of[l as usize] = caps.len();
                    caps.push(crate::cut::capacity(topo, l as usize));
                }
            }
        }
        let largest = caps.iter().copied().fold(0.0, f64::max);
        let unit = (largest > 0.0).then_some(largest);
        caps.iter_mut().for_each(|c| *c /= largest);
        Program {
            edges,
            roots,
            ranks: topo.num_ranks(),
            row_of,
            caps,
            unit,
            cols: Vec::new(),
        }
    }

    /// The link rows a tree loads, with how many of its edges cross each.
    fn uses(&self, tree: &Arborescence) -> Vec<(usize, f64)> {
        let mut uses: Vec<(usize, f64)> = Vec::new();
        for &e in tree.iter().filter(|&&e| e != usize::MAX) {
            for &l in &self.edges[e].links {
                let r = self.row_of[l as usize];
                match uses.iter_mut().find(|x| x.0 == r) {
                    Some(x) => x.1 += 1.0,
                    None => uses.push((r, 1.0)),
                }
            }
        }
        uses
    }

    fn add(&mut self, k: usize, tree: Arborescence) -> bool {
        if self.cols.iter().any(|(j, t)| *j == k && *t == tree) {
            return false;
        }
        self.cols.push((k, tree));
        true
    }

    /// The optimum under link capacities `caps` (in units), pricing in
    /// new trees until none gains: λ and each column's weight, in units.
    /// `None` when the tableau would exceed [`MAX_TABLEAU`] or the simplex
    /// fails.
    fn solve(&mut self, caps: &[f64]) -> Option<(f64, Vec<f64>)> {
        let links = self.caps.len();
        let rows = links + self.roots.len();
        let mut b = caps.to_vec();
        b.extend(std::iter::repeat_n(0.0, self.roots.len()));
        let mut cost = vec![0.0; self.edges.len()];
        for _ in 0..MAX_PRICING {
            let width = 1 + self.cols.len() + rows;
            if rows.saturating_mul(width) > MAX_TABLEAU {
                return None;
            }
            let mut a: Vec<Vec<f64>> = (0..rows)
                .map(|i| {
                    let mut row = vec![0.0; 1 + self.cols.len()];
                    row[0] = if i >= links { 1.0 } else { 0.0 };
                    row
                })
                .collect();
            for (j, (k, t)) in self.cols.iter().enumerate() {
                for (r, u) in self.uses(t) {
                    a[r][1 + j] = u;
                }
                a[links + k][1 + j] = -1.0;
            }
            let mut c = vec![0.0; 1 + self.cols.len()];
            c[0] = 1.0;
            let sol = super::lp::maximize(&a, &b, &c, 50 * width)?;
            let mut added = false;
            for (k, &root) in self.roots.iter().enumerate() {
                for (ce, e) in cost.iter_mut().zip(self.edges) {
                    *ce = e
                        .links
                        .iter()
                        .map(|&l| sol.duals[self.row_of[l as usize]])
                        .sum();
                }
                let tree = min_arborescence(self.ranks, root, self.edges, &cost)?;
                let price: f64 = tree
                    .iter()
                    .filter(|&&e| e != usize::MAX)
                    .map(|&e| cost[e])
                    .sum();
                if price < sol.duals[links + k] - PRICE_GAIN * sol.value.max(f64::MIN_POSITIVE) {
                    added |= self.add(k, tree);
                }
            }
            if !added {
                return Some((sol.value, sol.x[1..].to_vec()));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_min(n: usize, root: usize, edges: &[Edge], cost: &[f64]) -> Option<f64> {
        // Every choice of one entering edge per non-root node that forms a tree.
        let entering: Vec<Vec<usize>> = (0..n)
            .map(|v| {
                (0..edges.len())
                    .filter(|&i| edges[i].to as usize == v)
                    .collect()
            })
            .collect();
        let mut best: Option<f64> = None;
        let mut pick = vec![0usize; n];
        loop {
            let ok = (0..n).all(|v| v == root || !entering[v].is_empty());
            if !ok {
                return None;
            }
            // Check it is a tree: every node reaches the root.
            let parent = |v: usize| edges[entering[v][pick[v]]].from as usize;
            let tree = (0..n).all(|v| {
                let mut x = v;
                for _ in 0..=n {
                    if x == root {
                        return true;
                    }
                    x = parent(x);
                }
                false
            });
            if tree {
                let c: f64 = (0..n)
                    .filter(|&v| v != root)
                    .map(|v| cost[entering[v][pick[v]]])
                    .sum();
                best = Some(best.map_or(c, |b: f64| b.min(c)));
            }
            // Next combination.
            let mut v = 0;
            loop {
                if v == n {
                    return best;
                }
                if v != root && pick[v] + 1 < entering[v].len() {
                    pick[v] += 1;
                    break;
                }
                pick[v] = 0;
                v += 1;
            }
        }
    }

    #[test]
    fn min_arborescence_matches_brute_force() {
        let mut rng = topocoll_testkit::Rng::new(7u64);
        let mut rand = move |k: u64| rng.below(k);
        for _ in 0..1000 {
            let n = 2 + rand(6) as usize;
            let mut edges = Vec::new();
            for a in 0..n {
                for b in 0..n {
                    if a != b && rand(3) > 0 {
                        edges.push(Edge {
                            from: a as u32,
                            to: b as u32,
                            links: Vec::new(),
                            path: None,
                        });
                    }
                }
            }
            let cost: Vec<f64> = edges.iter().map(|_| (1 + rand(20)) as f64).collect();
            let root = rand(n as u64) as usize;
            let got = min_arborescence(n, root, &edges, &cost);
            let want = brute_min(n, root, &edges, &cost);
            match (got, want) {
                (None, None) => {}
                (Some(t), Some(w)) => {
                    // A spanning arborescence of the least cost.
                    let c: f64 = t
                        .iter()
                        .filter(|&&e| e != usize::MAX)
                        .map(|&e| cost[e])
                        .sum();
                    assert!((c - w).abs() < 1e-9, "{c} vs {w}");
                    for v in 0..n {
                        let mut x = v;
                        for _ in 0..=n {
                            if x == root {
                                break;
                            }
                            assert_eq!(edges[t[x]].to as usize, x);
                            x = edges[t[x]].from as usize;
                        }
                        assert_eq!(x, root);
                    }
                }
                (g, w) => panic!("{g:?} vs {w:?}"),
            }
        }
    }
}

#[cfg(test)]
mod paths {
    use super::*;
    use topocoll_topology::parse_toml;

    /// Whether `links` lead from node `a` to node `b`, each link crossed
    /// from its `from` to its `to` or, half duplex, the other way.
    fn leads(t: &Topology, links: &[LinkId], a: u32, b: u32) -> bool {
        let mut at = a;
        for &l in links {
            let link = &t.links[l as usize];
            at = if link.from == at {
                link.to
            } else if link.to == at && t.both_ways(l) {
                link.from
            } else {
                return false;
            };
        }
        at == b
    }

    #[test]
    fn edges_get_paths_of_their_own_through_switches() {
        // h0 and h1 share a half-duplex cable, and are joined the long way
        // through two switches; h2 hangs off s1.
        let t = parse_toml(
            "two-ways",
            r#"
kind = "graph"
bandwidth = 1e9
latency = 1e-6
[[node]]
name = "h0"
kind = "host"
[[node]]
name = "h1"
kind = "host"
[[node]]
name = "s0"
kind = "switch"
[[node]]
name = "s1"
kind = "switch"
[[node]]
name = "h2"
kind = "host"
[[edge]]
a = "h0"
b = "h1"
duplex = "half"
[[edge]]
a = "h0"
b = "s0"
[[edge]]
a = "s0"
b = "s1"
[[edge]]
a = "s1"
b = "h1"
[[edge]]
a = "s1"
b = "h2"
"#,
        )
        .unwrap();
        assert!(has_switches(&t));
        let all = edges_with_paths(&t);
        let plain = edges(&t);
        assert_eq!(all[..plain.len()].len(), plain.len());
        let own: Vec<&Edge> = all.iter().filter(|e| e.path.is_some()).collect();
        for e in &own {
            let p = e.path.as_ref().unwrap();
            let (a, b) = (t.rank_node[e.from as usize], t.rank_node[e.to as usize]);
            assert!(leads(&t, &p.down, a, b), "{e:?}");
            assert!(leads(&t, &p.up, b, a), "{e:?}");
            assert_eq!(e.links, p.down);
            let (mut route, mut back) = (Vec::new(), Vec::new());
            t.route(e.from as usize, e.to as usize, &mut route);
            t.route(e.to as usize, e.from as usize, &mut back);
            assert!(
                route != p.down || back != p.up,
                "a path of its own is not the routes both ways: {e:?}"
            );
        }
        // h0 → h1: the cable is the route, the switches' way the path.
        let h01: Vec<&&Edge> = own.iter().filter(|e| (e.from, e.to) == (0, 1)).collect();
        assert_eq!(h01.len(), 1);
        assert_eq!(h01[0].links.len(), 3);
        // h2 is reached only through s1: h1 → h2 has the route alone; h0 →
        // h2's route goes through h1 or the switches, and the other way is
        // a path of its own only where it avoids h1 (it must: h1 holds a
        // rank).
        assert!(own.iter().all(|e| {
            e.path.as_ref().unwrap().down.iter().all(|&l| {
                let l = &t.links[l as usize];
                [l.from, l.to].iter().all(|&v| {
                    v == t.rank_node[e.from as usize]
                        || v == t.rank_node[e.to as usize]
                        || t.rank_node.iter().all(|&r| r != v)
                })
            })
        }));
        // Without switches, no paths.
        let torus = topocoll_topology::parse_spec("torus:3x3").unwrap();
        assert!(!has_switches(&torus));
        assert_eq!(edges_with_paths(&torus).len(), edges(&torus).len());
    }
}

#[cfg(test)]
mod explore {
    use super::*;
    use topocoll_topology::parse_spec;

    fn value(t: &Topology, edges: &[Edge], pk: &Packing, keep: usize) -> f64 {
        let bw: Vec<f64> = t.links.iter().map(|l| l.bandwidth).collect();
        let mut load = vec![0.0; bw.len()];
        let mut total = 0.0;
        for trees in &pk.trees {
            let mut v: Vec<_> = trees.clone();
            v.sort_by(|a, b| b.1.total_cmp(&a.1));
            v.truncate(keep);
            for (tree, w) in &v {
                total += w;
                for &e in tree.iter().filter(|&&e| e != usize::MAX) {
                    for &l in &edges[e].links {
                        load[l as usize] += w;
                    }
                }
            }
        }
        let over = load
            .iter()
            .zip(&bw)
            .map(|(&x, &b)| x / b)
            .fold(0.0, f64::max);
        total / over / pk.trees.len() as f64
    }

    #[test]
    #[ignore]
    fn explore_packing_quality() {
        for spec in ["torus:4x4", "torus:8x8", "hypercube:4", "mesh:4x4"] {
            let t = parse_spec(spec).unwrap();
            let e = edges(&t);
            for (rounds, eps) in [(24, 0.3), (100, 0.1), (400, 0.05), (1000, 0.02)] {
                let pk = pack(&t, &e, &[0], rounds, eps, &Deadline::NONE).unwrap();
                let all: Vec<usize> = (0..t.num_ranks()).collect();
                let pk2 = pack(&t, &e, &all, rounds / 4, eps, &Deadline::NONE).unwrap();
                eprintln!(
                    "{spec} rounds {rounds} eps {eps}: bcast rate {:.3e} (keep8 {:.3e}), trees {}; allgather per-root {:.3e} keep8 {:.3e}",
                    value(&t, &e, &pk, 1000),
                    value(&t, &e, &pk, 8),
                    pk.trees[0].len(),
                    value(&t, &e, &pk2, 1000),
                    value(&t, &e, &pk2, 8)
                );
            }
        }
    }
}
