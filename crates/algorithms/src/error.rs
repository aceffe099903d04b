//! The algorithm layer's errors: a request an algorithm cannot build
//! ([`AlgorithmKind`]), an algorithm that does not serve a shape or
//! collective at all ([`Error::Unsupported`]), and the errors of the layers
//! below.

use thiserror::Error;
use topocoll_base::lift;
use topocoll_schedule as schedule;
use topocoll_topology as topology;

/// Errors of the algorithm layer.
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
    /// An algorithm cannot build the request as given. An algorithm that
    /// does not serve a shape or collective at all is
    /// [`Error::Unsupported`] instead.
    #[error("{message}")]
    Algorithm {
        kind: AlgorithmKind,
        message: String,
    },
    /// An algorithm was asked for a shape or collective it does not
    /// support: which, and why.
    #[error("algorithm {algorithm}: {reason}")]
    Unsupported { algorithm: String, reason: String },
}

lift!(topology => Topology, [Base]);
lift!(schedule => Schedule, [Base, Topology]);

impl Error {
    topocoll_base::shared_constructors!(Algorithm);

    /// The same error with `prefix` and ": " before its sentence: a caller
    /// names the file a sentence is about.
    pub fn within(self, prefix: impl std::fmt::Display) -> Error {
        match self {
            Error::Base(b) => Error::Base(b.within(prefix)),
            Error::Topology(t) => Error::Topology(t.within(prefix)),
            Error::Schedule(s) => Error::Schedule(s.within(prefix)),
            Error::Algorithm { kind, message } => Error::Algorithm {
                kind,
                message: format!("{prefix}: {message}"),
            },
            u @ Error::Unsupported { .. } => u,
        }
    }
}

/// Shorthand used throughout the layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kind [`fail!`](topocoll_base::fail) builds this layer's errors of:
/// `fail!(Algorithm, ..., "...")` is an [`Error::Algorithm`] of a [`AlgorithmKind`].
pub(crate) type Kind = AlgorithmKind;
pub(crate) use topocoll_base::fail;

/// What an algorithm-layer error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlgorithmKind {
    /// A request the algorithm cannot take as given: a root that is no
    /// rank, a size that does not split, a radix out of range.
    Request,
    /// A shape whose structure the algorithm's construction cannot follow
    /// (a Bine tree on rings that are not powers of two).
    Shape,
    /// A forest file that does not hold a forest.
    Forest,
    /// A pipeline's or stream's parts that do not fit together.
    Pipeline,
    /// A cost model asked outside its parameters.
    Model,
}
