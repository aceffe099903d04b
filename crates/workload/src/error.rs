//! The workload layer's errors: a trace it cannot replay as given
//! ([`WorkloadKind`]), and the errors of the layers below.

use thiserror::Error;
use topocoll_algorithms as algorithms;
use topocoll_base::lift;
use topocoll_schedule as schedule;
use topocoll_sim as sim;
use topocoll_topology as topology;

/// Errors of the workload layer.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A shared error: a parameter, a file, a limit.
    #[error(transparent)]
    Base(#[from] topocoll_base::Error),
    /// The topology below refused.
    #[error(transparent)]
    Topology(topology::Error),
    /// The schedule layer below refused, or the verifier did.
    #[error(transparent)]
    Schedule(schedule::Error),
    /// An algorithm refused.
    #[error(transparent)]
    Algorithm(algorithms::Error),
    /// The simulator refused.
    #[error(transparent)]
    Sim(sim::Error),
    /// The workload layer cannot replay a trace as given.
    #[error("{message}")]
    Workload { kind: WorkloadKind, message: String },
}

lift!(topology => Topology, [Base]);
lift!(schedule => Schedule, [Base, Topology]);
lift!(algorithms => Algorithm, [Base, Topology, Schedule]);
lift!(sim => Sim, [Base, Topology, Schedule]);

impl Error {
    topocoll_base::shared_constructors!(Workload);
}

/// Shorthand used throughout the layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kind [`fail!`](topocoll_base::fail) builds this layer's errors of:
/// `fail!(Workload, ..., "...")` is an [`Error::Workload`] of a [`WorkloadKind`].
pub(crate) type Kind = WorkloadKind;
pub(crate) use topocoll_base::fail;

/// What a workload error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    /// A trace whose content cannot be replayed.
    Trace,
    /// A choice of algorithms (`--algorithm`, `--compare`) that does not
    /// hold for the trace.
    Choice,
    /// A replay configuration value out of range.
    Config,
}
