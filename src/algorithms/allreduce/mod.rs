//! Allreduce algorithms.

pub mod ring;
