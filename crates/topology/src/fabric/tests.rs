//! The fabrics against their closed forms: links, diameter (the most
//! links a route between two hosts crosses), bisection (a maximum flow
//! between the two halves of the hosts, every cable one unit each way),
//! routes that are paths, minimal where claimed, and one-line refusals.

use crate::{parse_spec, LinkId, Topology};
use std::collections::VecDeque;

fn route(t: &Topology, a: usize, b: usize) -> Vec<LinkId> {
    let mut out = Vec::new();
    t.route(a, b, &mut out);
    out
}

/// Checks that every route joins its two hosts link by link through no
/// node twice, and returns the longest.
fn diameter(t: &Topology) -> usize {
    let mut most = 0;
    for a in 0..t.num_ranks() {
        for b in 0..t.num_ranks() {
            let r = route(t, a, b);
            if a == b {
                assert!(r.is_empty());
                continue;
            }
            let mut at = t.rank_node[a];
            let mut seen = vec![at];
            for &l in &r {
                let (from, to) = t.link_ends(l).expect("a fabric's links join nodes");
                assert_eq!(from, at, "{}: route {a} -> {b} breaks at link {l}", t.name);
                assert!(!seen.contains(&to), "{}: route {a} -> {b} loops", t.name);
                seen.push(to);
                at = to;
            }
            assert_eq!(
                at, t.rank_node[b],
                "{}: route {a} -> {b} ends elsewhere",
                t.name
            );
            most = most.max(r.len());
        }
    }
    most
}

/// Each node's hop distance from `from`, over the directed links.
fn hops_from(t: &Topology, from: u32) -> Vec<usize> {
    let mut out_of = vec![Vec::new(); t.num_nodes];
    for l in &t.links {
        out_of[l.from as usize].push(l.to);
    }
    let mut dist = vec![usize::MAX; t.num_nodes];
    dist[from as usize] = 0;
    let mut queue = VecDeque::from([from]);
    while let Some(v) = queue.pop_front() {
        for &w in &out_of[v as usize] {
            if dist[w as usize] == usize::MAX {
                dist[w as usize] = dist[v as usize] + 1;
                queue.push_back(w);
            }
        }
    }
    dist
}

/// Asserts every route between hosts `keep(a, b)` selects is a shortest path.
fn minimal(t: &Topology, keep: impl Fn(usize, usize) -> bool) {
    for a in 0..t.num_ranks() {
        let dist = hops_from(t, t.rank_node[a]);
        for b in 0..t.num_ranks() {
            if a != b && keep(a, b) {
                let want = dist[t.rank_node[b] as usize];
                assert_eq!(route(t, a, b).len(), want, "{}: {a} -> {b}", t.name);
            }
        }
    }
}

/// The maximum flow from the first half of the hosts to the second, each
/// directed link of capacity 1 (Edmonds–Karp).
fn bisection(t: &Topology) -> usize {
    let n = t.num_nodes + 2;
    let (source, sink) = (n - 2, n - 1);
    // Arcs as (to, capacity), each with its reverse at index ^ 1.
    let mut arcs: Vec<(usize, usize)> = Vec::new();
    let mut at: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut arc = |a: usize, b: usize, cap: usize, arcs: &mut Vec<(usize, usize)>| {
        at[a].push(arcs.len());
        arcs.push((b, cap));
        at[b].push(arcs.len());
        arcs.push((a, 0));
    };
    for l in &t.links {
        arc(l.from as usize, l.to as usize, 1, &mut arcs);
    }
    let h = t.num_ranks();
    for (r, &node) in t.rank_node.iter().enumerate() {
        if r < h / 2 {
            arc(source, node as usize, usize::MAX / 4, &mut arcs);
        } else {
            arc(node as usize, sink, usize::MAX / 4, &mut arcs);
        }
    }
    let mut flow = 0;
    loop {
        let mut via = vec![usize::MAX; n];
        let mut queue = VecDeque::from([source]);
        while let Some(v) = queue.pop_front() {
            for &k in &at[v] {
                let (w, cap) = arcs[k];
                if cap > 0 && via[w] == usize::MAX && w != source {
                    via[w] = k;
                    queue.push_back(w);
                }
            }
        }
        if via[sink] == usize::MAX {
            return flow;
        }
        let mut v = sink;
        let mut push = usize::MAX;
        while v != source {
            push = push.min(arcs[via[v]].1);
            v = arcs[via[v] ^ 1].0;
        }
        let mut v = sink;
        while v != source {
            arcs[via[v]].1 -= push;
            arcs[via[v] ^ 1].1 += push;
            v = arcs[via[v] ^ 1].0;
        }
        flow += push;
    }
}

