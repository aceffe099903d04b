//! The split bound: the cut bound ([`crate::cut`]) with each half-duplex
//! cable's bandwidth split between its two directions as well as it can
//! be, a least time that exceeds the cut bound where such cables bind.
//!
//! The cut bound counts a half-duplex cable (one link both directions
//! cross) fully in each direction. In any schedule, over its run, such a
//! cable of bandwidth c carries y one way and c − y the other on average,
//! for some y; the schedule is then no faster than the cut bound on the
//! network whose cable runs y one way and c − y the other. So the least
//! time is at least the least, over the splits y, of that cut bound: the
//! split bound. Two hosts joined by one half-duplex cable show it: an
//! allgather's cut bound is m / c, but a block must cross each way, and
//! the split bound is 2m / c.
//!
//! It is found exactly by a linear program over the inverse time λ and the
//! splits y: maximise λ subject to λ · need(S) ≤ B(S; y) for every node
//! set S the collective's cut bound ranges over (B_in, or B_out for the
//! reductions, linear in y), and 0 ≤ y ≤ c. The sets are generated as
//! needed: the program is solved over the sets found so far (its 1/λ is a
//! bound already: fewer constraints can only raise λ), and the cut bound
//! at its split y names the set whose constraint is most violated. When
//! that set's constraint holds, the program's 1/λ equals the cut bound at
//! y: no split does better, and the bound is exact. Without half-duplex
//! cables it is the cut bound.

use crate::cut::{arcs, capacity, cut_bound_on, total_nodes, CutBound};
use crate::error::Result;
use crate::synth::lp::maximize;
use topocoll_base::limits::Deadline;
use topocoll_schedule::Collective;
use topocoll_topology::{NodeId, Topology};

/// Most sets generated before the program's bound is taken as it stands.
const MAX_ROUNDS: usize = 200;
/// Relative tolerance of the stopping test.
const TOL: f64 = 1e-9;

/// The split bound of `collective` on `topo`, in seconds, `size_bytes`
/// read as `simulate --size` reads it (the block for allgather); for
/// allreduce, that of its reduce-scatter of M plus that of its allgather
/// of M / N (schedules built from the two).
pub fn split_bound(topo: &Topology, collective: Collective, size_bytes: u64) -> Result<f64> {
    split_bound_within(topo, collective, size_bytes, &Deadline::NONE)
}

/// [`split_bound`], giving up with a `time_limit` error once `deadline`
/// passes.
pub fn split_bound_within(
    topo: &Topology,
    collective: Collective,
    size_bytes: u64,
    deadline: &Deadline,
) -> Result<f64> {
    match collective {
        Collective::Allreduce => {
            let n = topo.num_ranks() as f64;
            Ok(
                split(topo, Collective::ReduceScatter, size_bytes, deadline)?
                    + split(topo, Collective::Allgather, size_bytes, deadline)? / n,
            )
        }
        c => split(topo, c, size_bytes, deadline),
    }
}

/// A network's connections with its half-duplex cables split.
struct Cables {
    /// Full-duplex links (and a half-duplex cable's ends on one node):
    /// (from, to, bandwidth).
    fixed: Vec<(NodeId, NodeId, f64)>,
    /// Half-duplex cables: (a, b, bandwidth); y runs a → b, c − y b → a.
    half: Vec<(NodeId, NodeId, f64)>,
}

impl Cables {
    fn of(topo: &Topology) -> Cables {
        let mut fixed = Vec::new();
        let mut half = Vec::new();
        for (id, l) in topo.links.iter().enumerate() {
            if l.from == l.to {
                continue;
            }
            let c = capacity(topo, id);
            if topo.both_ways(id as u32) {
                half.push((l.from, l.to, c));
            } else {
                fixed.push((l.from, l.to, c));
            }
        }
        Cables { fixed, half }
    }

