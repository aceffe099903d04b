//! All-to-all with a count per pair of ranks (MPI_Alltoallv): rank s sends
//! `m[s][d]` elements to rank d, packed in rank order in both buffers (see
//! [`topocoll_schedule::Sizes`]). Linear and pairwise move every block
//! straight to its receiver; Bruck forwards packed blocks in log2 P steps.
//! See docs/vcollectives.md.

pub mod bruck;
pub mod linear;
pub mod node_aware;
pub mod pairwise;

use topocoll_schedule::{Op, OpId, Program, Region, Sizes};

/// The local copy of rank r's block for itself, when it holds any.
pub(crate) fn self_copy(prog: &mut Program, v: &Sizes, r: usize) -> Option<OpId> {
    let n = v.block(r, r);
    (n > 0).then(|| {
        prog.push(
            Op::copy(
                Region::input(v.send_at(r, r), n),
                Region::output(v.recv_at(r, r), n),
            ),
            &[],
        )
    })
}
