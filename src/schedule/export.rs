//! Schedules as text: JSON (export and import) and LogGOPSim's GOAL format.

use super::{Collective, Dtype, Op, Program, ReduceOp, Schedule};
use crate::error::{Error, Result};
use crate::invalid;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io::Write;

#[derive(Serialize, Deserialize)]
struct JsonOp {
    #[serde(flatten)]
    op: Op,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deps: Vec<u32>,
}

#[derive(Serialize, Deserialize)]
struct JsonProgram {
    #[serde(default)]
    scratch: u64,
    ops: Vec<JsonOp>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonSchedule {
    collective: Collective,
    ranks: usize,
    count: u64,
    dtype: Dtype,
    op: ReduceOp,
    algorithm: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    offsets: Vec<Vec<i64>>,
    programs: Vec<JsonProgram>,
}

/// Writes a schedule as JSON: `{collective, ranks, count, dtype, op,
/// algorithm, programs: [{scratch, ops: [{kind, ..., deps}]}]}`.
pub fn to_json(s: &Schedule, out: &mut dyn Write) -> Result<()> {
    let doc = JsonSchedule {
        collective: s.collective,
        ranks: s.ranks,
        count: s.count,
        dtype: s.dtype,
        op: s.op,
        algorithm: s.algorithm.clone(),
        offsets: s.offsets.clone(),
        programs: s
            .programs
            .iter()
            .map(|p| JsonProgram {
                scratch: p.scratch,
                ops: p
                    .ops
                    .iter()
                    .enumerate()
                    .map(|(i, op)| JsonOp {
                        op: *op,
                        deps: p.deps(i).to_vec(),
                    })
                    .collect(),
            })
            .collect(),
    };
    serde_json::to_writer(&mut *out, &doc).map_err(|e| Error::Io(format!("writing JSON: {e}")))?;
    writeln!(out).map_err(|e| Error::Io(format!("writing JSON: {e}")))
}

/// Reads a schedule written by [`to_json`] (or by hand).
pub fn from_json(text: &str) -> Result<Schedule> {
    let doc: JsonSchedule =
        serde_json::from_str(text).map_err(|e| invalid!("schedule JSON: {e}"))?;
    if doc.programs.len() != doc.ranks {
        return Err(invalid!(
            "schedule JSON: {} programs for {} ranks",
            doc.programs.len(),
            doc.ranks
        ));
    }
    let mut s = Schedule::new(
        doc.collective,
        doc.ranks,
        doc.count,
        doc.dtype,
        doc.op,
        &doc.algorithm,
    );
    s.offsets = doc.offsets;
    for (prog, jp) in s.programs.iter_mut().zip(doc.programs) {
        *prog = Program {
            scratch: jp.scratch,
            ..Default::default()
        };
        for jo in jp.ops {
            prog.push(jo.op, &jo.deps);
        }
    }
    Ok(s)
}

/// Writes a schedule in LogGOPSim's GOAL text format. Sizes are bytes. Local
/// copies and combines become `calc` operations whose cost is the number of
/// bytes they touch (GOAL's `calc` is in the simulator's time unit; scale it
/// there); `Compute` becomes `calc` in nanoseconds.
pub fn to_goal(s: &Schedule, out: &mut dyn Write) -> Result<()> {
    let io = |e: std::io::Error| Error::Io(format!("writing GOAL: {e}"));
    let elem = s.elem_bytes();
    writeln!(out, "num_ranks {}", s.ranks).map_err(io)?;
    let mut text = String::new();
    for (rank, prog) in s.programs.iter().enumerate() {
        text.clear();
        let _ = writeln!(text, "\nrank {rank} {{");
        for (i, op) in prog.ops.iter().enumerate() {
            let _ = match op {
                Op::Send {
                    peer, tag, region, ..
                } => {
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
                Op::Copy { src, .. } | Op::Combine { src, .. } => {
                    writeln!(text, "l{i}: calc {}", src.count * elem)
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
    Ok(())
}
