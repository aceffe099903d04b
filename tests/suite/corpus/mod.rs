//! The corpus: one set of points, read from `tests/corpus/*.toml`, that
//! every layer's tests run through (as regex runs one TOML corpus through
//! every engine). A point is a topology (or a rank count) × an algorithm ×
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
//! An algorithm that does not apply to a point (`Error::Unsupported`) is
//! skipped and counted; each case states the least it must exercise
//! (`at_least`), and the algorithms that must apply at every point
//! (`must_apply`). The keys are described at the top of
//! `tests/corpus/models.toml` and in DESIGN.md ("Tests").
//!
//! A schedule equal to one a case already checked (a rank-based algorithm
//! on another topology of as many ranks) is not verified, run or
//! round-tripped again: those checks read the schedule alone.

mod checks;
mod drivers;
mod orders;

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{DefaultHasher, Hasher};
use std::path::PathBuf;
use topocoll::algorithms::{self, Algorithm, Request, ALGORITHMS};
use topocoll::schedule::{self, Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::sim::{SimConfig, Skew};
use topocoll::topology::{parse_spec, parse_toml, Kind, RankMap, Topology};
use topocoll::Error;

/// The corpus files, each run by one test below.
const FILES: &[&str] = &[
    "drivers.toml",
    "grids.toml",
    "large-ranks.toml",
    "networks.toml",
    "ranks.toml",
    "sites.toml",
    "streams.toml",
];

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// A node model: `[model.NAME]` in `tests/corpus/models.toml`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Model {
    engines: Option<usize>,
    overhead: Option<f64>,
    compute_bandwidth: Option<f64>,
    injection_bandwidth: Option<f64>,
    ejection_bandwidth: Option<f64>,
    header_bytes: Option<u64>,
    flow_cap: Option<f64>,
    #[serde(default)]
    rendezvous: bool,
    skew_max: Option<f64>,
    skew_seed: Option<u64>,
    /// Set on every link of the point's topology.
    link_latency: Option<f64>,
}

