//! Node-aware exscan: scan's composition (`algorithms::scan::node_aware`)
//! run exclusive: a linear exscan inside each node, the nodes' last ranks
//! combine their data into their results to make the node totals, the
//! leaders' exscan of the totals (`--inter`, default recursive_doubling),
//! and the prefix broadcast inside each node, its first rank taking it as
//! its result and the others combining it into theirs.

use crate::scan::node_aware::{composed, APPLIES};
use crate::scan::Prefix;
use crate::{Algorithm, Request};
use topocoll_base::error::Result;
use topocoll_schedule::{CollectiveKind, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Exscan, "node_aware", "exscan inside each node, exscan of the node totals among the nodes' last ranks (--inter, default recursive_doubling), prefix bcast and combine inside each node", build).applies(APPLIES)
.composes(crate::scan::node_aware::INTER);

fn build(req: &Request) -> Result<Schedule> {
    composed(req, &ALGORITHM, Prefix::Exclusive)
}
