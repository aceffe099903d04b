//! Reduce-scatter algorithms.

pub mod recursive_halving;
pub mod ring;
