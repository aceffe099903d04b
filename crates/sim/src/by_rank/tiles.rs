//! Tiles: a run on one thread cut into planes of ranks along a grid's last
//! axis, each plane run several windows in a row while its state is in
//! cache (`Tiles`, `Local::run_tiled`).

use super::*;

/// Planes a thread runs in each window of a tiled run (`Tiles`).
pub(super) const TILE_DEPTH: u32 = 4;

/// How a run on one thread is tiled: its ranks cut into `planes` planes
/// of `plane` consecutive ranks, around the ring of ranks, where every rank
/// sends only within its plane and to the two planes beside it (the
/// planes along a grid's last axis: each rank's neighbours and tree edges).
///
/// Why: a sweep over all ranks reads more state than the core's cache
/// holds, so every sweep fetches every rank's state again. Tiled, each
/// window runs `depth` planes, one sweep each, and the next window moves on
/// by one plane, so that each plane runs in `depth` windows in a row while
/// it is still in cache, each time about one lookahead further: the planes
/// of a window form a staircase (the first one step ahead of the plane
/// after it, the last `depth` steps), which is what lets each run so far.
/// (The 48×6×32 allreduce at 8 MiB on one thread: 57% fewer misses of a
/// 2 MiB cache, by cachegrind.)
///
/// Each plane runs up to its own limit, from every plane's earliest event:
/// what can reach a plane from planes d apart lands no sooner than d
/// lookaheads after their earliest ([`reach`]). A rank's instants do not
/// depend on the limits they ran under, so the result is the same bit for
/// bit as untiled; a send that went further than a plane's neighbours
/// would land in its receiver's past and stop the run (`Rank::past`),
/// never change it.
///
/// On several threads, each takes a run of planes and tiles it the same
/// way, without meetings: the threads relay bounds on the data crossing
/// between them as they go (`Local::run_relay`). (Meeting once a window,
/// as untiled threads do, they met four times as often, and the meetings
/// cost more than the cache saved: docs/PERFORMANCE.md.)
#[derive(Clone, Copy, Debug)]
pub(super) struct Tiles {
    pub(super) plane: u32,
    pub(super) planes: u32,
    pub(super) depth: u32,
}

/// The tiling of a run on `threads` threads, or `None` when it does not
/// apply: a grid whose ranks are its nodes in order, planes along its last
/// axis (on one thread at least two windows' staircases of them, on
/// several as many for each thread, at least two), and no rank that sends
/// further than the next plane.
pub(super) fn tiles<P: Lookahead>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
    threads: usize,
) -> Option<Tiles> {
    let Kind::Grid(grid) = &topo.kind else {
        return None;
    };
    if !cfg.tile {
        return None;
    }
    let planes = u32::try_from(*grid.dims.last()?).ok()?;
    let threads = u32::try_from(threads).ok()?;
    // On one thread the planes are a ring, and a window's staircase must
    // not catch up with its own tail; on several, each thread's planes are
    // a run of at least two (`Local::run_relay`).
    let enough = if threads == 1 {
        planes >= 2 * TILE_DEPTH
    } else {
        planes.is_multiple_of(threads) && planes / threads >= 2
    };
    if grid.dims.len() < 2 || !enough {
        return None;
    }
    if topo
        .rank_node
        .iter()
        .enumerate()
        .any(|(r, &n)| n as usize != r)
    {
        return None;
    }
    let plane = u32::try_from(topo.num_ranks()).ok()? / planes;
    if src.farthest_peer()? > u64::from(plane) {
        return None;
    }
    Some(Tiles {
        plane,
        planes,
        depth: TILE_DEPTH,
    })
}

/// What became of a plane a tiled run on several threads came to
/// (`Local::relay_plane`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Plane {
    Ran,
    /// It has events, but data may yet reach the first of them.
    Held,
    /// It has no events.
    Idle,
}

impl<'a, P: Lookahead> Local<'a, P> {
    /// Runs the ranks plane by plane (`Tiles`) to the end: window w runs
    /// planes w, w − 1, ... (around the ring), `depth` of them, one sweep
    /// each, each up to what it and the planes beside it can send it.
    pub(super) fn run_tiled(&mut self, t: Tiles) -> std::result::Result<(), Stop> {
        let n = t.planes as usize;
        let la = self.eng.lookahead;
        loop {
            if self.eng.plane_min.iter().all(|&x| x == f64::INFINITY) {
                return Ok(());
            }
            let w = (self.eng.windows % n as u64) as usize;
            self.eng.windows += 1;
            for step in 0..t.depth as usize {
                let l = (w + n - step) % n;
                let own = self.eng.plane_min[l];
                if own == f64::INFINITY {
                    continue;
                }
                let gate = self.gate();
                reach(&self.eng.plane_min, la, gate, &mut self.eng.plane_reach);
                let reach = &self.eng.plane_reach;
                let limit = la
                    .limit(own, gate)
                    .min(la.limit(reach[(l + n - 1) % n], gate))
                    .min(la.limit(reach[(l + 1) % n], gate));
                if own + own.abs() * LEVEL_TOLERANCE >= limit {
                    // The earliest plane of all cannot run its first
                    // instant: the lookahead is inside its rounding, and
                    // `Sim` must run.
                    if self.eng.plane_min.iter().all(|&x| own <= x) {
                        return Err(Stop::Fallback);
                    }
                    continue;
                }
                let ranks = l * t.plane as usize..(l + 1) * t.plane as usize;
                self.sweep_ranks(ranks, Some(l), limit)?;
            }
        }
    }
}
