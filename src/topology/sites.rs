//! A grid of two sites: two clusters of hosts, each on a LAN, joined by a WAN
//! whose per-lane bandwidth depends on how many lanes are in use (the
//! multi-lane scatter/gather paper). The network is a tree: every host hangs off
//! its site's switch with a LAN link; the two switches are joined by the WAN.

use super::{Duplex, EdgeSpec, Graph, NodeKind, NodeSpec};
use crate::error::Result;
use crate::invalid;

#[derive(Clone, Debug)]
pub struct Sites {
    pub n0: usize,
    pub n1: usize,
    /// LAN bandwidth B (bytes/s) of each host's link to its site switch.
    pub lan_bandwidth: f64,
    pub lan_latency: f64,
    /// WAN latency L (s).
    pub wan_latency: f64,
    /// b(P): per-lane WAN bandwidth (bytes/s) when P lanes are in use, P = 1..len.
    pub lane_bandwidth: Vec<f64>,
    pub net: Graph,
}

impl Sites {
    pub fn new(
        n0: usize,
        n1: usize,
        lan_bandwidth: f64,
        lan_latency: f64,
        wan_latency: f64,
        lane_bandwidth: Vec<f64>,
    ) -> Result<Sites> {
        if n0 == 0 || n1 == 0 {
            return Err(invalid!(
                "sites: each site needs at least one host (n0 = {n0}, n1 = {n1})"
            ));
        }
        // Checked before the names are made: n0 = 10^8 would build them all.
        if n0.saturating_add(n1).saturating_add(2) > super::graph::MAX_GRAPH_NODES {
            return Err(invalid!(
                "sites: {n0} + {n1} hosts and two switches are more than the {} nodes supported",
                super::graph::MAX_GRAPH_NODES
            ));
        }
        if lane_bandwidth.is_empty() {
            return Err(invalid!(
                "sites: wan_lane_bandwidth needs at least the value for one lane"
            ));
        }
        for (i, &b) in lane_bandwidth.iter().enumerate() {
            super::check_bandwidth(&format!("sites: wan_lane_bandwidth for {} lanes", i + 1), b)?;
        }
        super::check_latency("sites: wan_latency", wan_latency)?;
        // Checked here, so the message names the field, not the LAN edge
        // built from it.
        super::check_bandwidth("sites: lan_bandwidth", lan_bandwidth)?;
        super::check_latency("sites: lan_latency", lan_latency)?;
        let mut nodes: Vec<NodeSpec> = (0..n0)
            .map(|i| NodeSpec {
                name: format!("s0h{i}"),
                kind: NodeKind::Host,
            })
            .chain((0..n1).map(|i| NodeSpec {
                name: format!("s1h{i}"),
                kind: NodeKind::Host,
            }))
            .collect();
        nodes.push(NodeSpec {
            name: "s0switch".into(),
            kind: NodeKind::Switch,
        });
        nodes.push(NodeSpec {
            name: "s1switch".into(),
            kind: NodeKind::Switch,
        });
        let lan = |host: &str, sw: &str| EdgeSpec {
            a: host.into(),
            b: sw.into(),
            bandwidth: Some(lan_bandwidth),
            latency: Some(lan_latency),
            duplex: Duplex::Full,
            ..Default::default()
        };
        let mut edges: Vec<EdgeSpec> = (0..n0)
            .map(|i| lan(&format!("s0h{i}"), "s0switch"))
            .chain((0..n1).map(|i| lan(&format!("s1h{i}"), "s1switch")))
            .collect();
        // The WAN link's capacity is what all lanes together can carry at
        // best, max over P of P·b(P); the simulator shares it max-min. It
        // does not cap a lane at b(P) for the P lanes in use: the table is
        // kept (`Sites::lane_bandwidth`) for the multi-lane cost model,
        // which is not built yet.
        let wan_capacity = lane_bandwidth
            .iter()
            .enumerate()
            .map(|(i, &b)| b * (i + 1) as f64)
            .fold(0.0, f64::max);
        edges.push(EdgeSpec {
            a: "s0switch".into(),
            b: "s1switch".into(),
            bandwidth: Some(wan_capacity),
            latency: Some(wan_latency),
            duplex: Duplex::Full,
            ..Default::default()
        });
        let net = Graph::new(&nodes, &edges, true, lan_bandwidth, lan_latency)?;
        Ok(Sites {
            n0,
            n1,
            lan_bandwidth,
            lan_latency,
            wan_latency,
            lane_bandwidth,
            net,
        })
    }

    /// b(P), the per-lane WAN bandwidth with `lanes` lanes in use (the last
    /// table entry holds for more lanes than the table lists).
    pub fn lane_bandwidth(&self, lanes: usize) -> f64 {
        let i = lanes.clamp(1, self.lane_bandwidth.len()) - 1;
        self.lane_bandwidth[i]
    }

    pub fn describe(&self) -> String {
        format!(
            "two sites of {} and {} hosts, WAN latency {} s, {} lane bandwidth entries",
            self.n0,
            self.n1,
            self.wan_latency,
            self.lane_bandwidth.len()
        )
    }
}
