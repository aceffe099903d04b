//! Where a replayed workload's time went: each rank's seconds of compute,
//! of communication and of waiting, and each distinct collective call's
//! time against the collective's lower bound. Read from a simulation run
//! with `trace` (its spans and each op's completion).
//!
//! - A rank *computes* while its CPU runs a compute op (compute, sleep).
//! - It *communicates* while one of its messages is on the way (from the
//!   send's dispatch to the data's arrival, as sender or receiver) or its
//!   CPU runs a message's overhead or a combine, and it does not compute.
//! - It *waits* the rest of the time to its finish: in a call or a wait
//!   with nothing of its own moving (a late peer, a message not yet sent).
//!
//! A collective call's time is from the first of its ranks to enter it
//! (the ops before it done) to the last to leave it (its last op done);
//! `after_all_s` is from the last to enter: the collective's own time once
//! every rank is in (less than its bound where messages of the early ranks
//! were on their way before the last entered).

use crate::build::Detail;
use crate::CallSummary;
use topocoll_sim::{SimConfig, SimResult};
use topocoll_topology::Topology;

/// One rank's time.
#[derive(Clone, Debug, PartialEq)]
pub struct RankTime {
    pub finish_s: f64,
    pub compute_s: f64,
    pub communication_s: f64,
    pub wait_s: f64,
}

/// One distinct call's (a row of the replay's calls) time, over its calls.
#[derive(Clone, Debug, PartialEq)]
pub struct CallTime {
    /// From the first rank's entry to the last rank's exit, summed over
    /// the calls.
    pub time_s: f64,
    /// From the last rank's entry to the last rank's exit, summed.
    pub after_all_s: f64,
    /// The collective's lower bound on its ranks' network, times the
    /// calls (`None`: no bound known).
    pub bound_s: Option<f64>,
}

/// A replay's breakdown.
#[derive(Clone, Debug, PartialEq)]
pub struct Breakdown {
    pub ranks: Vec<RankTime>,
    /// By row of the replay's calls.
    pub calls: Vec<CallTime>,
}

/// The measure of the union of intervals.
fn union(mut v: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    v.retain(|&(a, b)| b > a);
    v.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn measure(v: &[(f64, f64)]) -> f64 {
    v.iter().map(|(a, b)| b - a).sum()
}

/// The measure of the intersection of two unions.
fn overlap(x: &[(f64, f64)], y: &[(f64, f64)]) -> f64 {
    let (mut i, mut j, mut sum) = (0, 0, 0.0);
    while i < x.len() && j < y.len() {
        let (a, b) = (x[i].0.max(y[j].0), x[i].1.min(y[j].1));
        if b > a {
            sum += b - a;
        }
        if x[i].1 < y[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    sum
}

/// Each rank's compute, communication and waiting from a traced run.
pub fn ranks(r: &SimResult, compute_s: &[f64]) -> Vec<RankTime> {
    let p = r.rank_finish_s.len();
    let mut busy: Vec<Vec<(f64, f64)>> = vec![Vec::new(); p];
    let mut cpu: Vec<Vec<(f64, f64)>> = vec![Vec::new(); p];
    for s in &r.spans {
        let into = if s.name == "compute" {
            &mut cpu
        } else {
            &mut busy
        };
        into[s.rank as usize].push((s.start_s, s.end_s));
    }
    (0..p)
        .map(|k| {
            let comm = union(std::mem::take(&mut busy[k]));
            let comp = union(std::mem::take(&mut cpu[k]));
            let communication_s = measure(&comm) - overlap(&comm, &comp);
            let finish_s = r.rank_finish_s[k];
            let compute_s = compute_s[k];
            RankTime {
                finish_s,
                compute_s,
                communication_s,
                wait_s: (finish_s - compute_s - communication_s).max(0.0),
            }
        })
        .collect()
}

/// Each distinct call's time and bound from a traced run.
pub fn calls(
    r: &SimResult,
    detail: &Detail,
    rows: &[CallSummary],
    comms: &[Vec<u32>],
    topo: &Topology,
    cfg: &SimConfig,
) -> Vec<CallTime> {
    let n = detail.call_row.len();
    // Per call: first entry, last entry, last exit.
    let mut at = vec![(f64::INFINITY, 0.0f64, 0.0f64); n];
    for (rank, mine) in detail.calls.iter().enumerate() {
        let done = &r.op_done_s[rank];
        for c in mine {
            let entry = c
                .entry
                .iter()
                .map(|&i| done[i as usize])
                .fold(0.0, f64::max);
            let exit = (c.first..c.end)
                .map(|i| done[i as usize])
                .fold(entry, f64::max);
            let t = &mut at[c.call as usize];
            t.0 = t.0.min(entry);
            t.1 = t.1.max(entry);
            t.2 = t.2.max(exit);
        }
    }
    let mut out: Vec<CallTime> = rows
        .iter()
        .enumerate()
        .map(|(k, row)| {
            let s = &detail.schedules[detail.row_schedule[k]];
            let on = match &row.comm_ranks {
                None => topocoll_algorithms::model::schedule_collective_bound(
                    s,
                    topo,
                    cfg.injection_bandwidth,
                    cfg.ejection_bandwidth,
                ),
                Some(_) => topocoll_algorithms::model::schedule_collective_bound(
                    s,
                    &topo.with_ranks(&comms[row.comm as usize]),
                    cfg.injection_bandwidth,
                    cfg.ejection_bandwidth,
                ),
            };
            CallTime {
                time_s: 0.0,
                after_all_s: 0.0,
                bound_s: on.map(|b| b * row.calls as f64),
            }
        })
        .collect();
    for (call, &(first, last, exit)) in at.iter().enumerate() {
        let row = &mut out[detail.call_row[call]];
        if first.is_finite() {
            row.time_s += exit - first;
            row.after_all_s += exit - last;
        }
    }
    out
}
