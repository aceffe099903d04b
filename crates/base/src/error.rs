//! The library's error type. Every failure an input can cause is a value that
//! names the offending field or object; nothing in the library panics on bad input.

use thiserror::Error;

/// Errors returned by the topocoll library.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A command's own input is malformed or out of range: flags that do
    /// not go together, a value no layer below reads. The layers' own
    /// refusals are their variants below.
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
    /// An algorithm was asked for a shape or collective it does not support.
    #[error("algorithm {algorithm}: {reason}")]
    Unsupported { algorithm: String, reason: String },
    /// A schedule failed verification: which check, where.
    #[error("verification failed: {0}")]
    Verify(VerifyError),
    /// Executing a schedule failed: why ([`RunKind`]), and a sentence
    /// naming the rank and the operation.
    #[error("run failed: {message}")]
    Runtime { kind: RunKind, message: String },
    /// Reading or writing a file failed: what was being done ("cannot read
    /// topology file 'x.toml'"), and the system's error, kept whole.
    #[error("{what}: {cause}")]
    Io { what: String, cause: IoCause },
    /// A simulation stopped when its clock passed the time it was given
    /// (`SimConfig::stop_past`) with work left: it ends later than that.
    /// Not a fault of the input: `--algorithm auto`'s search stops a
    /// candidate so once it cannot beat the best so far.
    #[error("the simulated clock passed {past_s} s before the run ended")]
    PastStop { past_s: f64 },
    /// A file's text is malformed: which file, which line (from 1), what is
    /// wrong there.
    #[error("{file}:{line}: {what}")]
    Parse {
        file: String,
        line: u64,
        what: String,
    },
    /// The topology layer cannot build a network as given: which part of
    /// the input is at fault ([`TopologyKind`]), and the sentence naming it.
    #[error("{message}")]
    Topology { kind: TopologyKind, message: String },
    /// The schedule layer cannot read, write or form a schedule as given
    /// ([`ScheduleKind`]). A schedule that breaks a verifier check is
    /// [`Error::Verify`] instead.
    #[error("{message}")]
    Schedule { kind: ScheduleKind, message: String },
    /// An algorithm cannot build the request as given ([`AlgorithmKind`]).
    /// An algorithm that does not serve a shape or collective at all is
    /// [`Error::Unsupported`] instead.
    #[error("{message}")]
    Algorithm {
        kind: AlgorithmKind,
        message: String,
    },
    /// The simulator cannot price a schedule as configured
    /// ([`SimKind`]).
    #[error("{message}")]
    Sim { kind: SimKind, message: String },
    /// The workload layer cannot replay a trace as given
    /// ([`WorkloadKind`]).
    #[error("{message}")]
    Workload { kind: WorkloadKind, message: String },
    /// The optimiser cannot search or decide as asked ([`OptimizeKind`]).
    #[error("{message}")]
    Optimize { kind: OptimizeKind, message: String },
}

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
}

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

    /// An [`Error::Runtime`] of `kind`.
    pub fn runtime(kind: RunKind, message: impl Into<String>) -> Error {
        Error::Runtime {
            kind,
            message: message.into(),
        }
    }

    /// The same error with `prefix` and ": " before its sentence, its kind
    /// kept: a caller names the file or flag a lower layer's sentence is
    /// about. Errors whose text is built from fields are returned as
    /// they are.
    pub fn within(mut self, prefix: impl std::fmt::Display) -> Error {
        match &mut self {
            Error::Invalid(message)
            | Error::Topology { message, .. }
            | Error::Schedule { message, .. }
            | Error::Algorithm { message, .. }
            | Error::Sim { message, .. }
            | Error::Workload { message, .. }
            | Error::Optimize { message, .. } => *message = format!("{prefix}: {message}"),
            _ => {}
        }
        self
    }

    /// Why a run failed, if it is a run's failure.
    pub fn run_kind(&self) -> Option<RunKind> {
        match self {
            Error::Runtime { kind, .. } => Some(*kind),
            _ => None,
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

/// Builds a layer's error of a kind from a format string:
/// `fail!(Topology, Spec, "topology '{spec}': ...")` is an
/// [`Error::Topology`] of [`TopologyKind::Spec`].
#[macro_export]
macro_rules! fail {
    (Topology, $kind:ident, $($arg:tt)*) => {
        $crate::error::Error::Topology { kind: $crate::error::TopologyKind::$kind, message: format!($($arg)*) }
    };
    (Schedule, $kind:ident, $($arg:tt)*) => {
        $crate::error::Error::Schedule { kind: $crate::error::ScheduleKind::$kind, message: format!($($arg)*) }
    };
    (Algorithm, $kind:ident, $($arg:tt)*) => {
        $crate::error::Error::Algorithm { kind: $crate::error::AlgorithmKind::$kind, message: format!($($arg)*) }
    };
    (Sim, $kind:ident, $($arg:tt)*) => {
        $crate::error::Error::Sim { kind: $crate::error::SimKind::$kind, message: format!($($arg)*) }
    };
    (Workload, $kind:ident, $($arg:tt)*) => {
        $crate::error::Error::Workload { kind: $crate::error::WorkloadKind::$kind, message: format!($($arg)*) }
    };
    (Optimize, $kind:ident, $($arg:tt)*) => {
        $crate::error::Error::Optimize { kind: $crate::error::OptimizeKind::$kind, message: format!($($arg)*) }
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
