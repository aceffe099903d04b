//! How the event driver shares the network's links among the flows in their
//! bandwidth phase, behind one interface (`Links` and the `Sim` methods
//! here): a transfer's bandwidth phase starts (`start_sharing`), ends
//! (`end_bandwidth`), the shares are settled at the end of an instant
//! (`settle`), and the link statistics are made at the end of the run
//! (`finish_sharing`).
//!
//! - **Max-min** (`Links::Fair`): weighted max-min fair shares, solved
//!   incrementally (`MaxMin`) at the end of every instant in which flows came
//!   or went; a flow's end is queued (`EndQueue`) and moves as its rate
//!   does. A flow alone on its links is kept out of the solver (`Alone`)
//!   until another must enter it. Links with a per-stream table (a grid's
//!   WAN) cap each flow at b(P) for the P flows on them now.
//! - **Reservation** (`Links::Booked`): a transfer books its path's
//!   bottleneck rate on each hop from when its front gets there, at the
//!   earliest start that fits (`calendar`), and ends by an event of its own.

use super::calendar::{self, Calendar};
use super::queue::EndQueue;
use super::simgrid::CROSSTRAFFIC;
use super::{flow_cap, Alone, EvKind, Fairness, LinkSample, Sharing, Sim, SimConfig};
use super::{MaxMin, Reschedule};
use topocoll_schedule::lookahead::Lookahead;
use topocoll_topology::LinkId;

/// Max-min sharing's state.
pub(super) struct Fair {
    solver: MaxMin,
    /// Completion times of flows in their bandwidth phase.
    ends: EndQueue,
    /// Flows kept out of the solver (`Alone`), and those of them that
    /// started at this instant (queued with the solver's flows at its end).
    alone: Vec<u32>,
    alone_new: Vec<u32>,
    resched: Vec<Reschedule>,
}

/// Reservation sharing's state: the calendar and every hop's booked
/// intervals (for the link statistics, made at the end).
pub(super) struct Booked {
    calendar: Calendar,
    booked: Vec<Vec<(f64, f64)>>,
}

/// The sharing rule in force, with its state.
pub(super) enum Links {
    Fair(Box<Fair>),
    Booked(Box<Booked>),
}

impl Fair {
    pub(super) fn solver(&self) -> &MaxMin {
        &self.solver
    }

    pub(super) fn solver_mut(&mut self) -> &mut MaxMin {
        &mut self.solver
    }
}

impl Links {
    pub(super) fn new(cfg: &SimConfig, capacity: Vec<f64>) -> Links {
        match cfg.sharing {
            Sharing::MaxMin => Links::Fair(Box::new(Fair {
                solver: MaxMin::with_start(capacity, cfg.solve_start),
                ends: EndQueue::default(),
                alone: Vec::new(),
                alone_new: Vec::new(),
                resched: Vec::new(),
            })),
            Sharing::Reservation => Links::Booked(Box::new(Booked {
                calendar: Calendar::new(capacity),
                booked: Vec::new(),
            })),
        }
    }

    /// The earliest queued end of a flow's bandwidth phase (max-min; a
    /// reservation's end is an event of the driver's).
    #[inline]
    pub(super) fn next_end(&mut self) -> Option<(f64, u32)> {
        match self {
            Links::Fair(f) => f.ends.peek(),
            Links::Booked(_) => None,
        }
    }

    /// Takes flow `id`'s queued end (it is being handled).
    #[inline]
    pub(super) fn take_end(&mut self, id: u32) {
        if let Links::Fair(f) = self {
            f.ends.remove(id);
        }
    }

    /// The solver's counts: recomputations, rounds, full solves, flows
    /// solved, flows rescheduled.
    pub(super) fn solver_counts(&self) -> (u64, u64, u64, u64, u64) {
        match self {
            Links::Fair(f) => (
                f.solver.recomputes,
                f.solver.rounds,
                f.solver.full_solves,
                f.solver.recomputed_flows,
                f.solver.rescheduled_flows,
            ),
            Links::Booked(_) => (0, 0, 0, 0, 0),
        }
    }

    pub(super) fn solver(&self) -> Option<&MaxMin> {
        match self {
            Links::Fair(f) => Some(&f.solver),
            Links::Booked(_) => None,
        }
    }
}

