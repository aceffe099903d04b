//! Broadcast algorithms.

pub mod binomial;
