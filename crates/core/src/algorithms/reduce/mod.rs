//! Reduce algorithms.

pub mod bine;
pub mod binomial;
pub mod trinaryx3;
