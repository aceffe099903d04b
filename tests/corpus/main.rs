//! The corpus: one set of points, read from `tests/corpus/*.toml`, that
//! every layer's tests run through (as regex runs one TOML corpus through
//! every engine). This is its own test binary (`cargo test --release --test
//! corpus`), whose test cases are the corpus's (file, case, algorithm)
//! triples, run in parallel and each named by them:
//! `ranks::bcast_reduce_and_allreduce_on_1_to_64_ranks::allreduce::ring`.
//! A filter runs some (`cargo test --release --test corpus -- ranks::`);
//! a failure names the point.
//!
//! | file | its points |
//! |------|------------|
//! | `drivers.toml` | every simulation driver agrees with the event driver (folds, runs by rank, hand-backs, threads, tiles, generators); the points also verify, round-trip, run on threads and keep above the collective's bound |
//! | `grids.toml` | the all-to-alls on every mesh and torus up to 12×12 and Trinaryx3 on every 3D torus up to 6×6×6 verify |
//! | `large-ranks.toml` | every algorithm on 64 and 256 ranks verifies and runs on threads to the reference's bits |
//! | `networks.toml` | every kind of topology, several ranks per host, MSCCL XML, the collective's bound, the threads backend on tori, the tree algorithms in any op order |
//! | `ranks.toml` | every rank-based algorithm on 1 to 64 ranks verifies and round-trips through JSON; runs on threads to the reference's bits, the same bits on every run, and stops on a fault; reductions give the same bits in any op order |
//! | `sites.toml` | every algorithm on grids of sites, with every lane count, verifies and runs on threads |
//! | `streams.toml` | every generator is its written-out schedule op by op and simulates to the same bits | A point is a topology (or a rank count) × an algorithm ×
//! a size × a root × an element type (and a segment, a lane count where
//! the algorithm takes them); a case of a file names its points and the
//! checks each point goes through:
//!
//! | check     | layer     | what it asserts |
//! |-----------|-----------|-----------------|
//! | `verify`  | schedule  | the verifier proves the schedule |
//! | `json`    | schedule  | to_json → from_json gives the same schedule (which verifies) |
//! | `msccl`   | schedule  | to_msccl_xml → from_msccl_xml verifies; where nothing was lost it simulates to the same bits and writes the same text (a schedule MSCCL XML cannot hold is counted, not run) |
//! | `threads` | runtime   | the threads backend's results equal the sequential reference, on each worker and engine count asked (and the same bits on all, or a replay, where asked) |
//! | `fault`   | runtime   | a failing rank stops every rank with an error |
//! | `orders`  | schedule  | run on real floats in several op orders, the results are the same bits (bcast: the root's; reduce, allreduce with sum: near the exact sum; other collectives are left) |
//! | `stream_ops` | schedule | an algorithm's generator is its written-out schedule op by op |
//! | `stream_sims` | sim     | the generator simulates to the written-out schedule's bits under each model |
//! | `drivers` | sim       | folding, the by-rank driver (any threads, tiled or not) and streamed sources agree with the event driver ([`drivers`]) |
//! | `bounds`  | model     | the simulated time is never below the collective's lower bound; every rank finishes |
//!
//! An algorithm that does not apply to a point (`algorithms::Error::Unsupported`) is
//! skipped and counted; each case states the least it must exercise
//! (`at_least`, checked by whichever of its test cases finishes last, when
//! all of them ran), and the algorithms that must apply at every point
//! (`must_apply`). The keys are described at the top of
//! `tests/corpus/models.toml` and in DESIGN.md ("Tests").
//!
//! A schedule equal to one a case already checked (a rank-based algorithm
//! on another topology of as many ranks) is not verified, run or
//! round-tripped again: those checks read the schedule alone.

mod checks;
mod drivers;
mod orders;
mod points;

