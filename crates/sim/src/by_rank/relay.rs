//! Relays: a tiled run on several threads, each thread its own run of
//! planes, the threads passing bounds on the data between them (null
//! messages) instead of meeting (`Relay`, `Local::run_relay`).

use super::*;

/// What the threads of a tiled run on several threads share
/// (`Local::run_relay`): for each thread, the earliest its data can land in
/// the thread before it (in that thread's last plane) and in the thread
/// after it (in its first plane), as of what it has run, posted so far and
/// been told; the data itself; and a bell each that rings when there is
/// something new for it.
///
/// A thread posts its data before it publishes a bound, and reads a bound
/// before it takes its post: what it takes is all the data landing before
/// the bound it read, and what comes later lands at or after it.
pub(super) struct Relay {
    /// Time bits, by thread.
    pub(super) into_before: Vec<AtomicU64>,
    pub(super) into_after: Vec<AtomicU64>,
    pub(super) post: Mutex<Post>,
    /// Rung (counted up) after new bounds or data for each thread.
    pub(super) bell: Vec<AtomicU64>,
    /// Set when every thread is idle and no data is in the post.
    pub(super) over: AtomicBool,
}

/// The data in transit between the threads of a tiled run, and which
/// threads have nothing left to run: the run is over when all are idle and
/// the post is empty (an idle thread wakes only by taking data).
pub(super) struct Post {
    pub(super) inbox: Vec<Vec<Mail>>,
    pub(super) idle: Vec<bool>,
}

impl Relay {
    /// For `threads` threads whose earliest events are at or after `start`.
    pub(super) fn new(threads: usize, start: f64) -> Relay {
        let at = || {
            (0..threads)
                .map(|_| AtomicU64::new(time_bits(start)))
                .collect()
        };
        Relay {
            into_before: at(),
            into_after: at(),
            post: Mutex::new(Post {
                inbox: vec![Vec::new(); threads],
                idle: vec![false; threads],
            }),
            bell: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            over: AtomicBool::new(false),
        }
    }
}

impl<'a, P: Lookahead> Local<'a, P> {
    /// Runs this thread's run of planes tiled (`Tiles`) to the end, beside
    /// threads that run theirs, without meetings: a thread waits only when
    /// none of its planes can run, until a thread beside it has news.
    ///
    /// The bounds the threads relay (`Relay`) close the reach of each
    /// thread's planes ([`reach_line`]): its first plane receives data from
    /// the thread before no sooner than that thread said, and its last from
    /// the thread after. After each plane it runs, a thread posts the data
    /// for the others, then publishes its own bounds, from its planes'
    /// reach, and rings its neighbours' bells. These are the null messages
    /// of conservative parallel simulation (Chandy and Misra): every bound
    /// holds for all that its thread can still send, so no data ever lands
    /// in a rank's past (which `Rank::past` would catch), and the thread
    /// with the earliest event of all can always run: it is never waiting
    /// on a bound it has not been told.
    pub(super) fn run_relay(&mut self, t: Tiles) -> std::result::Result<(), Stop> {
        let shared = self.eng.shared;
        let relay = &shared.relay;
        let me = self.eng.part;
        let n = self.eng.plane_min.len();
        let depth = (t.depth as usize).min(n);
        // The window's first plane: it moves on once that plane has run (or
        // has nothing to run), so that a plane held back by the thread
        // beside runs as soon as it may, still in step with the planes
        // after it.
        let mut w = 0;
        loop {
            // Read before anything this round reads from the others: a
            // bell rung after it is news this round may have missed.
            let bell = relay.bell[me].load(Ordering::Acquire);
            if shared.stop.load(Ordering::Relaxed) {
                return Err(Stop::Halted);
            }
            if self.eng.cfg.progress.is_some() && self.eng.windows.is_multiple_of(PROGRESS_WINDOWS)
            {
                shared.done[me].store(
                    self.ranks.iter().map(|r| r.state.done as u64).sum(),
                    Ordering::Relaxed,
                );
            }
            let idle = self.no_events_left();
            if !idle && self.relay_window(t, &mut w, depth)? {
                continue;
            }
            // Tell the others where this thread stands, then wait for news
            // (or for the end). An idle thread takes its post here first:
            // data posted before the bell was read must run now.
            let (before, after) = self.take_relayed();
            if self.eng.late {
                return Err(Stop::Fallback);
            }
            if idle && !self.no_events_left() {
                continue;
            }
            self.relay_out(before, after);
            if self.no_events_left() && self.idle_and_over() {
                return Ok(());
            }
            if !self.wait_for_bell(bell) {
                return Err(Stop::Halted);
            }
            if relay.over.load(Ordering::Acquire) {
                return Ok(());
            }
        }
    }

