//! The schedule layer's errors: a schedule the layer cannot read, write
//! or form ([`ScheduleKind`]), a schedule the verifier refuses
//! ([`VerifyError`]), and the errors of the layers below.

use thiserror::Error;
use topocoll_base::lift;
use topocoll_topology as topology;

/// Errors of the schedule layer.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A shared error: a parameter, a file, a limit.
    #[error(transparent)]
    Base(#[from] topocoll_base::Error),
    /// The topology below refused.
    #[error(transparent)]
    Topology(topology::Error),
    /// The schedule layer cannot read, write or form a schedule as given.
    /// A schedule that breaks a verifier check is [`Error::Verify`]
    /// instead.
    #[error("{message}")]
    Schedule { kind: ScheduleKind, message: String },
    /// A schedule failed verification: which check, where.
    #[error("verification failed: {0}")]
    Verify(VerifyError),
}

lift!(topology => Topology, [Base]);

impl Error {
    topocoll_base::shared_constructors!(Schedule);

    /// The same error with `prefix` and ": " before its sentence: a caller
    /// names the file a sentence is about.
    pub fn within(self, prefix: impl std::fmt::Display) -> Error {
        match self {
            Error::Base(b) => Error::Base(b.within(prefix)),
            Error::Topology(t) => Error::Topology(t.within(prefix)),
            Error::Schedule { kind, message } => Error::Schedule {
                kind,
                message: format!("{prefix}: {message}"),
            },
            v @ Error::Verify(_) => v,
        }
    }

    /// The check a verification failure broke, if it is one.
    pub fn verify_kind(&self) -> Option<VerifyKind> {
        match self {
            Error::Verify(v) => Some(v.kind),
            _ => None,
        }
    }
}

/// Shorthand used throughout the layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kind [`fail!`](topocoll_base::fail) builds this layer's errors of:
/// `fail!(Schedule, ..., "...")` is an [`Error::Schedule`] of a [`ScheduleKind`].
pub(crate) type Kind = ScheduleKind;
pub(crate) use topocoll_base::fail;

/// What a schedule-layer error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleKind {
    /// A schedule file (topocoll JSON, MSCCL XML, a sizes list) that does
    /// not hold a schedule.
    Format,
    /// A schedule that a format cannot express (MSCCL XML without the
    /// collective, a step count past its limit).
    Export,
    /// A collective name, count or request that does not hold.
    Collective,
    /// A schedule whose reverse cannot be formed.
    Reverse,
}

/// Which of the verifier's checks a schedule broke (the numbered checks of
/// `topocoll_schedule::verify`), for callers and tests that act on the
/// cause rather than read the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyKind {
    /// Check 1: a peer that is no rank, a region outside its buffer,
    /// unequal sides, a dependency that does not point back, programs that
    /// do not match the ranks.
    Structure,
    /// Check 2: two unordered operations touch the same elements, one
    /// writing, or share a (peer, tag) key.
    Race,
    /// Check 3: a receive matched by a send of another element count (or a
    /// message no receive could take in order).
    Mismatch,
    /// Check 3: an operation reads elements that hold no data yet.
    Undefined,
    /// Check 3: operations left that can never run.
    Deadlock,
    /// Check 3: a message sent and never received.
    Unreceived,
    /// Check 4: an output element holds other contributions than expected,
    /// or none.
    Output,
    /// Check 5: a scan's combine joins runs of ranks out of order.
    ScanOrder,
    /// Check 6: a barrier's exit that does not wait on every rank.
    Barrier,
}

/// A verification failure: the check broken, the rank and op where it
/// shows (where one does), and the verifier's sentence naming them.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyError {
    pub kind: VerifyKind,
    pub rank: Option<usize>,
    pub op: Option<usize>,
    pub message: String,
}

impl VerifyError {
    /// A failure of `kind` that names no single rank or op.
    pub fn new(kind: VerifyKind, message: impl Into<String>) -> VerifyError {
        VerifyError {
            kind,
            rank: None,
            op: None,
            message: message.into(),
        }
    }

    /// A failure of `kind` at `rank`'s op `op` (`None` where it is the
    /// rank's, not one op's).
    pub fn at(
        kind: VerifyKind,
        rank: usize,
        op: Option<usize>,
        message: impl Into<String>,
    ) -> VerifyError {
        VerifyError {
            kind,
            rank: Some(rank),
            op,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
