//! Networks of hosts and switches given node by node and edge by edge: trees
//! (the tree-broadcast paper's networks) and general graphs read from a file.
//! Each edge has a bandwidth and latency per direction and is full duplex (two
//! directed links) or half duplex (one link both directions share).

use super::{check_bandwidth, check_latency, Link, LinkId, NodeId};
use crate::error::fail;
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// Takes part in collectives (holds a rank).
    #[default]
    Host,
    /// Relays traffic only.
    Switch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Duplex {
    #[default]
    Full,
    Half,
}

/// A node as written in a topology file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    #[serde(default)]
    pub kind: NodeKind,
}

/// An edge as written in a topology file. `bandwidth`/`latency` set both
/// directions; `bandwidth_ab` etc. override one direction (a→b or b→a).
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct EdgeSpec {
    pub a: String,
    pub b: String,
    pub bandwidth: Option<f64>,
    pub latency: Option<f64>,
    pub bandwidth_ab: Option<f64>,
    pub bandwidth_ba: Option<f64>,
    pub latency_ab: Option<f64>,
    pub latency_ba: Option<f64>,
    #[serde(default)]
    pub duplex: Duplex,
}

#[derive(Clone, Debug)]
pub struct Graph {
    pub names: Vec<String>,
    pub kinds: Vec<NodeKind>,
    links: Vec<Link>,
    /// Directed adjacency: (neighbour, link) sorted by link id.
    adj: Vec<Vec<(NodeId, LinkId)>>,
    /// `next[dst][src]`: the link src takes towards dst (`LinkId::MAX` when src == dst).
    next: Vec<Vec<LinkId>>,
    /// Each link's own name (a SimGrid platform's), or none.
    pub link_names: Vec<String>,
    /// Routes worked out pair by pair when asked (a SimGrid platform's
    /// zones, a fabric's), in place of `next`: no table of all pairs.
    router: Option<Arc<dyn PairRouter>>,
    /// Whether the links join the nodes they name although a router routes
    /// (a fabric's cables, a SimGrid fat tree's or dragonfly's): then
    /// `adj` holds them and explicit paths and cuts may use them.
    joined: bool,
    /// The links that do not share (SimGrid's FATPIPE: every flow may take
    /// the whole bandwidth); empty when none.
    pub fatpipe: Vec<bool>,
}

/// Routes asked for pair by pair (`Graph::with_router`).
pub trait PairRouter: Send + Sync {
    /// Appends the links from node `a` to node `b`, or says why there is
    /// no route.
    fn route(&self, a: NodeId, b: NodeId, out: &mut Vec<LinkId>) -> Result<()>;
}

impl std::fmt::Debug for dyn PairRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PairRouter")
    }
}

/// Most nodes (hosts and switches) a graph, tree or two-site grid may have.
pub const MAX_GRAPH_NODES: usize = 8192;
/// The most nodes (hosts and switches) of a network routed pair by pair
/// over its cables (`Graph::with_cabled_router`): 2^20, room for a
/// 65,536-host fat tree's 70k nodes many times over.
pub const MAX_FABRIC_NODES: usize = 1 << 20;
/// The most directed links of such a network: 2^23, about 600 MB with
/// their names and adjacency (a 65,536-host fat tree has 393,216).
pub const MAX_FABRIC_LINKS: usize = 1 << 23;

/// Refuses a network routed pair by pair of more nodes or links than
/// [`MAX_FABRIC_NODES`] and [`MAX_FABRIC_LINKS`], before it is built.
pub(crate) fn check_fabric_size(what: &str, nodes: usize, links: usize) -> Result<()> {
    if nodes > MAX_FABRIC_NODES || links > MAX_FABRIC_LINKS {
        return Err(fail!(Topology, File,
            "{what}: {nodes} nodes and {links} links are more than the {MAX_FABRIC_NODES} nodes and {MAX_FABRIC_LINKS} links a network routed pair by pair may have"
        ));
    }
    Ok(())
}

