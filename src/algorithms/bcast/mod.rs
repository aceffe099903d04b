//! Broadcast algorithms.

pub mod binomial;
pub mod pipeline;
pub mod scatter_allgather;
pub mod trinaryx3;