use libtest_mimic::{Arguments, Failed, Trial};
use points::{kind, Case, Check, File, Model, Models, Place};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{DefaultHasher, Hasher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use topocoll::algorithms::Error;
use topocoll::algorithms::{self, Algorithm, Request};
use topocoll::schedule::{self, Op, Region, Schedule, Sizes};

/// The corpus files (a test case holds this list to the directory's).
const FILES: &[&str] = &[
    "drivers.toml",
    "grids.toml",
    "large-ranks.toml",
    "networks.toml",
    "ranks.toml",
    "sites.toml",
    "streams.toml",
];

pub(crate) fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// What a case counted, by the names `at_least` and `exactly` use.
pub(crate) const TALLIES: &[&str] = &[
    "points",
    "skipped",
    "same_as_earlier",
    "algorithms",
    "kinds",
    "verified",
    "json",
    "msccl_same",
    "msccl_with_waits",
    "msccl_no_form",
    "threads",
    "faults",
    "orders",
    "stream_ops",
    "stream_sims",
    "bounds",
    "driver_points",
    "by_rank",
    "handed_back",
    "folds",
    "streamed",
];

#[derive(Default)]
pub(crate) struct Tally {
    counts: BTreeMap<&'static str, usize>,
    algorithms: BTreeSet<String>,
    kinds: BTreeSet<&'static str>,
}

impl Tally {
    pub(crate) fn add(&mut self, what: &'static str) {
        debug_assert!(TALLIES.contains(&what), "{what}");
        *self.counts.entry(what).or_default() += 1;
    }

    fn merge(&mut self, other: Tally) {
        for (what, n) in other.counts {
            *self.counts.entry(what).or_default() += n;
        }
        self.algorithms.extend(other.algorithms);
        self.kinds.extend(other.kinds);
    }

    fn get(&self, what: &str) -> usize {
        match what {
            "algorithms" => self.algorithms.len(),
            "kinds" => self.kinds.len(),
            _ => self.counts.get(what).copied().unwrap_or(0),
        }
    }
}

/// A hash of the whole schedule, to know one seen before.
fn schedule_hash(s: &Schedule) -> u64 {
    use std::hash::Hash;
    fn region(h: &mut DefaultHasher, r: &Region) {
        (r.buf, r.offset, r.count).hash(h);
    }
    let mut h = DefaultHasher::new();
    (s.collective.name(), s.collective.root(), s.ranks, s.count).hash(&mut h);
    (s.dtype.name(), s.op.name(), &s.algorithm, &s.offsets).hash(&mut h);
    for prog in &s.programs {
        (prog.scratch, prog.len()).hash(&mut h);
        for (i, op) in prog.ops.iter().enumerate() {
            prog.deps(i).hash(&mut h);
            match *op {
                Op::Send {
                    peer,
                    tag,
                    region: r,
                    route,
                } => {
                    (0u8, peer, tag, route).hash(&mut h);
                    region(&mut h, &r);
                }
                Op::Recv {
                    peer,
                    tag,
                    region: r,
                    combine,
                } => {
                    (1u8, peer, tag, combine).hash(&mut h);
                    region(&mut h, &r);
                }
                Op::Copy { src, dst } => {
                    2u8.hash(&mut h);
                    region(&mut h, &src);
                    region(&mut h, &dst);
                }
                Op::Combine { src, dst } => {
                    3u8.hash(&mut h);
                    region(&mut h, &src);
                    region(&mut h, &dst);
                }
                Op::Compute { seconds } => (4u8, seconds.to_bits()).hash(&mut h),
            }
        }
    }
    h.finish()
}

/// One point: the case, where, the algorithm and its request.
pub(crate) struct Point<'a> {
    case: &'a Case,
    place: &'a Place,
    alg: &'static Algorithm,
    req: Request<'a>,
    /// The element type's index among the case's (spreads engine counts).
    dtype_index: usize,
    what: String,
}

