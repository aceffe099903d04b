//! What the tests share: running the `topocoll` binary, reading a child's
//! standard error, comparing simulation results to the bit.

pub mod child;
pub mod same_bits;

use std::process::Command;

/// Runs the `topocoll` binary: (exit code, stdout, stderr).
pub fn topocoll(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_topocoll"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
