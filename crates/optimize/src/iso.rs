//! Tree isomorphism by AHU labelling (Aho, Hopcroft and Ullman), for the
//! symmetry cuts of the tree-broadcast solver.
//!
//! A tree is rooted at its centre, which every automorphism fixes; when the
//! centre is an edge, at both its ends (an automorphism may swap them). Each
//! node's label is the interned list of its own label, the label of the
//! edge to its parent (both directions' bandwidth and latency and whether
//! the edge is half duplex) and its children's labels, sorted: two nodes at
//! the same depth have equal labels exactly when their subtrees are
//! isomorphic, parameters and all. Walking down from the root, a node's
//! orbit is the interned pair (its parent's orbit, its label): two nodes
//! share an orbit exactly when an automorphism of the labelled tree maps one
//! onto the other. Rooting at the centre is what finds the symmetries
//! between a parent's side and a child's side of an edge, which a tree
//! rooted anywhere else would miss.

use std::collections::HashMap;

/// A tree rooted at its centre, with the static label of every node's edge
/// to its parent.
#[derive(Clone, Debug)]
pub struct Rooted {
    /// Nodes from the root(s) down, each after its parent.
    order: Vec<u32>,
    parent: Vec<u32>,
    children: Vec<Vec<u32>>,
    /// One root, or the two ends of a central edge.
    roots: Vec<u32>,
    /// Label of the edge to the parent (for the two ends of a central
    /// edge, of the edge to the other end, seen from this end).
    edge_label: Vec<u32>,
}

/// Interns lists of labels as small integers.
#[derive(Default, Debug)]
pub struct Labeller {
    ids: HashMap<Vec<u64>, u32>,
    key: Vec<u64>,
    labels: Vec<u32>,
    scratch: Vec<u32>,
}

impl Labeller {
    /// The id of a list of numbers: equal lists, equal ids.
    pub fn intern(&mut self, key: &[u64]) -> u32 {
        if let Some(&id) = self.ids.get(key) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(key.to_vec(), id);
        id
    }

    /// Forgets every id (they are only comparable within one use).
    pub fn clear(&mut self) {
        self.ids.clear();
    }

    /// Every node's subtree label, for the given node labels.
    fn subtree_labels(&mut self, t: &Rooted, node_label: &[u64]) -> Vec<u32> {
        let mut labels = std::mem::take(&mut self.labels);
        labels.clear();
        labels.resize(t.children.len(), 0);
        for &v in t.order.iter().rev() {
            let v = v as usize;
            let mut kids = std::mem::take(&mut self.scratch);
            kids.clear();
            kids.extend(t.children[v].iter().map(|&c| labels[c as usize]));
            kids.sort_unstable();
            let mut key = std::mem::take(&mut self.key);
            key.clear();
            key.push(node_label[v]);
            key.push(t.edge_label[v] as u64);
            key.extend(kids.iter().map(|&k| k as u64));
            labels[v] = self.intern(&key);
            self.key = key;
            self.scratch = kids;
        }
        labels
    }

    /// The canonical form of the whole labelled tree: equal for two trees
    /// (labelled through this labeller) exactly when they are isomorphic.
    pub fn canonical(&mut self, t: &Rooted, node_label: &[u64]) -> Vec<u32> {
        let labels = self.subtree_labels(t, node_label);
        let mut roots: Vec<u32> = t.roots.iter().map(|&r| labels[r as usize]).collect();
        roots.sort_unstable();
        self.labels = labels;
        roots
    }

    /// Each node's orbit under the automorphisms of the labelled tree:
    /// equal numbers exactly for nodes that some automorphism maps onto
    /// each other.
    pub fn orbits(&mut self, t: &Rooted, node_label: &[u64], orbit: &mut Vec<u32>) {
        let labels = self.subtree_labels(t, node_label);
        orbit.clear();
        orbit.resize(t.children.len(), 0);
        for &v in &t.order {
            let v = v as usize;
            let up = if t.roots.contains(&(v as u32)) {
                u64::MAX
            } else {
                orbit[t.parent[v] as usize] as u64
            };
            orbit[v] = self.intern(&[up, u64::MAX - 1, labels[v] as u64]);
        }
        self.labels = labels;
    }
}

impl Rooted {
    /// Roots the tree given by `adj` (neighbours of each node) at its centre.
    /// `edge` gives the static label of the edge from a node to a neighbour,
    /// seen from the node (it must tell apart the two directions where they
    /// differ).
    pub fn at_centre(adj: &[Vec<u32>], mut edge: impl FnMut(u32, u32) -> u32) -> Rooted {
        let n = adj.len();
        // The centre: strip leaves layer by layer until one or two remain.
        let mut degree: Vec<usize> = adj.iter().map(Vec::len).collect();
        let mut layer: Vec<u32> = (0..n as u32).filter(|&v| degree[v as usize] <= 1).collect();
        let mut left = n;
        while left > 2 {
            left -= layer.len();
            let mut next = Vec::new();
            for &v in &layer {
                for &u in &adj[v as usize] {
                    degree[u as usize] -= 1;
                    if degree[u as usize] == 1 {
                        next.push(u);
                    }
                }
            }
            layer = next;
        }
        let roots: Vec<u32> = if n <= 2 {
            (0..n as u32).collect()
        } else {
            layer
        };
        let mut parent = vec![u32::MAX; n];
        let mut children = vec![Vec::new(); n];
        let mut edge_label = vec![0; n];
        let mut order = roots.clone();
        let mut seen = vec![false; n];
        for &r in &roots {
            seen[r as usize] = true;
        }
        if let [a, b] = roots[..] {
            edge_label[a as usize] = edge(a, b);
            edge_label[b as usize] = edge(b, a);
        }
        let mut i = 0;
        while i < order.len() {
            let v = order[i];
            i += 1;
            for &u in &adj[v as usize] {
                if !seen[u as usize] {
                    seen[u as usize] = true;
                    parent[u as usize] = v;
                    children[v as usize].push(u);
                    edge_label[u as usize] = edge(u, v);
                    order.push(u);
                }
            }
        }
        Rooted {
            order,
            parent,
            children,
            roots,
            edge_label,
        }
    }

    /// The root, or the two ends of the central edge.
    pub fn roots(&self) -> &[u32] {
        &self.roots
    }

    /// The node's parent; for an end of a central edge, the other end.
    pub fn parent(&self, v: u32) -> Option<u32> {
        match self.roots[..] {
            [a, b] if v == a => Some(b),
            [a, b] if v == b => Some(a),
            _ => (self.parent[v as usize] != u32::MAX).then_some(self.parent[v as usize]),
        }
    }
}
