//! All-to-all algorithms.

pub mod linear;
