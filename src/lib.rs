//! topocoll: topology-aware collective communication.
//!
//! Algorithms produce schedules ([`schedule::Schedule`]); the verifier proves a
//! schedule correct; the simulator prices it on a network; the runtime executes
//! it on real data. This crate is the `topocoll` command ([`cli`],
//! [`reproduce`]) and re-exports the layers below it, one crate each:
//! `topocoll-core` (topology, schedule, algorithms, model), `topocoll-sim`
//! (sim, price), `topocoll-optimize` and `topocoll-runtime`. See `DESIGN.md`
//! for the architecture.

pub use topocoll_core::{
    algorithms, error, limits, lookahead, memory, model, schedule, topology, units,
};
pub use topocoll_core::{invalid, Error, Result};
pub use topocoll_optimize as optimize;
pub use topocoll_runtime as runtime;
pub use topocoll_runtime::with_dtype;
pub use topocoll_sim as sim;
pub use topocoll_sim::price;

pub mod cli;
pub mod reproduce;
