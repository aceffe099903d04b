//! Threads: contiguous blocks of ranks, one per thread, meeting at a
//! barrier each window to exchange the data that crosses blocks and their
//! earliest events (`run_threads`, `Meeting`, `Shared`).

use super::*;

/// The run on `threads` threads.
pub(super) fn run_threads<P: Lookahead + Sync>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
    lookahead: Horizon,
    wall: Instant,
    threads: usize,
) -> std::result::Result<SimResult, Stop> {
    let p = src.header().ranks;
    let block = p.div_ceil(threads.clamp(1, p.max(1))).max(1);
    // Every block has ranks.
    let threads = p.div_ceil(block).max(1);
    let shared = Shared {
        tiles: tiles(src, topo, cfg, threads),
        owner: (0..topo.links.len())
            .map(|_| AtomicU32::new(NO_OWNER))
            .collect(),
        earliest: std::array::from_fn(|_| (0..threads).map(|_| AtomicU64::new(0)).collect()),
        sent: std::array::from_fn(|_| {
            (0..threads * threads)
                .map(|_| AtomicU64::new(u64::MAX))
                .collect()
        }),
        done: (0..threads).map(|_| AtomicU64::new(0)).collect(),
        inbox: std::array::from_fn(|_| (0..threads).map(|_| Mutex::new(Vec::new())).collect()),
        handled: std::array::from_fn(|_| (0..threads).map(|_| AtomicU64::new(0)).collect()),
        gate: std::array::from_fn(|_| (0..threads).map(|_| AtomicU64::new(u64::MAX)).collect()),
        stop: AtomicBool::new(false),
        barrier: Meeting::new(threads),
        relay: Relay::new(
            threads,
            cfg.start_offsets(p)
                .into_iter()
                .fold(f64::INFINITY, f64::min),
        ),
        block: block as u32,
        spin: threads <= std::thread::available_parallelism().map_or(1, |n| n.get()),
        total_ops: if cfg.progress.is_some() {
            (0..p).map(|r| src.len(r)).sum()
        } else {
            0
        },
    };
    let parts: Vec<Local<P>> = (0..threads)
        .map(|k| {
            let lo = (k * block).min(p);
            let hi = ((k + 1) * block).min(p);
            Local::new(src, topo, cfg, lookahead, &shared, k, lo..hi)
        })
        .collect();
    // Each part runs on a thread of its own; one that panics, or cannot be
    // started, calls the meeting off, so the others stop instead of
    // waiting for it forever.
    let outcomes: Vec<(Local<P>, std::result::Result<(), Stop>)> = if threads == 1 {
        parts.into_iter().map(|p| run_part(p, &shared)).collect()
    } else {
        std::thread::scope(|scope| {
            let mut handles = Vec::new();
            let mut failed = None;
            for part in parts {
                match std::thread::Builder::new().spawn_scoped(scope, || run_part(part, &shared)) {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        shared.stop.store(true, Ordering::Relaxed);
                        shared.barrier.call_off();
                        failed = Some(e);
                        break;
                    }
                }
            }
            let done: Vec<_> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
            match failed {
                None => Ok(done),
                Some(e) => Err(Stop::Error(Error::invalid(format!(
                    "cannot start {threads} simulation threads ({e}): give fewer with --threads"
                )))),
            }
        })?
    };
    let mut parts = Vec::with_capacity(outcomes.len());
    let mut stop = None;
    for (part, res) in outcomes {
        match res {
            Ok(()) => {}
            // The first cause, in thread order (the others halted for it).
            Err(Stop::Halted) => {}
            Err(other) => {
                stop.get_or_insert(other);
            }
        }
        parts.push(part);
    }
    if let Some(stop) = stop {
        return Err(stop);
    }
    if parts.len() < threads {
        return Err(Stop::Error(Error::invalid("a simulation thread was lost")));
    }
    finish(src, topo, &shared, parts, wall).map_err(Stop::Error)
}

/// Runs one part; a part that fails (or panics) calls the meeting off.
pub(super) fn run_part<'a, P: Lookahead>(
    mut part: Local<'a, P>,
    shared: &Shared,
) -> (Local<'a, P>, std::result::Result<(), Stop>) {
    let res =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| part.run())).unwrap_or_else(|e| {
            let what = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(Stop::Error(Error::invalid(format!(
                "a simulation thread failed: {what}"
            ))))
        });
    if res.is_err() {
        shared.stop.store(true, Ordering::Relaxed);
        shared.barrier.call_off();
    }
    (part, res)
}

/// A barrier that can be called off: a thread that fails must not leave
/// the others waiting for it.
pub(super) struct Meeting {
    pub(super) parties: usize,
    /// (arrived, generation, called off)
    pub(super) state: Mutex<(usize, u64, bool)>,
    pub(super) all_here: Condvar,
}

