//! The `topocoll` command. Thin: every verb parses its flags, calls the
//! library, and prints. Errors are one line on stderr; bad input exits 2, a
//! schedule that fails verification exits 1.
//!
//! Each verb is a file of its own that depends on [`args`] (the arguments
//! verbs share) and on the library, never on another verb.

use anyhow::Result;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use topocoll_base::Error;

/// `println!` that returns an error instead of panicking when standard
/// output is closed or full (a pipe into `head`, a full disk).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        anyhow::Context::context(writeln!(stdout, $($arg)*), "writing to standard output")?;
    }};
}

/// `print!` likewise.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        anyhow::Context::context(write!(stdout, $($arg)*), "writing to standard output")?;
    }};
}

pub mod args;
mod bench;
mod calibrate;
mod list;
mod model;
mod optimize;
mod packet;
mod progress;
mod replay;
mod reproduce;
mod run;
mod schedule;
mod simulate;
mod spread;
mod tune;
mod verify;

#[derive(Parser)]
#[command(
    name = "topocoll",
    version,
    about = "Topology-aware collective communication: generate, verify, simulate and run schedules"
)]
struct Cli {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Subcommand)]
enum Verb {
    /// List the topologies, collectives and algorithms topocoll knows (--links -t T: T's links).
    List(list::ListArgs),
    /// Build a schedule and prove it implements its collective (exit 0 when correct).
    Verify(verify::VerifyArgs),
    /// Build a schedule and write it as GOAL (LogGOPSim) or JSON.
    Schedule(schedule::ScheduleArgs),
    /// Simulate a schedule on a network model (flow-level, max-min or reservation sharing).
    Simulate(Box<args::SimulateArgs>),
    /// Replay an application's trace (SimGrid's time-independent format) on a network.
    Replay(Box<replay::ReplayArgs>),
    /// Reproduce a paper's experiments into a directory (tables, SVG and PNG plots).
    Reproduce(reproduce::ReproduceArgs),
    /// Evaluate an analytical model (e.g. `topocoll model trinaryx3`).
    Model(model::ModelArgs),
    /// Execute a schedule on real buffers (threads, or MPI under mpirun).
    Run(run::RunArgs),
    /// Time schedules (and MPI's own collectives) over a range of sizes.
    Bench(bench::BenchArgs),
    /// Find the fastest schedule of a collective on any network (packed spanning trees priced beside every built-in), with its cut bound; --whole-message: the optimal tree broadcast by branch and bound
    Optimize(optimize::OptimizeArgs),
    /// Choose each size's fastest algorithm by simulation (the table
    /// `--algorithm auto` uses), plot it, export it as MPI tuning files;
    /// or calibrate this machine's node model (--calibrate).
    Tune(Box<args::TuneArgs>),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    // Parse errors in one line, as every other error (clap's own take
    // several, with usage); help and version print as clap prints them.
    let mut command = Cli::command();
    command.build();
    let parsed = command
        .clone()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    let (cli, given) = match parsed {
        Ok((cli, m)) => {
            let given = match m.subcommand() {
                Some((name, sub)) => command
                    .find_subcommand(name)
                    .map(|c| args::Given::of(c, sub))
                    .unwrap_or_default(),
                None => args::Given::default(),
            };
            (cli, given)
        }
        Err(e) if !e.use_stderr() => {
            return match e.print() {
                Ok(()) => 0,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => CLOSED_PIPE,
                Err(e) => {
                    eprintln!("topocoll: writing to standard output: {e}");
                    2
                }
            };
        }
        Err(e) => {
            // Up to the usage: the message, what it names on later lines
            // (missing arguments) and clap's tips, joined.
            let text = e.to_string();
            let said: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:"))
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
                .collect();
            let said = said.join(" ");
            eprintln!(
                "topocoll: {} (see --help)",
                one_line(said.strip_prefix("error: ").unwrap_or(&said))
            );
            return 2;
        }
    };
    match run(cli, given) {
        Ok(code) => code,
        // The reader of standard output stopped reading (`| head`): stop
        // quietly, with the status of a process a closed pipe ends.
        Err(e) if broken_pipe(&e) => CLOSED_PIPE,
        Err(e) if e.downcast_ref::<Relayed>().is_some() => {
            let r = e.downcast_ref::<Relayed>().expect("a relayed end");
            match &r.line {
                Some(line) => eprintln!("topocoll: {line}"),
                // mpirun ends the whole job as soon as one process exits
                // with a failure: a quiet rank waits, so that rank 0, which
                // says why, has said it first.
                None if r.code != 0 => std::thread::sleep(QUIET_RANK_WAIT),
                None => {}
            }
            r.code
        }
        Err(e) => {
            let (msg, code) = line_and_code(&e);
            eprintln!("topocoll: {msg}");
            code
        }
    }
}

