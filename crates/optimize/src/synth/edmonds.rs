//! Edmonds' disjoint arborescences: a digraph in which every node is
//! reached from the root by k arc-disjoint paths holds k arc-disjoint
//! spanning arborescences rooted there (Edmonds 1973). This builds them as
//! Lovász's proof does (1976; Frank, "Connections in Combinatorial
//! Optimization", §10.1): trees one at a time, each grown arc by arc from
//! the root, an arc taken only if the arcs left still let the rest be
//! built: with F the tree's arcs so far, the graph without F still
//! reaches every node from the root by k − 1 arc-disjoint paths. Lovász
//! shows that while F does not span, some arc leaving the nodes it reaches
//! keeps this, so the search never backtracks.
//!
//! On a network whose links carry whole multiples of one bandwidth (a
//! link of m units is m parallel arcs), the k trees at one unit each meet
//! the broadcast's cut bound exactly, with the fewest trees any packing
//! can: the synthesis ([`super::pack::exact`]) uses them where the linear
//! program's optimum would spread the rate over dozens of trees.

/// Up to `k` arc-disjoint spanning arborescences of `n` nodes rooted at
/// `root` over `arcs` (from, to), each the arc entering every node
/// (`usize::MAX` at the root). Fewer than `k` when the graph has fewer.
pub fn disjoint(n: usize, root: usize, arcs: &[(u32, u32)], k: usize) -> Vec<Vec<usize>> {
    let mut g = Flows::new(n, arcs);
    let k = (0..n)
        .filter(|&w| w != root)
        .map(|w| g.max_flow(root, w, k))
        .min()
        .unwrap_or(0);
    let mut trees = Vec::new();
    for left in (1..=k).rev() {
        let mut reached = vec![false; n];
        reached[root] = true;
        let mut tree = vec![usize::MAX; n];
        for _ in 1..n {
            let mut grown = false;
            for (a, &(u, v)) in arcs.iter().enumerate() {
                let (u, v) = (u as usize, v as usize);
                if !g.alive[a] || !reached[u] || reached[v] {
                    continue;
                }
                g.alive[a] = false;
                reached[v] = true;
                let keeps = (0..n)
                    .filter(|&w| w != root)
                    .all(|w| g.max_flow(root, w, left - 1) >= left - 1);
                if keeps {
                    tree[v] = a;
                    grown = true;
                    break;
                }
                g.alive[a] = true;
                reached[v] = false;
            }
            if !grown {
                // Lovász's lemma says this cannot happen; stop rather than
                // return a tree that does not span.
                return trees;
            }
        }
        trees.push(tree);
    }
    trees
}

/// Unit-capacity arcs, some taken out, and augmenting-path flows on them.
struct Flows<'a> {
    arcs: &'a [(u32, u32)],
    alive: Vec<bool>,
    /// Arcs leaving and entering each node.
    out: Vec<Vec<usize>>,
    into: Vec<Vec<usize>>,
    flow: Vec<bool>,
    prev: Vec<usize>,
    queue: Vec<usize>,
}

impl<'a> Flows<'a> {
    fn new(n: usize, arcs: &'a [(u32, u32)]) -> Flows<'a> {
        let mut out = vec![Vec::new(); n];
        let mut into = vec![Vec::new(); n];
        for (a, &(u, v)) in arcs.iter().enumerate() {
            out[u as usize].push(a);
            into[v as usize].push(a);
        }
        Flows {
            arcs,
            alive: vec![true; arcs.len()],
            out,
            into,
            flow: vec![false; arcs.len()],
            prev: vec![usize::MAX; n],
            queue: Vec::with_capacity(n),
        }
    }

    /// The number of arc-disjoint paths from `s` to `t` over the live
    /// arcs, counted up to `cap`.
    fn max_flow(&mut self, s: usize, t: usize, cap: usize) -> usize {
        self.flow.iter_mut().for_each(|f| *f = false);
        const SEEN: usize = usize::MAX - 1;
        let mut found = 0;
        while found < cap {
            // Breadth-first search in the residual graph; `prev` holds the
            // arc a node was reached by, tagged in the top bit when it is
            // a flow arc walked backwards.
            const BACK: usize = 1 << (usize::BITS - 1);
            self.prev.iter_mut().for_each(|p| *p = usize::MAX);
            self.prev[s] = SEEN;
            self.queue.clear();
            self.queue.push(s);
            let mut head = 0;
            while head < self.queue.len() && self.prev[t] == usize::MAX {
                let x = self.queue[head];
                head += 1;
                for &a in &self.out[x] {
                    let y = self.arcs[a].1 as usize;
                    if self.alive[a] && !self.flow[a] && self.prev[y] == usize::MAX {
                        self.prev[y] = a;
                        self.queue.push(y);
                    }
                }
                for &a in &self.into[x] {
                    let y = self.arcs[a].0 as usize;
                    if self.flow[a] && self.prev[y] == usize::MAX {
                        self.prev[y] = a | BACK;
                        self.queue.push(y);
                    }
                }
            }
            if self.prev[t] == usize::MAX {
                break;
            }
            let mut y = t;
            while y != s {
                let p = self.prev[y];
                let a = p & !BACK;
                if p & BACK == 0 {
                    self.flow[a] = true;
                    y = self.arcs[a].0 as usize;
                } else {
                    self.flow[a] = false;
                    y = self.arcs[a].1 as usize;
                }
            }
            found += 1;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The least number of arcs entering a node set without the root, over
    /// every such set: Edmonds' k.
    fn brute_cut(n: usize, root: usize, arcs: &[(u32, u32)]) -> usize {
        (1u32..1 << n)
            .filter(|z| z & (1 << root) == 0)
            .map(|z| {
                arcs.iter()
                    .filter(|&&(u, v)| z & (1 << u) == 0 && z & (1 << v) != 0)
                    .count()
            })
            .min()
            .unwrap_or(0)
    }

    #[test]
    fn as_many_disjoint_trees_as_the_least_cut() {
        let mut rng = topocoll_testkit::Rng::new(5u64);
        let mut rand = move |k: u64| rng.below(k);
        for _ in 0..400 {
            let n = 2 + rand(6) as usize;
            let mut arcs = Vec::new();
            for a in 0..n {
                for b in 0..n {
                    for _ in 0..rand(3) {
                        if a != b {
                            arcs.push((a as u32, b as u32));
                        }
                    }
                }
            }
            let root = rand(n as u64) as usize;
            let want = brute_cut(n, root, &arcs);
            let trees = disjoint(n, root, &arcs, usize::MAX);
            assert_eq!(trees.len(), want, "{n} nodes, root {root}: {arcs:?}");
            let mut used = vec![false; arcs.len()];
            for t in &trees {
                for v in 0..n {
                    // Spanning: every node walks back to the root.
                    let mut x = v;
                    for _ in 0..=n {
                        if x == root {
                            break;
                        }
                        assert_eq!(arcs[t[x]].1 as usize, x);
                        x = arcs[t[x]].0 as usize;
                    }
                    assert_eq!(x, root);
                    if v != root {
                        assert!(!used[t[v]], "arc {} in two trees", t[v]);
                        used[t[v]] = true;
                    }
                }
            }
        }
    }
}
