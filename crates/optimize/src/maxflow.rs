//! Maximum flow and minimum cut on a directed graph with real capacities
//! (Dinic's algorithm: breadth-first levels, then blocking flows along
//! them by depth-first search). A small standalone piece with its own
//! tests; [`crate::cut`] builds its networks from topologies.
//!
//! Capacities are bandwidths (bytes per second) or bytes, far from the
//! limits of `f64`; a residual capacity below `EPS` times the largest
//! capacity is taken as zero, so that rounding in the augmentations never
//! leaves a phantom path open.

/// Relative size below which a residual capacity counts as zero.
const EPS: f64 = 1e-12;

/// A flow network: nodes `0..n`, arcs added one by one.
#[derive(Clone, Debug)]
pub struct FlowNet {
    /// Arc `2k` is the k-th arc added, arc `2k + 1` its reverse.
    to: Vec<u32>,
    cap: Vec<f64>,
    /// Capacity as added (the reverse arc: 0), to reset between runs.
    initial: Vec<f64>,
    adj: Vec<Vec<u32>>,
    level: Vec<u32>,
    next: Vec<usize>,
}

impl FlowNet {
    pub fn new(n: usize) -> FlowNet {
        FlowNet {
            to: Vec::new(),
            cap: Vec::new(),
            initial: Vec::new(),
            adj: vec![Vec::new(); n],
            level: vec![0; n],
            next: vec![0; n],
        }
    }

    pub fn num_nodes(&self) -> usize {
        self.adj.len()
    }

    /// Adds an arc `from → to` of capacity `cap` and returns its index (for
    /// [`FlowNet::set_capacity`]).
    pub fn add_arc(&mut self, from: usize, to: usize, cap: f64) -> usize {
        let k = self.to.len();
        self.to.push(to as u32);
        self.cap.push(cap);
        self.initial.push(cap);
        self.adj[from].push(k as u32);
        self.to.push(from as u32);
        self.cap.push(0.0);
        self.initial.push(0.0);
        self.adj[to].push(k as u32 + 1);
        k
    }

    /// Sets the capacity of arc `arc` (as returned by `add_arc`) for the
    /// runs that follow.
    pub fn set_capacity(&mut self, arc: usize, cap: f64) {
        self.initial[arc] = cap;
    }

    /// The maximum flow from `s` to `t` (every earlier flow discarded).
    pub fn max_flow(&mut self, s: usize, t: usize) -> f64 {
        self.cap.copy_from_slice(&self.initial);
        if s == t {
            return f64::INFINITY;
        }
        // One pass over the capacities, beside a flow's many: set_capacity
        // stays O(1) for the callers that reset every arc between flows.
        let largest = self.initial.iter().copied().fold(0.0, f64::max);
        let eps = EPS * largest.max(f64::MIN_POSITIVE);
        let mut total = 0.0;
        while self.levels(s, t, eps) {
            self.next.iter_mut().for_each(|i| *i = 0);
            loop {
                let pushed = self.push(s, t, f64::INFINITY, eps);
                if pushed <= 0.0 {
                    break;
                }
                total += pushed;
            }
        }
        total
    }

    /// After [`FlowNet::max_flow`]: whether node `v` is on the source's side
    /// of the minimum cut (reachable from the source in the residual
    /// network). The sink side is the cut nearest the sink.
    pub fn source_side(&self) -> Vec<bool> {
        self.level.iter().map(|&l| l != u32::MAX).collect()
    }

    fn levels(&mut self, s: usize, t: usize, eps: f64) -> bool {
        self.level.iter_mut().for_each(|l| *l = u32::MAX);
        self.level[s] = 0;
        let mut queue = std::collections::VecDeque::from([s]);
        while let Some(u) = queue.pop_front() {
            for &a in &self.adj[u] {
                let v = self.to[a as usize] as usize;
                if self.cap[a as usize] > eps && self.level[v] == u32::MAX {
                    self.level[v] = self.level[u] + 1;
                    queue.push_back(v);
                }
            }
        }
        self.level[t] != u32::MAX
    }

    /// Pushes at most `limit` from `u` towards `t` along the levels (an
    /// explicit stack would avoid recursion; the depth is at most the
    /// number of levels, far below the stack's limit for any network
    /// topocoll reads).
    fn push(&mut self, u: usize, t: usize, limit: f64, eps: f64) -> f64 {
        if u == t {
            return limit;
        }
        while self.next[u] < self.adj[u].len() {
            let a = self.adj[u][self.next[u]] as usize;
            let v = self.to[a] as usize;
            if self.cap[a] > eps && self.level[v] == self.level[u] + 1 {
                let got = self.push(v, t, limit.min(self.cap[a]), eps);
                if got > 0.0 {
                    self.cap[a] -= got;
                    self.cap[a ^ 1] += got;
                    return got;
                }
            }
            self.next[u] += 1;
        }
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: the least capacity of the arcs leaving a node set that
    /// holds `s` and not `t`.
    fn min_cut(n: usize, arcs: &[(usize, usize, f64)], s: usize, t: usize) -> f64 {
        let mut best = f64::INFINITY;
        for mask in 0u32..1 << n {
            if mask & (1 << s) == 0 || mask & (1 << t) != 0 {
                continue;
            }
            let c: f64 = arcs
                .iter()
                .filter(|&&(a, b, _)| mask & (1 << a) != 0 && mask & (1 << b) == 0)
                .map(|&(_, _, c)| c)
                .sum();
            best = best.min(c);
        }
        best
    }

    #[test]
    fn max_flow_equals_the_least_cut_on_random_graphs() {
        let mut rng = topocoll_testkit::Rng::new(12345u64);
        let mut rand = move || rng.next_u64();
        for _ in 0..300 {
            let n = 2 + (rand() % 8) as usize;
            let m = (rand() % 25) as usize;
            let arcs: Vec<(usize, usize, f64)> = (0..m)
                .map(|_| {
                    let a = (rand() % n as u64) as usize;
                    let b = (rand() % n as u64) as usize;
                    (a, b, (1 + rand() % 1000) as f64 * 1e6)
                })
                .filter(|&(a, b, _)| a != b)
                .collect();
            let mut net = FlowNet::new(n);
            for &(a, b, c) in &arcs {
                net.add_arc(a, b, c);
            }
            let (s, t) = (0, n - 1);
            let f = net.max_flow(s, t);
            let c = min_cut(n, &arcs, s, t);
            assert!((f - c).abs() <= 1e-9 * c.max(1.0), "{f} vs {c}: {arcs:?}");
            // The residual's reachable set is a minimum cut.
            let side = net.source_side();
            assert!(side[s] && !side[t]);
            let cut: f64 = arcs
                .iter()
                .filter(|&&(a, b, _)| side[a] && !side[b])
                .map(|&(_, _, c)| c)
                .sum();
            assert!((cut - c).abs() <= 1e-9 * c.max(1.0));
        }
    }

    #[test]
    fn capacities_can_change_between_runs() {
        let mut net = FlowNet::new(3);
        let a = net.add_arc(0, 1, 5.0);
        net.add_arc(1, 2, 3.0);
        assert_eq!(net.max_flow(0, 2), 3.0);
        net.set_capacity(a, 2.0);
        assert_eq!(net.max_flow(0, 2), 2.0);
    }
}