#[test]
fn fat_trees_have_their_links_diameter_and_full_bisection() {
    for (k, r) in [(2, 1), (4, 1), (4, 2), (6, 1), (6, 3)] {
        let spec = if r == 1 {
            format!("fattree:{k}")
        } else {
            format!("fattree:{k}:{r}")
        };
        let t = parse_spec(&spec).unwrap();
        let k3 = k * k * k;
        assert_eq!(t.num_ranks(), r * k3 / 4, "{spec}");
        assert_eq!(t.num_nodes, r * k3 / 4 + 5 * k * k / 4, "{spec}");
        assert_eq!(t.links.len(), 2 * (r * k3 / 4 + k3 / 2), "{spec}");
        assert_eq!(diameter(&t), 6, "{spec}");
        // The cores carry K³/8 cables' worth between the halves' pods.
        assert_eq!(bisection(&t), k3 / 8, "{spec}");
        minimal(&t, |_, _| true);
    }
}

#[test]
fn dragonflies_have_their_links_diameter_and_global_bisection() {
    // (A, P, H, G, cables per pair of groups)
    for (a, p, h, g, m) in [
        (2, 1, 1, 3, 1),
        (4, 2, 2, 9, 1),
        (4, 2, 2, 4, 2),
        (4, 1, 2, 6, 1),
        (3, 2, 1, 1, 0),
    ] {
        let spec = format!("dragonfly:{a},{p},{h},{g}");
        let t = parse_spec(&spec).unwrap();
        assert_eq!(t.num_ranks(), g * a * p, "{spec}");
        let cables = g * a * p + g * a * (a - 1) / 2 + m * g * (g - 1) / 2;
        assert_eq!(t.links.len(), 2 * cables, "{spec}");
        let want = if g > 1 { 5 } else { 3 };
        assert_eq!(diameter(&t), want, "{spec}");
        if g.is_multiple_of(2) {
            // Whole groups on either side: the global cables between them.
            assert_eq!(bisection(&t), m * (g / 2) * (g / 2), "{spec}");
        }
        // Within a group, the shortest way; between groups, one global
        // cable (links past the hosts' and the local ones).
        let group = |x: usize| x / (a * p);
        minimal(&t, |x, y| group(x) == group(y));
        let first_global = 2 * (g * a * p + g * a * (a - 1) / 2);
        for x in 0..t.num_ranks() {
            for y in 0..t.num_ranks() {
                let globals = route(&t, x, y)
                    .iter()
                    .filter(|&&l| l as usize >= first_global)
                    .count();
                assert_eq!(
                    globals,
                    usize::from(group(x) != group(y)),
                    "{spec}: {x} -> {y}"
                );
            }
        }
    }
}

#[test]
fn hyperx_has_its_links_diameter_and_bisection() {
    for dims in [vec![4, 4], vec![3, 4, 2], vec![5], vec![1, 4]] {
        let spec = format!(
            "hyperx:{}",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("x")
        );
        let t = parse_spec(&spec).unwrap();
        let n: usize = dims.iter().product();
        assert_eq!(t.num_ranks(), n, "{spec}");
        let cables = n + dims.iter().map(|&s| n * (s - 1) / 2).sum::<usize>();
        assert_eq!(t.links.len(), 2 * cables, "{spec}");
        let differ = dims.iter().filter(|&&s| s > 1).count();
        assert_eq!(diameter(&t), 2 + differ, "{spec}");
        if n.is_multiple_of(2) {
            // The hosts' own cables are the narrowest cut: N/2.
            assert_eq!(bisection(&t), n / 2, "{spec}");
        }
        minimal(&t, |_, _| true);
    }
}

