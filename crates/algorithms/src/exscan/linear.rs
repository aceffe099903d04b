//! Linear exscan: scan's chain, each rank keeping what it received and
//! sending on, from Scratch, that combined with its own data (Open MPI's
//! `linear` exscan).

use crate::scan::linear::chain;
use crate::{Algorithm, Applies, Counterparts, Ompi, OpCount, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Exscan,
    name: "linear",
    summary:
        "chain 0 -> 1 -> ... -> P-1; rank r keeps what it received, sends it combined with its data",
    build,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: Applies::ANYWHERE,
    ops: OpCount::Unbounded,
    mpi: Counterparts {
        ompi: Some(Ompi {
            id: 1,
            name: "linear",
            function: "linear",
        }),
        mpich: None,
    },
};

fn build(req: &Request) -> Result<Schedule> {
    Ok(chain(req, ALGORITHM.name, true))
}