/// Runs one algorithm of a case at every place of the case.
fn run_algorithm(
    case: &Case,
    places: &[Place],
    alg: &'static Algorithm,
    must: bool,
    models: &BTreeMap<String, Model>,
) -> Tally {
    let mut tally = Tally::default();
    let mut seen: HashSet<u64> = HashSet::new();
    for place in places {
        let topo = place.topology.as_ref();
        let p = place.ranks;
        if let Some(t) = topo {
            tally.kinds.insert(kind(t));
        }
        let c0 = alg.collective.with_root(0);
        for (k, (dtype, op)) in case.dtypes(c0.is_reduction()).into_iter().enumerate() {
            for (bytes, segment) in case.sizes(place, c0.size_is_block(), dtype, alg.segmented) {
                for (((lanes, radix), inter), vsizes) in case
                    .lanes(alg, topo)
                    .into_iter()
                    .flat_map(|l| case.radixes(alg).into_iter().map(move |k| (l, k)))
                    .flat_map(|lk| case.inters(alg).into_iter().map(move |i| (lk, i)))
                    .flat_map(|lki| case.vsizes(alg).into_iter().map(move |v| (lki, v)))
                {
                    for root in case.roots(p, c0.root().is_some()) {
                        let c = alg.collective.with_root(root);
                        let what = format!(
                                "{}: {} {} on {}, {bytes} B {}, root {root}, segment {segment:?}, lanes {lanes:?}, radix {radix:?}, inter {inter:?}, sizes {vsizes:?}",
                                case.name,
                                alg.collective,
                                alg.name,
                                place.name,
                                dtype.name(),
                            );
                        let mut req = Request::new(c, p, bytes, dtype, op, topo)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                        req.segment_bytes = segment;
                        req.lanes = lanes;
                        req.radix = radix;
                        req.inter = inter;
                        if let (Some(spec), Some(shape)) = (&vsizes, c.sizes_shape()) {
                            let v = Sizes::parse(spec, shape, p, req.count, dtype.size(), 1)
                                .unwrap_or_else(|e| panic!("{what}: {e}"));
                            req = req
                                .with_sizes(std::sync::Arc::new(v))
                                .unwrap_or_else(|e| panic!("{what}: {e}"));
                        }
                        let s = match algorithms::build(alg, &req) {
                            Ok(s) => s,
                            Err(Error::Unsupported { reason, .. }) => {
                                assert!(!must, "{what}: must apply, but {reason}");
                                tally.add("skipped");
                                continue;
                            }
                            Err(e) => panic!("{what}: {e}"),
                        };
                        tally.add("points");
                        tally
                            .algorithms
                            .insert(format!("{}/{}", alg.collective, alg.name));
                        let point = Point {
                            case,
                            place,
                            alg,
                            req,
                            dtype_index: k,
                            what,
                        };
                        // Only the checks that read the schedule alone
                        // need to know one seen before.
                        let fresh = !case.checks.iter().any(|c| {
                            matches!(
                                c,
                                Check::Verify
                                    | Check::Json
                                    | Check::Threads
                                    | Check::Fault
                                    | Check::Orders
                            )
                        }) || seen.insert(schedule_hash(&s));
                        if !fresh {
                            tally.add("same_as_earlier");
                        }
                        run_point(&point, &s, fresh, models, &mut tally);
                    }
                }
            }
        }
    }
    tally
}

/// Runs one point through its case's checks; those that read the
/// schedule alone only when it is `fresh`.
fn run_point(
    point: &Point,
    s: &Schedule,
    fresh: bool,
    models: &BTreeMap<String, Model>,
    tally: &mut Tally,
) {
    let what = &point.what;
    let checks = &point.case.checks;
    for check in checks {
        match check {
            Check::Verify => {
                if fresh {
                    schedule::verify(s).unwrap_or_else(|e| panic!("{what}: {e}"));
                }
                tally.add("verified");
            }
            Check::Json => {
                if fresh {
                    checks::json(s, !checks.contains(&Check::Verify), what);
                }
                tally.add("json");
            }
            Check::Threads => {
                if fresh {
                    checks::threads(point, s);
                }
                tally.add("threads");
            }
            Check::Fault => {
                if fresh && checks::fault(s, what) {
                    tally.add("faults");
                }
            }
            Check::Orders => {
                if fresh && orders::check(s, what) {
                    tally.add("orders");
                }
            }
            Check::Msccl
            | Check::StreamOps
            | Check::StreamSims
            | Check::Drivers
            | Check::Bounds => {}
        }
    }
    let exported = checks
        .contains(&Check::Msccl)
        .then(|| checks::msccl_round_trip(s, tally, what))
        .flatten();
    let generated = point.alg.stream.is_some();
    if generated && checks.contains(&Check::StreamOps) {
        checks::stream_ops(point, s);
        tally.add("stream_ops");
    }
    let stream_sims = generated && checks.contains(&Check::StreamSims);
    let Some(topo) = point.place.topology.as_ref() else {
        return;
    };
    for name in &point.case.models {
        let model = &models[name];
        let cfg = model.config();
        // The model's link latency makes another topology, and the
        // schedule is built again on it.
        let relinked = model.link_latency.map(|l| {
            let mut t = topo.clone();
            t.set_uniform_links(None, Some(l)).unwrap();
            t
        });
        let topo = relinked.as_ref().unwrap_or(topo);
        let mut req = point.req.clone();
        req.topology = Some(topo);
        let built = relinked
            .is_some()
            .then(|| algorithms::build(point.alg, &req).unwrap());
        let s = built.as_ref().unwrap_or(s);
        let what = format!("{what}, model {name}");
        if let Some((back, _)) = &exported {
            checks::msccl_simulates_alike(s, back, topo, &cfg, &what);
        }
        if stream_sims {
            checks::stream_simulates_alike(point.alg, &req, s, topo, &cfg, &what);
            tally.add("stream_sims");
        }
        if checks.contains(&Check::Bounds) {
            checks::bounds(s, topo, model, &cfg, &what);
            tally.add("bounds");
        }
        if checks.contains(&Check::Drivers) {
            drivers::check(point, &req, s, topo, &cfg, tally, &what);
        }
    }
}

