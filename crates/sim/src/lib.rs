//! topocoll's simulator and pricing.
//!
//! [`sim`] runs a schedule on a topology under a node model (flow-level
//! sharing by events, folding or rank by rank; the packet model of
//! `sim::packet`); [`price`] is the one sequence that prices a request:
//! build or stream the schedule, verify it, simulate it and hold it
//! against the collective's bound. See `DESIGN.md`.

// The core's layers, under the names the simulator's modules use.
pub(crate) use topocoll_core::{algorithms, error, invalid, lookahead, model, schedule, topology};

pub mod price;
pub mod sim;
