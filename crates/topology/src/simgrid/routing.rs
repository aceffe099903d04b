//! SimGrid's routing of a platform of nested zones, as SimGrid 3.32 routes
//! it (`NetZoneImpl::get_global_route`): from the deepest zone holding both
//! ends, a bypass route where one is declared, else the zone's own route
//! between the two children (or points) that lead to them, with the ways
//! from each end to that route's gateways worked out the same way, in
//! turn. A zone routes by its kind:
//!
//! - `Full`: the route declared for the pair (a symmetrical one gives the
//!   reverse too, its links backwards, each split-duplex link's other half);
//! - `Floyd`: the declared routes are edges of as many hops as they have
//!   links; the shortest path by Floyd–Warshall, ties as SimGrid's loops
//!   leave them;
//! - `Dijkstra` (and `DijkstraCache`): the same edges, Dijkstra's shortest
//!   path with SimGrid's heap order (cost, then the node's place);
//! - `None`: no route (a pair routed only through it has none);
//! - `Cluster` (a star: a flat `<cluster>`, `routing="Cluster"`): the
//!   source's links up, then the destination's links down, each link once.
//!
//! Routes are worked out when the simulator asks for a pair, so the
//! platform needs no table of all pairs.

use super::super::{LinkId, NodeId, PairRouter};
use crate::error::fail;
use crate::error::Result;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Mutex;

/// A route a zone declares, between two of its points (or, from zones,
/// with gateways).
#[derive(Clone, Debug, Default)]
pub(super) struct Hop {
    pub gw_src: Option<u32>,
    pub gw_dst: Option<u32>,
    pub links: Vec<LinkId>,
}

/// How a zone routes between its points (see the module doc).
pub(super) enum Routing {
    /// Declared routes by (source, destination) local index.
    Full(HashMap<(u32, u32), Hop>),
    /// Declared routes, and `pred[s * n + d]` after Floyd–Warshall.
    Floyd {
        hops: HashMap<(u32, u32), Hop>,
        pred: Vec<i64>,
    },
    /// Graph nodes (local indices, in the order routes named them), each
    /// node's out-edges in declaration order, and each source's
    /// predecessors once worked out.
    Dijkstra {
        nodes: Vec<u32>,
        node_of: HashMap<u32, u32>,
        edges: Vec<Vec<(u32, Hop)>>,
        cache: Mutex<HashMap<u32, Vec<u32>>>,
    },
    None,
    /// Per point: its links up (to the star's centre) and down, and its
    /// gateway (a child zone's).
    Star(Vec<StarEntry>),
}

#[derive(Clone, Debug, Default)]
pub(super) struct StarEntry {
    pub up: Vec<LinkId>,
    pub down: Vec<LinkId>,
    pub gateway: Option<u32>,
}

/// A zone: its parent, its own point (how its parent names it), its
/// points (hosts, routers and child zones' points) and how it routes.
pub(super) struct Zone {
    pub name: String,
    pub parent: Option<u32>,
    pub point: u32,
    pub points: Vec<u32>,
    pub routing: Routing,
    /// Bypass routes by (source point, destination point).
    pub bypass: HashMap<(u32, u32), Hop>,
    /// Whether its points are zones (SimGrid's recursive mode: routes keep
    /// their gateways).
    pub recursive: bool,
}

/// A point of the platform: a host, a router or a zone.
pub(super) struct Point {
    pub name: String,
    /// The zone it is in (for a zone's point: its parent), and its index
    /// there.
    pub zone: u32,
    pub local: u32,
}

/// The whole platform's routing: what `Graph::with_router` asks.
pub(super) struct Router {
    pub points: Vec<Point>,
    pub zones: Vec<Zone>,
    /// The point of each graph node (hosts and routers, in node order).
    pub point_of_node: Vec<u32>,
}

/// Deepest routes before a platform is taken to loop (a zone route whose
/// gateway leads back into it).
const MAX_DEPTH: usize = 64;

impl PairRouter for Router {
    fn route(&self, a: NodeId, b: NodeId, out: &mut Vec<LinkId>) -> Result<()> {
        let (pa, pb) = (
            self.point_of_node[a as usize],
            self.point_of_node[b as usize],
        );
        self.global(pa, pb, out, 0)
    }
}

impl Router {
    fn name(&self, p: u32) -> &str {
        &self.points[p as usize].name
    }

    fn no_route(&self, a: u32, b: u32, why: &str) -> crate::error::Error {
        fail!(
            Topology,
            File,
            "no route from '{}' to '{}' ({why})",
            self.name(a),
            self.name(b)
        )
    }

    /// The zones from `p`'s zone up to the root.
    fn path(&self, p: u32) -> Vec<u32> {
        let mut out = vec![self.points[p as usize].zone];
        while let Some(parent) = self.zones[*out.last().unwrap() as usize].parent {
            out.push(parent);
        }
        out
    }

