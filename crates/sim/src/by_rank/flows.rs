//! A rank's flows: a send's route (kept per rank), its latency and
//! bandwidth phases, set at once as the flow is alone on its links, and the
//! node model's view of the running rank (`At`, its `node::Host`).

use super::*;

impl<'a, P: Lookahead> Part<'a, P> {
    /// Send i of rank r: its receiver, receive, bytes and gated send, and
    /// its route's entry in the rank's `kept` (as `Sim::begin_latency`
    /// finds the route).
    pub(super) fn transfer(&mut self, rank: &mut Rank, r: u32, i: OpId) -> Result<Started> {
        let (
            Transfer {
                peer,
                count,
                route,
                recv,
            },
            gated,
        ) = self.src.gated_transfer(r as usize, i);
        let bytes = if peer == r {
            0.0
        } else {
            (count * self.src.header().elem_bytes() + self.cfg.header_bytes) as f64
        };
        let started = |kept| Started {
            dst: peer,
            recv,
            bytes,
            kept,
            gated,
        };
        if let Some(k) = rank.kept_keys.iter().position(|&key| key == (peer, route)) {
            return Ok(started(k));
        }
        // As `Sim::route_links` finds it, without fold and node links (a
        // route is found once, then kept).
        let mut buf = std::mem::take(&mut self.route_buf);
        buf.clear();
        if peer != r {
            send_route(self.topo, self.src.header(), (r, i), peer, route, &mut buf)?;
        }
        let path = Route::from_slice(&buf);
        self.route_buf = buf;
        let links = &self.topo.links;
        let latency: f64 = path.iter().map(|&l| links[l as usize].latency).sum();
        let bottleneck = path
            .iter()
            .map(|&l| self.topo.lone_rate(l))
            .fold(f64::INFINITY, f64::min);
        let k = rank.next_kept as usize;
        rank.next_kept = ((k + 1) % KEPT_ROUTES) as u8;
        // Its place, and any kept route that shares a link with it, are
        // given up (their statistics written back) before it takes a
        // link's statistics.
        for (j, (old, links)) in rank.kept.iter_mut().zip(&mut rank.kept_links).enumerate() {
            if j == k || links.iter().any(|l| path.contains(l)) {
                drop_kept(old, links, &mut self.link_use);
                rank.kept_keys[j] = (NO_PEER, 0);
            }
        }
        let held = path.len() == 1;
        rank.kept_keys[k] = (peer, route);
        rank.kept[k] = KeptRoute {
            latency,
            bottleneck,
            checked: false,
            held,
            no_links: path.is_empty(),
            link_use: if held {
                self.link_use[path[0] as usize]
            } else {
                LinkUse::default()
            },
        };
        rank.kept_links[k] = path;
        Ok(started(k))
    }

    /// Send i of rank r ends at `end`: its engine is freed then, and its
    /// data lands. If it gates another send (`Horizon`), the lookahead
    /// counts from its end until the gated one is done.
    pub(super) fn end_send(&mut self, rank: &mut Rank, r: u32, i: OpId, end: f64, send: &Started) {
        self.push_own(rank, end, Ev::SendEnd, i);
        self.deliver(rank, send.dst, end, send.recv);
        if let Some(gated) = send.gated {
            let at = end - end.abs() * 2.0 * LEVEL_TOLERANCE;
            self.gates.push(Reverse((at.to_bits(), r - self.lo, gated)));
        }
    }

    /// As `Sim::begin_latency`: the send's overhead is paid at t.
    pub(super) fn begin_latency(
        &mut self,
        rank: &mut Rank,
        t: f64,
        now: f64,
        horizon: f64,
        r: u32,
        i: OpId,
    ) -> std::result::Result<(), Stop> {
        let send = self.transfer(rank, r, i)?;
        self.flows += 1;
        let kept = &rank.kept[send.kept];
        let lat = kept.latency;
        if send.bytes == 0.0 || kept.no_links {
            self.end_send(rank, r, i, t + lat, &send);
            return Ok(());
        }
        let (start, now, horizon) = if lat == 0.0 {
            (t, now, horizon)
        } else {
            self.push_own(rank, t + lat, Ev::FlowStart, i);
            if !self.lookahead.flows_at_dispatch {
                return Ok(());
            }
            // The bandwidth phase is set now, from the latency's end, in an
            // instant of its own (`Horizon`); its `FlowStart` event only
            // counts, as `Sim`'s does.
            let start = t + lat;
            (start, start, start + start.abs() * LEVEL_TOLERANCE)
        };
        self.begin_bandwidth(rank, start, now, horizon, r, i, send)
    }