impl Model {
    fn config(&self) -> SimConfig {
        let d = SimConfig::default();
        SimConfig {
            engines: self.engines.unwrap_or(d.engines),
            overhead_s: self.overhead.unwrap_or(0.0),
            compute_bandwidth: self.compute_bandwidth,
            injection_bandwidth: self.injection_bandwidth,
            ejection_bandwidth: self.ejection_bandwidth,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Models {
    model: BTreeMap<String, Model>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    case: Vec<Case>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
enum Check {
    Verify,
    Json,
    Msccl,
    Threads,
    Fault,
    Orders,
    StreamOps,
    StreamSims,
    Drivers,
    Bounds,
}

/// A registry field an algorithm may have (`with`, `without`).
#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum Field {
    Stream,
    Segmented,
    Lanes,
}

impl Field {
    fn of(self, a: &Algorithm) -> bool {
        match self {
            Field::Stream => a.stream.is_some(),
            Field::Segmented => a.segmented,
            Field::Lanes => a.lanes,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    checks: Vec<Check>,
    /// Topology specs or tables (see `Place`); or `ranks`, without a network.
    #[serde(default)]
    topologies: Vec<toml::Value>,
    #[serde(default)]
    ranks: Vec<Number>,
    /// "collective/name", "collective/*" or "*".
    algorithms: Vec<String>,
    /// Only the algorithms with (without) these registry fields.
    #[serde(default)]
    with: Vec<Field>,
    #[serde(default)]
    without: Vec<Field>,
    dtypes: Dtypes,
    /// Sizes in bytes, or `counts` in elements; entries are numbers,
    /// expressions in `p` and `blocks`, or `{ size, segment }`.
    #[serde(default)]
    sizes: Vec<Size>,
    #[serde(default)]
    counts: Vec<Size>,
    /// The pipeline segment, in the unit of the sizes (for the algorithms
    /// that pipeline).
    segment: Option<u64>,
    #[serde(default)]
    roots: Vec<Number>,
    /// Every root on this many ranks or fewer.
    all_roots_up_to: Option<usize>,
    /// WAN lanes (for the algorithms that take them): "auto", a number, or
    /// "all" (1 to the largest site's hosts).
    #[serde(default)]
    lanes: Vec<Number>,
    /// Node models (`[model.NAME]`) for the checks that simulate.
    #[serde(default)]
    models: Vec<String>,
    threads: Option<Threads>,
    /// Algorithms ("collective/name", or "*" for every one selected) that
    /// must apply at every point.
    #[serde(default)]
    must_apply: Vec<String>,
    #[serde(default)]
    every_point_folds: bool,
    #[serde(default)]
    at_least: BTreeMap<String, usize>,
    #[serde(default)]
    exactly: BTreeMap<String, usize>,
}

/// A number, or a string: an expression, a range "a..b", "all", "auto".
#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
enum Number {
    Int(u64),
    Text(String),
}

#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
enum Size {
    One(Number),
    Segmented { size: Number, segment: u64 },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Dtypes {
    All(Vec<String>),
    ByKind {
        reductions: Vec<String>,
        others: Vec<String>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Threads {
    runs: Vec<Run>,
    /// Every run of a point gives the same output bits.
    #[serde(default)]
    same_bits: bool,
    /// Every point's plan has a replay (a straight list of copies).
    #[serde(default)]
    replays: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Run {
    workers: usize,
    /// Engine counts: a point takes the one at (P + its element type's
    /// index) mod their number, so that rank counts spread over them.
    engines: Vec<usize>,
}

/// Evaluates an integer expression in `p` (the ranks) and `blocks` (P for
/// the collectives sized by the block, else 1): numbers, + - * / %,
/// parentheses.
fn eval(expr: &str, p: u64, blocks: u64) -> u64 {
    fn sum(t: &[char], i: &mut usize, v: (i64, i64)) -> i64 {
        let mut x = product(t, i, v);
        while *i < t.len() && matches!(t[*i], '+' | '-') {
            let op = t[*i];
            *i += 1;
            let y = product(t, i, v);
            x = if op == '+' { x + y } else { x - y };
        }
        x
    }
    fn product(t: &[char], i: &mut usize, v: (i64, i64)) -> i64 {
        let mut x = atom(t, i, v);
        while *i < t.len() && matches!(t[*i], '*' | '/' | '%') {
            let op = t[*i];
            *i += 1;
            let y = atom(t, i, v);
            x = match op {
                '*' => x * y,
                '/' => x / y,
                _ => x % y,
            };
        }
        x
    }
    fn atom(t: &[char], i: &mut usize, v: (i64, i64)) -> i64 {
        if t[*i] == '(' {
            *i += 1;
            let x = sum(t, i, v);
            assert_eq!(t[*i], ')', "expected ')'");
            *i += 1;
            return x;
        }
        let start = *i;
        while *i < t.len() && t[*i].is_ascii_alphanumeric() {
            *i += 1;
        }
        let word: String = t[start..*i].iter().collect();
        match word.as_str() {
            "p" => v.0,
            "blocks" => v.1,
            n => n
                .parse()
                .unwrap_or_else(|_| panic!("'{n}' is not a number, p or blocks")),
        }
    }
    let t: Vec<char> = expr.chars().filter(|c| !c.is_whitespace()).collect();
    let mut i = 0;
    let x = sum(&t, &mut i, (p as i64, blocks as i64));
    assert_eq!(i, t.len(), "'{expr}': trailing input");
    assert!(x >= 0, "'{expr}' is {x} at P = {p}");
    x as u64
}

impl Number {
    fn value(&self, p: u64, blocks: u64) -> u64 {
        match self {
            Number::Int(n) => *n,
            Number::Text(e) => eval(e, p, blocks),
        }
    }
}

/// `{a..b}` (inclusive) and `{x,y,z}` expanded, every combination.
fn expand_braces(s: &str) -> Vec<String> {
    let Some(open) = s.find('{') else {
        return vec![s.to_string()];
    };
    let close = open + s[open..].find('}').expect("a closing brace");
    let inner = &s[open + 1..close];
    let choices: Vec<String> = match inner.split_once("..") {
        Some((a, b)) => {
            let (a, b): (u64, u64) = (a.parse().unwrap(), b.parse().unwrap());
            (a..=b).map(|x| x.to_string()).collect()
        }
        None => inner.split(',').map(str::to_string).collect(),
    };
    let mut out = Vec::new();
    for c in choices {
        for rest in expand_braces(&s[close + 1..]) {
            out.push(format!("{}{c}{rest}", &s[..open]));
        }
    }
    out
}

/// A spec, resolved: files relative to the repository, `*` globbed.
fn resolve(spec: &str) -> Vec<String> {
    if !(spec.ends_with(".toml") || spec.ends_with(".xml")) {
        return vec![spec.to_string()];
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(spec);
    let Some((dir, pattern)) = path.to_str().unwrap().rsplit_once('/') else {
        unreachable!()
    };
    let Some((head, tail)) = pattern.split_once('*') else {
        return vec![path.to_string_lossy().into_owned()];
    };
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(head) && n.ends_with(tail))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{spec} names no file");
    files
}

/// Where a case's points run: a topology, or a rank count without one.
struct Place {
    name: String,
    topology: Option<Topology>,
    ranks: usize,
    /// The planes the by-rank driver's threads tile, the planes one
    /// thread tiles, and the thread counts to run (the drivers check).
    planes: usize,
    planes_alone: usize,
    threads: Option<Vec<usize>>,
    /// Sizes (bytes) or counts (elements) for this topology alone, in place
    /// of the case's.
    sizes: Option<Vec<Size>>,
    counts: Option<Vec<Size>>,
}

/// Keys of a topology table that are the corpus's, not a topology file's.
const PLACE_KEYS: &[&str] = &[
    "spec",
    "bandwidth",
    "latency",
    "planes",
    "planes_alone",
    "threads",
    "ranks_per_node",
    "map",
    "node_bandwidth",
    "node_latency",
    "lane_table_to_largest_site",
    "sizes",
    "counts",
];

impl Case {
    fn places(&self) -> Vec<Place> {
        assert!(
            self.topologies.is_empty() != self.ranks.is_empty(),
            "{}: give topologies or ranks",
            self.name
        );
        let mut out = Vec::new();
        for r in &self.ranks {
            let (a, b) = match r {
                Number::Int(n) => (*n, *n),
                Number::Text(t) => {
                    let (a, b) = t.split_once("..").expect("a range a..b");
                    (a.parse().unwrap(), b.parse().unwrap())
                }
            };
            out.extend((a..=b).map(|p| Place {
                name: format!("{p} ranks"),
                topology: None,
                ranks: p as usize,
                planes: 0,
                planes_alone: 0,
                threads: None,
                sizes: None,
                counts: None,
            }));
        }
        for entry in &self.topologies {
            let table = match entry {
                toml::Value::String(s) => {
                    let mut t = toml::Table::new();
                    t.insert("spec".into(), toml::Value::String(s.clone()));
                    t
                }
                toml::Value::Table(t) => t.clone(),
                other => panic!("{}: topology {other}", self.name),
            };
            out.extend(place_table(&table));
        }
        out
    }

    fn algorithms(&self) -> Vec<&'static Algorithm> {
        let mut out: Vec<&'static Algorithm> = Vec::new();
        for pattern in &self.algorithms {
            let (coll, name) = pattern.split_once('/').unwrap_or(("*", pattern));
            let found: Vec<_> = ALGORITHMS
                .iter()
                .filter(|a| {
                    (coll == "*" || a.collective == coll) && (name == "*" || a.name == name)
                })
                .collect();
            assert!(!found.is_empty(), "{}: no algorithm {pattern}", self.name);
            for a in found {
                if !out.iter().any(|b| std::ptr::eq(*b, a)) {
                    out.push(a);
                }
            }
        }
        out.retain(|a| self.with.iter().all(|f| f.of(a)) && !self.without.iter().any(|f| f.of(a)));
        assert!(!out.is_empty(), "{}: no algorithm selected", self.name);
        out
    }

    fn must_apply(&self, algs: &[&'static Algorithm]) -> Vec<bool> {
        let mut must = vec![false; algs.len()];
        for m in &self.must_apply {
            if m == "*" {
                must.fill(true);
                continue;
            }
            let k = algs
                .iter()
                .position(|a| format!("{}/{}", a.collective, a.name) == *m)
                .unwrap_or_else(|| panic!("{}: must_apply {m} is not selected", self.name));
            must[k] = true;
        }
        must
    }

    fn dtypes(&self, reduction: bool) -> Vec<(Dtype, ReduceOp)> {
        let names = match &self.dtypes {
            Dtypes::All(v) => v,
            Dtypes::ByKind { reductions, .. } if reduction => reductions,
            Dtypes::ByKind { others, .. } => others,
        };
        names
            .iter()
            .map(|n| {
                let (t, op) = n.split_once(':').unwrap_or((n, "sum"));
                let dtype = Dtype::parse(t).unwrap();
                (dtype, ReduceOp::parse(op, dtype).unwrap())
            })
            .collect()
    }

    /// (bytes, segment bytes) of every size at P ranks, the segment only
    /// for an algorithm that pipelines; without repeats.
    fn sizes(
        &self,
        place: &Place,
        block: bool,
        dtype: Dtype,
        segmented: bool,
    ) -> Vec<(u64, Option<u64>)> {
        let p = place.ranks;
        let (list, unit) = match (&place.sizes, &place.counts) {
            (Some(s), None) => (s, 1),
            (None, Some(c)) => (c, dtype.size()),
            (None, None) => match (self.sizes.is_empty(), self.counts.is_empty()) {
                (false, true) => (&self.sizes, 1),
                (true, false) => (&self.counts, dtype.size()),
                _ => panic!("{}: give sizes (bytes) or counts (elements)", self.name),
            },
            _ => panic!("{}: {}: give sizes or counts", self.name, place.name),
        };
        let blocks = if block { p as u64 } else { 1 };
        let mut out = Vec::new();
        for s in list {
            let (n, seg) = match s {
                Size::One(n) => (n, self.segment),
                Size::Segmented { size, segment } => (size, Some(*segment)),
            };
            let point = (
                n.value(p as u64, blocks) * unit,
                seg.filter(|_| segmented).map(|s| s * unit),
            );
            if !out.contains(&point) {
                out.push(point);
            }
        }
        out
    }

    fn roots(&self, p: usize, rooted: bool) -> Vec<u32> {
        if !rooted {
            return vec![0];
        }
        if self.all_roots_up_to.is_some_and(|n| p <= n) {
            return (0..p as u32).collect();
        }
        let mut out = Vec::new();
        for r in &self.roots {
            let roots: Vec<u32> = match r {
                Number::Text(t) if t == "all" => (0..p as u32).collect(),
                r => vec![(r.value(p as u64, 1) % p as u64) as u32],
            };
            for root in roots {
                if !out.contains(&root) {
                    out.push(root);
                }
            }
        }
        if out.is_empty() {
            out.push(0);
        }
        out
    }

    fn lanes(&self, alg: &Algorithm, topo: Option<&Topology>) -> Vec<Option<usize>> {
        if !alg.lanes || self.lanes.is_empty() {
            return vec![None];
        }
        let most = topo
            .and_then(|t| t.sites())
            .map_or(1, |s| *s.sizes.iter().max().unwrap());
        let mut out = Vec::new();
        for l in &self.lanes {
            match l {
                Number::Text(t) if t == "auto" => out.push(None),
                Number::Text(t) if t == "all" => out.extend((1..=most).map(Some)),
                l => out.push(Some(l.value(0, 1) as usize)),
            }
        }
        out
    }

    fn validate(&self, models: &BTreeMap<String, Model>) {
        let name = &self.name;
        for m in &self.models {
            assert!(models.contains_key(m), "{name}: no model {m}");
        }
        for c in &self.checks {
            match c {
                Check::Drivers | Check::Bounds => {
                    assert!(
                        !self.topologies.is_empty() && !self.models.is_empty(),
                        "{name}: {c:?} needs topologies and models"
                    );
                }
                Check::Threads => assert!(self.threads.is_some(), "{name}: threads needs its runs"),
                Check::StreamSims => {
                    assert!(!self.models.is_empty(), "{name}: stream_sims needs models")
                }
                _ => {}
            }
        }
        for key in self.at_least.keys().chain(self.exactly.keys()) {
            assert!(TALLIES.contains(&key.as_str()), "{name}: no tally {key}");
        }
        assert!(
            self.at_least.get("points").is_some_and(|&n| n > 0)
                || self.exactly.contains_key("points"),
            "{name}: say how many points it must run (at_least.points)"
        );
    }
}

/// The places of one topology entry (a spec or a table; specs and a sites
/// table's `sites` brace-expanded).
fn place_table(table: &toml::Table) -> Vec<Place> {
    let f64_of = |k: &str| {
        table
            .get(k)
            .map(|v| v.as_float().or(v.as_integer().map(|i| i as f64)).unwrap())
    };
    let usize_of = |k: &str| table.get(k).map(|v| v.as_integer().unwrap() as usize);
    let sizes_of =
        |k: &str| -> Option<Vec<Size>> { table.get(k).map(|v| v.clone().try_into().unwrap()) };
    let threads: Option<Vec<usize>> = table.get("threads").map(|v| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_integer().unwrap() as usize)
            .collect()
    });
    // (name, topology) before the corpus's own keys apply.
    let mut bases: Vec<(String, Topology)> = Vec::new();
    if let Some(spec) = table.get("spec") {
        for s in expand_braces(spec.as_str().unwrap()) {
            for s in resolve(&s) {
                let t = parse_spec(&s).unwrap_or_else(|e| panic!("{s}: {e}"));
                let name = s.rsplit('/').next().unwrap().to_string();
                bases.push((name, t));
            }
        }
    } else {
        // A topology file's fields; `sites` may be "AxBxC", brace-expanded.
        let mut file = table.clone();
        file.retain(|k, _| !PLACE_KEYS.contains(&k));
        let shapes: Vec<Option<Vec<i64>>> = match file.get("sites") {
            Some(toml::Value::String(s)) => expand_braces(s)
                .iter()
                .map(|s| Some(s.split('x').map(|n| n.parse().unwrap()).collect()))
                .collect(),
            _ => vec![None],
        };
        for shape in shapes {
            let mut f = file.clone();
            if let Some(sizes) = &shape {
                f.insert("sites".into(), sizes.clone().into());
                if table
                    .get("lane_table_to_largest_site")
                    .is_some_and(|v| v.as_bool().unwrap())
                {
                    let most = *sizes.iter().max().unwrap() as usize;
                    let lanes = f["wan_lane_bandwidth"].as_array_mut().unwrap();
                    lanes.truncate(most);
                }
            }
            let name = match &shape {
                Some(s) => format!(
                    "{} {}",
                    f["kind"].as_str().unwrap(),
                    s.iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join("+")
                ),
                None => f["kind"].as_str().unwrap().to_string(),
            };
            let t = parse_toml(&name, &toml::to_string(&f).unwrap())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            bases.push((name, t));
        }
    }
    bases
        .into_iter()
        .map(|(mut name, mut t)| {
            let (bw, lat) = (f64_of("bandwidth"), f64_of("latency"));
            if bw.is_some() || lat.is_some() {
                t.set_uniform_links(bw, lat).unwrap();
            }
            if let Some(k) = usize_of("ranks_per_node") {
                let map = match table.get("map").map(|m| m.as_str().unwrap()) {
                    None | Some("block") => RankMap::Block,
                    Some("cyclic") => RankMap::Cyclic,
                    Some(m) => panic!("map {m}: block or cyclic"),
                };
                name = format!("{name} x{k} {map:?}");
                let hosts = t.num_ranks();
                t.place_ranks(
                    k,
                    &map,
                    f64_of("node_bandwidth").unwrap(),
                    f64_of("node_latency").unwrap(),
                )
                .unwrap();
                assert_eq!(t.num_ranks(), k * hosts, "{name}");
                assert_eq!(hosts, t.local.iter().filter(|&&l| l != u32::MAX).count());
            }
            Place {
                name,
                ranks: t.num_ranks(),
                topology: Some(t),
                planes: usize_of("planes").unwrap_or(0),
                planes_alone: usize_of("planes_alone").unwrap_or(0),
                threads: threads.clone(),
                sizes: sizes_of("sizes"),
                counts: sizes_of("counts"),
            }
        })
        .collect()
}

fn kind(t: &Topology) -> &'static str {
    match t.kind {
        Kind::Grid(_) => "grid",
        Kind::Hypercube(_) => "hypercube",
        Kind::Tofu(_) => "tofu",
        Kind::Tree(_) => "tree",
        Kind::Sites(_) => "sites",
        Kind::DragonNet(_) => "dragonnet",
        Kind::Graph(_) => "graph",
    }
}

/// What a case counted, by the names `at_least` and `exactly` use.
const TALLIES: &[&str] = &[
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

fn run_case(case: &Case, models: &BTreeMap<String, Model>) -> Tally {
    case.validate(models);
    let algs = case.algorithms();
    let must = case.must_apply(&algs);
    let mut tally = Tally::default();
    let mut seen: HashSet<u64> = HashSet::new();
    for place in &case.places() {
        let topo = place.topology.as_ref();
        let p = place.ranks;
        if let Some(t) = topo {
            tally.kinds.insert(kind(t));
        }
        for (&alg, &must) in algs.iter().zip(&must) {
            let c0 = Collective::parse(alg.collective, 0).unwrap();
            for (k, (dtype, op)) in case.dtypes(c0.is_reduction()).into_iter().enumerate() {
                for (bytes, segment) in case.sizes(place, c0.size_is_block(), dtype, alg.segmented)
                {
                    for lanes in case.lanes(alg, topo) {
                        for root in case.roots(p, c0.root().is_some()) {
                            let c = Collective::parse(alg.collective, root).unwrap();
                            let what = format!(
                                "{}: {} {} on {}, {bytes} B {}, root {root}, segment {segment:?}, lanes {lanes:?}",
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
                            let s = match algorithms::build(alg.name, &req) {
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
            .then(|| algorithms::build(point.alg.name, &req).unwrap());
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

/// Runs every case of one corpus file and holds each to its counts.
fn run_file(file: &str) {
    let models = models();
    let text = std::fs::read_to_string(corpus_dir().join(file)).unwrap();
    let cases = toml::from_str::<File>(&text)
        .unwrap_or_else(|e| panic!("{file}: {e}"))
        .case;
    assert!(!cases.is_empty(), "{file}: no case");
    for case in &cases {
        let t0 = std::time::Instant::now();
        let tally = run_case(case, &models);
        let name = &case.name;
        for (what, &n) in &case.at_least {
            assert!(
                tally.get(what) >= n,
                "{file}: {name}: {what} {} < {n}",
                tally.get(what)
            );
        }
        for (what, &n) in &case.exactly {
            assert_eq!(tally.get(what), n, "{file}: {name}: {what}");
        }
        let counts: Vec<String> = TALLIES
            .iter()
            .filter(|t| tally.get(t) > 0)
            .map(|t| format!("{t} {}", tally.get(t)))
            .collect();
        eprintln!(
            "{file}: {name}: {} ({:.1} s)",
            counts.join(", "),
            t0.elapsed().as_secs_f64()
        );
    }
}

#[test]
fn every_corpus_file_is_run() {
    let mut on_disk: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml") && n != "models.toml")
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, FILES);
}

#[test]
fn count_expressions_and_brace_ranges() {
    assert_eq!(eval("3*p+1", 7, 1), 22);
    assert_eq!(eval("393216/blocks + 1", 8, 8), 49153);
    assert_eq!(eval("(p/2+1)%p", 4, 1), 3);
    assert_eq!(
        expand_braces("torus:{1..2}x{3,5}"),
        ["torus:1x3", "torus:1x5", "torus:2x3", "torus:2x5"]
    );
}

/// tests/corpus/drivers.toml: every simulation driver agrees with the event
/// driver (folds, runs by rank, hand-backs, threads, tiles, generators);
/// the points also verify, round-trip, run on threads and keep above the
/// collective's bound.
#[test]
fn driver_points_agree_across_drivers_and_pass_every_layer() {
    run_file("drivers.toml");
}

/// tests/corpus/grids.toml: the all-to-alls on every mesh and torus up to
/// 12×12 and Trinaryx3 on every 3D torus up to 6×6×6 verify.
#[test]
fn grid_points_verify() {
    run_file("grids.toml");
}

/// tests/corpus/large-ranks.toml: every algorithm on 64 and 256 ranks
/// verifies and runs on threads to the reference's bits.
#[test]
fn large_rank_count_points_verify_and_run_on_threads() {
    run_file("large-ranks.toml");
}

/// tests/corpus/networks.toml: every kind of topology, several ranks per
/// host, MSCCL XML, the collective's bound, the threads backend on tori,
/// the tree algorithms in any op order.
#[test]
fn network_points_verify_round_trip_run_and_keep_above_the_bound() {
    run_file("networks.toml");
}

/// tests/corpus/ranks.toml: every rank-based algorithm on 1 to 64 ranks
/// verifies and round-trips through JSON; runs on threads to the
/// reference's bits, the same bits on every run, and stops on a fault;
/// reductions give the same bits in any op order.
#[test]
fn rank_count_points_verify_round_trip_and_run_on_threads() {
    run_file("ranks.toml");
}

/// tests/corpus/sites.toml: every algorithm on grids of sites, with every
/// lane count, verifies and runs on threads.
#[test]
fn grid_of_sites_points_verify_and_run_on_threads() {
    run_file("sites.toml");
}

/// tests/corpus/streams.toml: every generator is its written-out schedule
/// op by op and simulates to the same bits.
#[test]
fn generators_are_their_written_out_schedules() {
    run_file("streams.toml");
}
