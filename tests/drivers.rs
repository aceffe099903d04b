//! Every simulation driver on one shared corpus (`tests/corpus/drivers.toml`,
//! which says what each driver must give): the event driver is the
//! reference; folding, the by-rank driver on one thread, the by-rank driver
//! on several threads (tiled or not) and streamed sources must agree with
//! it, to the bit where the drivers promise it and to rounding otherwise.

use serde::Deserialize;
use std::collections::BTreeMap;
use topocoll::algorithms::{self, Request, ALGORITHMS};
use topocoll::lookahead::Lookahead;
use topocoll::schedule::{Collective, Dtype, ReduceOp};
use topocoll::sim::{simulate, simulate_source, SimConfig, SimResult, Skew};
use topocoll::topology::{parse_spec, Topology};
use topocoll::Error;

#[path = "common/same_bits.rs"]
mod same_bits;
use same_bits::assert_same_bits;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    model: BTreeMap<String, Model>,
    case: Vec<Case>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Model {
    engines: Option<usize>,
    overhead: Option<f64>,
    compute_bandwidth: Option<f64>,
    injection_bandwidth: Option<f64>,
    header_bytes: Option<u64>,
    flow_cap: Option<f64>,
    #[serde(default)]
    rendezvous: bool,
    skew_max: Option<f64>,
    skew_seed: Option<u64>,
    link_latency: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    topologies: Vec<TopologyEntry>,
    algorithms: Vec<String>,
    sizes: Vec<u64>,
    dtype: String,
    segment: Option<u64>,
    models: Vec<String>,
    #[serde(default)]
    by_rank_at_least: usize,
    #[serde(default)]
    handed_back_at_least: usize,
    #[serde(default)]
    folds_at_least: usize,
    #[serde(default)]
    every_point_folds: bool,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum TopologyEntry {
    Spec(String),
    Table {
        spec: String,
        bandwidth: Option<f64>,
        latency: Option<f64>,
        planes: Option<usize>,
        planes_alone: Option<usize>,
        threads: Option<Vec<usize>>,
    },
}

impl TopologyEntry {
    fn spec(&self) -> &str {
        match self {
            TopologyEntry::Spec(s) | TopologyEntry::Table { spec: s, .. } => s,
        }
    }

    fn build(&self, model: &Model) -> Topology {
        let mut t = parse_spec(self.spec()).unwrap();
        if let TopologyEntry::Table {
            bandwidth, latency, ..
        } = self
        {
            if bandwidth.is_some() || latency.is_some() {
                t.set_uniform_links(*bandwidth, *latency).unwrap();
            }
        }
        if model.link_latency.is_some() {
            t.set_uniform_links(None, model.link_latency).unwrap();
        }
        t
    }

    /// The thread counts to run, and whether the topology states what they
    /// must do (threads used, planes tiled).
    fn threads(&self) -> (Vec<usize>, bool) {
        match self {
            TopologyEntry::Table {
                threads: Some(t), ..
            } => (t.clone(), true),
            _ => (vec![2, 3], false),
        }
    }

    fn planes(&self) -> (usize, usize) {
        match self {
            TopologyEntry::Table {
                planes,
                planes_alone,
                ..
            } => (planes.unwrap_or(0), planes_alone.unwrap_or(0)),
            TopologyEntry::Spec(_) => (0, 0),
        }
    }
}

impl Model {
    fn config(&self) -> SimConfig {
        let d = SimConfig::default();
        SimConfig {
            engines: self.engines.unwrap_or(d.engines),
            overhead_s: self.overhead.unwrap_or(0.0),
            compute_bandwidth: self.compute_bandwidth,
            injection_bandwidth: self.injection_bandwidth,
            header_bytes: self.header_bytes.unwrap_or(0),
            flow_cap: self.flow_cap,
            rendezvous: self.rendezvous,
            skew: match self.skew_max {
                Some(max_s) => Skew::Random {
                    max_s,
                    seed: self.skew_seed.unwrap_or(0),
                },
                None => Skew::None,
            },
            ..d
        }
    }
}

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

#[derive(Default)]
struct Tally {
    points: usize,
    by_rank: usize,
    handed_back: usize,
    folds: usize,
    streamed: usize,
}

/// Runs one source through the event and by-rank drivers (all thread
/// counts), checks them against `reference`, and counts what ran.
fn by_rank_drivers<P: Lookahead + Sync>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
    entry: &TopologyEntry,
    reference: &SimResult,
    tally: &mut Tally,
    what: &str,
) {
    let events = simulate_source(src, topo, &event(cfg)).unwrap();
    assert_eq!(events.run.by_rank_threads, 0, "{what}");
    assert_agree(reference, &events, false, &format!("{what}, event driver"));
    let one = simulate_source(src, topo, &by_rank(cfg, 1, false)).unwrap();
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
        tally.handed_back += 1;
        assert_same_bits(&events, &one, &format!("{what}, handed back"));
        return;
    }
    tally.by_rank += 1;
    assert_eq!(one.links_shared_fraction, 0.0, "{what}");
    assert_eq!(one.run.by_rank_planes, 0, "{what}: untiled");
    let (planes, planes_alone) = entry.planes();
    let (thread_counts, stated) = entry.threads();
    let tiled_alone = simulate_source(src, topo, &by_rank(cfg, 1, true)).unwrap();
    assert_same_bits(&one, &tiled_alone, &format!("{what}, tiled on one thread"));
    if stated {
        assert_eq!(tiled_alone.run.by_rank_planes, planes_alone, "{what}");
    }
    for t in thread_counts {
        for tile in [false, true] {
            let run = simulate_source(src, topo, &by_rank(cfg, t, tile)).unwrap();
            let what = format!("{what}, by rank on {t} threads, tile {tile}");
            if stated && tile {
                assert_eq!(run.run.by_rank_threads, t, "{what}");
                assert_eq!(run.run.by_rank_planes, planes, "{what}");
            }
            assert_same_bits(&one, &run, &what);
        }
    }
}

