//! What the machine can hold: jobs that would not fit in memory are refused
//! before they start, with an error naming both figures, rather than
//! aborting on a failed allocation or filling memory page by page until
//! the kernel kills the process.

use crate::error::{Error, Result};

/// Memory available for new allocations (Linux's `MemAvailable`), if known.
pub fn available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Bytes as GiB, for messages.
pub fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// Refuses to allocate `bytes` for `what` when the machine has less memory
/// available.
pub fn check(bytes: u64, what: &str) -> Result<()> {
    match available() {
        Some(free) if bytes > free => Err(Error::Invalid(format!(
            "{what} need {:.1} GiB but only {:.1} GiB of memory is available; use a smaller size or fewer ranks",
            gib(bytes),
            gib(free)
        ))),
        _ => Ok(()),
    }
}