    /// A flow starts its bandwidth phase at t, in the instant of rank r that
    /// began at `now`, on the route `kept[k]` of rank r: alone on its links,
    /// at its bottleneck's rate, it ends at `now` + bytes / rate, as
    /// `Sim::update_rates` sets it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn begin_bandwidth(
        &mut self,
        rank: &mut Rank,
        t: f64,
        now: f64,
        horizon: f64,
        r: u32,
        i: OpId,
        send: Started,
    ) -> std::result::Result<(), Stop> {
        let (k, bytes) = (send.kept, send.bytes);
        let (kept, links) = (&mut rank.kept[k], &rank.kept_links[k]);
        let rate = flow_cap(self.cfg, || kept.latency);
        // `MaxMin::alone`: the bottleneck, unless the cap is below it.
        let rate = if rate < kept.bottleneck {
            rate
        } else {
            kept.bottleneck
        };
        let end = now + bytes / rate;
        if !kept.checked {
            for (j, &l) in links.iter().enumerate() {
                let owner = &self.shared.owner[l as usize];
                let mine = match owner.load(Ordering::Relaxed) {
                    NO_OWNER => match owner.compare_exchange(
                        NO_OWNER,
                        r,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => true,
                        Err(other) => other == r,
                    },
                    other => other == r,
                };
                // Another sender's link, or one crossed twice.
                if !mine || links[..j].contains(&l) {
                    return Err(Stop::Fallback);
                }
            }
            kept.checked = true;
        }
        // A link still busy with this rank's last flow on it, or an end
        // inside the instant (`Sim` queues it after the instant).
        let busy = if kept.held {
            kept.link_use.since > horizon
        } else {
            links
                .iter()
                .any(|&l| self.link_use[l as usize].since > horizon)
        };
        if busy || end <= horizon {
            return Err(Stop::Fallback);
        }
        let count = |u: &mut LinkUse| {
            u.bytes += bytes;
            u.busy += end - t;
            u.since = end;
            u.peak = u.peak.max(1);
        };
        if kept.held {
            count(&mut kept.link_use);
        } else {
            for &l in links {
                count(&mut self.link_use[l as usize]);
            }
        }
        self.network_bytes += bytes;
        self.end_send(rank, r, i, end, &send);
        Ok(())
    }
}

/// The by-rank driver runs the node model on one rank at a time (`rank`, of
/// its thread's part), in the instant that began at `now`: its events go to
/// the rank's own queue, and a flow's latency and bandwidth phases are set
/// at once (the flow is alone on its links).
pub(super) struct At<'p, 'a, P: Lookahead> {
    pub(super) part: &'p mut Part<'a, P>,
    pub(super) rank: &'p mut Rank,
    pub(super) now: f64,
    pub(super) horizon: f64,
}

impl<'a, P: Lookahead> node::Host<'a> for At<'_, 'a, P> {
    type Src = P;
    type Err = Stop;
    #[inline(always)]
    fn src(&self) -> &'a P {
        self.part.src
    }
    #[inline(always)]
    fn cfg(&self) -> &'a SimConfig {
        self.part.cfg
    }
    #[inline(always)]
    fn rank(&mut self, _r: u32) -> &mut RankState {
        &mut self.rank.state
    }
    #[inline(always)]
    fn rank_and_ready(&mut self, _r: u32) -> (&mut RankState, &mut Vec<(u32, OpId)>) {
        (&mut self.rank.state, &mut self.part.ready_now)
    }
    #[inline(always)]
    fn next_ready(&mut self) -> Option<(u32, OpId)> {
        self.part.ready_now.pop()
    }
    #[inline(always)]
    fn want_dispatch(&mut self, _r: u32) {
        self.rank.dispatch_pending = true;
    }
    #[inline(always)]
    fn free_task_done(&mut self, now: f64, _r: u32, i: OpId) {
        self.part.push_own(self.rank, now, Ev::TaskDone, i);
    }
    #[inline(always)]
    fn task_started(
        &mut self,
        now: f64,
        dur: f64,
        r: u32,
        i: OpId,
        compute: bool,
    ) -> std::result::Result<(), Stop> {
        let end = now + dur;
        if compute {
            self.part.push_own(self.rank, end, Ev::TaskDone, i);
        } else {
            self.part.push_own(self.rank, end, Ev::OverheadDone, i);
            if self.part.lookahead.flows_at_dispatch {
                // The flow starts as the overhead ends (`Horizon`), in an
                // instant of its own.
                let end_horizon = end + end.abs() * LEVEL_TOLERANCE;
                self.part
                    .begin_latency(self.rank, end, end, end_horizon, r, i)?;
            }
        }
        Ok(())
    }
    #[inline(always)]
    fn begin_latency(&mut self, now: f64, r: u32, i: OpId) -> std::result::Result<(), Stop> {
        self.part
            .begin_latency(self.rank, now, self.now, self.horizon, r, i)
    }
    #[inline(always)]
    fn overhead_done(&mut self, now: f64, r: u32, i: OpId) -> std::result::Result<(), Stop> {
        // The flow was set when the overhead started.
        if self.part.lookahead.flows_at_dispatch {
            return Ok(());
        }
        self.part
            .begin_latency(self.rank, now, self.now, self.horizon, r, i)
    }
}
