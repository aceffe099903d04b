//! What topocoll's tests share, so that no test writes its own:
//! - [`Rng`]: the one seeded generator (xorshift64), reproducible across
//!   platforms and builds;
//! - [`RandomGraph`]: random connected networks of hosts and switches, as
//!   topology files, for the bounds' brute-force checks;
//! - [`request`]: a `Request` built field by field instead of by a
//!   six-argument call;
//! - [`cli`]: the `topocoll` command run from one string;
//! - [`slow`]: the switch that runs the few slow tests too;
//! - [`assert_same_bits`]: two simulation results equal to the bit, but
//!   for what a driver reports of itself.
//!
//! It is a dev-dependency only: no library crate depends on it.

pub mod cli;
mod graph;
mod request;
mod rng;

pub use graph::{HalfDuplex, RandomGraph};
pub use request::{request, RequestBuilder};
pub use rng::{splitmix, Rng};

use topocoll_sim::SimResult;

/// Whether the slow tests run: `TOPOCOLL_SLOW` is set (and not `0`).
/// The few cases that take minutes (the corpus's `slow` cases, the
/// synthesis tests' larger networks) run only then, so that `cargo test
/// --release` answers in minutes; `TOPOCOLL_SLOW=1 cargo test --release`
/// runs everything.
pub fn slow() -> bool {
    std::env::var_os("TOPOCOLL_SLOW").is_some_and(|v| v != "0")
}

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
