//! A grid of sites: clusters of hosts, each on a LAN, joined by a WAN whose
//! streams are capped by how many of them cross at once (the multi-lane
//! scatter/gather paper). Every host hangs off its site's switch with a LAN
//! link; every two site switches are joined by a WAN link of their own.
//!
//! A WAN link carries at most `wan_capacity` bytes/s, shared max-min among
//! the streams crossing it, and each stream at most b(P) when P streams cross
//! that link (in that direction) at once. b(P) is either the user's measured
//! lane table, or follows from a TCP window: b(P) = min(window / RTT,
//! capacity / P) with RTT = 2·(wan_latency + 2·lan_latency), the round trip
//! between two hosts of different sites.

use super::{Duplex, EdgeSpec, Graph, LinkId, NodeKind, NodeSpec};
use crate::error::fail;
use crate::error::Result;

/// How the WAN's per-stream rate is given.
#[derive(Clone, Debug, PartialEq)]
pub enum Wan {
    /// b(P) for P = 1, 2, … streams, bytes/s per stream (the paper's
    /// measured table); `capacity` defaults to max over P of P·b(P).
    Lanes {
        lane_bandwidth: Vec<f64>,
        capacity: Option<f64>,
    },
    /// A WAN of `capacity` bytes/s whose streams are TCP streams with a
    /// `window`-byte window.
    Window { capacity: f64, window: f64 },
}

#[derive(Clone, Debug)]
pub struct Sites {
    /// Hosts of each site; ranks are numbered site by site.
    pub sizes: Vec<usize>,
    /// LAN bandwidth B (bytes/s) of each host's link to its site switch.
    pub lan_bandwidth: f64,
    pub lan_latency: f64,
    /// WAN latency L (s) of every site-to-site link.
    pub wan_latency: f64,
    /// What each WAN link carries at most, all streams together (bytes/s).
    pub wan_capacity: f64,
    /// b(P): per-stream WAN bandwidth (bytes/s) with P streams on a WAN
    /// link, P = 1..len. A window WAN's table runs to the largest number of
    /// streams that can cross (one per host pair).
    pub lane_bandwidth: Vec<f64>,
    pub wan: Wan,
    /// The directed WAN links (both directions of every site pair).
    pub wan_links: Vec<LinkId>,
    pub net: Graph,
}

