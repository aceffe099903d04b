//! The runtime's errors: a run that failed ([`RunKind`]), and the errors
//! of the layers below.

use thiserror::Error;
use topocoll_base::lift;
use topocoll_schedule as schedule;
use topocoll_topology as topology;

/// Errors of the runtime layer.
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
    /// Executing a schedule failed: why, and a sentence naming the rank
    /// and the operation.
    #[error("run failed: {message}")]
    Runtime { kind: RunKind, message: String },
}

lift!(topology => Topology, [Base]);
lift!(schedule => Schedule, [Base, Topology]);

impl Error {
    topocoll_base::shared_constructors!();

    /// An [`Error::Runtime`] of `kind`.
    pub fn runtime(kind: RunKind, message: impl Into<String>) -> Error {
        Error::Runtime {
            kind,
            message: message.into(),
        }
    }

    /// Why a run failed, if it is a run's failure.
    pub fn run_kind(&self) -> Option<RunKind> {
        match self {
            Error::Runtime { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}

/// Shorthand used throughout the layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why executing a schedule failed, for callers and tests that act on the
/// cause rather than read the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// The schedule or the buffers cannot be executed as given: programs
    /// that do not match the ranks, a region outside its buffer, a
    /// dependency that does not point back, buffers too small.
    Plan,
    /// A receive matched by a send of another size.
    Mismatch,
    /// Two running operations touch the same memory (a race the verifier
    /// rejects).
    Race,
    /// A message sent and never received.
    Unreceived,
    /// Ranks left that can never finish.
    Deadlock,
    /// The run took longer than its time limit.
    Timeout,
    /// A rank failed (an operation panicked, a fault was injected), or
    /// stopped because another did.
    Failed,
    /// The outputs differ from what the collective should give.
    Check,
    /// The transport refused or failed (an MPI error, a count MPI cannot
    /// carry).
    Transport,
}
