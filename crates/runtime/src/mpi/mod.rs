//! The MPI backend: one MPI process per rank (`mpirun -np P topocoll run
//! --backend mpi ...`). Every process builds the same schedule and runs its
//! own rank's program with the shared executor core ([`RankState`]):
//! local operations run inline, ready receives are posted at once as
//! `MPI_Irecv`, ready sends go out as `MPI_Isend` (tag = the schedule's tag),
//! at most `engines` outstanding, lowest program index first; completions are
//! polled with `MPI_Testsome`. A combining receive lands in a temporary buffer
//! and is combined into its region when it completes, so the order of
//! combination is the schedule's, not the network's.
//!
//! Rendezvous: MPI may hold a large send until its receive is posted, while
//! the IR's sends are eager. A schedule that is correct with eager sends can
//! then stall if every engine holds a send whose receiver first needs a send
//! still queued behind them. The backend posts every receive as soon as it is
//! ready (so a posted receive never waits on the engines), and when nothing
//! completes for a while (20 ms, doubling after each use) with sends queued,
//! it starts one send beyond the engine limit; the engine limit is exact
//! otherwise. A schedule that posts a receive only once one of its own
//! sends has completed, on ranks that wait for each other that way, can
//! still stall under rendezvous (docs/runtime.md): the run then fails at
//! the timeout, naming the sends that wait.
//!
//! Failures: a rank that fails (injected fault, size mismatch, timeout, a
//! panic) sends a short notice with a reserved tag to every other rank;
//! every rank polls for notices and returns an error naming the failed rank
//! and operation. Tags: schedule tags must be below 32767 (the MPI standard's
//! minimum `MPI_TAG_UB`); larger ones are renumbered per (source, destination)
//! pair, which every process can do alone since each holds the whole schedule.
//!
//! Where things are: `world` is the MPI world (initialisation, barriers,
//! the failure notices' receive, the process's exit), `drive` one rank's
//! run of a schedule, `native` the MPI library's own collectives (the
//! baseline).

mod drive;
mod native;
mod world;

pub use drive::{run_rank, RankRun};
pub use native::{native, native_name, time_native};
pub use world::{exit_all, World};
