//! The switch bound: a least time for a collective that holds beside the
//! cut bound ([`crate::cut`]) and exceeds it where switches (nodes that hold
//! no rank) stand between the ranks and the links in and out of a group of
//! nodes differ in bandwidth.
//!
//! A switch neither copies nor combines: every message goes whole from one
//! rank to one rank. Take a partition of the nodes into k parts, each
//! holding a rank (nodes that hold none may be left out of every part).
//! For each byte of a broadcast, each of the k − 1 parts without the root
//! must be entered by a message of its own from outside it, and that
//! message leaves the part its sender is in; for each byte of a reduction,
//! the contribution of each part without the root must leave it in a
//! message of its own, which enters the part its receiver is in. So
//! M · (k − 1) bytes enter the parts and M · (k − 1) leave them, and in
//! time T at most T · ΣB_in and T · ΣB_out can, summed over the parts
//! (the parts' sums without the root's part where the root's part needs
//! nothing):
//!
//! - bcast: T ≥ M (k − 1) / Σ_{P ∌ r} B_in(P) and M (k − 1) / Σ_P B_out(P);
//! - reduce: the same with in and out exchanged;
//! - allgather, m a rank: every block enters every part but its own, so
//!   N · m · (k − 1) bytes enter and leave the parts;
//! - reduce_scatter, M in all: each chunk's contributions from every part
//!   but its owner's leave their parts, M · (k − 1) in all;
//! - allreduce: the reduce_scatter's bound of M plus the allgather's of
//!   M / N, as for the cut bound (schedules built from the two).
//!
//! Where every node is in a part, every link between parts counts once in
//! ΣB_in and once in ΣB_out, and the ratio of the sums is at most the
//! largest ratio of one part's need to its own cut: the cut bound. The
//! switch bound can exceed it only where switches are left out of the
//! parts. On the dual-CPU tree (`examples/dual-cpu-cluster.toml`), a
//! reduce_scatter's cut bound is set by a node's uplink (1.25e8 B/s), but
//! each of the three other nodes' contributions to a chunk needs a message
//! of its own down into some node, and the downlinks carry 1e8 B/s: the
//! switch bound is 1.25× the cut bound, and it is reached.
//!
//! The maximum over partitions is exact on networks of at most
//! [`EXACT_PAIRS`] connected node pairs: every partition into connected
//! parts is the components of a subset of the pairs (components without a
//! rank are left out), and a part that is not connected is never better
//! than its pieces. On larger networks the partitions tried are the
//! components left by keeping only the pairs faster than each bandwidth
//! that occurs (the network's levels): a bound still, perhaps not the
//! largest.

use crate::cut::arcs;
use crate::error::fail;
use crate::error::Result;
use topocoll_schedule::Collective;
use topocoll_topology::{NodeId, Topology};

/// Networks with at most this many connected node pairs are searched
/// over every partition (2^pairs of them).
pub const EXACT_PAIRS: usize = 18;

/// Most levels tried on a larger network.
const MAX_LEVELS: usize = 64;

/// A switch bound and the partition that sets it.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchBound {
    /// Seconds: no schedule of the collective is faster (for allreduce, no
    /// schedule built from a reduce-scatter and an allgather).
    pub seconds: f64,
    /// The parts of the partition that sets it (of the reduce_scatter half
    /// for allreduce); empty where no partition bounds anything.
    pub parts: Vec<Vec<NodeId>>,
}

/// What a partition offers: its part count and the bandwidth into and out
/// of its parts, in all and without the root's part.
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    k: usize,
    in_all: f64,
    out_all: f64,
    in_no_root: f64,
    out_no_root: f64,
}

/// Which sums bound a collective's data, each as (data factor, sum); the
/// data is `factor · (k − 1)` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Bcast,
    Reduce,
    /// allgather and reduce_scatter: every part both ways.
    Spread,
}

impl Shape {
    /// The least time the partition allows for `data · (k − 1)` bytes.
    fn seconds(self, s: &Sums, data: f64) -> f64 {
        if s.k < 2 {
            return 0.0;
        }
        let need = data * (s.k - 1) as f64;
        let (a, b) = match self {
            Shape::Bcast => (s.in_no_root, s.out_all),
            Shape::Reduce => (s.out_no_root, s.in_all),
            Shape::Spread => (s.in_all, s.out_all),
        };
        let over = |cap: f64| if cap > 0.0 { need / cap } else { 0.0 };
        over(a).max(over(b))
    }
}

