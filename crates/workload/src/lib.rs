//! Workloads: an application's run (compute, point-to-point messages and
//! collective calls, rank by rank) read from a trace and replayed on a
//! network under the simulator's node model.
//!
//! - [`action`]: what a workload is, whatever file it came from;
//! - [`simgrid_ti`]: SimGrid's time-independent traces;
//! - [`choice`]: which algorithm serves each collective;
//! - [`build`](mod@build): the workload as one schedule, its semantics;
//! - [`replay`]: build, then simulate.
//!
//! The layer knows nothing of the command line, of searches (`optimize`)
//! or of the runtime. Each collective call's schedule is verified when it
//! is built; the workload's own messages are matched, not proven (a trace
//! is what an application did, not a claim about data).

pub mod action;
pub mod build;
pub mod choice;
pub mod simgrid_ti;

pub use action::{Action, Call, Mode, Step, Workload};
pub use build::{Built, CallSummary, Semantics, SMPI_EAGER_BYTES};
pub use choice::Choice;

use topocoll_base::error::Result;
use topocoll_sim::{SimConfig, SimResult};
use topocoll_topology::Topology;

/// A replayed workload: the simulation and what its calls ran.
pub struct Replayed {
    pub result: SimResult,
    pub calls: Vec<CallSummary>,
    pub messages: u64,
    pub message_bytes: u64,
    /// Operations of the workload's schedule.
    pub ops: u64,
}

/// Replays `w` on `topo`: its schedule built as `choice` and `sem` say,
/// simulated under `cfg`.
pub fn replay(
    w: &Workload,
    topo: &Topology,
    choice: &Choice,
    sem: &Semantics,
    cfg: &SimConfig,
) -> Result<Replayed> {
    let built = build::build(w, topo, choice, sem)?;
    let ops = built.schedule.num_ops() as u64;
    let result = topocoll_sim::simulate(&built.schedule, topo, cfg)?;
    Ok(Replayed {
        result,
        calls: built.calls,
        messages: built.messages,
        message_bytes: built.message_bytes,
        ops,
    })
}

/// A host speed as a number of flops per second or as SimGrid writes it
/// (`1Gf`, `100Mf`, `2.5kf`).
pub fn parse_flops(text: &str) -> Result<f64> {
    let t = text.trim();
    let body = t.strip_suffix('f').unwrap_or(t);
    let (num, scale) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1e3),
        Some('M') => (&body[..body.len() - 1], 1e6),
        Some('G') => (&body[..body.len() - 1], 1e9),
        Some('T') => (&body[..body.len() - 1], 1e12),
        Some('P') => (&body[..body.len() - 1], 1e15),
        _ => (body, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * scale),
        _ => Err(topocoll_base::param!(
            "flops",
            " '{text}' is not a speed (flops per second: 1e9, 1Gf, 100Mf)"
        )),
    }
}
