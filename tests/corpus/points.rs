//! The corpus's schema (the keys of `tests/corpus/*.toml`, described in
//! `tests/corpus/models.toml`) and its expansion into places (topologies
//! or rank counts), algorithms, sizes, roots and lanes.

use super::TALLIES;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use topocoll::algorithms::{Algorithm, ALGORITHMS};
use topocoll::schedule::{Dtype, ReduceOp};
use topocoll::sim::{SimConfig, Skew};
use topocoll::topology::{parse_spec, parse_toml, Kind, RankMap, Topology};

/// A node model: `[model.NAME]` in `tests/corpus/models.toml`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct Model {
    pub(crate) engines: Option<usize>,
    pub(crate) overhead: Option<f64>,
    pub(crate) compute_bandwidth: Option<f64>,
    pub(crate) injection_bandwidth: Option<f64>,
    pub(crate) ejection_bandwidth: Option<f64>,
    pub(crate) header_bytes: Option<u64>,
    pub(crate) flow_cap: Option<f64>,
    #[serde(default)]
    pub(crate) rendezvous: bool,
    pub(crate) skew_max: Option<f64>,
    pub(crate) skew_seed: Option<u64>,
    /// Set on every link of the point's topology.
    pub(crate) link_latency: Option<f64>,
}

