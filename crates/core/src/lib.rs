//! topocoll's core: what a schedule is and where it comes from.
//!
//! Topologies ([`topology`]), the schedule IR and its verifier
//! ([`schedule`]), the generators that turn a collective on a topology into
//! a schedule ([`algorithms`]) and the closed-form bounds and cost models
//! ([`model`]). Nothing here knows of simulated time or of transports: the
//! `topocoll-sim` and `topocoll-runtime` crates read what this one builds.
//! See `DESIGN.md` for the layers.

pub mod error;
pub mod limits;
pub mod memory;
pub mod units;

pub mod topology;

pub mod schedule;

pub mod lookahead;

pub mod model;

pub mod algorithms;

pub use error::{Error, Result};
