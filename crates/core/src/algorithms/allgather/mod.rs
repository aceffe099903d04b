//! Allgather algorithms.

pub mod bruck;
pub mod multilane;
pub mod recursive_doubling;
pub mod ring;
