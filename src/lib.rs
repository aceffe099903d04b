//! topocoll: topology-aware collective communication.
//!
//! Algorithms produce schedules ([`schedule::Schedule`]); the verifier proves a
//! schedule correct; the simulator prices it on a network; the runtime executes
//! it on real data. See `DESIGN.md` for the architecture.

pub mod error;
pub mod limits;
pub mod memory;
pub mod topology;
pub mod units;

pub use error::{Error, Result};
pub mod algorithms;
pub mod cli;
pub mod model;
pub mod optimize;
pub mod price;
pub mod reproduce;
pub mod runtime;
pub mod schedule;
pub mod sim;
