//! LogGOPSim's GOAL schedules as workloads: read by the schedule crate's
//! reader (`topocoll_schedule::from_goal_lines`, which also reads what
//! `topocoll schedule --format goal` writes), their messages matched here
//! so that a send no receive takes, or a receive no send feeds, is refused
//! at its line, and replayed as the schedule they are.
//!
//! A GOAL schedule is already a program of ops per rank with its
//! dependencies: sizes in bytes, `calc` in nanoseconds, `requires` and
//! `irequires`. It holds no collective calls and no flops, so a replay's
//! choice of algorithms and its host speeds leave it as it is; the network,
//! the node model and the simulator's flags price it.

use crate::error::{Error, Result};
use crate::{compute_seconds, Replayed};
use topocoll_schedule::{Op, Schedule};
use topocoll_sim::SimConfig;
use topocoll_topology::Topology;

/// Whether a text is a GOAL schedule: its first word, comments aside, is
/// `num_ranks`.
pub fn is_goal(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with("/*"))
        .is_some_and(|l| l.starts_with("num_ranks"))
}

/// Reads GOAL text (`name` is what errors call it): the schedule, its
/// messages matched by (source, destination, tag) in order, an unmatched
/// one refused at its line.
pub fn parse(name: &str, text: &str) -> Result<Schedule> {
    let (s, lines) = topocoll_schedule::from_goal_lines(name, text)?;
    if let Err(e) = topocoll_schedule::match_messages(&s) {
        return Err(match e {
            topocoll_schedule::Error::Verify(v) => {
                let line = match (v.rank, v.op) {
                    (Some(r), Some(i)) => lines[r][i],
                    _ => 1,
                };
                Error::parse(name, line, unmatched(&s, v.rank, v.op).unwrap_or(v.message))
            }
            other => other.into(),
        });
    }
    Ok(s)
}

/// What is wrong with rank `r`'s op `i`, in the file's own words (its
/// peers and tags as written).
fn unmatched(s: &Schedule, r: Option<usize>, i: Option<usize>) -> Option<String> {
    let (r, i) = (r?, i?);
    Some(match s.programs[r].ops[i] {
        Op::Send { peer, tag, .. } => format!(
            "rank {r} sends to rank {peer} with tag {tag}, but rank {peer} never receives it"
        ),
        Op::Recv { peer, tag, .. } => format!(
            "rank {r} receives from rank {peer} with tag {tag}, but rank {peer} sends it no such message (it would wait forever)"
        ),
        _ => return None,
    })
}

/// Replays a GOAL schedule on `topo` under `cfg`.
pub fn replay(s: &Schedule, topo: &Topology, cfg: &SimConfig) -> Result<Replayed> {
    crate::build::check_ranks(s.ranks, topo)?;
    let (mut messages, mut message_bytes) = (0, 0);
    for op in s.programs.iter().flat_map(|p| p.ops.iter()) {
        if let Op::Send { region, .. } = op {
            messages += 1;
            message_bytes += region.count;
        }
    }
    let result = topocoll_sim::simulate(s, topo, cfg)?;
    let rank_compute_s = compute_seconds(s);
    let breakdown = cfg.trace.then(|| crate::breakdown::Breakdown {
        ranks: crate::breakdown::ranks(&result, &rank_compute_s),
        calls: Vec::new(),
    });
    Ok(Replayed {
        result,
        calls: Vec::new(),
        messages,
        message_bytes,
        ops: s.num_ops() as u64,
        rank_compute_s,
        breakdown,
    })
}
