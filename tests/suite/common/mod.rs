//! What the tests share: running the `topocoll` binary, reading a child's
//! standard error (results compared to the bit are `topocoll_testkit`'s).

pub mod child;

use topocoll_testkit::cli;

/// Runs the `topocoll` binary: (exit code, stdout, stderr).
pub fn topocoll(args: &[&str]) -> (i32, String, String) {
    let out = cli::run_args(env!("CARGO_BIN_EXE_topocoll"), args);
    (out.code, out.stdout, out.stderr)
}

/// Runs the `topocoll` binary on a command line as a user types it
/// (`"simulate -t torus:4x4 -c bcast"`): (exit code, stdout, stderr).
pub fn topocoll_line(line: &str) -> (i32, String, String) {
    let out = cli::run(env!("CARGO_BIN_EXE_topocoll"), line);
    (out.code, out.stdout, out.stderr)
}
