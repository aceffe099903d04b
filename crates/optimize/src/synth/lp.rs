//! A small dense simplex: maximise c·x subject to A·x ≤ b, x ≥ 0, for
//! b ≥ 0 (the origin is feasible, so no first phase is needed). The
//! packing ([`super::pack::exact`]) solves its trees' weights with it and
//! prices new trees with its duals.
//!
//! Dantzig's rule picks the entering column; after a run of pivots that
//! do not raise the objective (degenerate ones, which the packing's
//! `λ ≤ Σ w` rows at zero make common) it switches to Bland's rule, which
//! cannot cycle.

/// Below this a tableau entry is zero.
const TOL: f64 = 1e-11;
/// Degenerate pivots in a row after which Bland's rule takes over.
const STALL: usize = 50;

/// An optimal solution: the variables, the rows' duals (the objective's
/// gain per unit of each row's bound) and the objective.
#[derive(Clone, Debug)]
pub struct Solution {
    pub x: Vec<f64>,
    pub duals: Vec<f64>,
    pub value: f64,
}

/// Maximises `c`·x subject to `a`·x ≤ `b` (rows of `a` as given), x ≥ 0.
/// `None` when the objective is unbounded or the pivots exceed
/// `max_pivots`.
pub fn maximize(a: &[Vec<f64>], b: &[f64], c: &[f64], max_pivots: usize) -> Option<Solution> {
    let m = a.len();
    let n = c.len();
    debug_assert!(b.iter().all(|&v| v >= 0.0));
    let w = n + m + 1; // structural, slack, right-hand side
    let mut t = vec![0.0; m * w];
    for i in 0..m {
        let row = &mut t[i * w..(i + 1) * w];
        row[..n].copy_from_slice(&a[i]);
        row[n + i] = 1.0;
        row[w - 1] = b[i];
    }
    // Reduced costs (the objective row), and the objective's value.
    let mut d = vec![0.0; n + m];
    d[..n].copy_from_slice(c);
    let mut value = 0.0;
    let mut basis: Vec<usize> = (n..n + m).collect();
    let mut stalled = 0;
    for _ in 0..max_pivots {
        let bland = stalled >= STALL;
        let entering = if bland {
            (0..n + m).find(|&j| d[j] > TOL)
        } else {
            (0..n + m)
                .filter(|&j| d[j] > TOL)
                .max_by(|&x, &y| d[x].total_cmp(&d[y]))
        };
        let Some(j) = entering else {
            let mut x = vec![0.0; n];
            for (i, &v) in basis.iter().enumerate() {
                if v < n {
                    x[v] = t[i * w + w - 1];
                }
            }
            let duals = (0..m).map(|i| -d[n + i]).collect();
            return Some(Solution { x, duals, value });
        };
        // The ratio test, ties to the smallest basic variable (Bland).
        let mut leave: Option<(usize, f64)> = None;
        for i in 0..m {
            let e = t[i * w + j];
            if e > TOL {
                let r = t[i * w + w - 1] / e;
                let better = match leave {
                    None => true,
                    Some((k, best)) => r < best || (r == best && basis[i] < basis[k]),
                };
                if better {
                    leave = Some((i, r));
                }
            }
        }
        let (i, ratio) = leave?;
        stalled = if ratio * d[j] > TOL { 0 } else { stalled + 1 };
        pivot(&mut t, w, i, j);
        let f = d[j];
        let pr = &t[i * w..(i + 1) * w];
        for (dj, &p) in d.iter_mut().zip(&pr[..n + m]) {
            *dj -= f * p;
        }
        value += f * pr[w - 1];
        basis[i] = j;
    }
    None
}

/// Makes column `j` the unit column with its one in row `r`.
fn pivot(t: &mut [f64], w: usize, r: usize, j: usize) {
    let p = t[r * w + j];
    for v in &mut t[r * w..(r + 1) * w] {
        *v /= p;
    }
    let (before, rest) = t.split_at_mut(r * w);
    let (prow, after) = rest.split_at_mut(w);
    for row in before.chunks_mut(w).chain(after.chunks_mut(w)) {
        let f = row[j];
        if f != 0.0 {
            for (v, &q) in row.iter_mut().zip(prow.iter()) {
                *v -= f * q;
            }
            row[j] = 0.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_textbook_problem() {
        // max 3x + 5y: x ≤ 4, 2y ≤ 12, 3x + 2y ≤ 18 → x = 2, y = 6, 36;
        // duals 0, 1.5, 1.
        let a = vec![vec![1.0, 0.0], vec![0.0, 2.0], vec![3.0, 2.0]];
        let s = maximize(&a, &[4.0, 12.0, 18.0], &[3.0, 5.0], 100).unwrap();
        assert!((s.value - 36.0).abs() < 1e-9);
        assert!((s.x[0] - 2.0).abs() < 1e-9 && (s.x[1] - 6.0).abs() < 1e-9);
        for (g, w) in s.duals.iter().zip([0.0, 1.5, 1.0]) {
            assert!((g - w).abs() < 1e-9, "{:?}", s.duals);
        }
    }

    #[test]
    fn unbounded_is_none() {
        let a = vec![vec![1.0, -1.0]];
        assert!(maximize(&a, &[1.0], &[0.0, 1.0], 100).is_none());
    }

    /// Random packing-like problems: the optimum found is feasible, and
    /// its value equals the duals' bound b·y (strong duality) with y
    /// feasible for the dual (Aᵀy ≥ c, y ≥ 0), which proves it optimal.
    #[test]
    fn optimal_by_duality_on_random_problems() {
        let mut rng = topocoll_testkit::Rng::new(11u64);
        let mut rand = move |k: u64| rng.below(k);
        for _ in 0..300 {
            let m = 1 + rand(12) as usize;
            let n = 1 + rand(12) as usize;
            // A degenerate row λ − Σ x ≤ 0 as the packing has, sometimes.
            let mut a: Vec<Vec<f64>> = (0..m)
                .map(|_| (0..n).map(|_| rand(4) as f64).collect())
                .collect();
            let mut b: Vec<f64> = (0..m).map(|_| (1 + rand(9)) as f64).collect();
            if rand(2) == 0 {
                let mut row: Vec<f64> = (0..n).map(|_| -(rand(2) as f64)).collect();
                row[0] = 1.0;
                a.push(row);
                b.push(0.0);
            }
            // Every column bounded by some row.
            for j in 0..n {
                if a.iter().all(|r| r[j] <= 0.0) {
                    a[0][j] = 1.0;
                }
            }
            let c: Vec<f64> = (0..n).map(|_| rand(5) as f64).collect();
            let s = maximize(&a, &b, &c, 10_000).unwrap();
            for (row, &bi) in a.iter().zip(&b) {
                let lhs: f64 = row.iter().zip(&s.x).map(|(x, y)| x * y).sum();
                assert!(lhs <= bi + 1e-7);
            }
            assert!(s.x.iter().all(|&x| x >= -1e-9));
            let primal: f64 = c.iter().zip(&s.x).map(|(x, y)| x * y).sum();
            let dual: f64 = b.iter().zip(&s.duals).map(|(x, y)| x * y).sum();
            assert!((primal - s.value).abs() < 1e-7 && (primal - dual).abs() < 1e-7);
            assert!(s.duals.iter().all(|&y| y >= -1e-9));
            for j in 0..n {
                let col: f64 = a.iter().zip(&s.duals).map(|(r, y)| r[j] * y).sum();
                assert!(col >= c[j] - 1e-7, "column {j}: {col} < {}", c[j]);
            }
        }
    }
}