#[test]
fn rail_fat_trees_have_their_links_diameter_and_full_bisection() {
    for (servers, gpus) in [(4usize, 2usize), (40, 2), (64, 1), (3, 1)] {
        let spec = format!("railfat:{servers},{gpus}");
        let t = parse_spec(&spec).unwrap();
        let d = servers.min(32);
        let leaves = gpus * servers.div_ceil(d);
        let hosts = servers * gpus;
        assert_eq!(t.num_ranks(), hosts, "{spec}");
        assert_eq!(t.num_nodes, hosts + leaves + d, "{spec}");
        assert_eq!(t.links.len(), 2 * (hosts + leaves * d), "{spec}");
        assert_eq!(diameter(&t), if leaves > 1 { 4 } else { 2 }, "{spec}");
        if hosts.is_multiple_of(2) {
            assert_eq!(bisection(&t), hosts / 2, "{spec}");
        }
        minimal(&t, |_, _| true);
    }
    // NIC i of server s is host s·GPUS + i, on rail i's leaf.
    let t = parse_spec("railfat:4,2").unwrap();
    assert_eq!(t.node_name(route(&t, 3, 1)[0] as u32 / 2), "host-3");
    assert_eq!(t.link_name(route(&t, 3, 1)[0]), "host-3 -> leaf-1-0");
}

#[test]
fn bad_fabric_specs_are_refused_in_one_line() {
    for (spec, says) in [
        ("fattree:3", "must be even"),
        ("fattree:0", "at least 1"),
        ("fattree:4:0", "at least 1"),
        ("fattree:4:2:1", "takes 2"),
        ("fattree:x", "not a whole number"),
        ("fattree:4000", "routed pair by pair may have"),
        ("dragonfly:2,1,1,4", "at most A·H + 1 = 3 groups"),
        ("dragonfly:2,0,1,2", "at least 1"),
        ("dragonfly:2,1,1", "takes 4"),
        ("dragonfly:64,64,64,4097", "routed pair by pair may have"),
        ("hyperx:0x4", "at least 1"),
        ("hyperx:2x2x2x2", "one to three sizes"),
        ("hyperx:100000x100000", "routed pair by pair may have"),
        ("railfat:0,8", "at least 1"),
        ("railfat:8", "takes 2"),
        ("fatree:4", "did you mean 'fattree'"),
        ("hyperX:4x4", "did you mean 'hyperx'"),
    ] {
        let e = parse_spec(spec).unwrap_err().to_string();
        assert!(e.contains(says), "{spec}: {e}");
        assert!(!e.contains('\n'), "{spec}: {e}");
    }
}

#[test]
fn a_fat_tree_of_65536_hosts_builds_without_a_pair_table() {
    let t = parse_spec("fattree:64").unwrap();
    assert_eq!(t.num_ranks(), 65536);
    assert_eq!(t.links.len(), 2 * (65536 + 2 * 65536));
    assert_eq!(route(&t, 0, 65535).len(), 6);
    assert_eq!(route(&t, 0, 1).len(), 2);
}

#[test]
fn fabric_links_have_classes_for_the_bytes_by_class() {
    let classes = |spec: &str| {
        let t = parse_spec(spec).unwrap();
        let mut c: Vec<String> = (0..t.links.len() as LinkId)
            .map(|l| t.link_class(l).unwrap_or_default())
            .collect();
        c.sort();
        c.dedup();
        c
    };
    assert_eq!(
        classes("dragonfly:2,1,1,3"),
        ["global", "host", "intra-group"]
    );
    assert_eq!(classes("railfat:4,2"), ["host-leaf", "leaf-spine"]);
    assert_eq!(
        classes("hyperx:2x3"),
        ["dimension 0", "dimension 1", "host"]
    );
    assert_eq!(
        classes("fattree:4"),
        ["level 0-1", "level 1-2", "level 2-3"]
    );
}
