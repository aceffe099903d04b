//! SimGrid's FAT_TREE cluster (`FatTreeZone`): `topo_parameters="h;
//! m_1,…,m_h; w_1,…,w_h; p_1,…,p_h"`, h levels of switches above the hosts;
//! a switch of level l+1 has m_{l+1} children, a node of level l has w_{l+1}
//! parents, and each child and parent are joined by p_{l+1} parallel cables.
//!
//! A node's label is its position at its level in mixed radix (digit j:
//! w_{j+1} below the node's level, m_{j+1} from it on); a child and a
//! parent are joined iff their labels agree but for the child's level's
//! digit. Routes are SimGrid's: up by the destination's position (d-mod-k:
//! the parent and cable `(position / ∏ w below) mod (w · p)`), down to the
//! destination by the cable the source's position picks, with the way
//! SimGrid's loop carries its cable index from one level to the next.

use super::super::{Graph, LinkId, NodeId, NodeKind, NodeSpec, PairRouter};
use crate::error::fail;
use crate::error::Result;
use std::sync::Arc;

/// One node: its level, position at that level, label, and the cables to
/// its parents and children (link ids of the up and down directions), as
/// SimGrid indexes them.
struct Node {
    level: usize,
    position: usize,
    label: Vec<usize>,
    /// `parents[parent.label[level] + j * up[level]]`: (parent, up link).
    parents: Vec<(usize, LinkId)>,
    /// `children[child.label[level-1] + j * down[level-1]]`: (child, down link).
    children: Vec<(usize, LinkId)>,
}

/// Parses `h;m..;w..;p..` into (down, up, count), one entry per level.
pub(super) fn parameters(what: &str, text: &str) -> Result<(Vec<usize>, Vec<usize>, Vec<usize>)> {
    let parts: Vec<&str> = text.split(';').collect();
    if parts.len() != 4 {
        return Err(fail!(Topology, File,
            "{what}: FAT_TREE topo_parameters are 'levels;children,..;parents,..;cables,..', not '{}'",
            topocoll_base::units::shorten(text)
        ));
    }
    let h: usize = parts[0].trim().parse().map_err(|_| {
        fail!(
            Topology,
            File,
            "{what}: FAT_TREE levels '{}' is not a number",
            parts[0]
        )
    })?;
    if h == 0 || h > 16 {
        return Err(fail!(
            Topology,
            File,
            "{what}: a FAT_TREE of {h} levels (1 to 16)"
        ));
    }
    let vector = |k: usize, name: &str| -> Result<Vec<usize>> {
        let v: Vec<usize> = parts[k]
            .split(',')
            .map(|x| x.trim().parse::<usize>())
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| {
                fail!(
                    Topology,
                    File,
                    "{what}: FAT_TREE {name} '{}' are not numbers",
                    parts[k]
                )
            })?;
        if v.len() != h {
            return Err(fail!(
                Topology,
                File,
                "{what}: FAT_TREE of {h} levels, but {} {name}",
                v.len()
            ));
        }
        if v.contains(&0) {
            return Err(fail!(
                Topology,
                File,
                "{what}: FAT_TREE {name} must be greater than 0"
            ));
        }
        Ok(v)
    };
    Ok((
        vector(1, "child counts")?,
        vector(2, "parent counts")?,
        vector(3, "cable counts")?,
    ))
}

/// The fat tree's network, its hosts named by `host_name`.
pub(crate) fn build(
    what: &str,
    params: &str,
    host_name: &dyn Fn(usize) -> String,
    hosts_given: usize,
    bw: f64,
    lat: f64,
    split_duplex: bool,
) -> Result<Graph> {
    let (down, up, count) = parameters(what, params)?;
    let (n, per_level) = level_sizes(what, &down, &up, &count, hosts_given)?;
    let tree = Tree {
        h: down.len(),
        down,
        up,
        count,
        n,
    };
    let (mut nodes, first) = tree.nodes(&per_level);
    let cables = tree.cable(&mut nodes, &first, bw, lat, split_duplex);
    let specs: Vec<NodeSpec> = nodes
        .iter()
        .map(|x| NodeSpec {
            name: if x.level == 0 {
                host_name(x.position)
            } else {
                format!("switch-{}-{}", x.level, x.position)
            },
            kind: if x.level == 0 {
                NodeKind::Host
            } else {
                NodeKind::Switch
            },
        })
        .collect();
    let router = Router { tree, nodes };
    Graph::with_cabled_router(&specs, cables.links, cables.names, Arc::new(router))
}

