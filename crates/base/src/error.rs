//! The errors every layer shares, and the shape of a layer's own.
//!
//! Each layer crate has its own error enum (`topocoll_topology::Error`,
//! `topocoll_schedule::Error`, ...): its own refusals as variants with a
//! kind, the shared errors below as its `Base` variant, and the errors of
//! the layers under it as one variant each. A lower layer's error reaches
//! an upper one through `From`, flattened so that a shared error is always
//! a `Base` and a topology error always a `Topology`, whichever layers it
//! passed through ([`lift!`]). Nothing in the library panics on bad input.

use thiserror::Error;

/// The errors every layer can give: a malformed value, a parameter out of
/// range, a limit of the tool, a file that cannot be read or parsed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A command's own input is malformed or out of range: flags that do
    /// not go together, a value no layer below reads. The layers' own
    /// refusals are their own errors' variants.
    #[error("{0}")]
    Invalid(String),
    /// The work asked for is past a limit of the tool, not a fault of the
    /// input: the verifier's budget of terms, the memory available, the
    /// operations a written-out schedule may hold. The sentence says which
    /// and what runs instead (a smaller shape, `--no-verify`, `--stream`).
    #[error("{0}")]
    TooLarge(String),
    /// A parameter's value is out of range or malformed. `param` names it
    /// as the library's API does (`engines`, `node_bandwidth`) and
    /// `message` follows that name (" must be at least 1", ": rank 3 ...");
    /// a command line shows the parameter as its own flag (`--engines`).
    #[error("{param}{message}")]
    Param {
        param: &'static str,
        message: String,
    },
    /// Reading or writing a file failed: what was being done ("cannot read
    /// topology file 'x.toml'"), and the system's error, kept whole.
    #[error("{what}: {cause}")]
    Io { what: String, cause: IoCause },
    /// A file's text is malformed: which file, which line (from 1), what is
    /// wrong there.
    #[error("{file}:{line}: {what}")]
    Parse {
        file: String,
        line: u64,
        what: String,
    },
}

impl Error {
    /// An [`Error::Io`]: `what` was being done when `cause` happened.
    pub fn io(what: impl Into<String>, cause: std::io::Error) -> Error {
        Error::Io {
            what: what.into(),
            cause: IoCause(std::sync::Arc::new(cause)),
        }
    }

    /// An [`Error::Parse`]: line `line` of `file` is wrong as `what` says.
    pub fn parse(file: impl Into<String>, line: u64, what: impl Into<String>) -> Error {
        Error::Parse {
            file: file.into(),
            line,
            what: what.into(),
        }
    }

    /// The same error with `prefix` and ": " before its sentence: a caller
    /// names the file or flag a lower layer's sentence is about. Errors
    /// whose text is built from fields are returned as they are.
    pub fn within(mut self, prefix: impl std::fmt::Display) -> Error {
        if let Error::Invalid(message) = &mut self {
            *message = format!("{prefix}: {message}");
        }
        self
    }
}

/// A system I/O error, shared so that [`Error`] stays `Clone`; two are
/// equal when their kinds and texts are.
#[derive(Debug, Clone)]
pub struct IoCause(pub std::sync::Arc<std::io::Error>);

impl PartialEq for IoCause {
    fn eq(&self, other: &IoCause) -> bool {
        self.0.kind() == other.0.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl std::fmt::Display for IoCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Shorthand used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Builds an [`Error::Param`], converted into the error type the caller
/// returns: the parameter's name, then a format string for what follows
/// it (`param!("engines", " must be at least 1")`).
#[macro_export]
macro_rules! param {
    ($param:expr, $($arg:tt)*) => {
        ::core::convert::From::from($crate::error::Error::Param {
            param: $param,
            message: format!($($arg)*),
        })
    };
}

/// Builds an [`Error::Invalid`] from a format string, converted into the
/// error type the caller returns.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => {
        ::core::convert::From::from($crate::error::Error::Invalid(format!($($arg)*)))
    };
}