fn run_case(case: &Case, models: &BTreeMap<String, Model>) -> Tally {
    let algs: Vec<(&str, &str)> = if case.algorithms == ["*"] {
        ALGORITHMS
            .iter()
            .map(|a| (a.collective.name(), a.name))
            .collect()
    } else {
        case.algorithms
            .iter()
            .map(|a| a.split_once('/').expect("collective/name"))
            .collect()
    };
    let dtype = Dtype::parse(&case.dtype).unwrap();
    let mut tally = Tally::default();
    for entry in &case.topologies {
        for name in &case.models {
            let model = models
                .get(name)
                .unwrap_or_else(|| panic!("no model {name}"));
            let topo = entry.build(model);
            let cfg = model.config();
            let p = topo.num_ranks();
            for &(collective, alg) in &algs {
                let c = Collective::parse(collective, (p / 3) as u32).unwrap();
                for &bytes in &case.sizes {
                    let mut req =
                        Request::new(c, p, bytes, dtype, ReduceOp::Sum, Some(&topo)).unwrap();
                    req.segment_bytes = case.segment;
                    let s = match algorithms::build(alg, &req) {
                        Ok(s) => s,
                        Err(Error::Unsupported { .. }) => continue,
                        Err(e) => panic!("{collective} {alg} on {}: {e}", topo.name),
                    };
                    let what = format!(
                        "{}: {collective} {alg} on {}, {bytes} B, model {name}",
                        case.name, topo.name
                    );
                    tally.points += 1;
                    let reference = simulate(&s, &topo, &event(&cfg)).unwrap();
                    let folded = simulate(&s, &topo, &fold(&cfg)).unwrap();
                    if folded.run.folded > 1 {
                        tally.folds += 1;
                        let dims = topo.grid_shape().unwrap().dims;
                        let last = *dims.last().unwrap() as u64;
                        assert!(last.is_multiple_of(folded.run.folded), "{what}");
                        assert_agree(&reference, &folded, true, &format!("{what}, folded"));
                    } else {
                        assert!(!case.every_point_folds, "{what}: did not fold");
                        assert_same_bits(&reference, &folded, &format!("{what}, unfolded"));
                    }
                    let src = topocoll::schedule::Materialised::new(&s).unwrap();
                    by_rank_drivers(&src, &topo, &cfg, entry, &reference, &mut tally, &what);
                    if let Ok(st) = algorithms::build_stream(alg, &req) {
                        tally.streamed += 1;
                        let what = format!("{what}, streamed");
                        by_rank_drivers(&st, &topo, &cfg, entry, &reference, &mut tally, &what);
                    }
                }
            }
        }
    }
    tally
}

fn corpus() -> Corpus {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/drivers.toml");
    toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_driver_gives_the_event_drivers_results_on_the_corpus() {
    let corpus = corpus();
    assert!(!corpus.case.is_empty());
    for case in &corpus.case {
        let tally = run_case(case, &corpus.model);
        let name = &case.name;
        assert!(tally.points > 0, "{name}: no point ran");
        assert!(
            tally.by_rank >= case.by_rank_at_least,
            "{name}: {} runs by rank",
            tally.by_rank
        );
        assert!(
            tally.handed_back >= case.handed_back_at_least,
            "{name}: {} handed back",
            tally.handed_back
        );
        assert!(
            tally.folds >= case.folds_at_least,
            "{name}: {} folded",
            tally.folds
        );
        eprintln!(
            "{name}: {} points, {} by rank, {} handed back, {} folded, {} streamed",
            tally.points, tally.by_rank, tally.handed_back, tally.folds, tally.streamed
        );
    }
}
