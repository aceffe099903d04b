//! The library's error type. Every failure an input can cause is a value that
//! names the offending field or object; nothing in the library panics on bad input.

use thiserror::Error;

/// Errors returned by the topocoll library.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// The user's input (a spec, a file, a parameter) is malformed or out of range.
    #[error("{0}")]
    Invalid(String),
    /// An algorithm was asked for a shape or collective it does not support.
    #[error("algorithm {algorithm}: {reason}")]
    Unsupported { algorithm: String, reason: String },
    /// A schedule failed verification.
    #[error("verification failed: {0}")]
    Verify(String),
    /// Executing a schedule failed: a rank failed, a message did not match, a
    /// transport error, or the run timed out. The message names the rank and
    /// the operation.
    #[error("run failed: {0}")]
    Runtime(String),
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
}

/// Shorthand used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Builds an [`Error::Invalid`] from a format string.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::error::Error::Invalid(format!($($arg)*)) };
}
