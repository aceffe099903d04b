//! Allreduce algorithms.

pub mod rabenseifner;
pub mod recursive_doubling;
pub mod reduce_bcast;
pub mod ring;
pub mod trinaryx3;
