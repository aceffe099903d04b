//! Recursive-doubling exscan: scan's exchange of partial reductions with
//! rank ⊕ 2^k, the result starting empty (MPICH's and Open MPI's
//! recursive-doubling exscan).

use crate::scan::recursive_doubling::doubling;
use crate::{Algorithm, Applies, Counterparts, Ompi, OpCount, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Exscan,
    name: "recursive_doubling",
    summary:
        "exchange partial reductions with rank xor 2^k; the lower blocks received make the result",
    build,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: Applies::ANYWHERE,
    ops: OpCount::Unbounded,
    mpi: Counterparts {
        ompi: Some(Ompi {
            id: 2,
            name: "recursive_doubling",
            function: "recursivedoubling",
        }),
        mpich: Some("MPIR_Exscan_intra_recursive_doubling"),
    },
};

fn build(req: &Request) -> Result<Schedule> {
    Ok(doubling(req, ALGORITHM.name, true))
}
