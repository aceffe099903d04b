//! Sweeps: every rank of a thread's part run in index order up to the
//! window's limit (`Local::window`, `Local::sweep`), each rank's instants
//! one after another (`Part::advance`), its events handed to the node model.

use super::*;
use crate::error::fail;

impl<'a, P: Lookahead> Local<'a, P> {
    /// Runs this thread's ranks for one window: alone (`others` = `inf`),
    /// sweep after sweep, each up to L past the earliest event left, to the
    /// end; beside other threads, up to L past the earliest event of all
    /// (theirs given as `others`, with the data sent to them), one sweep.
    ///
    /// Within a sweep the ranks' order does not matter: every event a rank
    /// runs is at or after the sweep's earliest, so whatever it sends lands
    /// at or after the limit, in another sweep. Running them in index
    /// order reads their states in memory order and lets the sweep ask for
    /// the next ranks' states ahead of time.
    ///
    /// `others_gate` is the earliest gate end the other threads published
    /// (`Part::gates`), `own_gate` this thread's: every thread bounds
    /// the window by the same values.
    pub(super) fn window(
        &mut self,
        others: f64,
        others_gate: f64,
        own_gate: f64,
    ) -> std::result::Result<(), Stop> {
        if self.eng.late {
            return Err(Stop::Fallback);
        }
        self.eng.sent = f64::INFINITY;
        // With other threads, every thread runs to the same limit, L past
        // the earliest event of all, so they end the window together. (Up
        // to the others' earliest + L instead, the one behind ran L plus
        // its lag and the one ahead L less its lag, and the lag passed
        // from one to the other at every window: each waited a sixth of
        // the run.)
        let la = self.eng.lookahead;
        let cap = if others == f64::INFINITY {
            f64::INFINITY
        } else {
            la.limit(self.eng.own_min.min(others), own_gate.min(others_gate))
        };
        let mut swept = false;
        loop {
            let own = self.eng.own_min;
            if own == f64::INFINITY {
                return Ok(());
            }
            let base = own.min(others).min(self.eng.sent);
            let limit = la.limit(base, self.gate().min(others_gate)).min(cap);
            if own + own.abs() * LEVEL_TOLERANCE >= limit {
                // This thread's earliest rank cannot run its first instant:
                // the window is over, or it waits for the others, or, if
                // it is the earliest of all and has not moved, the
                // lookahead is inside its rounding and `Sim` must run.
                return if own <= base && (!swept || limit < cap) {
                    Err(Stop::Fallback)
                } else {
                    Ok(())
                };
            }
            swept = true;
            self.sweep(limit)?;
        }
    }

    /// Runs every rank's instants that end before `limit`, in rank order.
    pub(super) fn sweep(&mut self, limit: f64) -> std::result::Result<(), Stop> {
        self.sweep_ranks(0..self.ranks.len(), None, limit)
    }

    /// Runs the instants that end before `limit` of the ranks in `ranks`
    /// (this thread's k-th), in rank order: all of them, or one plane of a
    /// tiled run (`Tiles`), whose earliest the sweep sets in `plane_min`.
    pub(super) fn sweep_ranks(
        &mut self,
        ranks: std::ops::Range<usize>,
        plane: Option<usize>,
        limit: f64,
    ) -> std::result::Result<(), Stop> {
        self.eng.sweeps += 1;
        let mut due = std::mem::take(&mut self.eng.due);
        due.clear();
        // Ranks not run keep their earliest; those run and those that
        // receive data add theirs as the sweep goes (`Part::deliver`).
        let mut rest = f64::INFINITY;
        let first = ranks.start;
        for (k, &t) in self.eng.next[ranks].iter().enumerate() {
            if t < limit {
                due.push((first + k) as u32);
            } else if t < rest {
                rest = t;
            }
        }
        match plane {
            None => self.eng.own_min = rest,
            Some(l) => self.eng.plane_min[l] = rest,
        }
        let mut ran = f64::INFINITY;
        for (n, &k) in due.iter().enumerate() {
            // In three stages, each reading addresses the one before
            // brought in: a rank's record, its queues, then the states of
            // the ops its due events touch (written long ago, they have
            // left the cache).
            if let Some(&ahead) = due.get(n + 3 * PREFETCH_AHEAD) {
                self.ranks[ahead as usize].prefetch_record();
            }
            if let Some(&ahead) = due.get(n + 2 * PREFETCH_AHEAD) {
                self.ranks[ahead as usize].prefetch_queues();
            }
            if let Some(&ahead) = due.get(n + PREFETCH_AHEAD) {
                let rank = &self.ranks[ahead as usize];
                // The events due come first.
                for &(key, ev, op) in rank.queue.as_slice() {
                    if f64::from_bits(key) >= limit {
                        break;
                    }
                    rank.state.ops.prefetch(op);
                    // A send that ends counts down its successors: in a
                    // pipeline, the same send of the next segment, whose
                    // state its receives set up long before (named without
                    // decoding: decoding them all cost 3.6% of the
                    // instructions).
                    if ev == Ev::SendEnd {
                        let r = self.eng.lo as usize + ahead as usize;
                        if let Some(j) = self.eng.src.far_successor(r, op) {
                            rank.state.ops.prefetch(j);
                        }
                    }
                }
            }
            let r = self.eng.lo + k;
            self.eng.running = r;
            if self.eng.handled >= self.eng.next_report {
                self.report_progress();
            }
            let res = self.eng.advance(&mut self.ranks[k as usize], r, limit);
            self.eng.running = NONE_RUNNING;
            res?;
            if self.eng.late {
                return Err(Stop::Fallback);
            }
            let next = match self.ranks[k as usize].queue.peek() {
                Some(&(key, _, _)) => f64::from_bits(key),
                None => f64::INFINITY,
            };
            self.eng.next[k as usize] = next;
            if next < ran {
                ran = next;
            }
        }
        self.eng.due = due;
        match plane {
            None => self.eng.own_min = self.eng.own_min.min(ran),
            Some(l) => {
                self.eng.plane_min[l] = self.eng.plane_min[l].min(ran);
                self.eng.own_min = self
                    .eng
                    .plane_min
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min);
            }
        }
        debug_assert_eq!(self.eng.running, NONE_RUNNING);
        self.deliver_mail();
        if self.eng.late {
            return Err(Stop::Fallback);
        }
        Ok(())
    }
}

