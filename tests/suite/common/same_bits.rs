//! What the simulation-driver tests share.

use topocoll::sim::SimResult;

/// The same result to the bit, whatever the by-rank driver's threads,
/// sweeps and planes (and the wall time).
pub fn assert_same_bits(a: &SimResult, b: &SimResult, what: &str) {
    let (mut x, mut y) = (a.clone(), b.clone());
    for r in [&mut x, &mut y] {
        r.run.wall_s = 0.0;
        r.run.driver.clear();
        r.run.by_rank_threads = 1;
        r.run.by_rank_sweeps = 0;
        r.run.by_rank_planes = 0;
    }
    assert_eq!(x, y, "{what}");
}
