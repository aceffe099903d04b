//! topocoll: topology-aware collective communication.
//!
//! Algorithms produce schedules ([`schedule::Schedule`]); the verifier proves a
//! schedule correct; the simulator prices it on a network; the runtime executes
//! it on real data. This crate is the `topocoll` command ([`cli`],
//! [`reproduce`]) and re-exports the layers below it, one crate each:
//! `topocoll-base` (shared errors, limits, units, memory), `topocoll-topology`,
//! `topocoll-schedule` (with lookahead), `topocoll-algorithms` (with model),
//! `topocoll-sim`, `topocoll-optimize` (with price), `topocoll-runtime` and
//! `topocoll-workload`.
//! See `DESIGN.md` for the architecture.

pub use error::{Error, Result};
pub use topocoll_algorithms as algorithms;
pub use topocoll_algorithms::model;
pub use topocoll_algorithms::AlgorithmKind;
pub use topocoll_base::{invalid, limits, memory, units};
pub use topocoll_optimize as optimize;
pub use topocoll_optimize::price;
pub use topocoll_optimize::OptimizeKind;
pub use topocoll_runtime as runtime;
pub use topocoll_runtime::with_dtype;
pub use topocoll_runtime::RunKind;
pub use topocoll_schedule as schedule;
pub use topocoll_schedule::lookahead;
pub use topocoll_schedule::{ScheduleKind, VerifyError, VerifyKind};
pub use topocoll_sim as sim;
pub use topocoll_sim::SimKind;
pub use topocoll_topology as topology;
pub use topocoll_topology::TopologyKind;
pub use topocoll_workload as workload;
pub use topocoll_workload::WorkloadKind;

pub mod cli;
pub mod error;
pub mod reproduce;
