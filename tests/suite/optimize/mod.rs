//! The searches over schedules: the optimal tree broadcast, the tuned
//! choice of algorithm, the multi-lane scatter's lane count, the schedule
//! synthesised for any network and its cut bound.

mod multilane;
mod synthesis;
mod treebcast;
mod tune;
