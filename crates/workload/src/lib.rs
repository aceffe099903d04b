//! Workloads: an application's run (compute, point-to-point messages and
//! collective calls, rank by rank) read from a trace and replayed on a
//! network under the simulator's node model.
//!
//! - [`action`]: what a workload is, whatever file it came from;
//! - [`error`]: the layer's errors, a lower layer's kept whole;
//! - the formats, a file each: [`simgrid_ti`], SimGrid's time-independent
//!   traces; [`goal`], LogGOPSim's GOAL schedules; [`chakra`], MLCommons
//!   Chakra's execution traces ([`read`] tells them apart);
//! - [`choice`]: which algorithm serves each collective;
//! - [`build`](mod@build): the workload as one schedule, its semantics;
//! - [`replay`]: build, then simulate.
//!
//! The layer knows nothing of the command line, of searches (`optimize`)
//! or of the runtime. Each collective call's schedule is verified when it
//! is built; the workload's own messages are matched, not proven (a trace
//! is what an application did, not a claim about data).

pub mod action;
pub mod breakdown;
pub mod build;
pub mod chakra;
pub mod choice;
pub mod comm;
pub mod error;
pub mod goal;
pub mod jobs;
pub mod simgrid_ti;

pub use action::{Action, Call, Mode, Rooted, Step, Workload};
pub use build::{Built, CallSummary, Semantics, SIMGRID_SEMANTICS_KEYS, SMPI_EAGER_BYTES};
pub use choice::{Alternative, Auto, Choice, Picked, Served};
pub use error::{Error, Result, WorkloadKind};

use std::path::Path;
use topocoll_schedule::{Op, Schedule};
use topocoll_sim::{SimConfig, SimResult};
use topocoll_topology::Topology;

/// A trace as read: actions (SimGrid's and Chakra's formats), or a
/// schedule of ops (LogGOPSim's GOAL).
pub enum Trace {
    Actions(Workload),
    Goal(Schedule),
}

impl Trace {
    pub fn ranks(&self) -> usize {
        match self {
            Trace::Actions(w) => w.ranks(),
            Trace::Goal(s) => s.ranks,
        }
    }
}

/// Reads a trace in whichever format it is: Chakra when `path` names
/// Chakra's files ([`chakra::rank_files`]: a `.et` file, a prefix of
/// `.R.et` files, or a file that is not text); GOAL when its first word
/// (comments aside) is `num_ranks`; SimGrid's time-independent format
/// otherwise.
pub fn read(path: &Path) -> Result<Trace> {
    if let Some(files) = chakra::rank_files(path)? {
        return Ok(Trace::Actions(chakra::read(&files)?));
    }
    let text = simgrid_ti::read_text(path)?;
    if goal::is_goal(&text) {
        let name = path.display().to_string();
        return Ok(Trace::Goal(goal::parse(&name, &text)?));
    }
    Ok(Trace::Actions(simgrid_ti::from_text(path, &text)?))
}

/// How a trace is read beyond its own files.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// The communicator groups a Chakra trace's collectives name by their
    /// `pg_name` (ASTRA-sim's `--comm-group-configuration`); only a Chakra
    /// trace takes them.
    pub comm_groups: Option<chakra::CommGroups>,
}

/// Reads the trace `path` names as [`read`] does, with `opts`.
pub fn read_with(path: &Path, opts: &ReadOptions) -> Result<Trace> {
    let Some(groups) = &opts.comm_groups else {
        return read(path);
    };
    let Some(files) = chakra::rank_files(path)? else {
        return Err(topocoll_base::param!(
            "comm_groups",
            ": '{}' is not a Chakra trace (communicator groups are Chakra's; a SimGrid trace creates its communicators with comm_split)",
            path.display()
        ));
    };
    Ok(Trace::Actions(chakra::read_with_groups(&files, groups)?))
}

/// Replays a trace as read: a workload as [`replay`] does, a GOAL schedule
/// as it is.
pub fn replay_trace(
    t: &Trace,
    topo: &Topology,
    choice: &Choice,
    sem: &Semantics,
    cfg: &SimConfig,
) -> Result<Replayed> {
    match t {
        Trace::Actions(w) => replay(w, topo, choice, sem, cfg),
        Trace::Goal(s) => goal::replay(s, topo, cfg),
    }
}

/// A replayed workload: the simulation and what its calls ran.
pub struct Replayed {
    pub result: SimResult,
    pub calls: Vec<CallSummary>,
    pub messages: u64,
    pub message_bytes: u64,
    /// Operations of the workload's schedule.
    pub ops: u64,
    /// Each rank's seconds of compute (and sleep): the rest of its time to
    /// its finish (`result.rank_finish_s`) it spends communicating or
    /// waiting.
    pub rank_compute_s: Vec<f64>,
    /// Under `SimConfig::trace`: where the time went, by rank and by call.
    pub breakdown: Option<breakdown::Breakdown>,
}

/// Each rank's seconds of `Compute` ops.
pub(crate) fn compute_seconds(s: &Schedule) -> Vec<f64> {
    s.programs
        .iter()
        .map(|p| {
            p.ops
                .iter()
                .map(|op| match op {
                    Op::Compute { seconds } => *seconds,
                    _ => 0.0,
                })
                .sum()
        })
        .collect()
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
    replay_with(w, topo, &|_| choice, sem, cfg)
}

/// [`replay`] with each communicator's calls served as `choose(comm)`
/// says (a job file's jobs, each its own choice).
pub fn replay_with<'c>(
    w: &Workload,
    topo: &Topology,
    choose: &dyn Fn(u32) -> &'c Choice,
    sem: &Semantics,
    cfg: &SimConfig,
) -> Result<Replayed> {
    let built = build::build_with(w, topo, choose, sem)?;
    let ops = built.schedule.num_ops() as u64;
    let result = topocoll_sim::simulate(&built.schedule, topo, cfg)?;
    let rank_compute_s = compute_seconds(&built.schedule);
    let breakdown = cfg.trace.then(|| breakdown::Breakdown {
        ranks: breakdown::ranks(&result, &rank_compute_s),
        calls: breakdown::calls(&result, &built.detail, &built.calls, &w.comms, topo, cfg),
    });
    Ok(Replayed {
        result,
        calls: built.calls,
        messages: built.messages,
        message_bytes: built.message_bytes,
        ops,
        rank_compute_s,
        breakdown,
    })
}

/// The trace replayed once for each of `algs` serving `kind` (the other
/// collectives as `choice` says): what-if pricing of one choice.
pub fn compare(
    t: &Trace,
    topo: &Topology,
    choice: &Choice,
    kind: topocoll_schedule::CollectiveKind,
    algs: &[choice::Alternative],
    sem: &Semantics,
    cfg: &SimConfig,
) -> Result<Vec<Replayed>> {
    algs.iter()
        .map(|&alg| {
            let mut c = choice.clone();
            c.set_alternative(kind, alg);
            replay_trace(t, topo, &c, sem, cfg)
        })
        .collect()
}

/// A host speed as a number of flops per second or as SimGrid writes it
/// (`1Gf`, `100Mf`, `2.5kf`).
pub fn parse_flops(text: &str) -> Result<f64> {
    topocoll_topology::parse_speed(text).ok_or_else(|| {
        topocoll_base::param!(
            "flops",
            " '{text}' is not a speed (flops per second: 1e9, 1Gf, 100Mf)"
        )
    })
}
