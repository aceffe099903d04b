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
//!   (`Profile::finish`), known when it starts as profiles are;
//! - a link's **state** turning off fails every transfer on it, in its
//!   latency or its bandwidth, and a transfer that starts while one of its
//!   links is off fails at once; a host turning off kills its rank unless
//!   the rank is done. SimGrid 3.32 fails such a transfer
//!   (`StandardLinkImpl::turn_off`, `NetworkCm02Model::comm_get_route_info`)
//!   and kills such a process, and SMPI, which catches neither, aborts the
//!   run: the run ends with an error naming the link or host, the time and
//!   the transfer or rank ([`SimKind::Failure`](crate::SimKind)). A link
//!   that comes back on carries the transfers that start after.
//!
//! The changes are applied between instants, before the events of their
//! date; a run with profiles goes event by event (no folding, no by-rank
//! driver) and keeps every flow in the solver.

use super::sharing::Links;
use super::Sim;
use crate::error::{fail, Result};
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

/// Every network link on (`false` each), or empty when no link has a
/// state profile.
pub(super) fn link_states(topo: &Topology) -> Vec<bool> {
    match topo.profiles.as_deref() {
        Some(p) if p.of.iter().any(|(t, _)| matches!(t, Target::State(_))) => {
            vec![false; topo.links.len()]
        }
        _ => Vec::new(),
    }
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

    /// Refuses a transfer (send `op` to rank `dst`) that starts at `now` on
    /// a route with a link off.
    pub(super) fn check_links_on(
        &self,
        now: f64,
        op: (u32, OpId),
        dst: u32,
        route: &[LinkId],
    ) -> Result<()> {
        match route.iter().find(|&&l| self.link_off.get(l as usize) == Some(&true)) {
            Some(&l) => Err(fail!(
                Sim,
                Failure,
                "rank {}'s send to rank {dst} (op {}) starts at {now} s on link '{}', which is off: SimGrid fails the transfer and the run stops there",
                op.0,
                op.1,
                self.topo.link_name(l)
            )),
            None => Ok(()),
        }
    }

    /// A link or host state change at `now`: the error that stops the run
    /// when the link turns off under a transfer or the host under a rank
    /// not done.
    fn turn(&mut self, now: f64, target: Target, on: bool) -> Result<()> {
        match target {
            Target::State(l) => {
                if let Some(off) = self.link_off.get_mut(l as usize) {
                    *off = !on;
                }
                if on {
                    return Ok(());
                }
                let free: std::collections::HashSet<u32> =
                    self.free_transfers.iter().copied().collect();
                let under = (0..self.transfers.len() as u32)
                    .filter(|id| !free.contains(id))
                    .map(|id| &self.transfers[id as usize])
                    .find(|t| t.route.contains(&l));
                match under {
                    Some(t) => Err(fail!(
                        Sim,
                        Failure,
                        "link '{}' turns off at {now} s under rank {}'s send to rank {} (op {}): SimGrid fails the transfer and the run stops there",
                        self.topo.link_name(l),
                        t.src,
                        t.dst,
                        t.send_op
                    )),
                    None => Ok(()),
                }
            }
            Target::HostState(n) if !on => {
                let ranks = self.ranks.len();
                let running = (0..ranks).find(|&r| {
                    self.topo.rank_node.get(r) == Some(&n)
                        && (self.ranks[r].done as u64) < self.src.len(r)
                });
                match running {
                    Some(r) => Err(fail!(
                        Sim,
                        Failure,
                        "host '{}' turns off at {now} s while rank {r} runs on it: SimGrid kills the rank and the run stops there",
                        self.topo.node_name(n)
                    )),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Applies every link change dated `now` or before, and gives the flows
    /// on the links changed their new weight and cap.
    pub(super) fn apply_changes(&mut self, now: f64) -> Result<()> {
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
                Target::State(_) | Target::HostState(_) => {
                    self.turn(now, *target, value > 0.0)?;
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
        Ok(())
    }
}