    /// The arcs with cable i running `y[i]` a → b. A direction given
    /// nothing keeps a trace of bandwidth, so that the cut bound names a
    /// set rather than a disconnected pair (its bound is then huge, and
    /// still violated).
    fn arcs(&self, y: &[f64]) -> Vec<(NodeId, NodeId, f64)> {
        let mut out = self.fixed.clone();
        for (&(a, b, c), &y) in self.half.iter().zip(y) {
            let floor = c * 1e-6;
            out.push((a, b, y.clamp(floor, c)));
            out.push((b, a, (c - y).clamp(floor, c)));
        }
        out
    }
}

/// Which way a collective's data must cross its sets, and how much.
fn need(topo: &Topology, c: Collective, size: f64, inside: &[bool]) -> f64 {
    let n = topo.num_ranks();
    let outside = topo
        .rank_node
        .iter()
        .filter(|&&v| !inside[v as usize])
        .count() as f64;
    match c {
        Collective::Bcast { .. } | Collective::Reduce { .. } => size,
        Collective::Allgather => size * outside,
        _ => size / n as f64 * outside,
    }
}

fn split(topo: &Topology, c: Collective, size_bytes: u64, deadline: &Deadline) -> Result<f64> {
    let cables = Cables::of(topo);
    let arcs = arcs(topo);
    let plain = cut_bound_on(topo, &arcs, c, size_bytes, deadline)?;
    // On a route graph ([`crate::cut::route_arcs`]) a link is one arc that
    // carries both directions: nothing is left to split.
    let routed = total_nodes(topo, &arcs) > topo.num_nodes;
    if routed || cables.half.is_empty() || plain.seconds <= 0.0 {
        return Ok(plain.seconds);
    }
    let into = matches!(c, Collective::Bcast { .. } | Collective::Allgather);
    let size = size_bytes as f64;
    // Scaled: bandwidths by the largest cable's, data by the size, so the
    // program's numbers stay near 1.
    let unit_b = cables.half.iter().map(|h| h.2).fold(0.0, f64::max);
    let h = cables.half.len();
    // Variables: λ (size per second, scaled), then each cable's y.
    let mut rows: Vec<Vec<f64>> = Vec::new();
    let mut rhs: Vec<f64> = Vec::new();
    for (i, &(_, _, cap)) in cables.half.iter().enumerate() {
        let mut row = vec![0.0; h + 1];
        row[i + 1] = 1.0;
        rows.push(row);
        rhs.push(cap / unit_b);
    }
    let mut objective = vec![0.0; h + 1];
    objective[0] = 1.0;
    let add_set = |cut: &CutBound, rows: &mut Vec<Vec<f64>>, rhs: &mut Vec<f64>| {
        let mut inside = vec![false; topo.num_nodes];
        for &v in &cut.cut {
            inside[v as usize] = true;
        }
        // Crossing into S (out of S for the reductions).
        let crosses = |a: NodeId, b: NodeId| {
            let (a, b) = (inside[a as usize], inside[b as usize]);
            if into {
                !a && b
            } else {
                a && !b
            }
        };
        let mut row = vec![0.0; h + 1];
        row[0] = need(topo, c, size, &inside) / size;
        let mut constant: f64 = cables
            .fixed
            .iter()
            .filter(|&&(a, b, _)| crosses(a, b))
            .map(|f| f.2)
            .sum::<f64>()
            / unit_b;
        for (i, &(a, b, cap)) in cables.half.iter().enumerate() {
            if crosses(a, b) {
                row[i + 1] -= 1.0; // y counts
            } else if crosses(b, a) {
                row[i + 1] += 1.0; // c − y counts
                constant += cap / unit_b;
            }
        }
        rows.push(row);
        rhs.push(constant);
    };
    let mut y: Vec<f64> = cables.half.iter().map(|h| h.2 / 2.0).collect();
    let mut found = cut_bound_on(topo, &cables.arcs(&y), c, size_bytes, deadline)?;
    let mut best = plain.seconds;
    for _ in 0..MAX_ROUNDS {
        add_set(&found, &mut rows, &mut rhs);
        let Some(sol) = maximize(&rows, &rhs, &objective, 100_000) else {
            break;
        };
        let lambda = sol.x[0];
        if lambda <= 0.0 {
            break;
        }
        // The program's time: a bound whatever sets it has.
        let t = size / (lambda * unit_b);
        best = best.max(t);
        y = sol.x[1..].iter().map(|&v| v * unit_b).collect();
        found = cut_bound_on(topo, &cables.arcs(&y), c, size_bytes, deadline)?;
        if found.seconds <= t * (1.0 + TOL) {
            break;
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::cut_bound;
    use topocoll_topology::{parse_spec, parse_toml};

    /// The least over splits by search: the cut bound at a split is the
    /// largest of ratios each 1 / (affine in y), so convex in y; ternary
    /// search on each cable in turn, nested.
    fn searched(topo: &Topology, c: Collective, size: u64) -> f64 {
        let cables = Cables::of(topo);
        fn go(cables: &Cables, topo: &Topology, c: Collective, size: u64, y: &mut Vec<f64>) -> f64 {
            let i = y.len();
            if i == cables.half.len() {
                return cut_bound_on(topo, &cables.arcs(y), c, size, &Deadline::NONE)
                    .unwrap()
                    .seconds;
            }
            let cap = cables.half[i].2;
            let (mut lo, mut hi) = (0.0, cap);
            let at = |v: f64, y: &mut Vec<f64>| {
                y.push(v);
                let t = go(cables, topo, c, size, y);
                y.pop();
                t
            };
            for _ in 0..40 {
                let (a, b) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
                if at(a, y) <= at(b, y) {
                    hi = b;
                } else {
                    lo = a;
                }
            }
            at((lo + hi) / 2.0, y)
        }
        go(&cables, topo, c, size, &mut Vec::new())
    }

    #[test]
    fn the_program_finds_the_best_split() {
        let mut rng = topocoll_testkit::Rng::new(0x5851f42d4c957f2d);
        let shape = topocoll_testkit::RandomGraph {
            min_nodes: 3,
            extra_nodes: 4,
            switch_one_in: 4,
            extra_edges_per_node: 1,
            half: topocoll_testkit::HalfDuplex::AtMost { most: 2, one_in: 2 },
        };
        let mut raised = 0;
        for case in 0..30 {
            let toml = shape.toml(&mut rng);
            let t = parse_toml("random", &toml).unwrap();
            let last = t.num_ranks() as u32 - 1;
            for c in [
                Collective::Bcast { root: last },
                Collective::Reduce { root: 0 },
                Collective::Allgather,
                Collective::ReduceScatter,
            ] {
                let size = 1 << 20;
                let got = split_bound(&t, c, size).unwrap();
                let want = searched(&t, c, size);
                let cut = cut_bound(&t, c, size).unwrap().seconds;
                assert!(
                    (got - want).abs() <= 1e-6 * want,
                    "case {case} {}: {got} vs {want}\n{toml}",
                    c.name()
                );
                assert!(got >= cut * (1.0 - 1e-12));
                if got > cut * 1.001 {
                    raised += 1;
                }
            }
        }
        assert!(raised >= 8, "only {raised} cases above the cut bound");
    }

    #[test]
    fn without_half_duplex_cables_it_is_the_cut_bound() {
        let t = parse_spec("torus:3x3").unwrap();
        for c in [Collective::Allgather, Collective::Bcast { root: 4 }] {
            let cut = cut_bound(&t, c, 1 << 20).unwrap().seconds;
            assert_eq!(split_bound(&t, c, 1 << 20).unwrap(), cut);
        }
    }

    /// Two hosts on one half-duplex cable: an allgather moves a block each
    /// way across it, twice the cut bound.
    #[test]
    fn a_half_duplex_cable_carries_both_ways_at_once() {
        let toml = "kind = \"graph\"\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n\
                    [[edge]]\na = \"a\"\nb = \"b\"\nbandwidth = 1e9\nduplex = \"half\"\n";
        let t = parse_toml("pair", toml).unwrap();
        let cut = cut_bound(&t, Collective::Allgather, 1000).unwrap().seconds;
        let split = split_bound(&t, Collective::Allgather, 1000).unwrap();
        assert!((cut - 1e-6).abs() < 1e-18);
        assert!((split - 2e-6).abs() < 1e-15, "{split}");
    }
}
