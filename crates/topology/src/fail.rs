//! Degraded networks: cables taken out of a topology (`--fail`).
//!
//! A failed link takes its cable with it: both directions of a full-duplex
//! cable, or the one link of a half-duplex one, as a dead cable does. What
//! remains is a [`Graph`] of the same nodes, hosts and ranks (rank r on
//! the same node as before), routed as any graph is (shortest in hops,
//! ties to the lowest link id): the regular routing of a torus or
//! hypercube does not survive a missing cable. Algorithms that need the
//! regular shape (a grid, a torus) then say so. A link's name takes every
//! cable that has a link of that name: a torus's dimension of 2 joins its
//! two nodes by two parallel cables of the same names, and a name fails
//! both.

use super::{Duplex, EdgeSpec, Graph, Kind, LinkId, NodeKind, NodeSpec, Topology};
use crate::error::fail;
use crate::error::Result;
use topocoll_base::did_you_mean;
use topocoll_base::param;

/// Which cables to take out, and when.
#[derive(Clone, Debug, PartialEq)]
pub enum Fail {
    /// The cables of these links, by the names `topocoll` gives links
    /// (`(0,0) -> (1,0)` on a grid, a platform's own names).
    Links(Vec<String>),
    /// `count` cables drawn at random (uniformly, without repeats) from a
    /// seed.
    Random { count: usize, seed: u64 },
    /// The cables `cables` names, off from `from_s` until `until_s` and
    /// on before and after (`LINK@T1..T2`): the routes stay, and a transfer
    /// that meets the outage fails, as SimGrid fails a transfer whose link
    /// turns off (a state profile on each of their links).
    During {
        cables: Box<Fail>,
        from_s: f64,
        until_s: f64,
    },
}

impl Fail {
    /// `random:K`, or a comma-separated list of link names (commas inside
    /// parentheses belong to a grid node's coordinates), either followed
    /// by `@T1..T2` for an outage from T1 until T2 seconds.
    pub fn parse(text: &str, seed: u64) -> Result<Fail> {
        let text = text.trim();
        if let Some((cables, window)) = text.rsplit_once('@') {
            let times = window.split_once("..").and_then(|(a, b)| {
                let t = |x: &str| {
                    x.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|t| t.is_finite() && *t >= 0.0)
                };
                Some((t(a)?, t(b)?))
            });
            return match times {
                Some((from_s, until_s)) if from_s < until_s => Ok(Fail::During {
                    cables: Box::new(Fail::parse(cables, seed)?),
                    from_s,
                    until_s,
                }),
                _ => Err(param!(
                    "fail",
                    ": an outage is LINKS@T1..T2, two times in seconds with T1 < T2, got '@{window}'"
                )),
            };
        }
        if let Some(k) = text.strip_prefix("random:") {
            let count = k
                .trim()
                .parse::<usize>()
                .map_err(|_| -> crate::error::Error {
                    param!(
                        "fail",
                        ": random:K takes a whole number of cables, got '{k}'"
                    )
                })?;
            return Ok(Fail::Random { count, seed });
        }
        let mut names = Vec::new();
        let (mut depth, mut start) = (0i32, 0);
        for (i, ch) in text.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    names.push(text[start..i].trim().to_string());
                    start = i + 1;
                }
                _ => {}
            }
        }
        names.push(text[start..].trim().to_string());
        if names.iter().any(|n| n.is_empty()) {
            return Err(param!(
                "fail",
                ": give link names separated by commas, or random:K"
            ));
        }
        Ok(Fail::Links(names))
    }
}

/// The cables of a topology: each a list of its links (two for a
/// full-duplex cable, forward first; one for a half-duplex one).
fn cables(topo: &Topology) -> Result<Vec<Vec<LinkId>>> {
    let mut paired = vec![false; topo.links.len()];
    let mut by_ends: std::collections::HashMap<(u32, u32), Vec<LinkId>> = Default::default();
    for (l, link) in topo.links.iter().enumerate() {
        by_ends
            .entry((link.from, link.to))
            .or_default()
            .push(l as LinkId);
    }
    let mut out = Vec::new();
    for (l, link) in topo.links.iter().enumerate() {
        let l = l as LinkId;
        if paired[l as usize] || topo.local.contains(&l) {
            continue;
        }
        paired[l as usize] = true;
        if topo.both_ways(l) {
            out.push(vec![l]);
            continue;
        }
        let back = by_ends
            .get(&(link.to, link.from))
            .and_then(|v| v.iter().copied().find(|&b| !paired[b as usize]));
        let Some(back) = back else {
            return Err(param!(
                "fail",
                ": {} has a one-way link ({}), which a degraded network cannot keep",
                topo.describe(),
                topo.link_name(l)
            ));
        };
        paired[back as usize] = true;
        out.push(vec![l, back]);
    }
    Ok(out)
}