/// The most nodes × edges a graph may have: 2^30, a few seconds of routing.
const MAX_ROUTING_WORK: usize = 1 << 30;

impl Graph {
    /// A network of `nodes` and `edges`, any shape; the defaults fill
    /// missing edge bandwidths and latencies.
    pub fn network(
        nodes: &[NodeSpec],
        edges: &[EdgeSpec],
        default_bw: f64,
        default_lat: f64,
    ) -> Result<Graph> {
        Graph::build(nodes, edges, false, default_bw, default_lat)
    }

    /// A tree network: [`Graph::network`] that must also be acyclic and
    /// connected.
    pub fn tree(
        nodes: &[NodeSpec],
        edges: &[EdgeSpec],
        default_bw: f64,
        default_lat: f64,
    ) -> Result<Graph> {
        Graph::build(nodes, edges, true, default_bw, default_lat)
    }

    fn build(
        nodes: &[NodeSpec],
        edges: &[EdgeSpec],
        tree: bool,
        default_bw: f64,
        default_lat: f64,
    ) -> Result<Graph> {
        let what = if tree { "tree" } else { "graph" };
        if nodes.is_empty() {
            return Err(fail!(Topology, File, "{what}: no nodes"));
        }
        if nodes.len() > MAX_GRAPH_NODES {
            return Err(fail!(
                Topology,
                File,
                "{what}: {} nodes is more than the {MAX_GRAPH_NODES} supported",
                nodes.len()
            ));
        }
        // Routing searches the graph once per destination: nodes × edges
        // steps (a 62 MB file of 8,192 nodes and 3 M edges took 163 s).
        if nodes.len().saturating_mul(edges.len()) > MAX_ROUTING_WORK {
            return Err(fail!(Topology, File,
                "{what}: {} nodes and {} edges are more than routing handles (nodes x edges at most {MAX_ROUTING_WORK})",
                nodes.len(),
                edges.len()
            ));
        }
        let mut index = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            if index.insert(n.name.as_str(), i as NodeId).is_some() {
                return Err(fail!(
                    Topology,
                    File,
                    "{what}: node '{}' is declared twice",
                    n.name
                ));
            }
        }
        if !nodes.iter().any(|n| n.kind == NodeKind::Host) {
            return Err(fail!(Topology, File, "{what}: no node is a host"));
        }
        let lookup = |name: &str, e: usize| {
            index.get(name).copied().ok_or_else(|| {
                fail!(
                    Topology,
                    File,
                    "{what}: edge {e} names unknown node '{name}'"
                )
            })
        };
        let mut links = Vec::new();
        let mut adj = vec![Vec::new(); nodes.len()];
        // Union-find to detect cycles in trees.
        let mut parent: Vec<usize> = (0..nodes.len()).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for (e, spec) in edges.iter().enumerate() {
            let a = lookup(&spec.a, e)?;
            let b = lookup(&spec.b, e)?;
            if a == b {
                return Err(fail!(
                    Topology,
                    File,
                    "{what}: edge {e} connects '{}' to itself",
                    spec.a
                ));
            }
            let (ra, rb) = (find(&mut parent, a as usize), find(&mut parent, b as usize));
            if ra == rb && tree {
                return Err(fail!(Topology, File,
                    "tree: edge {e} ('{}'-'{}') closes a cycle; a tree has exactly one path between two nodes",
                    spec.a,
                    spec.b
                ));
            }
            parent[ra] = rb;
            let bw_ab = spec.bandwidth_ab.or(spec.bandwidth).unwrap_or(default_bw);
            let bw_ba = spec.bandwidth_ba.or(spec.bandwidth).unwrap_or(default_bw);
            let lat_ab = spec.latency_ab.or(spec.latency).unwrap_or(default_lat);
            let lat_ba = spec.latency_ba.or(spec.latency).unwrap_or(default_lat);
            let field = format!("{what} edge {e} ('{}'-'{}')", spec.a, spec.b);
            for bw in [bw_ab, bw_ba] {
                check_bandwidth(&field, bw)?;
            }
            for lat in [lat_ab, lat_ba] {
                check_latency(&field, lat)?;
            }
            let id = links.len() as LinkId;
            links.push(Link {
                from: a,
                to: b,
                bandwidth: bw_ab,
                latency: lat_ab,
            });
            adj[a as usize].push((b, id));
            match spec.duplex {
                Duplex::Full => {
                    links.push(Link {
                        from: b,
                        to: a,
                        bandwidth: bw_ba,
                        latency: lat_ba,
                    });
                    adj[b as usize].push((a, id + 1));
                }
                Duplex::Half => {
                    if bw_ab != bw_ba {
                        return Err(fail!(Topology, File,
                            "{field}: a half-duplex edge has one bandwidth shared by both directions"
                        ));
                    }
                    if lat_ab != lat_ba {
                        return Err(fail!(Topology, File,
                            "{field}: a half-duplex edge is one link, with one latency for both directions"
                        ));
                    }
                    adj[b as usize].push((a, id));
                }
            }
        }
        let roots = (0..nodes.len())
            .filter(|&i| find(&mut parent, i) == i)
            .count();
        if roots > 1 {
            let first = find(&mut parent, 0);
            let stray = (0..nodes.len())
                .find(|&i| find(&mut parent, i) != first)
                .unwrap_or(0);
            return Err(fail!(
                Topology,
                File,
                "{what}: disconnected: node '{}' cannot be reached from '{}'",
                nodes[stray].name,
                nodes[0].name
            ));
        }
        let next = Self::next_hops(&adj);
        Ok(Graph {
            names: nodes.iter().map(|n| n.name.clone()).collect(),
            kinds: nodes.iter().map(|n| n.kind).collect(),
            links,
            adj,
            next,
            link_names: Vec::new(),
            router: None,
            joined: false,
            fatpipe: Vec::new(),
        })
    }

    /// A network whose routes `router` works out pair by pair when asked
    /// (a SimGrid platform's zones): no table of every pair, so no limit on
    /// hosts but the ranks'. `links` name no ends (a platform's link is
    /// wherever its routes put it); `fatpipe` (empty or one per link) marks
    /// the links that do not share.
    pub fn with_router(
        nodes: &[NodeSpec],
        links: Vec<Link>,
        link_names: Vec<String>,
        fatpipe: Vec<bool>,
        router: Arc<dyn PairRouter>,
    ) -> Result<Graph> {
        if !nodes.iter().any(|n| n.kind == NodeKind::Host) {
            return Err(fail!(Topology, File, "network: no node is a host"));
        }
        Ok(Graph {
            names: nodes.iter().map(|n| n.name.clone()).collect(),
            kinds: nodes.iter().map(|n| n.kind).collect(),
            links,
            adj: Vec::new(),
            next: Vec::new(),
            link_names,
            router: Some(router),
            joined: false,
            fatpipe,
        })
    }

    /// A network of cables whose routes `router` works out pair by pair
    /// (a fat tree's, a dragonfly's): each of `links` joins the nodes it
    /// names, so explicit paths and cuts see the cables, while no table of
    /// every pair is kept. Memory grows with the links: at most
    /// [`MAX_FABRIC_NODES`] nodes and [`MAX_FABRIC_LINKS`] links.
    pub fn with_cabled_router(
        nodes: &[NodeSpec],
        links: Vec<Link>,
        link_names: Vec<String>,
        router: Arc<dyn PairRouter>,
    ) -> Result<Graph> {
        check_fabric_size("network", nodes.len(), links.len())?;
        if let Some(l) = links
            .iter()
            .find(|l| l.from as usize >= nodes.len() || l.to as usize >= nodes.len())
        {
            return Err(fail!(
                Topology,
                File,
                "network: a link joins node {} to node {}, of {} nodes",
                l.from,
                l.to,
                nodes.len()
            ));
        }
        let mut adj = vec![Vec::new(); nodes.len()];
        for (id, l) in links.iter().enumerate() {
            adj[l.from as usize].push((l.to, id as LinkId));
        }
        let mut g = Graph::with_router(nodes, links, link_names, Vec::new(), router)?;
        g.adj = adj;
        g.joined = true;
        Ok(g)
    }

    /// Why there is no route from node `a` to node `b`, if there is none.
    pub fn route_problem(&self, a: NodeId, b: NodeId) -> Option<String> {
        let r = self.router.as_ref()?;
        let mut out = Vec::new();
        match r.route(a, b, &mut out) {
            Err(e) => Some(e.to_string()),
            Ok(()) if out.is_empty() && a != b => Some(format!(
                "no route from '{}' to '{}' (no link joins them)",
                self.names[a as usize], self.names[b as usize]
            )),
            Ok(()) => None,
        }
    }

    /// For every destination, a breadth-first search backwards gives each node
    /// its hop distance; a node's next link is the lowest-id link to a
    /// neighbour one hop closer.
    fn next_hops(adj: &[Vec<(NodeId, LinkId)>]) -> Vec<Vec<LinkId>> {
        let n = adj.len();
        let mut radj = vec![Vec::new(); n];
        for (u, out) in adj.iter().enumerate() {
            for &(v, _) in out {
                radj[v as usize].push(u as NodeId);
            }
        }
        let mut next = vec![vec![LinkId::MAX; n]; n];
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for dst in 0..n {
            dist.fill(u32::MAX);
            dist[dst] = 0;
            queue.push_back(dst);
            while let Some(v) = queue.pop_front() {
                for &u in &radj[v] {
                    if dist[u as usize] == u32::MAX {
                        dist[u as usize] = dist[v] + 1;
                        queue.push_back(u as usize);
                    }
                }
            }
            for u in 0..n {
                if u == dst || dist[u] == u32::MAX {
                    continue;
                }
                next[dst][u] = adj[u]
                    .iter()
                    .filter(|&&(v, _)| dist[v as usize] + 1 == dist[u])
                    .map(|&(_, l)| l)
                    .min()
                    .unwrap_or(LinkId::MAX);
            }
        }
        next
    }

    pub fn num_nodes(&self) -> usize {
        self.names.len()
    }

    pub fn links(&self) -> Vec<Link> {
        self.links.clone()
    }

    pub fn hosts(&self) -> Vec<NodeId> {
        (0..self.kinds.len() as NodeId)
            .filter(|&i| self.kinds[i as usize] == NodeKind::Host)
            .collect()
    }

    pub fn route_nodes(&self, a: NodeId, b: NodeId, out: &mut Vec<LinkId>) {
        if let Some(r) = &self.router {
            // A pair without a route gets no links; the simulator asks
            // `route_problem` why (`Topology::route_problem`).
            let start = out.len();
            if a != b && r.route(a, b, out).is_err() {
                out.truncate(start);
            }
            return;
        }
        let mut cur = a;
        while cur != b {
            let l = self.next[b as usize][cur as usize];
            out.push(l);
            let link = &self.links[l as usize];
            cur = if link.from == cur { link.to } else { link.from };
        }
    }

    /// Whether links join the nodes they name: not so where a router works
    /// routes out pair by pair (a SimGrid platform's zones), whose links
    /// are wherever its routes put them.
    pub fn links_join_nodes(&self) -> bool {
        self.router.is_none() || self.joined
    }

    /// Whether routes are given host pair by host pair (a SimGrid
    /// platform's) rather than found in the graph.
    pub fn routes_given(&self) -> bool {
        self.router.is_some()
    }

    /// Neighbours of a node with the connecting link (none where links
    /// join no nodes, [`Graph::links_join_nodes`]).
    pub fn neighbours(&self, n: NodeId) -> &[(NodeId, LinkId)] {
        self.adj.get(n as usize).map_or(&[], Vec::as_slice)
    }
}
