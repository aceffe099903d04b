//! Node-aware exscan: scan's composition (`algorithms::scan::node_aware`)
//! run exclusive: a linear exscan inside each node, the nodes' last ranks
//! combine their data into their results to make the node totals, the
//! leaders' exscan of the totals (`--inter`, default recursive_doubling),
//! and the prefix broadcast inside each node, its first rank taking it as
//! its result and the others combining it into theirs.

use crate::compose::{self, NodeNeed};
use crate::error::Result;
use crate::scan::node_aware::{composed, INTER};
use crate::scan::Prefix;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Schedule};

// Scan's placements and leaders' default: the two share their builder.
pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Exscan,
    "exscan inside each node, exscan of the node totals among the nodes' last ranks (--inter, default recursive_doubling), prefix bcast and combine inside each node",
    build,
    NodeNeed::Consecutive,
    INTER,
);

fn build(req: &Request) -> Result<Schedule> {
    composed(req, &ALGORITHM, Prefix::Exclusive)
}
