//! The simulator: its semantics, its drivers (beyond the corpus, where
//! every driver agrees with the event driver: corpus::drivers), folding,
//! the packet model, schedule sources, and its agreement with SimGrid.

mod by_rank;
mod fold;
mod noise;
mod packet;
pub(crate) mod paths;
mod semantics;
mod simgrid;
pub(crate) use simgrid::simgrid_config_for_platforms;
mod sources;
