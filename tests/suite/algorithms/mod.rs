//! The algorithms: what each schedule is, beyond being correct.

mod alltoall;
mod alltoall_times;
mod collectives;
mod reduce;
mod stream;
