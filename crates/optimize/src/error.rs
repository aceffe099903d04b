//! The optimiser's errors: a search or decision it cannot make as asked
//! ([`OptimizeKind`]), and the errors of the layers below.

use thiserror::Error;
use topocoll_algorithms as algorithms;
use topocoll_base::lift;
use topocoll_schedule as schedule;
use topocoll_sim as sim;
use topocoll_topology as topology;

/// Errors of the optimiser layer.
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
    /// The optimiser cannot search or decide as asked.
    #[error("{message}")]
    Optimize { kind: OptimizeKind, message: String },
}

lift!(topology => Topology, [Base]);
lift!(schedule => Schedule, [Base, Topology]);
lift!(algorithms => Algorithm, [Base, Topology, Schedule]);
lift!(sim => Sim, [Base, Topology, Schedule]);

impl Error {
    topocoll_base::shared_constructors!(Optimize);
}

/// Shorthand used throughout the layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kind [`fail!`](topocoll_base::fail) builds this layer's errors of:
/// `fail!(Optimize, ..., "...")` is an [`Error::Optimize`] of a [`OptimizeKind`].
pub(crate) type Kind = OptimizeKind;
pub(crate) use topocoll_base::fail;

/// What an optimiser error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptimizeKind {
    /// A search problem that does not hold: a root that is no host, a
    /// network the search cannot take.
    Problem,
    /// A calibration file or figure that cannot be used.
    Calibration,
    /// An NCCL tuner file that does not parse.
    Tuner,
    /// A tuning cache that cannot be read or written.
    Cache,
}