/// The constructors of the shared errors on a layer's own error type, so
/// that every layer writes `Error::io(..)`, `Error::parse(..)`,
/// `Error::too_large(..)` and `Error::invalid(..)` alike, and asks
/// `base()` alike; with the layer's own variant named
/// (`shared_constructors!(Topology)`), its `kind()` too, of the crate's
/// `error::Kind`. The type needs a `Base(topocoll_base::Error)` variant.
#[macro_export]
macro_rules! shared_constructors {
    ($layer:ident) => {
        $crate::shared_constructors!();

        /// What the layer's own error is about, if it is one.
        pub fn kind(&self) -> Option<Kind> {
            match self {
                Self::$layer { kind, .. } => Some(*kind),
                _ => None,
            }
        }
    };
    () => {
        /// A shared I/O error: `what` was being done when `cause` happened.
        pub fn io(what: impl Into<String>, cause: std::io::Error) -> Self {
            Self::Base($crate::error::Error::io(what, cause))
        }

        /// A shared parse error: line `line` of `file` is wrong as `what`
        /// says.
        pub fn parse(file: impl Into<String>, line: u64, what: impl Into<String>) -> Self {
            Self::Base($crate::error::Error::parse(file, line, what))
        }

        /// A shared error: the work is past a limit of the tool, as
        /// `message` says.
        pub fn too_large(message: impl Into<String>) -> Self {
            Self::Base($crate::error::Error::TooLarge(message.into()))
        }

        /// A shared error: an input malformed as `message` says.
        pub fn invalid(message: impl Into<String>) -> Self {
            Self::Base($crate::error::Error::Invalid(message.into()))
        }

        /// The shared error this is, if it is one.
        pub fn base(&self) -> Option<&$crate::error::Error> {
            match self {
                Self::Base(b) => Some(b),
                _ => None,
            }
        }
    };
}

/// Builds a layer's own error of a kind from a format string, in the crate
/// that calls it: `fail!(Topology, Spec, "topology '{spec}': ...")` in
/// `topocoll-topology` is its `Error::Topology` of `TopologyKind::Spec`.
/// The calling crate's `error` module names the kind type `Kind`.
// `crate` is meant: the error built is the calling layer's, not this one's.
#[allow(clippy::crate_in_macro_def)]
#[macro_export]
macro_rules! fail {
    ($layer:ident, $kind:ident, $($arg:tt)*) => {
        crate::error::Error::$layer {
            kind: crate::error::Kind::$kind,
            message: format!($($arg)*),
        }
    };
}

/// `From` a lower layer's error into this crate's `Error`, flattened: the
/// lower error's variants named in brackets move to this error's variants
/// of the same name (a shared error stays a `Base`, a topology error a
/// `Topology`), and any other is kept whole in the variant `$whole`:
/// `lift!(topocoll_schedule => Schedule, [Base, Topology]);`.
#[macro_export]
macro_rules! lift {
    ($lower:ident => $whole:ident, [$($v:ident),*]) => {
        impl From<$lower::Error> for Error {
            fn from(e: $lower::Error) -> Error {
                match e {
                    $($lower::Error::$v(x) => Error::$v(x),)*
                    e => Error::$whole(e),
                }
            }
        }
    };
}

/// " (did you mean 'x'?)" for the candidate closest to a misspelt `word`
/// (by edit distance, case aside, at most a third of its length and at
/// least 2), or nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let w: Vec<char> = word.to_lowercase().chars().collect();
    let limit = (w.len() / 3).max(2);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(&w, &c.to_lowercase().chars().collect::<Vec<_>>());
        if d <= limit && best.is_none_or(|b| d < b.0) {
            best = Some((d, c));
        }
    }
    best.map_or(String::new(), |(_, c)| format!(" (did you mean '{c}'?)"))
}

fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    /// A parameter's error names it as the API does; the command line
    /// shows it as its flag (`cli::args::render`).
    #[test]
    fn a_parameter_error_names_the_parameter() {
        let e: crate::Error = crate::param!("node_bandwidth", ": got {}", -1);
        assert_eq!(e.to_string(), "node_bandwidth: got -1");
    }

    #[test]
    fn suggests_the_closest_name() {
        let names = ["binomial", "binary", "pipeline", "trinaryx3"];
        assert_eq!(
            did_you_mean("binomail", names),
            " (did you mean 'binomial'?)"
        );
        assert_eq!(did_you_mean("BINARY", names), " (did you mean 'binary'?)");
        assert_eq!(did_you_mean("ring", names), "");
        assert_eq!(
            did_you_mean("tours", ["torus", "mesh"]),
            " (did you mean 'torus'?)"
        );
    }
}
