//! topocoll's searches over schedules: the layer that calls algorithms, the
//! simulator and the models to find the best schedule for a network, each
//! search pricing its candidates with the simulator. See `DESIGN.md`.
//!
//! - [`cut`]: the cut bound of a collective on a network, exactly, by
//!   maximum flows ([`maxflow`]).
//! - [`synth`]: the fastest schedule of a collective on any network:
//!   packed spanning trees, pipelined, beside the built-in algorithms.
//! - [`treebcast`]: the optimal broadcast on a tree-structured network, by
//!   branch and bound with tree-isomorphism cuts ([`iso`]).
//! - [`lanes`]: the lane count of the multi-lane scatter on a grid of sites,
//!   by simulating every count beside the cost models.
//! - [`tune`]: the fastest algorithm of a collective at each size, by
//!   simulating every candidate; decision tables cached on disk, and
//!   exported as MPI libraries' tuning files ([`mpi_rules`]).
//! - [`machine`]: this machine as the simulator prices it (calibrated on
//!   the runtime) and `--algorithm auto`'s choice.

pub mod cut;
pub mod iso;
pub mod lanes;
pub mod machine;
pub mod maxflow;
pub mod mpi_rules;
pub mod synth;
pub mod treebcast;
pub mod tune;

/// Runs a search and measures it: its result and its wall time in seconds.
/// Every search's `solve_s` is this one measurement, wherever it is
/// reported (`optimize`, with and without `--whole-message`, and the
/// reproductions): the search alone, after its problem is built (the
/// network read, a tree's paths between hosts found) and before anything
/// is printed or written.
pub fn timed<T>(search: impl FnOnce() -> T) -> (T, f64) {
    let started = std::time::Instant::now();
    let found = search();
    (found, started.elapsed().as_secs_f64())
}