fn models() -> BTreeMap<String, Model> {
    let text = std::fs::read_to_string(corpus_dir().join("models.toml")).unwrap();
    toml::from_str::<Models>(&text).unwrap().model
}

/// One case of a file, shared by its test cases: its places (built by
/// the first of them to run), its counts so far and how many of its test
/// cases are still to finish.
struct CaseRun {
    file: &'static str,
    case: Case,
    models: Arc<BTreeMap<String, Model>>,
    places: OnceLock<Vec<Place>>,
    tally: Mutex<Tally>,
    remaining: AtomicUsize,
}

impl CaseRun {
    /// Runs one algorithm; the last to finish holds the case to its counts.
    fn run(&self, alg: &'static Algorithm, must: bool) -> Result<(), Failed> {
        let places = self.places.get_or_init(|| self.case.places());
        let tally = run_algorithm(&self.case, places, alg, must, &self.models);
        let mut all = self.tally.lock().unwrap_or_else(|e| e.into_inner());
        all.merge(tally);
        if self.remaining.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.check_counts(&all)?;
        }
        Ok(())
    }

    /// The case's `at_least` and `exactly` over all its test cases.
    fn check_counts(&self, tally: &Tally) -> Result<(), Failed> {
        let (file, name) = (self.file, &self.case.name);
        let mut wrong = Vec::new();
        for (what, &n) in &self.case.at_least {
            if tally.get(what) < n {
                wrong.push(format!("{what} {} < {n}", tally.get(what)));
            }
        }
        for (what, &n) in &self.case.exactly {
            if tally.get(what) != n {
                wrong.push(format!("{what} {} != {n}", tally.get(what)));
            }
        }
        let counts: Vec<String> = TALLIES
            .iter()
            .filter(|t| tally.get(t) > 0)
            .map(|t| format!("{t} {}", tally.get(t)))
            .collect();
        eprintln!("{file}: {name}: {}", counts.join(", "));
        if wrong.is_empty() {
            Ok(())
        } else {
            Err(format!("{file}: {name}: the case's counts: {}", wrong.join(", ")).into())
        }
    }
}

/// A case's name as a test name: lower case, words joined by `_`.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for word in name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    out
}

/// Every (file, case, algorithm) of the corpus as a test case.
fn trials() -> Vec<Trial> {
    let models = Arc::new(models());
    let mut trials = vec![Trial::test("every_corpus_file_is_run", || {
        every_corpus_file_is_run();
        Ok(())
    })];
    let mut names = HashSet::new();
    for &file in FILES {
        let text = std::fs::read_to_string(corpus_dir().join(file)).unwrap();
        let cases = toml::from_str::<File>(&text)
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .case;
        assert!(!cases.is_empty(), "{file}: no case");
        let stem = file.trim_end_matches(".toml").replace('-', "_");
        for case in cases {
            case.validate(&models);
            let algs = case.algorithms();
            let must = case.must_apply(&algs);
            let prefix = format!("{stem}::{}", slug(&case.name));
            let ignored = case.slow && !topocoll_testkit::slow();
            assert!(
                names.insert(prefix.clone()),
                "{file}: two cases named {prefix}"
            );
            let run = Arc::new(CaseRun {
                file,
                case,
                models: models.clone(),
                places: OnceLock::new(),
                tally: Mutex::new(Tally::default()),
                remaining: AtomicUsize::new(algs.len()),
            });
            for (alg, must) in algs.into_iter().zip(must) {
                let run = run.clone();
                let name = format!("{prefix}::{}::{}", alg.collective, alg.name);
                trials
                    .push(Trial::test(name, move || run.run(alg, must)).with_ignored_flag(ignored));
            }
        }
    }
    trials
}

fn every_corpus_file_is_run() {
    let mut on_disk: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml") && n != "models.toml")
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, FILES);
}

fn main() {
    let args = Arguments::from_args();
    libtest_mimic::run(&args, trials()).exit();
}
