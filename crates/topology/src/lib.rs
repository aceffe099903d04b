//! Networks: nodes, directed links with their own bandwidth and latency, and
//! routing. A route is the list of directed links a message crosses.
//!
//! Ranks (the processes a collective runs on) are mapped onto nodes by the
//! topology: on a grid or hypercube rank r is node r; on Tofu rank r is the
//! node at virtual-torus coordinate r; on trees and grids of sites ranks are the
//! hosts in the order they are declared. Switches carry traffic but hold no rank.

mod dragonnet;
pub mod error;
mod fabric;
mod fail;
mod graph;
mod grid;
mod hypercube;
pub mod nccl;
mod path;
pub mod profile;
mod rankfile;
mod simgrid;
mod sites;
mod spec;
mod tofu;

pub use dragonnet::DragonNet;
pub use error::{Error, Result, TopologyKind};
pub use fail::{fail, Fail};
pub use graph::{Duplex, EdgeSpec, Graph, NodeKind, NodeSpec, PairRouter};
pub use grid::{Grid, TorusTie};
pub use hypercube::Hypercube;
pub use path::show_path;
pub use rankfile::{parse_rankfile, read_rankfile};
pub use simgrid::{parse_platform, speed as parse_speed};
pub use sites::{Sites, Wan};
pub use spec::{parse_spec, parse_toml, TopologyFile, FILE_KINDS, SPEC_FAMILIES};
pub use tofu::Tofu;

use crate::error::fail;
use serde::Serialize;
use topocoll_base::param;

/// Index of a node (host or switch).
pub type NodeId = u32;
/// Index of a directed link.
pub type LinkId = u32;

/// Default link bandwidth for spec strings: 1 GB/s (10⁹ bytes per second).
pub const DEFAULT_BANDWIDTH: f64 = 1e9;
/// Default link latency for spec strings: 1 µs per hop.
pub const DEFAULT_LATENCY: f64 = 1e-6;

/// A directed link. A full-duplex cable is two of these; a half-duplex one is a
/// single link that both directions' routes cross.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Link {
    pub from: NodeId,
    pub to: NodeId,
    /// Bytes per second.
    pub bandwidth: f64,
    /// Seconds.
    pub latency: f64,
}

/// The shape of the rank space when it is a grid (mesh, torus, or Tofu's
/// virtual 3D torus): what grid-aware algorithms such as A2AT work on.
#[derive(Clone, Debug, PartialEq)]
pub struct GridShape {
    pub dims: Vec<usize>,
    pub wrap: Vec<bool>,
}

impl GridShape {
    /// Coordinates of a rank (row-major, dimension 0 fastest).
    pub fn coords(&self, rank: usize) -> Vec<usize> {
        let mut rest = rank;
        self.dims
            .iter()
            .map(|&d| {
                let c = rest % d;
                rest /= d;
                c
            })
            .collect()
    }

    /// Rank at the given coordinates.
    pub fn rank(&self, coords: &[usize]) -> usize {
        coords
            .iter()
            .zip(&self.dims)
            .rev()
            .fold(0, |acc, (&c, &d)| acc * d + c)
    }

    pub fn size(&self) -> usize {
        self.dims.iter().product()
    }
}

/// Which family a topology belongs to, with its own parameters and routing.
#[derive(Clone, Debug)]
pub enum Kind {
    Grid(Grid),
    Hypercube(Hypercube),
    Tofu(Tofu),
    /// A tree-structured network (validated acyclic): routes are the unique paths.
    Tree(Graph),
    Sites(Sites),
    /// The Dragon net: an indirect binary n-cube of 2×2 switch elements.
    DragonNet(DragonNet),
    /// Any connected graph: shortest-hop routes, ties to the lowest link id.
    Graph(Graph),
}

/// A network with ranks placed on it.
#[derive(Clone, Debug)]
pub struct Topology {
    /// What the user wrote (spec string or file name), for reports.
    pub name: String,
    pub kind: Kind,
    pub num_nodes: usize,
    pub links: Vec<Link>,
    /// Node of each rank.
    pub rank_node: Vec<NodeId>,
    /// Where several ranks share a node (`place_ranks`): each node's link
    /// for the data its ranks exchange, `local[node]` (`LinkId::MAX`: none).
    pub local: Vec<LinkId>,
    /// Each node's speed in flops per second, where the network's file
    /// gives it (a SimGrid platform's `speed`); empty where none does.
    pub speed: Vec<f64>,
    /// GPU servers' layout, for a network read from NCCL's topology files
    /// (a server or a cluster of them): what NCCL's channels need
    /// (`nccl::GpuLayout`); `None` for every other network.
    pub gpus: Option<std::sync::Arc<nccl::GpuLayout>>,
    /// How the links' bandwidths and latencies and the hosts' speeds
    /// change over time (a SimGrid platform's profiles); `None`: they do
    /// not.
    pub profiles: Option<std::sync::Arc<profile::Profiles>>,
}

