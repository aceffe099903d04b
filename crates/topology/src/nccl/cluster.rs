//! Clusters of GPU servers: `servers` copies of one NCCL topology file's
//! server joined by a fabric, any topology whose hosts are the servers'
//! NIC ports, routed GPU → its port → the fabric's route → the remote
//! port → its GPU.

use super::super::graph::{Graph, NodeKind, NodeSpec, PairRouter};
use super::super::{Kind, Link, LinkId, NodeId, Topology};
use super::{parse_server, Server};
use crate::error::fail;
use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;

/// Whether a TOML topology file's kind is `cluster`.
pub fn is_cluster(text: &str) -> bool {
    text.parse::<toml::Table>()
        .ok()
        .and_then(|t| {
            t.get("kind")
                .and_then(|k| k.as_str().map(|s| s == "cluster"))
        })
        .unwrap_or(false)
}

/// A cluster file: `servers` copies of the NCCL topology file `server`
/// joined by `fabric`, a topology whose hosts are the servers' ports.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterFile {
    #[allow(dead_code)]
    kind: String,
    server: String,
    servers: usize,
    fabric: String,
}

/// The most servers a cluster may have.
const MAX_SERVERS: usize = 4096;

/// Reads a cluster file (`kind = "cluster"`).
pub fn parse_cluster(name: &str, text: &str) -> Result<Topology> {
    let f: ClusterFile = toml::from_str(text).map_err(|e| {
        fail!(
            Topology,
            File,
            "topology file '{name}': {}",
            e.message().trim().replace('\n', " ")
        )
    })?;
    if !(1..=MAX_SERVERS).contains(&f.servers) {
        return Err(fail!(
            Topology,
            File,
            "topology file '{name}': servers = {} is not 1 to {MAX_SERVERS}",
            f.servers
        ));
    }
    let dir = Path::new(name).parent().unwrap_or(Path::new(""));
    let beside = |p: &str| -> String {
        let q = dir.join(p);
        if Path::new(p).is_relative() && q.exists() {
            q.to_string_lossy().into_owned()
        } else {
            p.to_string()
        }
    };
    let server_path = beside(&f.server);
    let server_text = std::fs::read_to_string(&server_path)
        .map_err(|e| Error::io(format!("cannot read server file '{server_path}'"), e))?;
    let server = parse_server(&server_path, &server_text)?;
    let fabric = super::super::parse_spec(&beside(&f.fabric))
        .map_err(|e| fail!(Topology, File, "topology file '{name}': fabric: {e}"))?;
    cluster(name, &server, f.servers, &fabric)
}

/// `servers` copies of `server`, port k of server s the fabric's host
/// s·ports + k.
pub fn cluster(name: &str, server: &Server, servers: usize, fabric: &Topology) -> Result<Topology> {
    let p = server.ports.len();
    if p == 0 {
        return Err(fail!(
            Topology,
            File,
            "topology file '{name}': the server has no NIC port (<net>) to join a fabric"
        ));
    }
    if fabric.ranks_placed() || !fabric.stream_tables().is_empty() {
        return Err(fail!(Topology, File,
            "topology file '{name}': the fabric must be a network of one rank per host, without per-stream WAN tables"
        ));
    }
    if fabric.num_ranks() != servers * p {
        return Err(fail!(Topology, File,
            "topology file '{name}': the fabric has {} hosts; {servers} servers of {p} ports need {}",
            fabric.num_ranks(),
            servers * p
        ));
    }
    let g = &server.graph;
    let (nps, lps) = (g.num_nodes(), g.links().len());
    let server_links = g.links();
    let mut nodes = Vec::with_capacity(servers * nps + fabric.num_nodes);
    let mut links: Vec<Link> = Vec::new();
    let mut link_names = Vec::new();
    for s in 0..servers {
        for (i, n) in g.names.iter().enumerate() {
            nodes.push(NodeSpec {
                name: format!("s{s}.{n}"),
                kind: g.kinds[i],
            });
        }
        let off = (s * nps) as NodeId;
        for l in &server_links {
            links.push(Link {
                from: l.from + off,
                to: l.to + off,
                ..l.clone()
            });
            link_names.push(format!(
                "s{s}.{} -> s{s}.{}",
                g.names[l.from as usize], g.names[l.to as usize]
            ));
        }
    }
    // The fabric's hosts are the servers' ports; its other nodes follow.
    let mut map = vec![NodeId::MAX; fabric.num_nodes];
    for (k, &h) in fabric.rank_node.iter().enumerate() {
        map[h as usize] = ((k / p) * nps) as NodeId + server.ports[k % p];
    }
    for (n, m) in map.iter_mut().enumerate() {
        if *m == NodeId::MAX {
            *m = nodes.len() as NodeId;
            nodes.push(NodeSpec {
                name: format!("fabric.{}", fabric.node_name(n as NodeId)),
                kind: NodeKind::Switch,
            });
        }
    }
    let fabric_off = links.len() as LinkId;
    for (l, link) in fabric.links.iter().enumerate() {
        links.push(Link {
            from: map[link.from as usize],
            to: map[link.to as usize],
            ..link.clone()
        });
        link_names.push(format!("fabric: {}", fabric.link_name(l as LinkId)));
    }
    let fatpipe = if fabric.fatpipe().is_empty() {
        Vec::new()
    } else {
        let mut f = vec![false; fabric_off as usize];
        f.extend_from_slice(fabric.fatpipe());
        f
    };
    let router = ClusterRouter {
        server: g.clone(),
        gpus: server.gpus(),
        nps,
        lps,
        ports: p,
        gpu_port: server.gpu_port.clone(),
        gpu_to_port: server.gpu_to_port.clone(),
        port_nodes: server.ports.clone(),
        fabric: fabric.clone(),
        fabric_off,
    };
    let router = Arc::new(router);
    let graph = Graph::with_router(&nodes, links, link_names, fatpipe, router.clone())?;
    let mut t = Topology::from_kind(name, Kind::Graph(graph));
    t.gpus = Some(Arc::new(super::GpuLayout::of(
        server,
        servers,
        Some(router),
    )));
    Ok(t)
}

