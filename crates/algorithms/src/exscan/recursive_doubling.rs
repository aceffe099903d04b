//! Recursive-doubling exscan: scan's exchange of partial reductions with
//! rank ⊕ 2^k, the result starting empty (MPICH's and Open MPI's
//! recursive-doubling exscan).

use crate::error::Result;
use crate::scan::{recursive_doubling::doubling, Prefix};
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Exscan,
    "recursive_doubling",
    "exchange partial reductions with rank xor 2^k; the lower blocks received make the result",
    build,
)
.ompi(2, "recursive_doubling", "recursivedoubling")
.mpich("MPIR_Exscan_intra_recursive_doubling");

fn build(req: &Request) -> Result<Schedule> {
    Ok(doubling(req, &ALGORITHM, Prefix::Exclusive))
}