impl<P: Lookahead> Sim<'_, P> {
    /// Transfer `id`, its latency elapsed (`lat` s from `now`, and 0 for a
    /// flow that starts at once), takes its share of the links: a max-min
    /// flow enters the solve at the end of the latency (now, without an
    /// event, when there is none); a reservation books its hops now.
    pub(super) fn start_sharing(&mut self, now: f64, lat: f64, id: u32) {
        match &self.links {
            Links::Booked(_) => self.book(now, id),
            // No latency phase: the flow takes bandwidth now rather than
            // through an event later in this instant. Rates are solved once
            // per instant, after every start, so nothing else changes (unless
            // routes mix zero and non-zero latencies, where flows starting at
            // one instant may join the solve in another order).
            Links::Fair(_) if lat == 0.0 => self.begin_bandwidth(now, id),
            Links::Fair(_) => self.push(now + lat, EvKind::FlowStart, id, 0),
        }
    }

    /// A flow's weight: 1, or under `Fairness::Rtt` one over its penalty,
    /// its route's latency (plus, under SimGrid's model, weight-S over each
    /// link's bandwidth), as the links are now.
    pub(super) fn weight_of(&self, route: &[LinkId]) -> f64 {
        match self.cfg.fairness {
            Fairness::Equal => 1.0,
            Fairness::Rtt => {
                let mut penalty: f64 = route.iter().map(|&l| self.latency[l as usize]).sum();
                if let Some(m) = self.cfg.simgrid.as_deref().filter(|m| m.weight_s > 0.0) {
                    penalty += self
                        .network_hops(route)
                        .map(|l| m.weight_s / self.link_bandwidth(l))
                        .sum::<f64>();
                }
                1.0 / penalty.max(1e-12)
            }
        }
    }

    /// The links of `route` that are the network's, not a node's injection
    /// or ejection link.
    fn network_hops<'r>(&self, route: &'r [LinkId]) -> impl Iterator<Item = LinkId> + 'r {
        let n = self.topo.links.len();
        route.iter().copied().filter(move |&l| (l as usize) < n)
    }

    /// Link l's bandwidth now (a profile may have changed it).
    pub(super) fn link_bandwidth(&self, l: LinkId) -> f64 {
        match self.bandwidth.get(l as usize) {
            Some(&b) => b,
            None => self.topo.links[l as usize].bandwidth,
        }
    }

    /// A flow's cap: `flow_cap`, and on each link with a stream table the
    /// rate b(P) for the P flows on it now (this one included; at least 1).
    pub(super) fn cap_of(&self, route: &[LinkId]) -> f64 {
        let mut cap = flow_cap(self.cfg, || {
            route.iter().map(|&l| self.latency[l as usize]).sum()
        });
        // A FATPIPE link: each flow up to its bandwidth, none sharing it.
        let fatpipe = self.topo.fatpipe();
        if !fatpipe.is_empty() {
            for &l in route {
                if fatpipe.get(l as usize) == Some(&true) {
                    cap = cap.min(self.link_bandwidth(l));
                }
            }
        }
        if self.stream.is_empty() {
            return cap;
        }
        route.iter().fold(cap, |cap, &l| {
            match self.stream.get(l as usize).copied().flatten() {
                Some(table) => {
                    let p = (self.link_use[l as usize].count as usize).clamp(1, table.len());
                    cap.min(table[p - 1])
                }
                None => cap,
            }
        })
    }

    /// The streams on the table-capped links of `route` take the cap for
    /// their new number (after a flow joined or left them).
    fn recap(&mut self, route: &[LinkId]) {
        let Some(m) = self.links.solver() else {
            return;
        };
        let mut flows: Vec<u32> = Vec::new();
        for &l in route {
            if self.stream.get(l as usize).copied().flatten().is_some() {
                flows.extend(m.flows_on(l));
            }
        }
        for f in flows {
            // The flow being started or ended holds its route apart.
            let cap = if self.transfers[f as usize].route.is_empty() {
                self.cap_of(route)
            } else {
                self.cap_of(&self.transfers[f as usize].route)
            };
            if let Links::Fair(fair) = &mut self.links {
                fair.solver.set_cap(f, cap);
            }
        }
    }

    /// A max-min flow's bandwidth phase starts.
    pub(super) fn begin_bandwidth(&mut self, now: f64, id: u32) {
        let route = std::mem::take(&mut self.transfers[id as usize].route);
        let bytes = self.transfers[id as usize].bytes;
        self.occupy(now, &route, bytes);
        let cap = self.cap_of(&route);
        // Alone: nothing in the solver, and each link carries this flow
        // once and nothing else (the counts include it now).
        // (A network that changes keeps every flow in the solver, which
        // its changes re-solve.)
        let alone = self.cfg.fairness == Fairness::Equal
            && self.topo.profiles.is_none()
            && self.links.solver().is_some_and(MaxMin::is_idle)
            && route.iter().all(|&l| self.link_use[l as usize].count == 1);
        let weight = self.weight_of(&route);
        // SimGrid bounds a flow by its slowest link's bandwidth when it
        // starts, and keeps that bound when a profile changes the link.
        let cap = if self.cfg.simgrid.is_some() && self.topo.profiles.is_some() {
            let bound = self
                .network_hops(&route)
                .map(|l| self.link_bandwidth(l))
                .fold(f64::INFINITY, f64::min);
            self.transfers[id as usize].bound = bound;
            cap.min(bound)
        } else {
            cap
        };
        // SimGrid's bandwidth factor scales the rate the flow gets from its
        // share: its bytes over the factor at its share (see `simgrid`).
        let bytes = match &self.cfg.simgrid {
            Some(m) => bytes / m.bandwidth_factor.at(bytes),
            None => bytes,
        };
        let Links::Fair(f) = &mut self.links else {
            unreachable!("only max-min flows have a bandwidth phase of their own")
        };
        if alone {
            let (rate, _) = f.solver.alone(&route, cap);
            self.transfers[id as usize].alone = Some(Alone {
                since: now,
                cap,
                rate,
                solved: false,
                index: f.alone.len() as u32,
            });
            f.alone.push(id);
            f.alone_new.push(id);
        } else {
            // The flows kept out enter first, as `add` and the solves
            // would have left them: one that started at this instant is
            // still unsolved.
            for a in f.alone.drain(..) {
                let t = &mut self.transfers[a as usize];
                let s = t.alone.take().expect("listed as alone");
                if s.solved {
                    f.solver.admit(a, s.since, &t.route, t.bytes, s.cap);
                } else {
                    f.solver.add(a, s.since, &t.route, t.bytes, 1.0, s.cap);
                }
            }
            match self.cfg.simgrid.as_deref().filter(|m| m.crosstraffic) {
                // The route back (the topology's from the receiver), each
                // of its links taken at 5% of the flow's rate.
                Some(_) => {
                    let t = &self.transfers[id as usize];
                    let mut links = route.to_vec();
                    self.topo.route(t.dst as usize, t.src as usize, &mut links);
                    let mut coef = vec![1.0; route.len()];
                    coef.resize(links.len(), CROSSTRAFFIC);
                    f.solver
                        .add_scaled(id, now, &links, &coef, bytes, weight, cap);
                }
                None => f.solver.add(id, now, &route, bytes, weight, cap),
            }
            if !self.stream.is_empty() {
                self.recap(&route);
            }
        }
        self.transfers[id as usize].route = route;
    }

    /// Reservation sharing: the transfer books its path's bottleneck rate
    /// on each hop from when its front gets there, at the earliest start
    /// from now that fits, and ends when its last byte arrives.
    fn book(&mut self, now: f64, id: u32) {
        let route = std::mem::take(&mut self.transfers[id as usize].route);
        let bytes = self.transfers[id as usize].bytes;
        let cap = self.cap_of(&route);
        let Links::Booked(b) = &mut self.links else {
            unreachable!("only reservations are booked")
        };
        let cal = &mut b.calendar;
        let mut offset = 0.0;
        let hops: Vec<calendar::Hop> = route
            .iter()
            .map(|&l| {
                offset += self.latency[l as usize];
                calendar::Hop {
                    resource: l,
                    offset,
                }
            })
            .collect();
        let rate = route.iter().map(|&l| cal.capacity(l)).fold(cap, f64::min);
        let dur = bytes / rate;
        cal.forget_before_on(&hops, now);
        let t0 = cal.earliest(&hops, rate, dur, now);
        cal.book(&hops, rate, dur, t0);
        if b.booked.is_empty() {
            b.booked = vec![Vec::new(); self.link_use.len()];
        }
        for h in &hops {
            let start = t0 + h.offset;
            b.booked[h.resource as usize].push((start, start + dur));
            self.link_use[h.resource as usize].bytes += bytes;
        }
        self.transfers[id as usize].route = route;
        self.push(t0 + offset + dur, EvKind::FlowEnd, id, 0);
    }

    /// The link statistics the sharing keeps itself: reservation sharing's,
    /// from the booked intervals (busy is their union, peak the most that
    /// overlap).
    pub(super) fn finish_sharing(&mut self) {
        let Links::Booked(b) = &mut self.links else {
            return;
        };
        for (l, list) in b.booked.iter_mut().enumerate() {
            let mut starts: Vec<f64> = list.iter().map(|b| b.0).collect();
            let mut ends: Vec<f64> = list.iter().map(|b| b.1).collect();
            starts.sort_by(f64::total_cmp);
            ends.sort_by(f64::total_cmp);
            let u = &mut self.link_use[l];
            let (mut open, mut e, mut since) = (0u32, 0, 0.0);
            for &s in &starts {
                while e < ends.len() && ends[e] <= s + 1e-12 * s.abs().max(1e-9) {
                    open -= 1;
                    if open == 0 {
                        u.busy += ends[e] - since;
                    }
                    e += 1;
                }
                if open == 0 {
                    since = s;
                }
                open += 1;
                u.peak = u.peak.max(open);
            }
            if open > 0 {
                u.busy += ends[ends.len() - 1] - since;
            }
        }
    }

    fn occupy(&mut self, now: f64, route: &[LinkId], bytes: f64) {
        for &l in route {
            let u = &mut self.link_use[l as usize];
            u.bytes += bytes;
            if u.count == 0 {
                u.since = now;
            }
            u.count += 1;
            u.peak = u.peak.max(u.count);
            if self.cfg.trace && (l as usize) < self.topo.links.len() {
                self.link_samples.push(LinkSample {
                    time_s: now,
                    link: l,
                    flows: u.count,
                });
            }
        }
    }

    fn vacate(&mut self, now: f64, route: &[LinkId]) {
        for &l in route {
            let u = &mut self.link_use[l as usize];
            u.count -= 1;
            if u.count == 0 {
                u.busy += now - u.since;
            }
            if self.cfg.trace && (l as usize) < self.topo.links.len() {
                self.link_samples.push(LinkSample {
                    time_s: now,
                    link: l,
                    flows: u.count,
                });
            }
        }
    }

    /// Transfer `id`'s bandwidth phase ends at `now`: it leaves its links,
    /// and its data arrives.
    pub(super) fn end_bandwidth(&mut self, now: f64, id: u32) {
        let route = std::mem::take(&mut self.transfers[id as usize].route);
        if let Links::Fair(f) = &mut self.links {
            let alone = self.transfers[id as usize].alone.take();
            match alone {
                Some(a) => {
                    f.alone.swap_remove(a.index as usize);
                    if let Some(&moved) = f.alone.get(a.index as usize) {
                        if let Some(b) = self.transfers[moved as usize].alone.as_mut() {
                            b.index = a.index;
                        }
                    }
                }
                None => f.solver.remove(id),
            }
            self.vacate(now, &route);
            // (A lone flow shares no link, so no other flow's cap moves.)
            if alone.is_none() && !self.stream.is_empty() {
                self.recap(&route);
            }
        }
        self.network_bytes += self.transfers[id as usize].bytes;
        self.transfers[id as usize].route = route;
        self.arrive(now, id);
    }

    /// The end of an instant: the max-min shares of the flows that came or
    /// went, and the ends of the flows whose rate they changed.
    pub(super) fn settle(&mut self, now: f64) {
        let Links::Fair(f) = &mut self.links else {
            return;
        };
        // What the solve would do for a flow that started alone at this
        // instant: its rate from 0 to `rate` as of now, all its bytes left.
        for id in f.alone_new.drain(..) {
            let t = &mut self.transfers[id as usize];
            if let Some(a) = t.alone.as_mut() {
                a.since = now;
                a.solved = true;
                f.ends.set(id, now + t.bytes / a.rate);
            }
        }
        let mut out = std::mem::take(&mut f.resched);
        out.clear();
        f.solver.recompute(now, &mut out);
        for r in &out {
            if r.end.is_finite() {
                f.ends.set(r.flow, r.end);
            } else {
                f.ends.remove(r.flow);
            }
        }
        f.resched = out;
    }
}