    /// Runs a window of a tiled run on several threads (`run_relay`): its
    /// planes `w`, `w` − 1, ... (around this thread's planes), `depth` of
    /// them, each as far as it can go. Moves `w` on once its plane has run
    /// (or has nothing to run), so that a plane held back by the thread
    /// beside runs as soon as it may, still in step with the planes after
    /// it. When no plane of the window can run, any other plane that can
    /// runs once. `false` when no plane could run.
    pub(super) fn relay_window(
        &mut self,
        t: Tiles,
        w: &mut usize,
        depth: usize,
    ) -> std::result::Result<bool, Stop> {
        let n = self.eng.plane_min.len();
        self.eng.windows += 1;
        let mut first = Plane::Idle;
        let mut ran = false;
        for step in 0..depth {
            let l = (*w + n - step) % n;
            let outcome = self.relay_plane(t, l)?;
            ran |= outcome == Plane::Ran;
            if step == 0 {
                first = outcome;
            }
        }
        if first != Plane::Held {
            *w = (*w + 1) % n;
            return Ok(true);
        }
        if ran {
            return Ok(true);
        }
        for l in 0..n {
            if (0..depth).any(|step| (*w + n - step) % n == l) {
                continue;
            }
            ran |= self.relay_plane(t, l)? == Plane::Ran;
        }
        Ok(ran)
    }

    /// Runs plane `l` of this thread (its `l`-th) as far as it can go, with
    /// what the threads beside have told (`take_relayed`), and tells them
    /// the news (`relay_out`).
    pub(super) fn relay_plane(&mut self, t: Tiles, l: usize) -> std::result::Result<Plane, Stop> {
        let (before, after) = self.take_relayed();
        if self.eng.late {
            return Err(Stop::Fallback);
        }
        let own = self.eng.plane_min[l];
        if own == f64::INFINITY {
            return Ok(Plane::Idle);
        }
        let la = self.eng.lookahead;
        let n = self.eng.plane_min.len();
        let gate = self.relay_reach(before, after);
        let reach = &self.eng.plane_reach;
        let from_before = if l == 0 {
            before
        } else {
            la.limit(reach[l - 1], gate)
        };
        let from_after = if l == n - 1 {
            after
        } else {
            la.limit(reach[l + 1], gate)
        };
        let limit = la.limit(own, gate).min(from_before).min(from_after);
        let least = own + own.abs() * LEVEL_TOLERANCE;
        if least >= limit {
            // As on one thread: the earliest plane of all (as far as this
            // thread knows) cannot run its first instant.
            if least >= la.limit(own, gate)
                && own <= before.min(after)
                && self.eng.plane_min.iter().all(|&x| own <= x)
            {
                return Err(Stop::Fallback);
            }
            return Ok(Plane::Held);
        }
        let ranks = l * t.plane as usize..(l + 1) * t.plane as usize;
        self.sweep_ranks(ranks, Some(l), limit)?;
        self.relay_out(before, after);
        Ok(Plane::Ran)
    }

    /// The bounds of the data from the threads before and after this one
    /// (`Relay`), then the data they have posted it, queued.
    pub(super) fn take_relayed(&mut self) -> (f64, f64) {
        let relay = &self.eng.shared.relay;
        let (me, prev, next) = self.neighbours();
        let before = bits_time(relay.into_after[prev].load(Ordering::Acquire));
        let after = bits_time(relay.into_before[next].load(Ordering::Acquire));
        let arrived = {
            let mut post = relay.post.lock().unwrap_or_else(|e| e.into_inner());
            if post.inbox[me].is_empty() {
                return (before, after);
            }
            post.idle[me] = false;
            std::mem::take(&mut post.inbox[me])
        };
        for (key, q, op) in arrived {
            self.push(q, f64::from_bits(key), Ev::Delivered, op);
        }
        (before, after)
    }

    /// Posts the data for the other threads, publishes this thread's bounds
    /// (from its planes' reach, with the bounds it was told, `before` and
    /// `after`), and rings the bells beside it.
    pub(super) fn relay_out(&mut self, before: f64, after: f64) {
        let relay = &self.eng.shared.relay;
        let (me, prev, next) = self.neighbours();
        if self.eng.outbox.iter().any(|o| !o.is_empty()) {
            let mut post = relay.post.lock().unwrap_or_else(|e| e.into_inner());
            for (k, out) in self.eng.outbox.iter_mut().enumerate() {
                post.inbox[k].append(out);
            }
        }
        let la = self.eng.lookahead;
        let gate = self.relay_reach(before, after);
        let reach = &self.eng.plane_reach;
        let first = la.limit(reach[0], gate);
        let last = la.limit(reach[reach.len() - 1], gate);
        relay.into_before[me].store(time_bits(first), Ordering::Release);
        relay.into_after[me].store(time_bits(last), Ordering::Release);
        relay.bell[prev].fetch_add(1, Ordering::Release);
        relay.bell[next].fetch_add(1, Ordering::Release);
    }

    /// Each plane's reach into `plane_reach` ([`reach_line`], with the
    /// bounds the threads beside told, `before` and `after`), and the gate
    /// it used.
    pub(super) fn relay_reach(&mut self, before: f64, after: f64) -> f64 {
        let gate = self.gate();
        reach_line(
            &self.eng.plane_min,
            before,
            after,
            self.eng.lookahead,
            gate,
            &mut self.eng.plane_reach,
        );
        gate
    }

    /// This thread, and the threads before and after it (around the ring
    /// of threads).
    pub(super) fn neighbours(&self) -> (usize, usize, usize) {
        let threads = self.eng.shared.done.len();
        let me = self.eng.part;
        (me, (me + threads - 1) % threads, (me + 1) % threads)
    }
}