/// Routes of a cluster: inside a server the server's own; between
/// servers GPU → its port (over PCI), the fabric's route between the two
/// ports, and the remote port → its GPU.
pub(super) struct ClusterRouter {
    server: Graph,
    gpus: usize,
    nps: usize,
    lps: usize,
    ports: usize,
    gpu_port: Vec<usize>,
    gpu_to_port: Vec<Vec<LinkId>>,
    port_nodes: Vec<NodeId>,
    fabric: Topology,
    fabric_off: LinkId,
}

impl std::fmt::Debug for ClusterRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClusterRouter({} ports a server)", self.ports)
    }
}

impl ClusterRouter {
    /// Rank `a`'s route to rank `b` on another server, out by `a`'s port
    /// `out` and in by `b`'s port `into` (see `GpuLayout::path_via`).
    pub(super) fn route_via(
        &self,
        a: usize,
        b: usize,
        out: usize,
        into: usize,
    ) -> Option<Vec<LinkId>> {
        let (sa, la) = (a / self.gpus, a % self.gpus);
        let (sb, lb) = (b / self.gpus, b % self.gpus);
        let ports = self.server_ports();
        let mut path = Vec::new();
        self.server.route_nodes(la as NodeId, ports[out], &mut path);
        let oa = (sa * self.lps) as LinkId;
        path.iter_mut().for_each(|l| *l += oa);
        let (pa, pb) = (sa * self.ports + out, sb * self.ports + into);
        if self.fabric.route_problem(pa, pb).is_some() {
            return None;
        }
        let start = path.len();
        self.fabric.route(pa, pb, &mut path);
        path[start..].iter_mut().for_each(|l| *l += self.fabric_off);
        let start = path.len();
        self.server
            .route_nodes(ports[into], lb as NodeId, &mut path);
        let ob = (sb * self.lps) as LinkId;
        path[start..].iter_mut().for_each(|l| *l += ob);
        Some(path)
    }

    /// The ports' nodes in a server, in `dev` order.
    fn server_ports(&self) -> &[NodeId] {
        &self.port_nodes
    }
}

impl PairRouter for ClusterRouter {
    fn route(&self, a: NodeId, b: NodeId, out: &mut Vec<LinkId>) -> Result<()> {
        let (sa, la) = (a as usize / self.nps, a as usize % self.nps);
        let (sb, lb) = (b as usize / self.nps, b as usize % self.nps);
        if la >= self.gpus || lb >= self.gpus {
            return Err(fail!(Topology, File, "cluster: routes join GPUs only"));
        }
        if sa == sb {
            let start = out.len();
            self.server.route_nodes(la as NodeId, lb as NodeId, out);
            let off = (sa * self.lps) as LinkId;
            out[start..].iter_mut().for_each(|l| *l += off);
            return Ok(());
        }
        let (oa, ob) = ((sa * self.lps) as LinkId, (sb * self.lps) as LinkId);
        out.extend(self.gpu_to_port[la].iter().map(|&l| l + oa));
        let (pa, pb) = (
            sa * self.ports + self.gpu_port[la],
            sb * self.ports + self.gpu_port[lb],
        );
        if let Some(why) = self.fabric.route_problem(pa, pb) {
            return Err(fail!(Topology, File, "cluster fabric: {why}"));
        }
        let start = out.len();
        self.fabric.route(pa, pb, out);
        out[start..].iter_mut().for_each(|l| *l += self.fabric_off);
        // Back from the port: the links of the GPU's way there, each the
        // other direction of its cable (full duplex: l ^ 1).
        out.extend(self.gpu_to_port[lb].iter().rev().map(|&l| (l ^ 1) + ob));
        Ok(())
    }
}