/// `topo` without the cables `fail` names: a graph of the same nodes and
/// ranks. Refuses a topology whose ranks are already placed (fail links
/// first, then place ranks), a grid of sites (its WAN's per-stream model
/// has no graph form), and a platform whose routes are given pair by pair.
pub fn fail(topo: &Topology, fail: &Fail) -> Result<Topology> {
    if let Fail::During {
        cables,
        from_s,
        until_s,
    } = fail
    {
        return outage(topo, cables, *from_s, *until_s);
    }
    if topo.ranks_placed() {
        return Err(fail!(
            Topology,
            Failure,
            "links are failed before ranks are placed on hosts"
        ));
    }
    match &topo.kind {
        Kind::Sites(_) => {
            return Err(param!(
                "fail",
                ": a grid of sites has no degraded form (its WAN's per-stream rates need every site pair)"
            ))
        }
        Kind::Tree(g) | Kind::Graph(g) if g.routes_given() => {
            return Err(param!(
                "fail",
                ": {} routes host pairs as its file gives them; failing a link would leave routes through it",
                topo.name
            ))
        }
        _ => {}
    }
    let cables = cables(topo)?;
    let dead = dead_cables(topo, &cables, fail)?;
    let failed = dead.iter().filter(|&&d| d).count();
    let holds_rank = {
        let mut h = vec![false; topo.num_nodes];
        for &n in &topo.rank_node {
            h[n as usize] = true;
        }
        h
    };
    if topo.rank_node.windows(2).any(|w| w[0] >= w[1]) {
        return Err(param!(
            "fail",
            ": {}: its ranks are not in the order of its nodes, which a degraded graph keeps",
            topo.describe()
        ));
    }
    let nodes: Vec<NodeSpec> = (0..topo.num_nodes)
        .map(|v| NodeSpec {
            name: topo.node_name(v as u32),
            kind: if holds_rank[v] {
                NodeKind::Host
            } else {
                NodeKind::Switch
            },
        })
        .collect();
    let edges: Vec<EdgeSpec> = cables
        .iter()
        .zip(&dead)
        .filter(|(_, &d)| !d)
        .map(|(links, _)| {
            let ab = &topo.links[links[0] as usize];
            let ba = links.get(1).map(|&l| &topo.links[l as usize]).unwrap_or(ab);
            EdgeSpec {
                a: topo.node_name(ab.from),
                b: topo.node_name(ab.to),
                bandwidth: None,
                latency: None,
                bandwidth_ab: Some(ab.bandwidth),
                bandwidth_ba: Some(ba.bandwidth),
                latency_ab: Some(ab.latency),
                latency_ba: Some(ba.latency),
                duplex: if links.len() == 1 {
                    Duplex::Half
                } else {
                    Duplex::Full
                },
            }
        })
        .collect();
    check_connected(topo, &cables, &dead, failed)?;
    let g = Graph::network(&nodes, &edges, 0.0, 0.0)?;
    let name = format!(
        "{} without {failed} cable{}",
        topo.name,
        if failed == 1 { "" } else { "s" }
    );
    let mut out = Topology::from_kind(name, Kind::Graph(g));
    debug_assert_eq!(out.rank_node, topo.rank_node);
    // The nodes stay as they were: so do their speeds.
    out.speed.clone_from(&topo.speed);
    Ok(out)
}

