//! The route bound: the switch bound's argument ([`crate::switch_bound`])
//! on a network whose messages between hosts take fixed routes, the SimGrid
//! platforms routed host by host, where the cut bound can only cut the route
//! graph ([`crate::cut::route_arcs`]) and misses what the routes share.
//!
//! Only hosts copy and combine: every message goes whole from one host to
//! another over the links of their route. Let x_ab be the bytes host a
//! sends host b in all, over a schedule of time T. Each link l carries at
//! most T · B(l): the sum of x_ab over the pairs whose route crosses l is
//! at most T · B(l). Each host needs to receive and to send a least number
//! of bytes whatever the schedule (M a rank, N ranks, k of them on the
//! host):
//!
//! - bcast: every host without the root receives M; the root's host sends M;
//! - reduce: every host without the root sends M; the root's host receives M;
//! - allgather, m a rank: a host receives m · (N − k) and sends m · k;
//! - reduce_scatter, M in all: a host's contributions to the N − k chunks
//!   its ranks do not own leave it, (M / N) · (N − k) bytes (combined there
//!   or not), and its own k chunks need M / N bytes each from outside;
//! - allreduce: the reduce_scatter's bound of M plus the allgather's of
//!   M / N, as for the cut bound (schedules built from the two).
//!
//! The least T for which some x meets every constraint is a linear
//! program; its inverse, the largest rate λ at which the needs can be met
//! (needs · λ ≤ bytes in or out, links within bandwidth), is solved by
//! [`crate::synth`]'s simplex with the origin feasible. A backbone every
//! route crosses bounds the time by the bytes of all the needs over its
//! bandwidth (`cluster_backbone.xml`: M · 99 / 2.25 GB/s for a bcast, 5.5×
//! the cut bound); a half-duplex link both hosts' routes cross, by the two
//! ways' bytes together. The program ignores the order of messages and the
//! engines, so it is a bound, not a schedule.

use crate::cut::capacity;
use crate::synth::lp;
use topocoll_schedule::Collective;
use topocoll_topology::Topology;

/// Host pairs with a route above which no program is solved (its variables;
/// SimGrid's 100-host cluster has 9,900).
pub const MAX_PAIRS: usize = 10_000;

/// Pivots allowed to the simplex before the bound is given up.
const MAX_PIVOTS: usize = 50_000;

/// The route bound in seconds of `collective` on `topo`, `size_bytes` read
/// as `simulate --size` reads it; 0 where the program is too large or the
/// simplex does not finish (no bound is claimed).
pub fn route_bound(topo: &Topology, collective: Collective, size_bytes: u64) -> f64 {
    let m = size_bytes as f64;
    let n = topo.num_ranks() as f64;
    if let Collective::Allreduce = collective {
        let rs = route_bound(topo, Collective::ReduceScatter, size_bytes);
        let ag = route_bound(topo, Collective::Allgather, size_bytes) / n;
        // Each half's bound holds for any schedule of it; both are needed.
        return if rs > 0.0 && ag > 0.0 { rs + ag } else { 0.0 };
    }
    let hosts = Hosts::of(topo);
    let need = |k: f64, holds_root: bool| -> (f64, f64) {
        if k == n {
            return (0.0, 0.0);
        }
        match collective {
            Collective::Bcast { .. } if holds_root => (0.0, m),
            Collective::Bcast { .. } => (m, 0.0),
            Collective::Reduce { .. } if holds_root => (m, 0.0),
            Collective::Reduce { .. } => (0.0, m),
            Collective::Allgather => (m * (n - k), m * k),
            Collective::ReduceScatter => (m / n * k, m / n * (n - k)),
            _ => (0.0, 0.0),
        }
    };
    let root = collective.root().map(|r| topo.rank_node[r as usize]);
    let needs: Vec<(f64, f64)> = hosts
        .node
        .iter()
        .zip(&hosts.ranks)
        .map(|(&v, &k)| need(k as f64, Some(v) == root))
        .collect();
    solve(topo, &hosts, &needs).unwrap_or(0.0)
}

/// The nodes that hold ranks: each node, one of its ranks, and its count.
struct Hosts {
    node: Vec<u32>,
    rank: Vec<usize>,
    ranks: Vec<usize>,
}

impl Hosts {
    fn of(topo: &Topology) -> Hosts {
        let mut at = vec![usize::MAX; topo.num_nodes];
        let mut h = Hosts {
            node: Vec::new(),
            rank: Vec::new(),
            ranks: Vec::new(),
        };
        for (r, &v) in topo.rank_node.iter().enumerate() {
            let v = v as usize;
            if at[v] == usize::MAX {
                at[v] = h.node.len();
                h.node.push(v as u32);
                h.rank.push(r);
                h.ranks.push(0);
            }
            h.ranks[at[v]] += 1;
        }
        h
    }
}