/// How long a rank that ends quietly with a failure waits before it exits
/// (see [`Relayed`]).
const QUIET_RANK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How a process of a command spread under `mpirun` ends: with the line
/// and status another process's failure gave (rank 0), or quietly with a
/// status (the others, whose failure rank 0 reports).
#[derive(Debug)]
pub struct Relayed {
    pub line: Option<String>,
    pub code: i32,
}

impl std::fmt::Display for Relayed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.line.as_deref().unwrap_or(""))
    }
}

impl std::error::Error for Relayed {}

/// An error's line and exit status, as `main` prints and returns them.
pub fn line_and_code(e: &anyhow::Error) -> (String, i32) {
    let is_verify = e
        .chain()
        .filter_map(crate::Error::of)
        .any(|l| l.verify().is_some());
    (one_line(&args::render(e)), if is_verify { 1 } else { 2 })
}

/// Why an algorithm does not serve a request at all, if that is the
/// error: a sweep shows it as a skipped row and goes on.
pub fn unsupported(e: &anyhow::Error) -> Option<String> {
    e.chain()
        .filter_map(crate::Error::of)
        .find_map(|l| l.unsupported().map(str::to_string))
}

/// The exit status of a process ended by a write into a closed pipe
/// (128 + SIGPIPE), as the shell reports one killed by the signal.
const CLOSED_PIPE: i32 = 128 + 13;

/// Whether an error is a write into a pipe nobody reads any more.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let shared = crate::Error::of(c);
        let io = match shared.as_ref().and_then(crate::Error::base) {
            Some(Error::Io { cause, .. }) => Some(cause.0.kind()),
            _ => c.downcast_ref::<std::io::Error>().map(std::io::Error::kind),
        };
        io == Some(std::io::ErrorKind::BrokenPipe)
    })
}

/// An error message as one line of at most 600 characters: a parser may
/// quote a whole input line (megabytes, for a one-line TOML file).
fn one_line(msg: &str) -> String {
    const MAX: usize = 600;
    let msg = msg.replace('\n', " ");
    match msg.char_indices().nth(MAX) {
        None => msg,
        Some((cut, _)) => format!(
            "{}... ({} more characters)",
            &msg[..cut],
            msg[cut..].chars().count()
        ),
    }
}

fn run(cli: Cli, given: args::Given) -> Result<i32> {
    match cli.verb {
        Verb::List(a) => list::run(a, &given),
        Verb::Verify(a) => verify::run(a),
        Verb::Schedule(a) => schedule::run(a),
        Verb::Simulate(a) if a.model == args::Model::Packet => packet::run(*a, &given),
        Verb::Simulate(a) => simulate::run(*a, &given),
        Verb::Replay(a) => replay::run(*a, &given),
        Verb::Reproduce(a) => reproduce::run(a),
        Verb::Model(a) => model::run(a),
        Verb::Run(a) => run::run(a),
        Verb::Bench(a) => bench::run(a, &given),
        Verb::Optimize(a) => optimize::run(a, &given),
        Verb::Tune(a) if a.calibrate.calibrate => calibrate::run(*a, &given),
        Verb::Tune(a) => tune::run(*a, &given),
    }
}
