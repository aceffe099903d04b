//! What the tests that run the binary as a child process share.

use std::io::Read;
use std::process::Child;

/// All the child's standard error (it must have been piped), read to its end.
pub fn read_stderr(child: &mut Child) -> String {
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr piped")
        .read_to_string(&mut err)
        .unwrap();
    err
}
