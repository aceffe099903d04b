//! Allgather with a count per rank (MPI_Allgatherv): rank r's `c[r]`
//! elements land at offset `Σ_{q<r} c[q]` of every rank's output (see
//! [`topocoll_schedule::Sizes`]). See docs/vcollectives.md.

pub mod bruck;
pub mod linear;
pub mod node_aware;
pub mod ring;

use topocoll_schedule::{Op, OpId, Program, Region, Sizes};

/// The copy of rank r's own block into its place in its output, when it
/// has any.
pub(crate) fn own_copy(prog: &mut Program, v: &Sizes, r: usize) -> Option<OpId> {
    let n = v.block(r, r);
    (n > 0).then(|| prog.push(Op::copy(Region::input(0, n), block(v, r, r)), &[]))
}

/// Rank `b`'s block in rank `r`'s output.
pub(crate) fn block(v: &Sizes, r: usize, b: usize) -> Region {
    Region::output(v.recv_at(r, b), v.block(b, r))
}