impl Sites {
    pub fn new(
        sizes: Vec<usize>,
        lan_bandwidth: f64,
        lan_latency: f64,
        wan_latency: f64,
        wan: Wan,
    ) -> Result<Sites> {
        if sizes.len() < 2 {
            return Err(fail!(
                Topology,
                Shape,
                "sites: a grid needs at least two sites (got {})",
                sizes.len()
            ));
        }
        if let Some(k) = sizes.iter().position(|&n| n == 0) {
            return Err(fail!(
                Topology,
                Shape,
                "sites: each site needs at least one host (site {k} has none)"
            ));
        }
        // Checked before the names are made: a site of 10^8 would build them all.
        let total = sizes
            .iter()
            .fold(sizes.len(), |acc, &n| acc.saturating_add(n));
        if total > super::graph::MAX_GRAPH_NODES {
            return Err(fail!(
                Topology,
                Shape,
                "sites: {} hosts and {} switches are more than the {} nodes supported",
                total - sizes.len(),
                sizes.len(),
                super::graph::MAX_GRAPH_NODES
            ));
        }
        super::check_latency("sites: wan_latency", wan_latency)?;
        // Checked here, so the message names the field, not the LAN edge
        // built from it.
        super::check_bandwidth("sites: lan_bandwidth", lan_bandwidth)?;
        super::check_latency("sites: lan_latency", lan_latency)?;
        let hosts: usize = sizes.iter().sum();
        let (lane_bandwidth, wan_capacity) =
            match &wan {
                Wan::Lanes {
                    lane_bandwidth,
                    capacity,
                } => {
                    if lane_bandwidth.is_empty() {
                        return Err(fail!(
                            Topology,
                            Shape,
                            "sites: wan_lane_bandwidth needs at least the value for one lane"
                        ));
                    }
                    for (i, &b) in lane_bandwidth.iter().enumerate() {
                        super::check_bandwidth(
                            &format!("sites: wan_lane_bandwidth for {} lanes", i + 1),
                            b,
                        )?;
                    }
                    let most = lane_bandwidth
                        .iter()
                        .enumerate()
                        .map(|(i, &b)| b * (i + 1) as f64)
                        .fold(0.0, f64::max);
                    if let Some(c) = capacity {
                        super::check_bandwidth("sites: wan_bandwidth", *c)?;
                    }
                    (lane_bandwidth.clone(), capacity.unwrap_or(most))
                }
                &Wan::Window { capacity, window } => {
                    super::check_bandwidth("sites: wan_bandwidth", capacity)?;
                    super::check_bandwidth("sites: wan_window", window)?;
                    let rtt = 2.0 * (wan_latency + 2.0 * lan_latency);
                    if rtt <= 0.0 {
                        return Err(fail!(Topology, Shape,
                        "sites: wan_window needs a round trip: wan_latency or lan_latency above 0"
                    ));
                    }
                    let stream = window / rtt;
                    let most = sizes.iter().max().copied().unwrap_or(1).max(hosts / 2);
                    let table = (1..=most)
                        .map(|p| stream.min(capacity / p as f64))
                        .collect();
                    (table, capacity)
                }
            };
        let host_name = |k: usize, i: usize| format!("s{k}h{i}");
        let switch_name = |k: usize| format!("s{k}switch");
        let mut nodes: Vec<NodeSpec> = Vec::with_capacity(total);
        for (k, &n) in sizes.iter().enumerate() {
            nodes.extend((0..n).map(|i| NodeSpec {
                name: host_name(k, i),
                kind: NodeKind::Host,
            }));
        }
        nodes.extend((0..sizes.len()).map(|k| NodeSpec {
            name: switch_name(k),
            kind: NodeKind::Switch,
        }));
        let edge = |a: String, b: String, bandwidth: f64, latency: f64| EdgeSpec {
            a,
            b,
            bandwidth: Some(bandwidth),
            latency: Some(latency),
            duplex: Duplex::Full,
            ..Default::default()
        };
        let mut edges = Vec::new();
        for (k, &n) in sizes.iter().enumerate() {
            for i in 0..n {
                edges.push(edge(
                    host_name(k, i),
                    switch_name(k),
                    lan_bandwidth,
                    lan_latency,
                ));
            }
        }
        for a in 0..sizes.len() {
            for b in a + 1..sizes.len() {
                edges.push(edge(
                    switch_name(a),
                    switch_name(b),
                    wan_capacity,
                    wan_latency,
                ));
            }
        }
        // Two sites are a tree (a path through the WAN), more a graph.
        let net = if sizes.len() == 2 {
            Graph::tree(&nodes, &edges, lan_bandwidth, lan_latency)?
        } else {
            Graph::network(&nodes, &edges, lan_bandwidth, lan_latency)?
        };
        // LAN edges come first, two directed links each; the rest are WAN.
        let wan_links = (2 * hosts as LinkId..net.links().len() as LinkId).collect();
        Ok(Sites {
            sizes,
            lan_bandwidth,
            lan_latency,
            wan_latency,
            wan_capacity,
            lane_bandwidth,
            wan,
            wan_links,
            net,
        })
    }

    /// b(P), the per-stream WAN bandwidth with `lanes` streams on a WAN link
    /// (the last table entry holds for more streams than the table lists;
    /// the WAN's capacity, shared max-min, bounds them together).
    pub fn lane_bandwidth(&self, lanes: usize) -> f64 {
        let i = lanes.clamp(1, self.lane_bandwidth.len()) - 1;
        self.lane_bandwidth[i]
    }

    /// The first rank of each site, and one past the last.
    pub fn offsets(&self) -> Vec<usize> {
        let mut out = vec![0];
        for &n in &self.sizes {
            out.push(out[out.len() - 1] + n);
        }
        out
    }

    /// The site of a rank.
    pub fn site_of(&self, rank: usize) -> usize {
        let mut rest = rank;
        for (k, &n) in self.sizes.iter().enumerate() {
            if rest < n {
                return k;
            }
            rest -= n;
        }
        self.sizes.len() - 1
    }

    pub fn describe(&self) -> String {
        let sizes: Vec<String> = self.sizes.iter().map(|n| n.to_string()).collect();
        let wan = match &self.wan {
            Wan::Lanes { lane_bandwidth, .. } => {
                format!("{} lane bandwidth entries", lane_bandwidth.len())
            }
            Wan::Window { window, .. } => format!("{window}-byte TCP window per stream"),
        };
        format!(
            "{} sites of {} hosts, WAN latency {} s, WAN capacity {} B/s, {wan}",
            self.sizes.len(),
            sizes.join(" + "),
            self.wan_latency,
            self.wan_capacity
        )
    }
}