impl<'a, P: Lookahead> Part<'a, P> {
    /// Runs rank r's instants that end before `limit`.
    pub(super) fn advance(
        &mut self,
        rank: &mut Rank,
        r: u32,
        limit: f64,
    ) -> std::result::Result<(), Stop> {
        loop {
            let Some(&(key, _, _)) = rank.queue.peek() else {
                return Ok(());
            };
            let now = f64::from_bits(key);
            if !now.is_finite() {
                return Err(fail!(Sim, Config,
                    "the simulated time overflowed (an event at {now} s): the overheads, latencies, \
                     bandwidths or sizes given are out of range"
                )
                .into());
            }
            let horizon = now + now.abs() * LEVEL_TOLERANCE;
            if horizon >= limit {
                // The instant may yet receive data from another rank
                // (`window` checks that the earliest rank can run one).
                return Ok(());
            }
            loop {
                node::drain_ready(&mut self.at(rank, now, horizon), now)?;
                if let Some(&(k, ev, op)) = rank.queue.peek() {
                    let t = f64::from_bits(k);
                    if t <= horizon {
                        rank.queue.pop();
                        self.handled += u64::from(ev != Ev::Delivered);
                        self.handle(rank, r, t, ev, op, now, horizon)?;
                        continue;
                    }
                }
                if rank.dispatch_pending {
                    rank.dispatch_pending = false;
                    node::dispatch(&mut self.at(rank, now, horizon), now, r)?;
                    continue;
                }
                break;
            }
            rank.past = horizon;
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn handle(
        &mut self,
        rank: &mut Rank,
        r: u32,
        t: f64,
        ev: Ev,
        i: OpId,
        now: f64,
        horizon: f64,
    ) -> std::result::Result<(), Stop> {
        match ev {
            Ev::Start => node::start(&mut self.at(rank, now, horizon), r, std::iter::empty()),
            Ev::OverheadDone => node::task_done(&mut self.at(rank, now, horizon), t, r, i, true)?,
            Ev::TaskDone => node::task_done(&mut self.at(rank, now, horizon), t, r, i, false)?,
            Ev::FlowStart => {
                // Or set when the latency began.
                if !self.lookahead.flows_at_dispatch {
                    let send = self.transfer(rank, r, i)?;
                    self.begin_bandwidth(rank, t, now, horizon, r, i, send)?;
                }
            }
            Ev::SendEnd => node::send_done(&mut self.at(rank, now, horizon), t, r, i),
            Ev::Delivered => node::data_arrived(&mut self.at(rank, now, horizon), t, r, i),
        }
        Ok(())
    }

    /// The node model's view of the running rank in the instant that began
    /// at `now` and ends at `horizon`.
    #[inline(always)]
    pub(super) fn at<'p>(
        &'p mut self,
        rank: &'p mut Rank,
        now: f64,
        horizon: f64,
    ) -> At<'p, 'a, P> {
        At {
            part: self,
            rank,
            now,
            horizon,
        }
    }
}
