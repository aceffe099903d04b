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

use topocoll_core::error::Result;
use topocoll_core::invalid;
use topocoll_core::topology::{LinkId, Topology};

/// A candidate edge between two ranks and the links its route crosses.
#[derive(Clone, Debug)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    pub links: Vec<LinkId>,
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
                });
            }
        }
    }
    out
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
pub fn pack(
    topo: &Topology,
    edges: &[Edge],
    roots: &[usize],
    rounds: usize,
    eps: f64,
) -> Result<Packing> {
    let n = topo.num_ranks();
    let bw: Vec<f64> = (0..topo.links.len())
        .map(|l| crate::cut::capacity(topo, l))
        .collect();
    let mut length: Vec<f64> = bw.iter().map(|&b| 1.0 / b).collect();
    let mut found: Vec<Vec<(Arborescence, f64)>> = vec![Vec::new(); roots.len()];
    let mut cost = vec![0.0; edges.len()];
    let mut uses = vec![0u32; bw.len()];
    for _ in 0..rounds {
        for (k, &root) in roots.iter().enumerate() {
            for (c, e) in cost.iter_mut().zip(edges) {
                *c = e.links.iter().map(|&l| length[l as usize]).sum();
            }
            let Some(tree) = min_arborescence(n, root, edges, &cost) else {
                return Err(invalid!(
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
        let mut seed = 7u64;
        let mut rand = move |k: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % k
        };
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
mod explore {
    use super::*;
    use topocoll_core::topology::parse_spec;

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
                let pk = pack(&t, &e, &[0], rounds, eps).unwrap();
                let all: Vec<usize> = (0..t.num_ranks()).collect();
                let pk2 = pack(&t, &e, &all, rounds / 4, eps).unwrap();
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