/// Seconds: 1 / the largest λ with needs · λ met by bytes a second over
/// the routes, links within bandwidth. `None` where the program is too
/// large, unsolved, or nothing is needed.
fn solve(topo: &Topology, hosts: &Hosts, needs: &[(f64, f64)]) -> Option<f64> {
    let h = hosts.node.len();
    let most_need = needs.iter().map(|&(i, o)| i.max(o)).fold(0.0, f64::max);
    if most_need <= 0.0 || h * h.saturating_sub(1) > MAX_PAIRS {
        return None;
    }
    // Pairs with a route, and the links each crosses (as often as it does).
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut crossing: Vec<Vec<usize>> = vec![Vec::new(); topo.links.len()];
    let mut route = Vec::new();
    for a in 0..h {
        for b in 0..h {
            if a == b {
                continue;
            }
            route.clear();
            topo.route(hosts.rank[a], hosts.rank[b], &mut route);
            if route.is_empty() {
                continue;
            }
            for &l in &route {
                crossing[l as usize].push(pairs.len());
            }
            pairs.push((a, b));
        }
    }
    // Variables: λ, then each pair's rate; rates in units of the widest
    // link, needs in units of the largest, so the tableau's entries are at
    // most 1 in size.
    let widest = (0..topo.links.len())
        .filter(|&l| !crossing[l].is_empty())
        .map(|l| capacity(topo, l))
        .fold(0.0, f64::max);
    if widest <= 0.0 {
        return None;
    }
    let vars = 1 + pairs.len();
    let mut a: Vec<Vec<f64>> = Vec::new();
    let mut b: Vec<f64> = Vec::new();
    for (l, on) in crossing.iter().enumerate() {
        if on.is_empty() {
            continue;
        }
        let mut row = vec![0.0; vars];
        for &p in on {
            row[1 + p] += 1.0;
        }
        a.push(row);
        b.push(capacity(topo, l) / widest);
    }
    for (host, &(need_in, need_out)) in needs.iter().enumerate() {
        for (need, inward) in [(need_in, true), (need_out, false)] {
            if need <= 0.0 {
                continue;
            }
            let mut row = vec![0.0; vars];
            row[0] = need / most_need;
            for (p, &(from, to)) in pairs.iter().enumerate() {
                if (inward && to == host) || (!inward && from == host) {
                    row[1 + p] = -1.0;
                }
            }
            a.push(row);
            b.push(0.0);
        }
    }
    let mut c = vec![0.0; vars];
    c[0] = 1.0;
    let sol = lp::maximize(&a, &b, &c, MAX_PIVOTS)?;
    // A host that needs bytes but has no route in or out: λ stays 0, and
    // no bound is claimed (the cut bound names the disconnected pair).
    (sol.value > 0.0).then(|| most_need / (widest * sol.value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::cut_bound;
    use topocoll_topology::parse_spec;

    fn platform(name: &str) -> Topology {
        let path = format!(
            "{}/../../tests/data/simgrid-platforms/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        parse_spec(&path).unwrap()
    }

    #[test]
    fn a_backbone_every_route_crosses_bounds_the_bytes_of_all_needs() {
        let t = platform("cluster_backbone.xml");
        let n = t.num_ranks() as f64;
        assert_eq!(n, 100.0);
        let (bb, link) = (2.25e9, 125e6);
        let m = 1u64 << 20;
        let bc = route_bound(&t, Collective::Bcast { root: 3 }, m);
        let want = m as f64 * (n - 1.0) / bb;
        assert!((bc - want).abs() <= 1e-9 * want, "{bc} vs {want}");
        let cut = cut_bound(&t, Collective::Bcast { root: 3 }, m)
            .unwrap()
            .seconds;
        assert!((cut - m as f64 / link).abs() <= 1e-9 * cut);
        let ag = route_bound(&t, Collective::Allgather, m);
        let want = m as f64 * n * (n - 1.0) / bb;
        assert!((ag - want).abs() <= 1e-9 * want, "{ag} vs {want}");
    }

    #[test]
    fn a_link_both_ways_cross_carries_both_ways_bytes() {
        // Two hosts joined by one shared link: the allgather's two blocks
        // cross it one after the other.
        let t = platform("two_hosts.xml");
        let m = 1u64 << 20;
        let bw = t
            .links
            .iter()
            .map(|l| l.bandwidth)
            .fold(f64::INFINITY, f64::min);
        let ag = route_bound(&t, Collective::Allgather, m);
        let want = 2.0 * m as f64 / bw;
        assert!((ag - want).abs() <= 1e-9 * want, "{ag} vs {want}");
    }
}
