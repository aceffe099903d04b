//! The searches over schedules: the optimal tree broadcast, the tuned
//! choice of algorithm, the multi-lane scatter's lane count.

mod multilane;
mod treebcast;
mod tune;