/// The switch bound of `collective` on `topo`, `size_bytes` read as
/// `simulate --size` reads it (the block for allgather).
pub fn switch_bound(
    topo: &Topology,
    collective: Collective,
    size_bytes: u64,
) -> Result<SwitchBound> {
    if !crate::cut::links_join_nodes(topo) {
        // Links that join no nodes, routed host by host: the same argument
        // over the fixed routes ([`crate::route_bound`]).
        return Ok(SwitchBound {
            seconds: crate::route_bound::route_bound(topo, collective, size_bytes),
            parts: Vec::new(),
        });
    }
    let m = size_bytes as f64;
    let n = topo.num_ranks() as f64;
    let (shape, data, root) = match collective {
        Collective::Bcast { root } => (Shape::Bcast, m, Some(root)),
        Collective::Reduce { root } => (Shape::Reduce, m, Some(root)),
        Collective::Allgather => (Shape::Spread, m * n, None),
        Collective::ReduceScatter => (Shape::Spread, m, None),
        Collective::Allreduce => {
            // Both halves move M (k − 1) bytes over the same sums: the
            // same partition sets both.
            let half = best(topo, Shape::Spread, m, None)?;
            return Ok(SwitchBound {
                seconds: 2.0 * half.seconds,
                parts: half.parts,
            });
        }
        other => {
            return Err(fail!(Optimize, Problem,
                "the switch bound covers bcast, reduce, allgather, reduce_scatter and allreduce, not {}",
                other.name()
            ))
        }
    };
    best(topo, shape, data, root)
}

/// The largest bound over the partitions tried.
fn best(topo: &Topology, shape: Shape, data: f64, root: Option<u32>) -> Result<SwitchBound> {
    let root_node = match root {
        Some(r) => Some(*topo.rank_node.get(r as usize).ok_or_else(|| {
            fail!(
                Optimize,
                Problem,
                "root {r} is not a rank of {} ({} ranks)",
                topo.name,
                topo.num_ranks()
            )
        })? as usize),
        None => None,
    };
    let arcs: Vec<(usize, usize, f64)> = arcs(topo)
        .into_iter()
        .map(|(a, b, c)| (a as usize, b as usize, c))
        .collect();
    let pairs = pairs(&arcs);
    let mut held = vec![false; topo.num_nodes];
    for &v in &topo.rank_node {
        held[v as usize] = true;
    }
    let mut found = SwitchBound {
        seconds: 0.0,
        parts: Vec::new(),
    };
    let mut consider = |label: &[usize]| {
        let (sums, part) = sums(label, &held, &arcs, root_node);
        let t = shape.seconds(&sums, data);
        if t > found.seconds {
            found = SwitchBound {
                seconds: t,
                parts: parts_of(&part, sums.k),
            };
        }
    };
    let mut uf = UnionFind::new(topo.num_nodes);
    if pairs.len() <= EXACT_PAIRS {
        for mask in 0u64..1 << pairs.len() {
            uf.reset();
            for (i, &(a, b, _)) in pairs.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    uf.union(a, b);
                }
            }
            consider(&uf.labels());
        }
    } else {
        let mut levels: Vec<f64> = pairs.iter().map(|p| p.2).collect();
        levels.sort_by(f64::total_cmp);
        levels.dedup();
        // At most MAX_LEVELS of them, spread over the sorted values.
        let step = levels.len().div_ceil(MAX_LEVELS).max(1);
        for &level in levels.iter().step_by(step) {
            uf.reset();
            for &(a, b, c) in &pairs {
                if c > level {
                    uf.union(a, b);
                }
            }
            consider(&uf.labels());
        }
    }
    Ok(found)
}

/// The connected node pairs, each with the larger bandwidth of its arcs
/// (the level it belongs to).
fn pairs(arcs: &[(usize, usize, f64)]) -> Vec<(usize, usize, f64)> {
    let mut out: Vec<(usize, usize, f64)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for &(a, b, c) in arcs {
        let key = (a.min(b), a.max(b));
        let at = *index.entry(key).or_insert_with(|| {
            out.push((key.0, key.1, 0.0));
            out.len() - 1
        });
        out[at].2 = out[at].2.max(c);
    }
    out
}

/// The sums of the partition whose parts are the components (`label`) that
/// hold a rank, and each node's part (`usize::MAX` for none).
fn sums(
    label: &[usize],
    held: &[bool],
    arcs: &[(usize, usize, f64)],
    root: Option<usize>,
) -> (Sums, Vec<usize>) {
    let mut number = vec![usize::MAX; label.len() + 1];
    let mut k = 0;
    for v in 0..label.len() {
        if held[v] && number[label[v]] == usize::MAX {
            number[label[v]] = k;
            k += 1;
        }
    }
    let part: Vec<usize> = label.iter().map(|&c| number[c]).collect();
    let root_part = root.map_or(usize::MAX, |r| part[r]);
    let mut s = Sums {
        k,
        ..Sums::default()
    };
    for &(a, b, c) in arcs {
        let (pa, pb) = (part[a], part[b]);
        if pa == pb {
            continue;
        }
        if pb != usize::MAX {
            s.in_all += c;
            if pb != root_part {
                s.in_no_root += c;
            }
        }
        if pa != usize::MAX {
            s.out_all += c;
            if pa != root_part {
                s.out_no_root += c;
            }
        }
    }
    (s, part)
}

