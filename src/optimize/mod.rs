//! Searches over schedules: the layer that calls algorithms, the simulator
//! and the models to find the best schedule for a network.
//!
//! - [`treebcast`]: the optimal broadcast on a tree-structured network, by
//!   branch and bound with tree-isomorphism cuts ([`iso`]).

pub mod iso;
pub mod treebcast;
