//! The `topocoll` command, run from one string as a user types it.

use std::ffi::OsStr;
use std::process::Command;

/// What a run printed and how it ended.
#[derive(Debug)]
pub struct Output {
    /// The exit code (-1 when a signal ended it).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `bin` (the test's `env!("CARGO_BIN_EXE_topocoll")`) with the
/// arguments of `line`, split at white space; an argument in double
/// quotes keeps its spaces.
pub fn run(bin: &str, line: &str) -> Output {
    run_args(bin, &split(line))
}

/// Runs `bin` with the arguments as given.
pub fn run_args<S: AsRef<OsStr>>(bin: &str, args: &[S]) -> Output {
    run_args_env(bin, args, &[])
}

/// Runs `bin` with the arguments as given and these environment variables
/// set (a tuning cache of the test's own, say).
pub fn run_args_env<S: AsRef<OsStr>>(bin: &str, args: &[S], env: &[(&str, &OsStr)]) -> Output {
    let out = Command::new(bin)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A command line's words: split at white space, a double-quoted run kept
/// whole (without its quotes).
pub fn split(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut any) = (false, false);
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_splits_at_spaces_and_keeps_quoted_runs() {
        assert_eq!(
            super::split(r#"simulate -t torus:4x4  --label "a b" """#),
            ["simulate", "-t", "torus:4x4", "--label", "a b", ""]
        );
    }
}
