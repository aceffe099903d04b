//! Gather algorithms.

pub mod binomial;
pub mod hierarchical;
pub mod linear;
pub mod multilane;