impl Meeting {
    pub(super) fn new(parties: usize) -> Meeting {
        Meeting {
            parties,
            state: Mutex::new((0, 0, false)),
            all_here: Condvar::new(),
        }
    }

    /// Waits for every party; `false` when the meeting was called off.
    pub(super) fn wait(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.2 {
            return false;
        }
        st.0 += 1;
        if st.0 == self.parties {
            st.0 = 0;
            st.1 += 1;
            self.all_here.notify_all();
            return true;
        }
        let generation = st.1;
        while st.1 == generation && !st.2 {
            st = self.all_here.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        !st.2
    }

    pub(super) fn call_off(&self) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.2 = true;
        self.all_here.notify_all();
    }
}

/// A time as the threads publish it: its bits, `u64::MAX` for none (inf).
pub(super) fn time_bits(t: f64) -> u64 {
    if t == f64::INFINITY {
        u64::MAX
    } else {
        t.to_bits()
    }
}

/// The time whose bits `time_bits` gave.
pub(super) fn bits_time(bits: u64) -> f64 {
    if bits == u64::MAX {
        f64::INFINITY
    } else {
        f64::from_bits(bits)
    }
}

/// What the threads share.
///
/// The threads meet once a window. Before they meet, each publishes what
/// the others need to bound it: its earliest pending event, and the
/// earliest data it has sent each other thread (which that thread takes
/// from its inbox after the meeting). What is published and sent for
/// window w sits in slot w % 2: a thread that passes the meeting and runs
/// its next window writes the other slot, while the slowest still reads
/// this one, so one meeting a window is enough.
pub(super) struct Shared {
    /// Each link's one sender, `NO_OWNER` until its first flow.
    pub(super) owner: Vec<AtomicU32>,
    /// Each thread's earliest pending event (time bits; `u64::MAX`: none),
    /// its inbox aside: `[slot][thread]`.
    pub(super) earliest: [Vec<AtomicU64>; 2],
    /// The earliest data each thread has sent each other one in its last
    /// window (time bits; `u64::MAX`: none): `[slot][from * threads + to]`.
    pub(super) sent: [Vec<AtomicU64>; 2],
    /// Each thread's ops completed, for progress.
    pub(super) done: Vec<AtomicU64>,
    /// Data arriving at each thread's ranks from other threads:
    /// `[slot][thread]`, (time bits, rank, receive).
    pub(super) inbox: [Vec<Mutex<Vec<Mail>>>; 2],
    /// Each thread's events handled: `[slot][thread]`.
    pub(super) handled: [Vec<AtomicU64>; 2],
    /// The earliest end of each thread's gating sends (`Part::gates`;
    /// time bits, `u64::MAX`: none): `[slot][thread]`.
    pub(super) gate: [Vec<AtomicU64>; 2],
    /// Set by a thread that stops (an error or a shared link).
    pub(super) stop: AtomicBool,
    pub(super) barrier: Meeting,
    /// Ranks per thread (the last may have fewer).
    pub(super) block: u32,
    pub(super) total_ops: u64,
    /// How the run is tiled, if it is (`Tiles`).
    pub(super) tiles: Option<Tiles>,
    /// What the threads of a tiled run pass each other instead of meeting.
    pub(super) relay: Relay,
    /// Whether each thread has a core of its own: only then does a relaying
    /// thread spin while it waits (with more threads than cores, its spin
    /// would take the core of the thread it waits for).
    pub(super) spin: bool,
}

impl<'a, P: Lookahead> Local<'a, P> {
    /// Marks this thread idle (it has no event left), and ends the run if
    /// every thread is and no data is in transit; `false` while some
    /// thread may still send.
    pub(super) fn idle_and_over(&mut self) -> bool {
        let relay = &self.eng.shared.relay;
        let mut post = relay.post.lock().unwrap_or_else(|e| e.into_inner());
        if !post.inbox[self.eng.part].is_empty() {
            return false;
        }
        post.idle[self.eng.part] = true;
        if post.idle.iter().all(|&i| i) && post.inbox.iter().all(|b| b.is_empty()) {
            relay.over.store(true, Ordering::Release);
            for b in &relay.bell {
                b.fetch_add(1, Ordering::Release);
            }
            return true;
        }
        false
    }

    /// Waits until this thread's bell rings past `bell` (or the run is
    /// over); `false` when another thread stopped. Spins a while, then
    /// yields the core, then sleeps in short naps.
    pub(super) fn wait_for_bell(&self, bell: u64) -> bool {
        let shared = self.eng.shared;
        let mut tries = 0u32;
        loop {
            if shared.relay.bell[self.eng.part].load(Ordering::Acquire) != bell
                || shared.relay.over.load(Ordering::Acquire)
            {
                return true;
            }
            if shared.stop.load(Ordering::Relaxed) {
                return false;
            }
            tries = tries.saturating_add(1);
            if tries < 1 << 10 && shared.spin {
                std::hint::spin_loop();
            } else if tries < 1 << 14 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
        }
    }
}
