//! Linear exscan: scan's chain, each rank keeping what it received and
//! sending on, from Scratch, that combined with its own data (Open MPI's
//! `linear` exscan).

use crate::error::Result;
use crate::scan::{linear::chain, Prefix};
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Exscan,
    "linear",
    "chain 0 -> 1 -> ... -> P-1; rank r keeps what it received, sends it combined with its data",
    build,
)
.ompi(1, "linear", "linear");

fn build(req: &Request) -> Result<Schedule> {
    Ok(chain(req, &ALGORITHM, Prefix::Exclusive))
}
