//! Exclusive prefix reductions (exscan): rank r > 0 ends with
//! in_0 ∘ … ∘ in_(r−1); rank 0's output is never written (MPI leaves it
//! undefined). The builders are scan's (`algorithms::scan`), run exclusive.

pub mod direct;
pub mod linear;
pub mod node_aware;
pub mod recursive_doubling;
