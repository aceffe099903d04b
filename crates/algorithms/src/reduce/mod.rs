//! Reduce algorithms.

pub mod bine;
pub mod binomial;
pub mod knomial;
pub mod linear;
pub mod nccl_ring;
pub mod node_aware;
pub mod trinaryx3;
pub mod two_tree;
