//! Topologies: several ranks per host.

mod placement;