/// `topo` with the cables `which` names off from `from_s` until
/// `until_s`: the same network and routes, a state profile on each of
/// their links. A link that has a state profile already is refused, as
/// SimGrid refuses a second one.
fn outage(topo: &Topology, which: &Fail, from_s: f64, until_s: f64) -> Result<Topology> {
    use crate::profile::{Profile, Target};
    let all = cables(topo)?;
    let dead = dead_cables(topo, &all, which)?;
    let mut profiles = topo.profiles.as_deref().cloned().unwrap_or_default();
    for links in all.iter().zip(&dead).filter(|(_, d)| **d).map(|(c, _)| c) {
        for &l in links {
            if profiles.of.iter().any(|(t, _)| *t == Target::State(l)) {
                return Err(param!(
                    "fail",
                    ": link '{}' has a state profile already",
                    topo.link_name(l)
                ));
            }
            profiles
                .of
                .push((Target::State(l), Profile::outage(from_s, until_s)));
        }
    }
    let mut out = topo.clone();
    out.profiles = Some(std::sync::Arc::new(profiles));
    Ok(out)
}

/// Which of `cables` `fail` takes out.
fn dead_cables(topo: &Topology, cables: &[Vec<LinkId>], fail: &Fail) -> Result<Vec<bool>> {
    let mut dead = vec![false; cables.len()];
    match fail {
        Fail::Links(names) => {
            let mut cable_of = vec![usize::MAX; topo.links.len()];
            for (c, links) in cables.iter().enumerate() {
                for &l in links {
                    cable_of[l as usize] = c;
                }
            }
            let all: Vec<(String, usize)> = (0..topo.links.len())
                .filter(|&l| cable_of[l] != usize::MAX)
                .map(|l| (topo.link_name(l as LinkId), cable_of[l]))
                .collect();
            // A name takes every cable it names: on a ring of 2 (a torus's
            // dimension of 2) the two parallel cables between its nodes
            // share their links' names, and both go.
            for name in names {
                let mut found = false;
                for (_, c) in all.iter().filter(|(n, _)| n == name) {
                    dead[*c] = true;
                    found = true;
                }
                if !found {
                    return Err(param!(
                        "fail",
                        ": {} has no link '{name}'{}",
                        topo.name,
                        did_you_mean(name, all.iter().map(|(n, _)| n.as_str()))
                    ));
                }
            }
        }
        Fail::During { cables: inner, .. } => return dead_cables(topo, cables, inner),
        &Fail::Random { count, seed } => {
            if count > cables.len() {
                return Err(param!(
                    "fail",
                    ": random:{count}: {} has {} cables",
                    topo.name,
                    cables.len()
                ));
            }
            // A partial Fisher-Yates shuffle on splitmix64.
            let mut state = seed;
            let mut next = move || {
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            };
            let mut order: Vec<usize> = (0..cables.len()).collect();
            for i in 0..count {
                let j = i + (next() % (cables.len() - i) as u64) as usize;
                order.swap(i, j);
                dead[order[i]] = true;
            }
        }
    }
    Ok(dead)
}

