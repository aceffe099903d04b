//! The simulator's errors: a schedule it cannot price as configured
//! ([`SimKind`]), a run stopped past its clock ([`Error::PastStop`]), and
//! the errors of the layers below.

use thiserror::Error;
use topocoll_base::lift;
use topocoll_schedule as schedule;
use topocoll_topology as topology;

/// Errors of the simulator layer.
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
    /// The simulator cannot price a schedule as configured.
    #[error("{message}")]
    Sim { kind: SimKind, message: String },
    /// A simulation stopped when its clock passed the time it was given
    /// (`SimConfig::stop_past`) with work left: it ends later than that.
    /// Not a fault of the input: `--algorithm auto`'s search stops a
    /// candidate so once it cannot beat the best so far.
    #[error("the simulated clock passed {past_s} s before the run ended")]
    PastStop { past_s: f64 },
}

lift!(topology => Topology, [Base]);
lift!(schedule => Schedule, [Base, Topology]);

impl Error {
    topocoll_base::shared_constructors!(Sim);
}

/// Shorthand used throughout the layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kind [`fail!`](topocoll_base::fail) builds this layer's errors of:
/// `fail!(Sim, ..., "...")` is an [`Error::Sim`] of a [`SimKind`].
pub(crate) type Kind = SimKind;
pub(crate) use topocoll_base::fail;

/// What a simulator error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimKind {
    /// A configuration value out of range (`--cfg`, the packet model's
    /// parameters, skews).
    Config,
    /// A message with no route on the network (no path, a failed link).
    Route,
    /// A schedule that does not fit the network or whose messages cannot
    /// be matched.
    Schedule,
    /// A run the network's failures stop, as SimGrid stops it: a link that
    /// turns off under a transfer or is off when one starts on it, a host
    /// that turns off while its rank runs.
    Failure,
}
