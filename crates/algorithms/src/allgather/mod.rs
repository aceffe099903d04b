//! Allgather algorithms.

pub mod bine;
pub mod bruck;
pub mod bucket;
pub mod linear;
pub mod multilane;
pub mod nccl_pat;
pub mod nccl_ring;
pub mod neighbor;
pub mod node_aware;
pub mod recursive_doubling;
pub mod ring;
pub mod swing;
