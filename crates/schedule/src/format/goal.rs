//! Schedules as LogGOPSim's GOAL text, written.

use crate::{Op, Schedule};
use std::fmt::Write as _;
use std::io::Write;
use topocoll_base::error::{Error, Result};

/// Writes a schedule in LogGOPSim's GOAL text format. Sizes are bytes and
/// every `calc` is nanoseconds: `Compute` its own time, a combine its bytes
/// at `compute_bandwidth` bytes/s (free without one, as in the simulator),
/// a copy nothing (free in topocoll's node model). GOAL has no routes: a
/// send with a signed-offset route (A2AT's) takes the simulator's own;
/// returns how many sends lost theirs, for the caller to say so.
pub fn to_goal(s: &Schedule, compute_bandwidth: Option<f64>, out: &mut dyn Write) -> Result<u64> {
    let io = |e: std::io::Error| Error::io("writing GOAL", e);
    let elem = s.elem_bytes();
    writeln!(out, "num_ranks {}", s.ranks).map_err(io)?;
    let mut text = String::new();
    let mut lost = 0u64;
    for (rank, prog) in s.programs.iter().enumerate() {
        text.clear();
        let _ = writeln!(text, "\nrank {rank} {{");
        for (i, op) in prog.ops.iter().enumerate() {
            let _ = match op {
                Op::Send {
                    peer,
                    tag,
                    region,
                    route,
                } => {
                    lost += u64::from(*route != 0);
                    writeln!(
                        text,
                        "l{i}: send {}b to {peer} tag {tag}",
                        region.count * elem
                    )
                }
                Op::Recv {
                    peer, tag, region, ..
                } => {
                    writeln!(
                        text,
                        "l{i}: recv {}b from {peer} tag {tag}",
                        region.count * elem
                    )
                }
                Op::Copy { .. } => writeln!(text, "l{i}: calc 0"),
                Op::Combine { src, .. } => {
                    let ns =
                        compute_bandwidth.map_or(0.0, |bw| (src.count * elem) as f64 / bw * 1e9);
                    writeln!(text, "l{i}: calc {}", ns.round() as u64)
                }
                Op::Compute { seconds } => {
                    writeln!(text, "l{i}: calc {}", (seconds * 1e9).round() as u64)
                }
            };
        }
        for i in 0..prog.len() {
            for d in prog.deps(i) {
                let _ = writeln!(text, "l{i} requires l{d}");
            }
        }
        text.push_str("}\n");
        out.write_all(text.as_bytes()).map_err(io)?;
    }
    Ok(lost)
}
