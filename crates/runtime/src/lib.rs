//! topocoll's runtime: executes a verified schedule on real buffers, over
//! in-process threads or (feature `mpi`) MPI, and the reduction kernels and
//! their memory-bandwidth benchmark. See `DESIGN.md` and `docs/runtime.md`.
//!
//! # Semantics (every backend)
//!
//! Each rank runs its program as a dependency graph: an operation becomes
//! *ready* when every operation it waits for has completed. Then:
//!
//! - a ready `Copy`, `Combine` or `Compute` runs (`Compute` is a cost for the
//!   simulator and moves no data: the runtime does nothing for it);
//! - a ready `Recv` is *posted* at once;
//! - a ready `Send` joins the rank's send queue; the rank's `engines` take the
//!   queued sends lowest program index first, at most `engines` in flight
//!   (the node model of the simulator and of the A2AT paper);
//! - sends and receives match by (source, destination, tag), the k-th send of
//!   a key meeting the k-th receive of it (as in MPI);
//! - a `Recv` with `combine` does `dst = dst ∘ received` with the kernels of
//!   [`kernels`]; combines happen exactly where the schedule puts them, never
//!   in arrival order, so every run gives the same bits.
//!
//! Messages are eager: a send never needs its receiver to be posted. The
//! threads backend copies straight into the posted receive when there is one
//! and into a message buffer otherwise; the MPI backend has to live with
//! rendezvous for large messages (see `mpi` and `docs/runtime.md`).
//!
//! Regions a running operation touches are *claimed*; claiming a region that
//! overlaps one in use, with either side writing, is an error (a verified
//! schedule never does this, the verifier's race check guarantees it). So an
//! unverified schedule (`--no-verify`) can fail but never corrupts memory.
//!
//! # Inputs and checks
//!
//! [`initial_buffers`] fills each rank's own data (`Collective::initial`) with
//! [`Elem::pattern`]`(rank, index)`. [`check`] compares a backend's outputs with
//! (1) [`run_sequential`], the same schedule executed one operation at a time
//! in one thread: bit-for-bit, since a verified schedule fixes every
//! combination order, and (2) a reference computed the obvious way from the
//! collective's definition (`Collective::expected`): exact for data movement,
//! integers, min and max; for float sums and products within the classic
//! error bound of a sum in any order.
//!
//! # Where things are
//!
//! `options` holds what every backend takes; `buffers` a rank's three
//! buffers and the local operations between them; `plan` what depends on
//! the schedule alone; `state` a rank's ready operations and the claims on
//! its regions; `sequential` the reference executor; `check` what a run is
//! held against and the bandwidth figures it reports. The backends are
//! [`threads`] (with its [`replay`] and [`team`]) and `mpi`; [`kernels`]
//! are the reductions and [`kernel_bench`] their benchmark.

mod buffers;
mod check;
pub mod error;
pub mod job;
pub mod kernel_bench;
pub mod kernels;
mod options;
mod plan;
pub mod replay;
mod sequential;
pub mod spread;
mod state;
pub mod team;
pub mod threads;

#[cfg(feature = "mpi")]
pub mod mpi;

pub(crate) use buffers::run_local;
pub use buffers::{buffer_bytes, initial_buffers, reset_buffers, RankBuffers};
pub use check::{bus_factor, check, check_rank, data_bytes, output_hash, CheckReport};
pub use error::{Error, Result, RunKind};
pub use kernels::Elem;
pub use options::{Fault, Options};
pub use plan::Plan;
pub(crate) use sequential::mismatch;
pub use sequential::run_sequential;
pub use state::RankState;
pub(crate) use state::{op_regions, Claims};
