//! Scatter algorithms.

pub mod bine;
pub mod binomial;
pub mod hierarchical;
pub mod linear;
pub mod multilane;
