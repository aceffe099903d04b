//! topocoll's runtime: executes a verified schedule on real buffers, over
//! in-process threads or (feature `mpi`) MPI, and the reduction kernels and
//! their memory-bandwidth benchmark. See `DESIGN.md` and `docs/runtime.md`.

// The core's layers, under the names the runtime's modules use.
#[cfg(test)]
pub(crate) use topocoll_core::algorithms;
pub(crate) use topocoll_core::{error, schedule, units};

pub mod runtime;