    /// (common ancestor, source's ancestor, destination's ancestor), as
    /// SimGrid finds them.
    fn ancestors(&self, a: u32, b: u32) -> (u32, u32, u32) {
        let (za, zb) = (self.points[a as usize].zone, self.points[b as usize].zone);
        if za == zb {
            return (za, za, za);
        }
        let (mut pa, mut pb) = (self.path(a), self.path(b));
        let mut parent = None;
        while pa.len() > 1 && pb.len() > 1 && pa.last() == pb.last() {
            parent = pa.pop();
            pb.pop();
        }
        let (sa, sb) = (*pa.last().unwrap(), *pb.last().unwrap());
        if sa == sb {
            (sa, sa, sb)
        } else {
            (parent.unwrap_or(sa), sa, sb)
        }
    }

    /// SimGrid's `get_global_route`: the links from point `a` to point `b`.
    fn global(&self, a: u32, b: u32, out: &mut Vec<LinkId>, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(self.no_route(a, b, "the zone routes loop"));
        }
        let (common, sa, sb) = self.ancestors(a, b);
        if self.bypass(common, a, b, out, depth)? {
            return Ok(());
        }
        if sa == sb {
            let hop = self.local(common, a, b, out, depth)?;
            out.extend_from_slice(&hop.links);
            return Ok(());
        }
        let (za, zb) = (self.zones[sa as usize].point, self.zones[sb as usize].point);
        let hop = self.local(common, za, zb, out, depth)?;
        let (Some(gs), Some(gd)) = (hop.gw_src, hop.gw_dst) else {
            return Err(self.no_route(
                a,
                b,
                &format!(
                    "zone '{}' has no zoneRoute from '{}' to '{}'",
                    self.zones[common as usize].name,
                    self.zones[sa as usize].name,
                    self.zones[sb as usize].name
                ),
            ));
        };
        if a != gs {
            self.global(a, gs, out, depth + 1)?;
        }
        out.extend_from_slice(&hop.links);
        if gd != b {
            self.global(gd, b, out, depth + 1)?;
        }
        Ok(())
    }

    /// A bypass route of zone `z` that takes `a` to `b` (SimGrid's search:
    /// the zones on each end's way up, nearest first), with the ways to and
    /// from its gateways; whether one was found.
    fn bypass(&self, z: u32, a: u32, b: u32, out: &mut Vec<LinkId>, depth: usize) -> Result<bool> {
        let zone = &self.zones[z as usize];
        if zone.bypass.is_empty() {
            return Ok(false);
        }
        let (za, zb) = (self.points[a as usize].zone, self.points[b as usize].zone);
        if za == z && zb == z {
            return Ok(match zone.bypass.get(&(a, b)) {
                Some(hop) => {
                    out.extend_from_slice(&hop.links);
                    true
                }
                None => false,
            });
        }
        let (mut pa, mut pb) = (self.path(a), self.path(b));
        while pa.len() > 1 && pb.len() > 1 && pa.last() == pb.last() {
            pa.pop();
            pb.pop();
        }
        let lookup = |i: usize, j: usize| -> Option<(u32, u32, &Hop)> {
            let (x, y) = (pa.get(i)?, pb.get(j)?);
            let key = (self.zones[*x as usize].point, self.zones[*y as usize].point);
            zone.bypass.get(&key).map(|h| (key.0, key.1, h))
        };
        let mut found = None;
        'search: for max in 0..pa.len().max(pb.len()) {
            for i in 0..max {
                found = lookup(i, max).or_else(|| lookup(max, i));
                if found.is_some() {
                    break 'search;
                }
            }
            found = lookup(max, max);
            if found.is_some() {
                break;
            }
        }
        let Some((ka, kb, hop)) = found else {
            return Ok(false);
        };
        if a != ka {
            let gs = hop
                .gw_src
                .ok_or_else(|| self.no_route(a, b, "a bypass without gw_src"))?;
            self.global(a, gs, out, depth + 1)?;
        }
        out.extend_from_slice(&hop.links);
        if b != kb {
            let gd = hop
                .gw_dst
                .ok_or_else(|| self.no_route(a, b, "a bypass without gw_dst"))?;
            self.global(gd, b, out, depth + 1)?;
        }
        Ok(true)
    }

    /// Zone `z`'s own route from its point `a` to its point `b`: the hop
    /// (its gateways; its links, which Floyd and Dijkstra zones append to
    /// `out` themselves with the ways between their hops' gateways, and so
    /// return none).
    fn local(&self, z: u32, a: u32, b: u32, out: &mut Vec<LinkId>, depth: usize) -> Result<Hop> {
        let zone = &self.zones[z as usize];
        let (pa, pb) = (&self.points[a as usize], &self.points[b as usize]);
        if pa.zone != z || pb.zone != z {
            return Err(self.no_route(a, b, "their zones hold no route between them"));
        }
        let (la, lb) = (pa.local, pb.local);
        let missing = || {
            self.no_route(
                a,
                b,
                &format!("zone '{}' declares no route between them", zone.name),
            )
        };
        match &zone.routing {
            Routing::Full(table) => table.get(&(la, lb)).cloned().ok_or_else(missing),
            Routing::None => Err(self.no_route(
                a,
                b,
                &format!("zone '{}' routes nothing (routing=\"None\")", zone.name),
            )),
            Routing::Star(entries) => {
                let (ea, eb) = (&entries[la as usize], &entries[lb as usize]);
                let mut links: Vec<LinkId> = Vec::with_capacity(ea.up.len() + eb.down.len());
                for &l in ea.up.iter().chain(&eb.down) {
                    if !links.contains(&l) {
                        links.push(l);
                    }
                }
                Ok(Hop {
                    gw_src: ea.gateway,
                    gw_dst: eb.gateway,
                    links,
                })
            }
            Routing::Floyd { hops, pred } => {
                let n = zone.points.len();
                let mut stack: Vec<&Hop> = Vec::new();
                let mut cur = lb;
                loop {
                    let p = pred[la as usize * n + cur as usize];
                    if p < 0 {
                        return Err(missing());
                    }
                    stack.push(&hops[&(p as u32, cur)]);
                    cur = p as u32;
                    if cur == la || stack.len() > n {
                        break;
                    }
                }
                stack.reverse();
                self.chain(zone, &stack, out, depth)
            }
            Routing::Dijkstra {
                nodes,
                node_of,
                edges,
                cache,
            } => {
                let (Some(&s), Some(&d)) = (node_of.get(&la), node_of.get(&lb)) else {
                    return Err(missing());
                };
                let pred = {
                    let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
                    c.entry(s).or_insert_with(|| dijkstra(edges, s)).clone()
                };
                let mut stack: Vec<&Hop> = Vec::new();
                let mut v = d;
                while v != s {
                    let p = pred[v as usize];
                    if p == u32::MAX || stack.len() > nodes.len() {
                        return Err(missing());
                    }
                    let hop = edges[p as usize]
                        .iter()
                        .find(|(t, _)| *t == v)
                        .map(|(_, h)| h)
                        .ok_or_else(missing)?;
                    stack.push(hop);
                    v = p;
                }
                stack.reverse();
                self.chain(zone, &stack, out, depth)
            }
        }
    }

    /// A path of hops in a Floyd or Dijkstra zone: their links in turn (to
    /// `out`), joined where one hop's destination gateway is not the next
    /// one's source gateway by the way between them; the first and last
    /// gateways.
    fn chain(
        &self,
        zone: &Zone,
        hops: &[&Hop],
        out: &mut Vec<LinkId>,
        depth: usize,
    ) -> Result<Hop> {
        let mut prev: Option<u32> = None;
        for hop in hops {
            if zone.recursive {
                if let (Some(p), Some(s)) = (prev, hop.gw_src) {
                    if self.name(p) != self.name(s) {
                        self.global(p, s, out, depth + 1)?;
                    }
                }
            }
            out.extend_from_slice(&hop.links);
            prev = hop.gw_dst;
        }
        Ok(Hop {
            gw_src: hops.first().and_then(|h| h.gw_src),
            gw_dst: hops.last().and_then(|h| h.gw_dst),
            links: Vec::new(),
        })
    }
}

