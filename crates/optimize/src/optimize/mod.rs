//! Searches over schedules: the layer that calls algorithms, the simulator
//! and the models to find the best schedule for a network.
//!
//! - [`treebcast`]: the optimal broadcast on a tree-structured network, by
//!   branch and bound with tree-isomorphism cuts ([`iso`]).
//! - [`lanes`]: the lane count of the multi-lane scatter on a grid of sites,
//!   by simulating every count beside the cost models.

pub mod iso;
pub mod lanes;
pub mod treebcast;
