//! Chrome trace JSON (the "Trace Event Format"): one track per rank, one span
//! per transfer, combine and compute. Perfetto and chrome://tracing open it.

use super::Span;
use crate::error::{Error, Result};
use std::io::Write;

/// Writes `spans` as a Chrome trace; times in microseconds.
pub fn write_chrome_trace(spans: &[Span], ranks: usize, out: &mut dyn Write) -> Result<()> {
    let io = |e: std::io::Error| Error::Io(format!("writing trace: {e}"));
    writeln!(out, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[").map_err(io)?;
    let mut first = true;
    for r in 0..ranks {
        let sep = if first { "" } else { "," };
        first = false;
        writeln!(
            out,
            "{sep}{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":{r},\"args\":{{\"name\":\"rank {r}\"}}}}"
        )
        .map_err(io)?;
    }
    for s in spans {
        let sep = if first { "" } else { "," };
        first = false;
        writeln!(
            out,
            "{sep}{{\"name\":{},\"ph\":\"X\",\"pid\":0,\"tid\":{},\"ts\":{},\"dur\":{}}}",
            serde_json::to_string(&s.name).unwrap_or_default(),
            s.rank,
            s.start_s * 1e6,
            (s.end_s - s.start_s) * 1e6
        )
        .map_err(io)?;
    }
    writeln!(out, "]}}").map_err(io)
}
