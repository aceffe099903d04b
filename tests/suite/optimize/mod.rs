//! The searches over schedules: the optimal tree broadcast, the tuned
//! choice of algorithm, the multi-lane scatter's lane count, the schedule
//! synthesised for any network and its cut bound (held to ForestColl's
//! optimum on its own clusters).

mod forestcoll;
mod multilane;
mod shared;
mod synthesis;
mod treebcast;
mod tune;
