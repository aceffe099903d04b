//! Allgather algorithms.

pub mod bine;
pub mod bruck;
pub mod multilane;
pub mod recursive_doubling;
pub mod ring;
pub mod swing;