/// Refuses a degraded network where some rank cannot reach rank 0
/// (named by rank, before the graph would name nodes).
fn check_connected(
    topo: &Topology,
    cables: &[Vec<LinkId>],
    dead: &[bool],
    failed: usize,
) -> Result<()> {
    let mut parent: Vec<usize> = (0..topo.num_nodes).collect();
    fn root(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for (links, _) in cables.iter().zip(dead).filter(|(_, &d)| !d) {
        let l = &topo.links[links[0] as usize];
        let (a, b) = (
            root(&mut parent, l.from as usize),
            root(&mut parent, l.to as usize),
        );
        parent[a] = b;
    }
    if let Some(&first) = topo.rank_node.first() {
        let home = root(&mut parent, first as usize);
        for (r, &n) in topo.rank_node.iter().enumerate() {
            if root(&mut parent, n as usize) != home {
                return Err(param!(
                    "fail",
                    ": with {failed} cable(s) failed, rank {r} ({}) cannot reach rank 0 ({})",
                    topo.node_name(n),
                    topo.node_name(first)
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_spec;

    /// `LINK@T1..T2` keeps the network and its routes and puts an outage
    /// on both links of the cable; a bad window, and a second state
    /// profile on a link, are refused naming `--fail`.
    #[test]
    fn an_outage_is_a_state_profile_on_its_cable() {
        use crate::profile::{Profile, Target};
        let t = parse_spec("torus:4x4").unwrap();
        let name = t.link_name(0);
        let f = Fail::parse(&format!("{name}@1.5..2"), 0).unwrap();
        assert!(
            matches!(&f, Fail::During { from_s, until_s, .. } if (*from_s, *until_s) == (1.5, 2.0))
        );
        let out = fail(&t, &f).unwrap();
        assert_eq!((out.links.len(), &out.name), (t.links.len(), &t.name));
        let of = &out.profiles.as_deref().unwrap().of;
        assert_eq!(of.len(), 2, "both directions of the cable");
        assert!(of.iter().all(
            |(target, p)| matches!(target, Target::State(_)) && *p == Profile::outage(1.5, 2.0)
        ));
        let again = fail(&out, &f).unwrap_err().to_string();
        assert!(again.contains("has a state profile already"), "{again}");
        for bad in ["@2..1", "@1", "@a..b", "@-1..2"] {
            let e = Fail::parse(&format!("{name}{bad}"), 0)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("fail: an outage is LINKS@T1..T2"),
                "{bad}: {e}"
            );
        }
        let r = Fail::parse("random:2@0..1", 7).unwrap();
        let out = fail(&t, &r).unwrap();
        assert_eq!(out.profiles.as_deref().unwrap().of.len(), 4);
    }

    #[test]
    fn a_named_link_takes_its_cable() {
        let t = parse_spec("torus:4x4").unwrap();
        let name = t.link_name(0);
        let f = fail(&t, &Fail::parse(&name, 0).unwrap()).unwrap();
        assert_eq!(f.links.len(), t.links.len() - 2);
        assert_eq!(f.rank_node, t.rank_node);
        assert!(f.name.ends_with("without 1 cable"), "{}", f.name);
    }

    #[test]
    fn a_name_two_parallel_cables_share_fails_both() {
        // A dimension of 2: (0,0) and (1,0) are joined by the + and the -
        // cable, whose links have the same names.
        let t = parse_spec("torus:2x2").unwrap();
        let f = fail(&t, &Fail::parse("(0,0) -> (1,0)", 0).unwrap()).unwrap();
        assert_eq!(f.links.len(), t.links.len() - 4);
        assert!(f.name.ends_with("without 2 cables"), "{}", f.name);
        // Every name: every cable, and the ranks are cut apart.
        let all: Vec<String> = (0..t.links.len() as u32).map(|l| t.link_name(l)).collect();
        let e = fail(&t, &Fail::Links(all)).unwrap_err();
        assert!(e.to_string().contains("with 8 cable(s) failed"), "{e}");
    }

    #[test]
    fn grid_names_with_commas_parse() {
        let Fail::Links(v) = Fail::parse("(0,0) -> (1,0),(1,0) -> (2,0)", 0).unwrap() else {
            panic!()
        };
        assert_eq!(v, ["(0,0) -> (1,0)", "(1,0) -> (2,0)"]);
    }

    #[test]
    fn random_draws_are_seeded_and_distinct() {
        let t = parse_spec("torus:8x8").unwrap();
        let a = fail(&t, &Fail::parse("random:8", 3).unwrap()).unwrap();
        let b = fail(&t, &Fail::parse("random:8", 3).unwrap()).unwrap();
        let c = fail(&t, &Fail::parse("random:8", 4).unwrap()).unwrap();
        assert_eq!(a.links, b.links);
        assert_ne!(a.links, c.links);
        assert_eq!(a.links.len(), t.links.len() - 16);
    }

    #[test]
    fn an_unknown_link_suggests_the_nearest() {
        let t = parse_spec("torus:4x4").unwrap();
        let e = fail(&t, &Fail::parse("(0,0) -> (1,9)", 0).unwrap()).unwrap_err();
        assert!(
            e.to_string().contains("did you mean '(0,0) -> (1,0)'"),
            "{e}"
        );
    }

    #[test]
    fn cutting_a_rank_off_names_it() {
        // Node (2) of a 1D mesh of 3 has one cable.
        let t = parse_spec("mesh:3").unwrap();
        let e = fail(&t, &Fail::parse("(1) -> (2)", 0).unwrap()).unwrap_err();
        assert!(
            e.to_string()
                .contains("rank 2 ((2)) cannot reach rank 0 ((0))"),
            "{e}"
        );
    }
}