/// The fat tree's routes, worked out pair by pair as SimGrid does (no
/// table of every pair: memory grows with the cables).
struct Router {
    tree: Tree,
    nodes: Vec<Node>,
}

impl PairRouter for Router {
    fn route(&self, a: NodeId, b: NodeId, out: &mut Vec<LinkId>) -> Result<()> {
        self.tree.route(&self.nodes, a, b, out);
        Ok(())
    }
}

/// The hosts and the nodes of each level (∏ up below it × ∏ down from it
/// on), refused past the limits of a network routed pair by pair or the
/// hosts the platform names.
fn level_sizes(
    what: &str,
    down: &[usize],
    up: &[usize],
    count: &[usize],
    hosts_given: usize,
) -> Result<(usize, Vec<usize>)> {
    let h = down.len();
    let product = |v: &[usize]| v.iter().try_fold(1usize, |a, &x| a.checked_mul(x));
    let too_big = || {
        fail!(
            Topology,
            File,
            "{what}: the FAT_TREE has more than {} nodes",
            super::super::graph::MAX_FABRIC_NODES
        )
    };
    let n = product(down).ok_or_else(too_big)?;
    if n > hosts_given {
        return Err(fail!(
            Topology,
            File,
            "{what}: the FAT_TREE has {n} hosts, the radical names {hosts_given}"
        ));
    }
    // Nodes per level: ∏ up below it × ∏ down from it on.
    let mut per_level = vec![n];
    for l in 1..=h {
        let k = product(&up[..l])
            .and_then(|a| product(&down[l..]).and_then(|b| a.checked_mul(b)))
            .ok_or_else(too_big)?;
        per_level.push(k);
    }
    let total = per_level
        .iter()
        .try_fold(0usize, |a, &x| a.checked_add(x))
        .ok_or_else(too_big)?;
    // Cables: each node below the top has up[l] parents, count[l] cables
    // each; a cable is at most two links.
    let links = (0..h)
        .try_fold(0usize, |sum, l| {
            per_level[l]
                .checked_mul(up[l])
                .and_then(|x| x.checked_mul(count[l]))
                .and_then(|x| sum.checked_add(x))
        })
        .and_then(|c| c.checked_mul(2))
        .unwrap_or(usize::MAX);
    super::super::graph::check_fabric_size(&format!("{what}: the FAT_TREE"), total, links)?;
    Ok((n, per_level))
}

/// The fat tree's parameters per level (children, parents, cables) and
/// its hosts.
struct Tree {
    h: usize,
    down: Vec<usize>,
    up: Vec<usize>,
    count: Vec<usize>,
    n: usize,
}

impl Tree {
    /// Every node with its label, level by level; and where each level
    /// starts.
    fn nodes(&self, per_level: &[usize]) -> (Vec<Node>, Vec<usize>) {
        let (h, up, down) = (self.h, &self.up, &self.down);
        let total: usize = per_level.iter().sum();
        let radix = |level: usize, digit: usize| {
            if digit < level {
                up[digit]
            } else {
                down[digit]
            }
        };
        let mut nodes: Vec<Node> = Vec::with_capacity(total);
        let mut first = vec![0usize; h + 1];
        for (level, &k) in per_level.iter().enumerate() {
            first[level] = nodes.len();
            for position in 0..k {
                let mut rest = position;
                let label = (0..h)
                    .map(|d| {
                        let x = rest % radix(level, d);
                        rest /= radix(level, d);
                        x
                    })
                    .collect();
                nodes.push(Node {
                    level,
                    position,
                    label,
                    parents: Vec::new(),
                    children: Vec::new(),
                });
            }
        }
        (nodes, first)
    }

