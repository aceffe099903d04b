//! The simulator: its semantics, its drivers, the packet model, and its
//! agreement with SimGrid.

mod by_rank;
mod drivers;
mod fold;
mod packet;
mod semantics;
mod simgrid;
mod sources;
