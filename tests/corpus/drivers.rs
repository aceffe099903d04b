//! The `drivers` check: every simulation driver on a corpus point (each
//! case says what the drivers must give: runs by rank, hand-backs, folds):
//! the event driver is the
//! reference; folding, the by-rank driver on one thread, the by-rank driver
//! on several threads (tiled or not) and streamed sources must agree with
//! it, to the bit where the drivers promise it and to rounding otherwise.

use super::{Point, Tally};
use topocoll::algorithms::{self, Request};
use topocoll::schedule::Schedule;
use topocoll::sim::{simulate, simulate_source, SimConfig, SimResult};
use topocoll::topology::Topology;
use topocoll_testkit::assert_same_bits;

fn close(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) + 1e-300
}

/// Every number of `b` within a relative 1e-9 of `a`'s (to rounding: where
/// two ranks' events fall within 1e-12 of each other, the event driver
/// gives both the earlier time); counts equal, events too unless `folded`.
fn assert_agree(a: &SimResult, b: &SimResult, folded: bool, what: &str) {
    assert!(
        close(a.time_s, b.time_s),
        "{what}: time {} vs {}",
        a.time_s,
        b.time_s
    );
    assert_eq!(a.rank_finish_s.len(), b.rank_finish_s.len(), "{what}");
    for (r, (x, y)) in a.rank_finish_s.iter().zip(&b.rank_finish_s).enumerate() {
        assert!(close(*x, *y), "{what}: rank {r} finishes at {x} vs {y}");
    }
    assert_eq!(a.flows, b.flows, "{what}: flows");
    if !folded {
        assert_eq!(a.run.events, b.run.events, "{what}: events");
    }
    assert!(close(a.network_bytes, b.network_bytes), "{what}: bytes");
    assert_eq!(a.links_shared_fraction, b.links_shared_fraction, "{what}");
    assert_eq!(a.links_used_fraction, b.links_used_fraction, "{what}");
    assert_eq!(a.links.len(), b.links.len(), "{what}");
    for (l, (x, y)) in a.links.iter().zip(&b.links).enumerate() {
        assert_eq!(
            (x.from, x.to, x.peak_flows),
            (y.from, y.to, y.peak_flows),
            "{what}: link {l}"
        );
        assert!(close(x.bytes, y.bytes), "{what}: link {l} bytes");
        assert!(
            (x.busy_s - y.busy_s).abs() <= 1e-9 * a.time_s.max(x.busy_s),
            "{what}: link {l} busy {} vs {}",
            x.busy_s,
            y.busy_s
        );
    }
}

/// The drivers a case asks for, named as the corpus names them.
fn event(cfg: &SimConfig) -> SimConfig {
    SimConfig {
        fold: false,
        by_rank: false,
        ..cfg.clone()
    }
}

fn fold(cfg: &SimConfig) -> SimConfig {
    SimConfig {
        fold: true,
        by_rank: false,
        ..cfg.clone()
    }
}

fn by_rank(cfg: &SimConfig, threads: usize, tile: bool) -> SimConfig {
    SimConfig {
        fold: false,
        by_rank: true,
        threads,
        tile,
        ..cfg.clone()
    }
}

/// Runs one source (simulated by `sim` under a configuration) through the
/// event and by-rank drivers (all thread counts), checks them against
/// `reference`, and counts what ran. (A closure rather than a generic
/// source: the written-out schedule goes through `simulate`, compiled in
/// the library, so the suite builds the simulator for one source type
/// fewer.)
fn by_rank_drivers(
    sim: &dyn Fn(&SimConfig) -> SimResult,
    cfg: &SimConfig,
    place: &super::Place,
    reference: &SimResult,
    tally: &mut Tally,
    what: &str,
) {
    let events = sim(&event(cfg));
    assert_eq!(events.run.by_rank_threads, 0, "{what}");
    assert_agree(reference, &events, false, &format!("{what}, event driver"));
    let one = sim(&by_rank(cfg, 1, false));
    assert_agree(reference, &one, false, &format!("{what}, by rank"));
    // The result names its driver, and why the by-rank one did not run.
    assert_eq!(events.run.driver, "event (--no-by-rank)", "{what}");
    if one.run.by_rank_threads > 0 {
        assert_eq!(one.run.driver, "by rank", "{what}");
    } else {
        assert!(
            one.run.driver.starts_with("event (by rank "),
            "{what}: {}",
            one.run.driver
        );
    }
    if one.run.by_rank_threads == 0 {
        // It handed the run back: the event driver's bits.
        tally.add("handed_back");
        assert_same_bits(&events, &one, &format!("{what}, handed back"));
        return;
    }
    tally.add("by_rank");
    assert_eq!(one.links_shared_fraction, 0.0, "{what}");
    assert_eq!(one.run.by_rank_planes, 0, "{what}: untiled");
    let (planes, planes_alone) = (place.planes, place.planes_alone);
    // The thread counts to run, and whether the topology states what they
    // must do (threads used, planes tiled).
    let (thread_counts, stated) = match &place.threads {
        Some(t) => (t.clone(), true),
        None => (vec![2, 3], false),
    };
    let tiled_alone = sim(&by_rank(cfg, 1, true));
    assert_same_bits(&one, &tiled_alone, &format!("{what}, tiled on one thread"));
    if stated {
        assert_eq!(tiled_alone.run.by_rank_planes, planes_alone, "{what}");
    }
    for t in thread_counts {
        for tile in [false, true] {
            let run = sim(&by_rank(cfg, t, tile));
            let what = format!("{what}, by rank on {t} threads, tile {tile}");
            if stated && tile {
                assert_eq!(run.run.by_rank_threads, t, "{what}");
                assert_eq!(run.run.by_rank_planes, planes, "{what}");
            }
            assert_same_bits(&one, &run, &what);
        }
    }
}

/// One point under one model: the event driver is the reference; the
/// fold, the by-rank drivers and the generator (where the algorithm has
/// one) must agree with it.
pub(super) fn check(
    point: &Point,
    req: &Request,
    s: &Schedule,
    topo: &Topology,
    cfg: &SimConfig,
    tally: &mut Tally,
    what: &str,
) {
    tally.add("driver_points");
    let reference = simulate(s, topo, &event(cfg)).unwrap();
    let folded = simulate(s, topo, &fold(cfg)).unwrap();
    if folded.run.folded > 1 {
        tally.add("folds");
        let dims = topo.grid_shape().unwrap().dims;
        let last = *dims.last().unwrap() as u64;
        assert!(last.is_multiple_of(folded.run.folded), "{what}");
        assert_agree(&reference, &folded, true, &format!("{what}, folded"));
    } else {
        assert!(!point.case.every_point_folds, "{what}: did not fold");
        assert_same_bits(&reference, &folded, &format!("{what}, unfolded"));
    }
    let written_out = |c: &SimConfig| simulate(s, topo, c).unwrap();
    by_rank_drivers(&written_out, cfg, point.place, &reference, tally, what);
    if let Ok(st) = algorithms::build_stream(point.alg, req) {
        tally.add("streamed");
        let what = format!("{what}, streamed");
        let streamed = |c: &SimConfig| simulate_source(&st, topo, c).unwrap();
        by_rank_drivers(&streamed, cfg, point.place, &reference, tally, &what);
    }
}