/// How ranks are placed on a network's hosts (`Topology::place_ranks`).
#[derive(Clone, Debug, PartialEq)]
pub enum RankMap {
    /// Ranks k·K .. k·K + K − 1 on host k.
    Block,
    /// Rank r on host r mod H.
    Cyclic,
    /// The host of each rank, in rank order (by host index or name).
    List(Vec<String>),
}

impl Topology {
    pub fn from_kind(name: impl Into<String>, kind: Kind) -> Topology {
        let (num_nodes, links, rank_node) = match &kind {
            Kind::Grid(g) => (
                g.num_nodes(),
                g.links(),
                (0..g.num_nodes() as u32).collect(),
            ),
            Kind::Hypercube(h) => (
                h.num_nodes(),
                h.links(),
                (0..h.num_nodes() as u32).collect(),
            ),
            Kind::Tofu(t) => (t.grid.num_nodes(), t.grid.links(), t.rank_nodes()),
            Kind::Tree(g) | Kind::Graph(g) => (g.num_nodes(), g.links(), g.hosts()),
            Kind::Sites(s) => (s.net.num_nodes(), s.net.links(), s.net.hosts()),
            Kind::DragonNet(d) => (d.num_nodes(), d.links(), (0..d.nodes() as NodeId).collect()),
        };
        Topology {
            name: name.into(),
            kind,
            num_nodes,
            links,
            rank_node,
            local: Vec::new(),
            speed: Vec::new(),
            gpus: None,
            profiles: None,
        }
    }

    /// Places `per_node` ranks on each host (`RankMap::Block` or `Cyclic`),
    /// or one rank per entry of a `RankMap::List`, and gives every host a
    /// link of its own for the data its ranks exchange (`bandwidth` bytes/s,
    /// `latency` s; a message between two ranks of one host crosses it and
    /// nothing else). The rank space is then no longer the network's grid,
    /// grid of sites or tree: the algorithms and the simulator's folding
    /// that need one refuse it.
    pub fn place_ranks(
        &mut self,
        per_node: usize,
        map: &RankMap,
        bandwidth: f64,
        latency: f64,
    ) -> Result<()> {
        check_bandwidth_param("node_bandwidth", bandwidth)?;
        check_latency_param("node_latency", latency)?;
        if !self.local.is_empty() {
            return Err(fail!(
                Topology,
                Placement,
                "topology {}: ranks are placed already",
                self.name
            ));
        }
        let hosts = self.rank_node.clone();
        let h = hosts.len();
        let rank_node: Vec<NodeId> = match map {
            RankMap::Block | RankMap::Cyclic => {
                let p = h
                    .checked_mul(per_node)
                    .filter(|&p| per_node >= 1 && p <= topocoll_base::limits::MAX_RANKS)
                    .ok_or_else(|| -> crate::error::Error {
                        param!(
                            "ranks_per_node",
                            " {per_node} on {h} hosts: from 1 to {} ranks in all",
                            topocoll_base::limits::MAX_RANKS
                        )
                    })?;
                (0..p)
                    .map(|r| {
                        if *map == RankMap::Block {
                            hosts[r / per_node]
                        } else {
                            hosts[r % h]
                        }
                    })
                    .collect()
            }
            RankMap::List(list) => {
                if list.is_empty() || list.len() > topocoll_base::limits::MAX_RANKS {
                    return Err(param!(
                        "map",
                        ": a rankfile of {} ranks (1 to {})",
                        list.len(),
                        topocoll_base::limits::MAX_RANKS
                    ));
                }
                let names: Vec<String> = hosts.iter().map(|&n| self.node_name(n)).collect();
                let mut out = Vec::with_capacity(list.len());
                for (r, entry) in list.iter().enumerate() {
                    let k = names
                        .iter()
                        .position(|n| n == entry)
                        .or_else(|| entry.parse::<usize>().ok().filter(|&k| k < h))
                        .ok_or_else(|| -> crate::error::Error {
                            param!(
                                "map", ": rank {r}'s host '{}' is neither a host's name nor a host index below {h}",
                                topocoll_base::units::shorten(entry)
                            )
                        })?;
                    out.push(hosts[k]);
                }
                let mut per = vec![0usize; self.num_nodes];
                for &n in &out {
                    per[n as usize] += 1;
                }
                if per_node > 1 && per.iter().any(|&c| c > per_node) {
                    return Err(param!(
                        "map",
                        ": the rankfile puts more than --ranks-per-node {per_node} ranks on a host"
                    ));
                }
                out
            }
        };
        let mut local = vec![LinkId::MAX; self.num_nodes];
        for &n in &hosts {
            local[n as usize] = self.links.len() as LinkId;
            self.links.push(Link {
                from: n,
                to: n,
                bandwidth,
                latency,
            });
        }
        self.rank_node = rank_node;
        self.local = local;
        Ok(())
    }

