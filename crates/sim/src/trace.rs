//! Chrome trace JSON (the "Trace Event Format"): one track per rank, one span
//! per transfer, combine and compute, and a counter per network link of the
//! flows on it. Perfetto and chrome://tracing open it.

use super::{LinkSample, Span};
use crate::error::{Error, Result};
use std::io::Write;

/// Writes `spans` as a Chrome trace; times in microseconds.
/// Links are named by `link_name`.
pub fn write_chrome_trace(
    spans: &[Span],
    ranks: usize,
    samples: &[LinkSample],
    link_name: &dyn Fn(u32) -> String,
    out: &mut dyn Write,
) -> Result<()> {
    let io = |e: std::io::Error| Error::io("writing trace", e);
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
    // Counters in a process of their own, one per link: "flows" over time.
    for c in samples {
        let sep = if first { "" } else { "," };
        first = false;
        writeln!(
            out,
            "{sep}{{\"name\":{},\"ph\":\"C\",\"pid\":1,\"ts\":{},\"args\":{{\"flows\":{}}}}}",
            serde_json::to_string(&format!("link {}", link_name(c.link))).unwrap_or_default(),
            c.time_s * 1e6,
            c.flows
        )
        .map_err(io)?;
    }
    if !samples.is_empty() {
        writeln!(
            out,
            ",{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{{\"name\":\"links\"}}}}"
        )
        .map_err(io)?;
    }
    writeln!(out, "]}}").map_err(io)
}
