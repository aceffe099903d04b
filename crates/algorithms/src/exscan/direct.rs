//! Direct exscan (SMPI's, its `colls::exscan`): the direct scan, rank r
//! keeping the lower ranks' data alone; rank 0's output is not written.

use crate::error::Result;
use crate::scan::{direct::direct, Prefix};
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Exscan,
    "direct",
    "every rank sends its data straight to every higher rank, all at once; rank r keeps the lower ranks'",
    build,
);

fn build(req: &Request) -> Result<Schedule> {
    Ok(direct(req, &ALGORITHM, Prefix::Exclusive))
}
