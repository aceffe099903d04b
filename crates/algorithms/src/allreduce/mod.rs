//! Allreduce algorithms.

pub mod bine;
pub mod bucket;
pub mod linear_reduce_bcast;
pub mod nccl_ring;
pub mod nccl_tree;
pub mod node_aware;
pub mod rabenseifner;
pub mod recursive_doubling;
pub mod reduce_bcast;
pub mod ring;
pub mod segmented_ring;
pub mod swing_bw;
pub mod swing_lat;
pub mod trinaryx3;
pub mod two_tree;
