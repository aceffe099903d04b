//! A network that changes while the run goes (`topology::profile`, a
//! SimGrid platform's profiles), as SimGrid 3.32 applies its profiles:
//!
//! - a link's new **bandwidth** is its capacity from that date on; a flow
//!   on it is solved again, and under SimGrid's model its penalty's
//!   weight-S term follows the new bandwidth while its own bound, the
//!   slowest of its links' bandwidths when it started, stays;
//! - a link's new **latency** is what transfers starting from then on
//!   wait; a flow already on it keeps its wait but takes the new latency
//!   into its penalty and its TCP window's cap;
//! - a host's new **speed** (a multiple of its own) is the rate its compute
//!   tasks go at: a task's end is its work integrated over the speed
//!   (`Profile::finish`), known when it starts as profiles are.
//!
//! The changes are applied between instants, before the events of their
//! date; a run with profiles goes event by event (no folding, no by-rank
//! driver) and keeps every flow in the solver.

use super::sharing::Links;
use super::Sim;
use topocoll_schedule::lookahead::Lookahead;
use topocoll_schedule::{Op, OpId};
use topocoll_topology::profile::{Profile, Target};
use topocoll_topology::{LinkId, Topology};

/// The next change of each link profile: (date, the profile's index in
/// `Topology::profiles`, the event's number in it).
pub(super) type Changes = Vec<(f64, usize, u64)>;

/// The first change of every link profile of `topo`.
pub(super) fn first_changes(topo: &Topology) -> Changes {
    let Some(p) = topo.profiles.as_deref() else {
        return Vec::new();
    };
    p.of.iter()
        .enumerate()
        .filter(|(_, (t, _))| !matches!(t, Target::Speed(_)))
        .filter_map(|(i, (_, prof))| prof.event(0).map(|(d, _)| (d, i, 0)))
        .collect()
}

/// Each rank's host's speed profile (empty when no host has one).
pub(super) fn rank_speeds(topo: &Topology, ranks: usize) -> Vec<Option<&Profile>> {
    match topo.profiles.as_deref() {
        Some(p) if p.of.iter().any(|(t, _)| matches!(t, Target::Speed(_))) => {
            (0..ranks).map(|r| p.speed(topo.rank_node[r])).collect()
        }
        _ => Vec::new(),
    }
}

impl<P: Lookahead> Sim<'_, P> {
    /// The date of the next link change.
    pub(super) fn next_change(&self) -> Option<f64> {
        self.changes.iter().map(|c| c.0).reduce(f64::min)
    }

    /// When rank r's CPU task on op i, of `dur` seconds at its host's own
    /// speed, started at `now`, ends.
    pub(super) fn task_end(&self, now: f64, dur: f64, r: u32, i: OpId) -> f64 {
        match self.rank_speed.get(r as usize).copied().flatten() {
            Some(p) if matches!(self.src.op(r as usize, i), Op::Compute { .. }) => {
                p.finish(now, dur)
            }
            _ => now + dur,
        }
    }

    /// Applies every link change dated `now` or before, and gives the flows
    /// on the links changed their new weight and cap.
    pub(super) fn apply_changes(&mut self, now: f64) {
        let profiles = self
            .topo
            .profiles
            .as_deref()
            .expect("changes come from profiles");
        let fatpipe = self.topo.fatpipe();
        let mut changed: Vec<LinkId> = Vec::new();
        let mut i = 0;
        while i < self.changes.len() {
            let (date, p, k) = self.changes[i];
            if date > now {
                i += 1;
                continue;
            }
            let (target, profile) = &profiles.of[p];
            let value = profile
                .event(k)
                .expect("a change listed is one of its profile's")
                .1;
            match *target {
                Target::Bandwidth(l) => {
                    self.bandwidth[l as usize] = value;
                    if let Links::Fair(f) = &mut self.links {
                        if fatpipe.get(l as usize) != Some(&true) {
                            f.solver_mut().set_capacity(l, value);
                        }
                    }
                    changed.push(l);
                }
                Target::Latency(l) => {
                    self.latency[l as usize] = value;
                    // The ranks' last routes cached their latencies.
                    for last in &mut self.last_route {
                        last.0 = u32::MAX;
                    }
                    changed.push(l);
                }
                Target::Speed(_) => unreachable!("speed profiles are not link changes"),
            }
            // The same entry again: its next change may be of this date too.
            match profile.event(k + 1) {
                Some((d, _)) => self.changes[i] = (d, p, k + 1),
                None => {
                    self.changes.swap_remove(i);
                }
            }
        }
        changed.sort_unstable();
        changed.dedup();
        let mut flows: Vec<u32> = Vec::new();
        if let Links::Fair(f) = &self.links {
            for &l in &changed {
                flows.extend(f.solver().flows_on(l));
            }
        }
        flows.sort_unstable();
        flows.dedup();
        for id in flows {
            let t = &self.transfers[id as usize];
            let weight = self.weight_of(&t.route);
            let cap = self.cap_of(&t.route).min(t.bound);
            if let Links::Fair(f) = &mut self.links {
                f.solver_mut().set_weight(id, weight);
                f.solver_mut().set_cap(id, cap);
            }
        }
    }
}
