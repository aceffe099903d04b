//! topocoll's searches over schedules: the optimal broadcast on a tree
//! network (branch and bound), the multi-lane scatter's lane count and the
//! tuned collectives' algorithm choice, each pricing its candidates with the simulator. See `DESIGN.md`.

// The layers below, under the names the searches' modules use.
pub(crate) use topocoll_core::{algorithms, error, invalid, model, schedule, topology, units};
pub(crate) use topocoll_sim::{price, sim};

pub mod optimize;
