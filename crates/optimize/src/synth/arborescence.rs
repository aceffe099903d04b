//! The arborescence of least total cost (Chu, Liu and Edmonds' problem) in
//! O(E log V), as Tarjan ("Finding optimum branchings", 1977) and Gabow,
//! Galil, Spencer and Tarjan (1986) organise it: every node keeps a
//! mergeable heap of the edges entering it, lazily reduced by the cost of
//! the edge it chose; walking the chosen edges back from each node finds
//! the cycles, which are contracted by merging their heaps and joining
//! them in a union-find; the contractions are then undone in reverse order,
//! each cycle keeping its edges but the one its entering edge replaces.
//!
//! The packing ([`super::pack`]) asks for one arborescence per root per
//! round, tens of thousands on a 32×32 torus: contracting level by level,
//! as the textbook does, costs O(V·E) there (11 ms a call on 32×32),
//! this some 0.1 ms.

/// No heap node, no edge.
const NIL: u32 = u32::MAX;

/// A leftist heap's node: one candidate edge, its cost less what was
/// taken off the whole heap below `delta`.
struct Node {
    edge: u32,
    key: f64,
    /// Added to this node's key and every node below it, not yet applied.
    delta: f64,
    left: u32,
    right: u32,
    /// Length of the right spine (the leftist property keeps it O(log n)).
    rank: u32,
}

struct Heaps {
    nodes: Vec<Node>,
}

impl Heaps {
    fn push_down(&mut self, a: u32) {
        let d = self.nodes[a as usize].delta;
        if d != 0.0 {
            let n = &mut self.nodes[a as usize];
            n.key += d;
            n.delta = 0.0;
            let (l, r) = (n.left, n.right);
            for c in [l, r] {
                if c != NIL {
                    self.nodes[c as usize].delta += d;
                }
            }
        }
    }

    fn rank(&self, a: u32) -> u32 {
        if a == NIL {
            0
        } else {
            self.nodes[a as usize].rank
        }
    }

    /// The two heaps as one. Recursion follows right spines, so its
    /// depth is logarithmic.
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        self.push_down(a);
        self.push_down(b);
        let (a, b) = if self.nodes[a as usize].key > self.nodes[b as usize].key {
            (b, a)
        } else {
            (a, b)
        };
        let right = self.merge(self.nodes[a as usize].right, b);
        let left = self.nodes[a as usize].left;
        let (left, right) = if self.rank(left) < self.rank(right) {
            (right, left)
        } else {
            (left, right)
        };
        let rank = self.rank(right) + 1;
        let n = &mut self.nodes[a as usize];
        n.left = left;
        n.right = right;
        n.rank = rank;
        a
    }

    /// The least edge of a non-empty heap and its key, and the rest.
    fn pop(&mut self, a: u32) -> (u32, f64, u32) {
        self.push_down(a);
        let n = &self.nodes[a as usize];
        let (edge, key, l, r) = (n.edge, n.key, n.left, n.right);
        (edge, key, self.merge(l, r))
    }
}

/// Union-find without path compression, so that unions can be undone.
struct Components {
    parent: Vec<u32>,
    size: Vec<u32>,
    /// The roots joined under another, in order.
    joined: Vec<u32>,
}

impl Components {
    fn new(n: usize) -> Self {
        Components {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
            joined: Vec::new(),
        }
    }

    fn find(&self, mut x: usize) -> usize {
        while self.parent[x] as usize != x {
            x = self.parent[x] as usize;
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) -> bool {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a as u32;
        self.size[a] += self.size[b];
        self.joined.push(b as u32);
        true
    }

    fn time(&self) -> usize {
        self.joined.len()
    }

    fn rollback(&mut self, time: usize) {
        while self.joined.len() > time {
            let b = self.joined.pop().expect("a union to undo") as usize;
            let a = self.parent[b] as usize;
            self.size[a] -= self.size[b];
            self.parent[b] = b as u32;
        }
    }
}

/// The arborescence of least total cost rooted at `root` over nodes
/// `0..n`, given each edge as (from, to) with its cost: the edge entering
/// each node (`usize::MAX` at the root), or `None` if some node cannot be
/// reached from the root.
pub fn least(n: usize, root: usize, ends: &[(u32, u32)], cost: &[f64]) -> Option<Vec<usize>> {
    let mut heaps = Heaps {
        nodes: Vec::with_capacity(ends.len()),
    };
    let mut head = vec![NIL; n];
    for (i, &(from, to)) in ends.iter().enumerate() {
        if from == to {
            continue;
        }
        let id = heaps.nodes.len() as u32;
        heaps.nodes.push(Node {
            edge: i as u32,
            key: cost[i],
            delta: 0.0,
            left: NIL,
            right: NIL,
            rank: 1,
        });
        head[to as usize] = heaps.merge(head[to as usize], id);
    }
    let mut comps = Components::new(n);
    let mut seen = vec![usize::MAX; n];
    seen[root] = root;
    // The edge chosen to enter each component, by its representative.
    let mut entering = vec![NIL; n];
    // Each contracted cycle: its representative, the union-find's time
    // before it, and its edges.
    let mut cycles: Vec<(usize, usize, Vec<u32>)> = Vec::new();
    let mut path: Vec<usize> = Vec::new();
    let mut chosen: Vec<u32> = Vec::new();
    for start in 0..n {
        let mut u = start;
        path.clear();
        chosen.clear();
        while seen[u] == usize::MAX {
            if head[u] == NIL {
                return None;
            }
            let (e, w, rest) = heaps.pop(head[u]);
            if rest != NIL {
                heaps.nodes[rest as usize].delta -= w;
            }
            head[u] = rest;
            chosen.push(e);
            path.push(u);
            seen[u] = start;
            u = comps.find(ends[e as usize].0 as usize);
            if seen[u] == start {
                // A cycle back to u: contract it into one component.
                let time = comps.time();
                let mut merged = NIL;
                loop {
                    let w = path.pop().expect("the cycle is on the path");
                    merged = heaps.merge(merged, head[w]);
                    if !comps.union(u, w) {
                        break;
                    }
                }
                let edges = chosen.split_off(path.len());
                u = comps.find(u);
                head[u] = merged;
                seen[u] = usize::MAX;
                cycles.push((u, time, edges));
            }
        }
        for &e in &chosen {
            entering[comps.find(ends[e as usize].1 as usize)] = e;
        }
    }
    // Expand: a cycle keeps its edges, but the one into the node its
    // entering edge enters.
    for (u, time, edges) in cycles.iter().rev() {
        comps.rollback(*time);
        let into = entering[*u];
        for &f in edges {
            entering[comps.find(ends[f as usize].1 as usize)] = f;
        }
        entering[comps.find(ends[into as usize].1 as usize)] = into;
    }
    Some(
        (0..n)
            .map(|v| {
                if v == root || entering[v] == NIL {
                    usize::MAX
                } else {
                    entering[v] as usize
                }
            })
            .collect(),
    )
}
