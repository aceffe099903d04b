//! The topology layer's errors: its own refusals, each of a
//! [`TopologyKind`], and the shared ones ([`topocoll_base::Error`]).

use thiserror::Error;

/// Errors of the topology layer.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A shared error: a parameter, a file, a limit.
    #[error(transparent)]
    Base(#[from] topocoll_base::Error),
    /// The topology layer cannot build a network as given: which part of
    /// the input is at fault, and the sentence naming it.
    #[error("{message}")]
    Topology { kind: TopologyKind, message: String },
}

impl Error {
    topocoll_base::shared_constructors!(Topology);

    /// The same error with `prefix` and ": " before its sentence: a caller
    /// names the file a sentence is about.
    pub fn within(self, prefix: impl std::fmt::Display) -> Error {
        match self {
            Error::Base(b) => Error::Base(b.within(prefix)),
            Error::Topology { kind, message } => Error::Topology {
                kind,
                message: format!("{prefix}: {message}"),
            },
        }
    }
}

/// Shorthand used throughout the layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kind [`fail!`](topocoll_base::fail) builds this layer's errors of:
/// `fail!(Topology, ..., "...")` is an [`Error::Topology`] of a [`TopologyKind`].
pub(crate) type Kind = TopologyKind;
pub(crate) use topocoll_base::fail;

/// What a topology error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyKind {
    /// A spec string (`torus:8x8`, `fattree:16`) that does not parse or
    /// names no kind.
    Spec,
    /// A shape its kind cannot build: a size of 0, too many hosts, a radix
    /// the kind does not allow.
    Shape,
    /// A topology file (TOML, SimGrid XML, NCCL XML) whose content does
    /// not describe a network: an unknown node, a missing field, a route
    /// that does not connect.
    File,
    /// A bandwidth or a latency out of range.
    Value,
    /// Ranks that cannot be placed as asked: a rankfile, a map, ranks per
    /// node that do not fit the hosts.
    Placement,
    /// A failure to apply (`--fail`) that names no link or leaves the
    /// network without what it needs.
    Failure,
}
