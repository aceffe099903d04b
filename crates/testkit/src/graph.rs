//! Random connected networks of hosts and switches, as topology files.

use crate::Rng;

/// How a random graph is drawn. Every draw comes from one [`Rng`] in a
/// fixed order, so a graph is named by its seed and its description.
#[derive(Clone, Copy, Debug)]
pub struct RandomGraph {
    /// The fewest nodes (at least 2: nodes 0 and 1 are always hosts).
    pub min_nodes: usize,
    /// Nodes beyond the fewest: `min_nodes + rng.below(extra_nodes)`.
    pub extra_nodes: u64,
    /// A node past the first two is a switch one time in this many.
    pub switch_one_in: u64,
    /// Edges beyond a spanning tree: up to `extra_edges_per_node` × n
    /// drawn (a loop or a repeat is dropped).
    pub extra_edges_per_node: u64,
    /// Which edges are half-duplex cables.
    pub half: HalfDuplex,
}

/// Which edges of a [`RandomGraph`] share one bandwidth between their
/// directions; the others have a bandwidth each way.
#[derive(Clone, Copy, Debug)]
pub enum HalfDuplex {
    /// Each edge one time in this many.
    OneIn(u64),
    /// Each edge one time in `one_in`, at most `most` of them.
    AtMost { most: usize, one_in: u64 },
}

impl RandomGraph {
    /// The graph as a topology file (`kind = "graph"`, 1 µs a hop,
    /// bandwidths from 100 MB/s to 900 MB/s).
    pub fn toml(&self, rng: &mut Rng) -> String {
        let n = self.min_nodes + rng.below(self.extra_nodes) as usize;
        let mut toml = String::from("kind = \"graph\"\nlatency = 1e-6\n");
        for v in 0..n {
            let switch = v > 1 && rng.below(self.switch_one_in) == 0;
            toml += &format!(
                "[[node]]\nname = \"n{v}\"\n{}",
                if switch { "kind = \"switch\"\n" } else { "" }
            );
        }
        let mut edges = Vec::new();
        for v in 1..n {
            edges.push((rng.index(v), v)); // a spanning tree
        }
        for _ in 0..rng.below(self.extra_edges_per_node * n as u64) {
            let (a, b) = (rng.index(n), rng.index(n));
            if a != b && !edges.contains(&(a, b)) && !edges.contains(&(b, a)) {
                edges.push((a, b));
            }
        }
        let mut halves = 0;
        let bw = |k: u64| (1 + k) as f64 * 1e8;
        for (a, b) in edges {
            toml += &format!("[[edge]]\na = \"n{a}\"\nb = \"n{b}\"\n");
            let half = match self.half {
                HalfDuplex::OneIn(k) => rng.below(k) == 0,
                HalfDuplex::AtMost { most, one_in } => halves < most && rng.below(one_in) == 0,
            };
            if half {
                halves += 1;
                toml += &format!("bandwidth = {}\nduplex = \"half\"\n", bw(rng.below(9)));
            } else {
                toml += &format!(
                    "bandwidth_ab = {}\nbandwidth_ba = {}\n",
                    bw(rng.below(9)),
                    bw(rng.below(9))
                );
            }
        }
        toml
    }

    /// The graph as a topology.
    pub fn topology(&self, rng: &mut Rng) -> topocoll_topology::Topology {
        let toml = self.toml(rng);
        topocoll_topology::parse_toml("random", &toml)
            .unwrap_or_else(|e| panic!("a random graph does not parse: {e}\n{toml}"))
    }
}