fn parts_of(part: &[usize], k: usize) -> Vec<Vec<NodeId>> {
    let mut out = vec![Vec::new(); k];
    for (v, &p) in part.iter().enumerate() {
        if p != usize::MAX {
            out[p].push(v as NodeId);
        }
    }
    out
}

/// Components of node pairs joined so far.
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    fn reset(&mut self) {
        for (v, p) in self.parent.iter_mut().enumerate() {
            *p = v;
        }
    }

    fn find(&mut self, mut v: usize) -> usize {
        while self.parent[v] != v {
            self.parent[v] = self.parent[self.parent[v]];
            v = self.parent[v];
        }
        v
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a] = b;
        }
    }

    /// Each node's component, named by its representative.
    fn labels(&mut self) -> Vec<usize> {
        (0..self.parent.len()).map(|v| self.find(v)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::cut_bound;
    use topocoll_topology::{parse_spec, parse_toml};

    /// Brute force over every assignment of nodes to parts (a node holding
    /// no rank may be in none), as the bound is defined.
    fn brute(topo: &Topology, shape: Shape, data: f64, root: Option<usize>) -> f64 {
        let nn = topo.num_nodes;
        let arcs: Vec<(usize, usize, f64)> = arcs(topo)
            .into_iter()
            .map(|(a, b, c)| (a as usize, b as usize, c))
            .collect();
        let mut held = vec![false; nn];
        for &v in &topo.rank_node {
            held[v as usize] = true;
        }
        // Labels 0..nn name parts, nn is "in none"; a label whose nodes
        // hold no rank is no part (`sums` leaves it out), the same as none.
        let mut label = vec![0usize; nn];
        let mut best = 0.0f64;
        loop {
            if (0..nn).all(|v| !held[v] || label[v] < nn) {
                let (s, _) = sums(&label, &held, &arcs, root);
                best = best.max(shape.seconds(&s, data));
            }
            let mut v = 0;
            loop {
                if v == nn {
                    return best;
                }
                label[v] += 1;
                if label[v] <= nn {
                    break;
                }
                label[v] = 0;
                v += 1;
            }
        }
    }

    fn graph(seed: u64, max_nodes: u64) -> Topology {
        let mut rng = topocoll_testkit::Rng::new(seed.wrapping_mul(0x9e3779b97f4a7c15) | 1);
        topocoll_testkit::RandomGraph {
            min_nodes: 3,
            extra_nodes: max_nodes - 2,
            switch_one_in: 2,
            extra_edges_per_node: 1,
            half: topocoll_testkit::HalfDuplex::OneIn(3),
        }
        .topology(&mut rng)
    }

    #[test]
    fn the_search_over_pairs_finds_the_brute_force_maximum() {
        for seed in 0..60 {
            let t = graph(seed, 6);
            let root = t.rank_node[t.num_ranks() - 1] as usize;
            for (shape, root) in [
                (Shape::Spread, None),
                (Shape::Bcast, Some(root)),
                (Shape::Reduce, Some(root)),
            ] {
                let r = root.map(|_| t.num_ranks() as u32 - 1);
                let got = best(&t, shape, 1e6, r).unwrap().seconds;
                let want = brute(&t, shape, 1e6, root);
                assert!(
                    (got - want).abs() <= 1e-9 * want.max(1e-30),
                    "seed {seed} {shape:?}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn without_switches_it_never_exceeds_the_cut_bound() {
        for spec in ["torus:3x3", "mesh:2x3", "hypercube:3", "torus:4x4"] {
            let t = parse_spec(spec).unwrap();
            for c in [
                Collective::Bcast { root: 1 },
                Collective::Reduce { root: 2 },
                Collective::Allgather,
                Collective::ReduceScatter,
                Collective::Allreduce,
            ] {
                let cut = cut_bound(&t, c, 1 << 20).unwrap().seconds;
                let sw = switch_bound(&t, c, 1 << 20).unwrap().seconds;
                assert!(
                    sw <= cut * (1.0 + 1e-12),
                    "{spec} {}: {sw} > {cut}",
                    c.name()
                );
            }
        }
    }

    #[test]
    fn the_dual_cpu_trees_reduce_scatter_is_bound_by_the_downlinks() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../examples/dual-cpu-cluster.toml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let t = parse_toml(path, &text).unwrap();
        let m = 64u64 << 20;
        let cut = cut_bound(&t, Collective::ReduceScatter, m).unwrap().seconds;
        let sw = switch_bound(&t, Collective::ReduceScatter, m).unwrap();
        // Three messages of M/8 a chunk into some node, eight chunks, four
        // downlinks of 1e8 B/s; the cut: six chunks out of one uplink.
        assert!((sw.seconds - 3.0 * m as f64 / 4e8).abs() < 1e-12);
        assert!((cut - 6.0 * m as f64 / 8.0 / 1.25e8).abs() < 1e-12);
        assert_eq!(sw.parts.len(), 4);
    }
}
