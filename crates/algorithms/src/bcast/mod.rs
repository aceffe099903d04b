//! Broadcast algorithms.

pub mod binary;
pub mod bine;
pub mod binomial;
pub mod knomial;
pub mod multilane;
pub mod nccl_ring;
pub mod node_aware;
pub mod pipeline;
pub mod scatter_allgather;
pub mod trinaryx3;
pub mod two_tree;