impl Model {
    pub(crate) fn config(&self) -> SimConfig {
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
pub(crate) struct Models {
    pub(crate) model: BTreeMap<String, Model>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct File {
    pub(crate) case: Vec<Case>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Check {
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
pub(crate) enum Field {
    Stream,
    Segmented,
    Lanes,
    Radix,
    Inter,
}

impl Field {
    pub(crate) fn of(self, a: &Algorithm) -> bool {
        match self {
            Field::Stream => a.stream.is_some(),
            Field::Segmented => a.segmented,
            Field::Lanes => a.lanes,
            Field::Radix => a.radix,
            Field::Inter => a.takes_inter(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) checks: Vec<Check>,
    /// Topology specs or tables (see `Place`); or `ranks`, without a network.
    #[serde(default)]
    pub(crate) topologies: Vec<toml::Value>,
    #[serde(default)]
    pub(crate) ranks: Vec<Number>,
    /// "collective/name", "collective/*" or "*".
    pub(crate) algorithms: Vec<String>,
    /// Only the algorithms with (without) these registry fields.
    #[serde(default)]
    pub(crate) with: Vec<Field>,
    #[serde(default)]
    pub(crate) without: Vec<Field>,
    pub(crate) dtypes: Dtypes,
    /// Sizes in bytes, or `counts` in elements; entries are numbers,
    /// expressions in `p` and `blocks`, or `{ size, segment }`.
    #[serde(default)]
    pub(crate) sizes: Vec<Size>,
    #[serde(default)]
    pub(crate) counts: Vec<Size>,
    /// The pipeline segment, in the unit of the sizes (for the algorithms
    /// that pipeline).
    pub(crate) segment: Option<u64>,
    #[serde(default)]
    pub(crate) roots: Vec<Number>,
    /// Every root on this many ranks or fewer.
    pub(crate) all_roots_up_to: Option<usize>,
    /// WAN lanes (for the algorithms that take them): "auto", a number, or
    /// "all" (1 to the largest site's hosts).
    #[serde(default)]
    pub(crate) lanes: Vec<Number>,
    /// k-nomial radixes (for the algorithms that take one); none: their
    /// default.
    #[serde(default)]
    pub(crate) radixes: Vec<usize>,
    /// The leaders' algorithms for the node-aware compositions, beside
    /// their default (a name the composition's collective lacks is left).
    #[serde(default)]
    pub(crate) inters: Vec<String>,
    /// The counts of alltoallv and allgatherv: generator specs
    /// (`uniform:MAX`, `zipf:S`, `hot:K`, drawn with seed 1, their mean
    /// block the point's size) or "equal" (every block the point's size);
    /// none: "equal". Other collectives ignore them.
    #[serde(default)]
    pub(crate) vsizes: Vec<String>,
    /// Node models (`[model.NAME]`) for the checks that simulate.
    #[serde(default)]
    pub(crate) models: Vec<String>,
    pub(crate) threads: Option<Threads>,
    /// Algorithms ("collective/name", or "*" for every one selected) that
    /// must apply at every point.
    #[serde(default)]
    pub(crate) must_apply: Vec<String>,
    #[serde(default)]
    pub(crate) every_point_folds: bool,
    #[serde(default)]
    pub(crate) at_least: BTreeMap<String, usize>,
    #[serde(default)]
    pub(crate) exactly: BTreeMap<String, usize>,
    /// Runs only under `TOPOCOLL_SLOW=1` (`topocoll_testkit::slow`).
    #[serde(default)]
    pub(crate) slow: bool,
}

/// A number, or a string: an expression, a range "a..b", "all", "auto".
#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
pub(crate) enum Number {
    Int(u64),
    Text(String),
}

#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
pub(crate) enum Size {
    One(Number),
    Segmented { size: Number, segment: u64 },
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum Dtypes {
    All(Vec<String>),
    ByKind {
        reductions: Vec<String>,
        others: Vec<String>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Threads {
    pub(crate) runs: Vec<Run>,
    /// Every run of a point gives the same output bits.
    #[serde(default)]
    pub(crate) same_bits: bool,
    /// Every point's plan has a replay (a straight list of copies).
    #[serde(default)]
    pub(crate) replays: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Run {
    pub(crate) workers: usize,
    /// Engine counts: a point takes the one at (P + its element type's
    /// index) mod their number, so that rank counts spread over them.
    pub(crate) engines: Vec<usize>,
}

/// Evaluates an integer expression in `p` (the ranks) and `blocks` (P for
/// the collectives sized by the block, else 1): numbers, + - * / %,
/// parentheses.
pub(crate) fn eval(expr: &str, p: u64, blocks: u64) -> u64 {
    pub(crate) fn sum(t: &[char], i: &mut usize, v: (i64, i64)) -> i64 {
        let mut x = product(t, i, v);
        while *i < t.len() && matches!(t[*i], '+' | '-') {
            let op = t[*i];
            *i += 1;
            let y = product(t, i, v);
            x = if op == '+' { x + y } else { x - y };
        }
        x
    }
    pub(crate) fn product(t: &[char], i: &mut usize, v: (i64, i64)) -> i64 {
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
    pub(crate) fn atom(t: &[char], i: &mut usize, v: (i64, i64)) -> i64 {
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
    pub(crate) fn value(&self, p: u64, blocks: u64) -> u64 {
        match self {
            Number::Int(n) => *n,
            Number::Text(e) => eval(e, p, blocks),
        }
    }
}

/// `{a..b}` (inclusive) and `{x,y,z}` expanded, every combination.
pub(crate) fn expand_braces(s: &str) -> Vec<String> {
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
pub(crate) fn resolve(spec: &str) -> Vec<String> {
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
pub(crate) struct Place {
    pub(crate) name: String,
    pub(crate) topology: Option<Topology>,
    pub(crate) ranks: usize,
    /// The planes the by-rank driver's threads tile, the planes one
    /// thread tiles, and the thread counts to run (the drivers check).
    pub(crate) planes: usize,
    pub(crate) planes_alone: usize,
    pub(crate) threads: Option<Vec<usize>>,
    /// Sizes (bytes) or counts (elements) for this topology alone, in place
    /// of the case's.
    pub(crate) sizes: Option<Vec<Size>>,
    pub(crate) counts: Option<Vec<Size>>,
}

/// Keys of a topology table that are the corpus's, not a topology file's.
pub(crate) const PLACE_KEYS: &[&str] = &[
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
    pub(crate) fn places(&self) -> Vec<Place> {
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

    pub(crate) fn algorithms(&self) -> Vec<&'static Algorithm> {
        let mut out: Vec<&'static Algorithm> = Vec::new();
        for pattern in &self.algorithms {
            let (coll, name) = pattern.split_once('/').unwrap_or(("*", pattern));
            let found: Vec<_> = ALGORITHMS
                .iter()
                .filter(|a| {
                    (coll == "*" || a.collective.name() == coll) && (name == "*" || a.name == name)
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

    pub(crate) fn must_apply(&self, algs: &[&'static Algorithm]) -> Vec<bool> {
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

    pub(crate) fn dtypes(&self, reduction: bool) -> Vec<(Dtype, ReduceOp)> {
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
    pub(crate) fn sizes(
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

    pub(crate) fn roots(&self, p: usize, rooted: bool) -> Vec<u32> {
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

    /// The counts to run `alg` with (`None`: every block the size).
    pub(crate) fn vsizes(&self, alg: &Algorithm) -> Vec<Option<String>> {
        if alg.collective.with_root(0).sizes_shape().is_none() || self.vsizes.is_empty() {
            return vec![None];
        }
        self.vsizes
            .iter()
            .map(|v| (v != "equal").then(|| v.clone()))
            .collect()
    }

    /// The radixes to run `alg` with (`None`: its default).
    pub(crate) fn radixes(&self, alg: &Algorithm) -> Vec<Option<usize>> {
        if !alg.radix || self.radixes.is_empty() {
            return vec![None];
        }
        self.radixes.iter().map(|&k| Some(k)).collect()
    }

    /// The leaders' algorithms to run `alg` with (`None`: its default).
    pub(crate) fn inters(&self, alg: &Algorithm) -> Vec<Option<&'static Algorithm>> {
        let mut out = vec![None];
        if alg.takes_inter() {
            out.extend(self.inters.iter().filter_map(|name| {
                topocoll::algorithms::compose::inter_choice(alg.collective, name)
                    .ok()
                    .map(Some)
            }));
        }
        out
    }

    pub(crate) fn lanes(&self, alg: &Algorithm, topo: Option<&Topology>) -> Vec<Option<usize>> {
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

    pub(crate) fn validate(&self, models: &BTreeMap<String, Model>) {
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
pub(crate) fn place_table(table: &toml::Table) -> Vec<Place> {
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

pub(crate) fn kind(t: &Topology) -> &'static str {
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