    /// Joins every child and parent whose labels agree but for the child's
    /// level's digit, by `count` cables each, noting them in the nodes'
    /// `parents` and `children` as SimGrid indexes them. A child's parents
    /// are its label with that digit set to each value in turn, which is
    /// their order by position: the cables come in SimGrid's order
    /// without comparing every child with every parent.
    fn cable(
        &self,
        nodes: &mut [Node],
        first: &[usize],
        bw: f64,
        lat: f64,
        split_duplex: bool,
    ) -> super::Cables {
        let (h, n, up, down, count) = (self.h, self.n, &self.up, &self.down, &self.count);
        // SimGrid's ids: hosts 0..N, switches from 2N−1 down in creation order
        // (level 1 first, by position), for the links' names.
        let id = |k: usize| if k < n { k } else { 2 * n - 1 - (k - n) };
        let mut cables = super::Cables::new(split_duplex, lat);
        for level in 0..h {
            // The weight of each digit in a parent's position (its level's
            // mixed radix).
            let mut weight = vec![1usize; h];
            for d in 1..h {
                let radix = if d - 1 <= level {
                    up[d - 1]
                } else {
                    down[d - 1]
                };
                weight[d] = weight[d - 1] * radix;
            }
            for c in first[level]..first[level + 1] {
                let base: usize = (0..h)
                    .filter(|&d| d != level)
                    .map(|d| nodes[c].label[d] * weight[d])
                    .sum();
                for x in 0..up[level] {
                    let p = first[level + 1] + base + x * weight[level];
                    for j in 0..count[level] {
                        let (up_link, down_link) = cables.add(
                            c as NodeId,
                            p as NodeId,
                            bw,
                            &format!("link_from_{}_{}", id(c), id(p)),
                        );
                        let pi = nodes[p].label[level] + j * up[level];
                        let ci = nodes[c].label[level] + j * down[level];
                        let parents = &mut nodes[c].parents;
                        if parents.len() <= pi {
                            parents.resize(pi + 1, (usize::MAX, 0));
                        }
                        parents[pi] = (p, up_link);
                        let children = &mut nodes[p].children;
                        if children.len() <= ci {
                            children.resize(ci + 1, (usize::MAX, 0));
                        }
                        children[ci] = (c, down_link);
                    }
                }
            }
        }
        cables
    }

    /// SimGrid's route from node `a` to node `b`: up by the destination's
    /// position, down by the cable the source's position picks.
    fn route(&self, nodes: &[Node], a: NodeId, b: NodeId, out: &mut Vec<LinkId>) {
        let (h, up, down, count) = (self.h, &self.up, &self.down, &self.count);
        let in_subtree = |r: &Node, x: &Node| {
            r.level > x.level
                && (0..x.level).all(|i| r.label[i] == x.label[i])
                && (r.level..h).all(|i| r.label[i] == x.label[i])
        };
        let (src, dst) = (&nodes[a as usize], &nodes[b as usize]);
        let mut cur = a as usize;
        while !in_subtree(&nodes[cur], dst) {
            let level = nodes[cur].level;
            let mut d = dst.position;
            for &w in &up[..level] {
                d /= w;
            }
            d %= up[level] * count[level];
            let (parent, link) = nodes[cur].parents[d];
            out.push(link);
            cur = parent;
        }
        // Down, as SimGrid's loop goes: the cable index runs on from one
        // level into the next.
        while cur != b as usize {
            let level = nodes[cur].level;
            let mut i = (src.position % count[level - 1]) * down[level - 1];
            while i < nodes[cur].children.len() {
                let l = nodes[cur].level;
                if i % down[l - 1] == dst.label[l - 1] {
                    let (child, link) = nodes[cur].children[i];
                    out.push(link);
                    cur = child;
                }
                i += 1;
            }
        }
    }
}
