//! Reduce algorithms.

pub mod binomial;
pub mod trinaryx3;