/// Floyd–Warshall over the declared hops (cost: links per hop), as
/// SimGrid's loops run it: `pred[s * n + d]`, -1 where none.
pub(super) fn floyd(n: usize, hops: &HashMap<(u32, u32), Hop>) -> Vec<i64> {
    let mut cost = vec![u64::MAX; n * n];
    let mut pred = vec![-1i64; n * n];
    for (&(s, d), hop) in hops {
        cost[s as usize * n + d as usize] = hop.links.len() as u64;
        pred[s as usize * n + d as usize] = s as i64;
    }
    for c in 0..n {
        for a in 0..n {
            let ac = cost[a * n + c];
            if ac == u64::MAX {
                continue;
            }
            for b in 0..n {
                let cb = cost[c * n + b];
                if cb < u64::MAX && (cost[a * n + b] == u64::MAX || ac + cb < cost[a * n + b]) {
                    cost[a * n + b] = ac + cb;
                    pred[a * n + b] = pred[c * n + b];
                }
            }
        }
    }
    pred
}

/// Dijkstra from graph node `s` with SimGrid's heap order (the least cost,
/// then the least node; every node queued at the start): each node's
/// predecessor (`u32::MAX`: unreached).
fn dijkstra(edges: &[Vec<(u32, Hop)>], s: u32) -> Vec<u32> {
    use std::cmp::Reverse;
    let n = edges.len();
    let mut cost = vec![u64::MAX; n];
    let mut pred = vec![u32::MAX; n];
    cost[s as usize] = 0;
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = (0..n as u32)
        .map(|i| Reverse((cost[i as usize], i)))
        .collect();
    while let Some(Reverse((_, v))) = heap.pop() {
        let cv = cost[v as usize];
        if cv == u64::MAX {
            continue;
        }
        for (u, hop) in &edges[v as usize] {
            let c = cv + hop.links.len() as u64;
            if c < cost[*u as usize] {
                cost[*u as usize] = c;
                pred[*u as usize] = v;
                heap.push(Reverse((c, *u)));
            }
        }
    }
    pred
}