    /// Whether ranks were placed by `place_ranks` (several may share a host).
    pub fn ranks_placed(&self) -> bool {
        !self.local.is_empty()
    }

    /// Per-stream rate tables of the links that have one: for each link, b(P)
    /// for P = 1.. streams crossing it at once (a grid of sites' WAN links;
    /// see `Sites`). `None` for a link without one; empty when no link has one.
    pub fn stream_tables(&self) -> Vec<Option<&[f64]>> {
        match &self.kind {
            Kind::Sites(s) => {
                let mut out = vec![None; self.links.len()];
                for &l in &s.wan_links {
                    out[l as usize] = Some(&s.lane_bandwidth[..]);
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// Which links do not share (SimGrid's FATPIPE): every flow on one may
    /// take its whole bandwidth, whatever else crosses it. Empty when none.
    pub fn fatpipe(&self) -> &[bool] {
        match &self.kind {
            Kind::Tree(g) | Kind::Graph(g) => &g.fatpipe,
            _ => &[],
        }
    }

    /// Why rank `src` has no route to rank `dst`, where a platform gives
    /// none (a SimGrid zone without a route for the pair); `None` when the
    /// route is there.
    pub fn route_problem(&self, src: usize, dst: usize) -> Option<String> {
        let (a, b) = (self.rank_node[src], self.rank_node[dst]);
        if a == b {
            return None;
        }
        match &self.kind {
            Kind::Tree(g) | Kind::Graph(g) => g
                .route_problem(a, b)
                .map(|p| format!("topology {}: {p}", self.name)),
            _ => None,
        }
    }

    /// The rate one flow alone on link `l` gets: its bandwidth, or less
    /// where the link caps a lone stream (b(1) of a WAN link).
    pub fn lone_rate(&self, l: LinkId) -> f64 {
        let bw = self.links[l as usize].bandwidth;
        match &self.kind {
            Kind::Sites(s) if s.wan_links.first().is_some_and(|&w| l >= w) => {
                bw.min(s.lane_bandwidth[0])
            }
            _ => bw,
        }
    }

    /// The nodes link `l` joins, `(from, to)`; `None` for a link of a
    /// SimGrid platform routed by its zones, which joins no nodes (it is
    /// wherever the routes put it, and no explicit path crosses it).
    pub fn link_ends(&self, l: LinkId) -> Option<(NodeId, NodeId)> {
        let link = &self.links[l as usize];
        match &self.kind {
            Kind::Tree(g) | Kind::Graph(g)
                if !g.links_join_nodes() && self.local.get(link.from as usize) != Some(&l) =>
            {
                None
            }
            _ => Some((link.from, link.to)),
        }
    }

    /// Whether link `l` carries data both ways (a half-duplex link, one
    /// link both directions' routes cross), not only from its `from` to
    /// its `to`. A link that joins no nodes ([`Topology::link_ends`])
    /// carries data neither way a path could name.
    pub fn both_ways(&self, l: LinkId) -> bool {
        let graph = match &self.kind {
            Kind::Tree(g) | Kind::Graph(g) => g,
            Kind::Sites(s) => &s.net,
            _ => return false,
        };
        if self.link_ends(l).is_none() {
            return false;
        }
        let link = &self.links[l as usize];
        graph
            .neighbours(link.to)
            .iter()
            .any(|&(m, k)| m == link.from && k == l)
    }

    /// A link's name for reports: a platform's own name for it, else its
    /// two ends' names.
    pub fn link_name(&self, l: LinkId) -> String {
        let link = &self.links[l as usize];
        if link.from == link.to && self.local.get(link.from as usize) == Some(&l) {
            return format!("{} (inside the node)", self.node_name(link.from));
        }
        if let Kind::Tree(g) | Kind::Graph(g) = &self.kind {
            if let Some(name) = g.link_names.get(l as usize) {
                return name.clone();
            }
        }
        let link = &self.links[l as usize];
        format!(
            "{} -> {}",
            self.node_name(link.from),
            self.node_name(link.to)
        )
    }

    /// The class of link `l` in a hierarchical network, for reports of the
    /// bytes on each class: on a SimGrid dragonfly the colour of its cable
    /// (`local` host links, `green` inside a chassis, `black` inside a
    /// group, `blue` between groups: the global links); on a SimGrid fat
    /// tree the levels it joins (`level 0-1` from the hosts, `level 1-2`
    /// above, ...); on the fabrics of `fabric` what their switches' names
    /// say (`host`, `intra-group`, `global` on a dragonfly; `host-leaf`,
    /// `leaf-spine` on a rail-optimised fat tree; `host`, `dimension D` on
    /// HyperX); `None` on other networks.
    pub fn link_class(&self, l: LinkId) -> Option<String> {
        let (Kind::Tree(g) | Kind::Graph(g)) = &self.kind else {
            return None;
        };
        let link = self.links.get(l as usize)?;
        if let Some(name) = g.link_names.get(l as usize) {
            for colour in ["local", "green", "black", "blue"] {
                if name.starts_with(colour) && name[colour.len()..].starts_with("_link") {
                    return Some(colour.to_string());
                }
            }
        }
        if let Some(class) = fabric::link_class(&g.names, link.from, link.to) {
            return Some(class.to_string());
        }
        // A fat tree's switches are named switch-LEVEL-POSITION, its hosts
        // sit at level 0.
        let level = |n: NodeId| -> Option<usize> {
            let name = g.names.get(n as usize)?;
            match name.strip_prefix("switch-") {
                Some(rest) => rest.split('-').next()?.parse().ok(),
                None => Some(0),
            }
        };
        // Levels that differ put a switch at one end at least: no need to
        // look through the whole network's names, once per link.
        let (a, b) = (level(link.from)?, level(link.to)?);
        (a != b).then(|| format!("level {}-{}", a.min(b), a.max(b)))
    }

    /// A node's name for reports: a topology file's own name for it, a grid
    /// node's coordinates, a Dragon net's node or switch element.
    pub fn node_name(&self, n: NodeId) -> String {
        let coords = |dims: &[usize], mut rest: usize| {
            let c: Vec<String> = dims
                .iter()
                .map(|&d| {
                    let x = rest % d;
                    rest /= d;
                    x.to_string()
                })
                .collect();
            format!("({})", c.join(","))
        };
        match &self.kind {
            Kind::Tree(g) | Kind::Graph(g) => g.names[n as usize].clone(),
            Kind::Sites(s) => s.net.names[n as usize].clone(),
            Kind::Grid(g) => coords(&g.dims, n as usize),
            Kind::Tofu(t) => coords(&t.grid.dims, n as usize),
            Kind::DragonNet(d) => {
                let nodes = d.nodes();
                let n = n as usize;
                if n < nodes {
                    format!("node {n}")
                } else {
                    let e = n - nodes;
                    format!("stage {} element {}", e / (nodes / 2), e % (nodes / 2))
                }
            }
            Kind::Hypercube(_) => format!("node {n}"),
        }
    }

    /// The grid of sites this topology is, if it is one.
    pub fn sites(&self) -> Option<&Sites> {
        if self.ranks_placed() {
            return None;
        }
        match &self.kind {
            Kind::Sites(s) => Some(s),
            _ => None,
        }
    }

    /// Number of ranks (hosts).
    pub fn num_ranks(&self) -> usize {
        self.rank_node.len()
    }

    /// The network with only these of its ranks, in this order, as its
    /// ranks (a job of several on it).
    pub fn with_ranks(&self, ranks: &[u32]) -> Topology {
        let mut t = self.clone();
        t.rank_node = ranks.iter().map(|&r| self.rank_node[r as usize]).collect();
        t
    }

    /// Appends to `out` the directed links from `src` rank to `dst` rank.
    pub fn route(&self, src: usize, dst: usize, out: &mut Vec<LinkId>) {
        let (a, b) = (self.rank_node[src], self.rank_node[dst]);
        if a == b && src != dst && !self.local.is_empty() {
            out.push(self.local[a as usize]);
            return;
        }
        match &self.kind {
            Kind::Grid(g) => g.route_nodes(a, b, out),
            Kind::Hypercube(h) => h.route_nodes(a, b, out),
            Kind::Tofu(t) => t.grid.route_nodes(a, b, out),
            Kind::Tree(g) | Kind::Graph(g) => g.route_nodes(a, b, out),
            Kind::Sites(s) => s.net.route_nodes(a, b, out),
            Kind::DragonNet(d) => d.route_nodes(a, b, out),
        }
    }

    /// Route by a signed offset per dimension (the A2AT paper's relative
    /// destinations): the sign picks the direction, |offset| hops are taken,
    /// through the wrap-around where the dimension wraps; on a dimension that does
    /// not wrap the destination `(c + offset) mod n` is reached the only way there
    /// is. Only grids (mesh/torus) take offsets. Returns the destination rank.
    pub fn route_offset(&self, src: usize, offset: &[i64], out: &mut Vec<LinkId>) -> Result<usize> {
        if self.ranks_placed() {
            return Err(fail!(
                Topology,
                Shape,
                "topology {}: routes by signed offset need one rank per node of a mesh or torus",
                self.name
            ));
        }
        match &self.kind {
            Kind::Grid(g) => g
                .route_offset(src as NodeId, offset, out)
                .map(|n| n as usize),
            _ => Err(fail!(
                Topology,
                Shape,
                "topology {}: routes by signed offset need a mesh or torus",
                self.name
            )),
        }
    }

    /// A translation of the network that maps rank r to rank r + stride
    /// (mod ranks): on a mesh/torus whose last dimension wraps, one step
    /// along it. Returns the stride and the image of every link. The
    /// simulator uses it to fold runs that are the same on every translate
    /// (`sim::fold`).
    pub fn shift_symmetry(&self) -> Option<(usize, Vec<LinkId>)> {
        if self.ranks_placed() {
            return None;
        }
        match &self.kind {
            Kind::Grid(g) => g.shift_last(),
            _ => None,
        }
    }

    /// The rank space as a grid, when it is one.
    pub fn grid_shape(&self) -> Option<GridShape> {
        if self.ranks_placed() {
            return None;
        }
        match &self.kind {
            Kind::Grid(g) => Some(GridShape {
                dims: g.dims.clone(),
                wrap: g.wrap.clone(),
            }),
            Kind::Tofu(t) => Some(t.virtual_shape()),
            _ => None,
        }
    }

    /// Sets every link's bandwidth (bytes/s) and/or latency (s).
    pub fn set_uniform_links(
        &mut self,
        bandwidth: Option<f64>,
        latency: Option<f64>,
    ) -> Result<()> {
        if let Some(bw) = bandwidth {
            check_bandwidth_param("bandwidth", bw)?;
        }
        if let Some(lat) = latency {
            check_latency_param("latency", lat)?;
        }
        // The network's links: not the links inside nodes (`place_ranks`).
        let network = self.links.len() - self.local.iter().filter(|&&l| l != LinkId::MAX).count();
        for l in &mut self.links[..network] {
            if let Some(bw) = bandwidth {
                l.bandwidth = bw;
            }
            if let Some(lat) = latency {
                l.latency = lat;
            }
        }
        Ok(())
    }

    /// Sets the torus tie rule on grid topologies (no effect elsewhere).
    /// Whether routes here can meet a torus tie (a ring of even size whose
    /// two ways round are equally short): a grid with a wrapping dimension,
    /// or Tofu's virtual torus.
    pub fn has_torus_ties(&self) -> bool {
        match &self.kind {
            Kind::Grid(g) => g.wrap.iter().any(|&w| w),
            Kind::Tofu(_) => true,
            _ => false,
        }
    }

    pub fn set_torus_tie(&mut self, tie: TorusTie) {
        match &mut self.kind {
            Kind::Grid(g) => g.tie = tie,
            Kind::Tofu(t) => t.grid.tie = tie,
            _ => {}
        }
    }

    /// One-line description for reports.
    pub fn describe(&self) -> String {
        let what = match &self.kind {
            Kind::Grid(g) => g.describe(),
            Kind::Hypercube(h) => format!("hypercube of dimension {}", h.dim),
            Kind::Tofu(t) => t.describe(),
            Kind::Tree(t) => format!(
                "tree network of {} nodes ({} hosts)",
                t.num_nodes(),
                t.hosts().len()
            ),
            Kind::Sites(s) => s.describe(),
            Kind::DragonNet(d) => d.describe(),
            Kind::Graph(g) => format!(
                "graph of {} nodes ({} hosts)",
                g.num_nodes(),
                g.hosts().len()
            ),
        };
        let placed = if self.ranks_placed() {
            let hosts = self.local.iter().filter(|&&l| l != LinkId::MAX).count();
            format!(" on {hosts} hosts, each with a link inside it")
        } else {
            String::new()
        };
        format!(
            "{what}: {} ranks{placed}, {} directed links",
            self.num_ranks(),
            self.links.len()
        )
    }

    /// Checks that every rank can reach every other (used by the file loader;
    /// grids and hypercubes are connected by construction).
    pub fn check_connected(&self) -> Result<()> {
        if self.num_nodes == 0 {
            return Ok(());
        }
        let mut adj = vec![Vec::new(); self.num_nodes];
        // Half-duplex links serve both directions, so connectivity is undirected.
        for l in &self.links {
            adj[l.from as usize].push(l.to);
            adj[l.to as usize].push(l.from);
        }
        let start = self.rank_node.first().copied().unwrap_or(0);
        let mut seen = vec![false; self.num_nodes];
        let mut stack = vec![start];
        seen[start as usize] = true;
        while let Some(n) = stack.pop() {
            for &m in &adj[n as usize] {
                if !seen[m as usize] {
                    seen[m as usize] = true;
                    stack.push(m);
                }
            }
        }
        for (r, &n) in self.rank_node.iter().enumerate() {
            if !seen[n as usize] {
                return Err(fail!(
                    Topology,
                    Shape,
                    "topology {}: rank {r} (node {n}) is not connected to rank 0",
                    self.name
                ));
            }
        }
        Ok(())
    }
}

/// Rejects a bandwidth that is not a positive finite number.
pub fn check_bandwidth(what: &str, bw: f64) -> Result<()> {
    bandwidth_problem(bw).map_or(Ok(()), |p| Err(fail!(Topology, Value, "{what}: {p}")))
}

/// [`check_bandwidth`] of a parameter (`flow_cap`): the error names it.
pub fn check_bandwidth_param(param: &'static str, bw: f64) -> Result<()> {
    bandwidth_problem(bw).map_or(Ok(()), |p| Err(param!(param, ": {p}")))
}

fn bandwidth_problem(bw: f64) -> Option<String> {
    if !(bw.is_finite() && bw > 0.0) {
        return Some(format!(
            "bandwidth must be a positive number of bytes per second, got {bw}"
        ));
    }
    // Beyond these, a transfer's time leaves the range of numbers the
    // simulator's sums keep exact enough (a subnormal bandwidth made every
    // transfer last forever).
    if !(MIN_BANDWIDTH..=MAX_BANDWIDTH).contains(&bw) {
        return Some(format!(
            "bandwidth {bw:e} bytes/s is outside {MIN_BANDWIDTH:e} to {MAX_BANDWIDTH:e}"
        ));
    }
    None
}

/// The bandwidths (bytes/s) a model may use: a millionth of a byte per
/// second to 10^18 (an exabyte per second).
pub const MIN_BANDWIDTH: f64 = 1e-6;
pub const MAX_BANDWIDTH: f64 = 1e18;
/// The longest latency or overhead (s), as for `--skew`: 32 years.
pub const MAX_LATENCY: f64 = 1e9;

/// Rejects a latency that is negative, not finite or beyond `MAX_LATENCY`.
pub(crate) fn check_latency(what: &str, lat: f64) -> Result<()> {
    latency_problem(lat).map_or(Ok(()), |p| Err(fail!(Topology, Value, "{what}: {p}")))
}

/// [`check_latency`] of a parameter (`node_latency`): the error names it.
pub(crate) fn check_latency_param(param: &'static str, lat: f64) -> Result<()> {
    latency_problem(lat).map_or(Ok(()), |p| Err(param!(param, ": {p}")))
}

fn latency_problem(lat: f64) -> Option<String> {
    if !(lat.is_finite() && lat >= 0.0) {
        return Some(format!(
            "latency must be a non-negative number of seconds, got {lat}"
        ));
    }
    if lat > MAX_LATENCY {
        return Some(format!("latency {lat:e} s is more than {MAX_LATENCY:e} s"));
    }
    None
}
