//! Inclusive prefix reductions (scan), and the builders exscan shares.
//!
//! The reduction order is fixed by the schedule and the same on every
//! backend: each combine joins the reduction of a run of consecutive ranks
//! with the run just below or above it (the verifier checks this of every
//! combine of a scan or exscan), so rank r's result is in_0 ∘ … ∘ in_r under
//! the algorithm's one bracketing. A combine computes `dst = dst ∘ src`
//! with `dst` the higher run where the two differ in place; the operators
//! are commutative (IEEE sums and products too), so that swap changes no
//! bit.

pub mod direct;
pub mod linear;
pub mod node_aware;
pub mod recursive_doubling;

/// Which prefix a builder that scan and exscan share computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prefix {
    /// Scan's: rank r's own data is in its result.
    Inclusive,
    /// Exscan's: rank r's result stops at rank r − 1, rank 0's is not
    /// written.
    Exclusive,
}
