//! The library's error type. Every failure an input can cause is a value that
//! names the offending field or object; nothing in the library panics on bad input.

use thiserror::Error;

/// Errors returned by the topocoll library.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// The user's input (a spec, a file, a parameter) is malformed or out of range.
    #[error("{0}")]
    Invalid(String),
    /// A parameter's value is out of range or malformed. `param` names it
    /// as the library's API does (`engines`, `node_bandwidth`) and
    /// `message` follows that name (" must be at least 1", ": rank 3 ...");
    /// a command line shows the parameter as its own flag (`--engines`).
    #[error("{param}{message}")]
    Param {
        param: &'static str,
        message: String,
    },
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

/// Builds an [`Error::Param`]: the parameter's name, then a format string
/// for what follows it (`param!("engines", " must be at least 1")`).
#[macro_export]
macro_rules! param {
    ($param:expr, $($arg:tt)*) => {
        $crate::error::Error::Param { param: $param, message: format!($($arg)*) }
    };
}

/// Builds an [`Error::Invalid`] from a format string.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { $crate::error::Error::Invalid(format!($($arg)*)) };
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
        let e = crate::param!("node_bandwidth", ": got {}", -1);
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
