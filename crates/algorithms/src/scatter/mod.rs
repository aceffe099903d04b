//! Scatter algorithms.

pub mod bine;
pub mod binomial;
pub mod hierarchical;
pub mod knomial;
pub mod linear;
pub mod multilane;
pub mod node_aware;
