//! Tuned collectives: for one collective on one network and node model, the
//! algorithm (with its segment size and engine count where those are a
//! choice) that the simulator predicts fastest at each message size.
//!
//! A [`Table`] holds one decision per size, each with every candidate's
//! predicted time, so that a plot can show what the choice was made
//! against. Tables are cached on disk ([`Cache`]) under a key that hashes
//! everything a prediction depends on: the network, the node model, the
//! collective with its root, the element type and operator. A size missing
//! from a table is priced when first asked for and added, so `--algorithm
//! auto` on a new size costs one pricing of every candidate, once.

use crate::error::fail;
use crate::error::{Error, Result};
use crate::mpi_rules::Library;
use crate::price::{self, Build};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use topocoll_algorithms::pipelined::MAX_MATERIALISED_OPS;
use topocoll_algorithms::Request;
use topocoll_schedule::{Collective, Dtype, ReduceOp, Sizes};
use topocoll_sim::SimConfig;
use topocoll_topology::Topology;

/// Segment sizes tried for algorithms that pipeline (those smaller than the
/// message that cut it into at most [`MAX_SEGMENTS`]; a message no larger
/// than the smallest runs unsegmented).
pub const SEGMENTS: [u64; 5] = [8 << 10, 32 << 10, 128 << 10, 512 << 10, 2 << 20];

/// The most segments a pipelined candidate cuts the message into: the one
/// bound on tune's work at a size (a candidate's operations, and the
/// simulator's events, grow with its segments; nothing else a candidate
/// holds grows with the size). Every segment of [`SEGMENTS`] is tried up
/// to 8 MiB; a larger message drops the segments that would cut it finer,
/// and one past 2 GiB, which all of them would, is cut by the smallest
/// power of two that keeps within the bound.
pub const MAX_SEGMENTS: u64 = 1 << 10;

/// Bumped whenever a change to the algorithms or the simulator can change a
/// prediction: tables of another version are priced again.
const TABLE_VERSION: u32 = 1;

/// One way to run the collective.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub algorithm: String,
    /// Pipeline segment (bytes), for algorithms that pipeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_bytes: Option<u64>,
    /// Sends in flight per rank.
    pub engines: usize,
}

impl Candidate {
    /// `ring`, `pipeline/32KiB`, with `x2` appended when engine counts were
    /// a choice.
    pub fn label(&self, show_engines: bool) -> String {
        let mut s = self.algorithm.clone();
        if let Some(seg) = self.segment_bytes {
            s += &format!("/{}", topocoll_base::units::format_bytes(seg));
        }
        if show_engines {
            s += &format!(" x{}", self.engines);
        }
        s
    }
}

/// A candidate's prediction at one size: its time, why it does not apply,
/// or (in a [`Search::Winner`] search) the best time so far that its run
/// passed before it ended.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Prediction {
    #[serde(flatten)]
    pub candidate: Candidate,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Its simulation was stopped when its clock passed this time, the
    /// best so far: it takes longer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slower_than_s: Option<f64>,
}

/// How [`Problem::decide`] searches the candidates at a size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Every candidate verified, then simulated to its end: the table
    /// holds every time the choice was made against (`tune`).
    Every,
    /// Only as far as a candidate can win (`--algorithm auto`). Candidates
    /// run fewest operations first (as far as the registry counts them);
    /// each simulation stops once its clock passes the best time so far
    /// (it cannot win; its prediction keeps that time as `slower_than_s`),
    /// and a candidate is verified only when it beats the best, before it
    /// becomes the best. The choice is [`Search::Every`]'s: the fastest
    /// candidate that verifies, a tie to the first in `topocoll list`
    /// order.
    Winner,
}

/// How far [`Problem::tune`] has come, told before each candidate is
/// priced.
#[derive(Clone, Debug)]
pub struct Progress {
    pub size_bytes: u64,
    /// Candidates priced so far at this size, of `candidates`.
    pub priced: usize,
    pub candidates: usize,
    /// The best so far at this size: its label and time.
    pub best: Option<(String, f64)>,
}

/// The decision at one size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Decision {
    pub size_bytes: u64,
    pub choice: Candidate,
    pub predicted_s: f64,
    pub candidates: Vec<Prediction>,
}

/// Decisions for one collective on one network and node model, by size.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Table {
    pub version: u32,
    /// Hash of everything the predictions depend on ([`Problem::key`]).
    pub key: String,
    /// The network and collective, for people reading the file.
    pub description: String,
    pub collective: String,
    pub ranks: usize,
    /// Increasing sizes.
    pub decisions: Vec<Decision>,
}

impl Table {
    /// The decision at exactly `size_bytes`, if priced.
    pub fn get(&self, size_bytes: u64) -> Option<&Decision> {
        self.decisions
            .binary_search_by_key(&size_bytes, |d| d.size_bytes)
            .ok()
            .map(|i| &self.decisions[i])
    }

    fn insert(&mut self, d: Decision) {
        match self
            .decisions
            .binary_search_by_key(&d.size_bytes, |x| x.size_bytes)
        {
            Ok(i) => self.decisions[i] = d,
            Err(i) => self.decisions.insert(i, d),
        }
    }
}

/// What a table is for: a collective on a network under a node model, and
/// the engine counts that are a choice.
pub struct Problem<'a> {
    pub collective: Collective,
    pub dtype: Dtype,
    pub op: ReduceOp,
    pub topology: &'a Topology,
    /// The node and network model (its `engines` is replaced by each of
    /// `engines`).
    pub config: SimConfig,
    pub engines: Vec<usize>,
    /// Only the algorithms this MPI library runs exactly (for a table that
    /// is exported to its tuning file); every algorithm when `None`.
    pub library: Option<Library>,
    /// A v-collective's counts (alltoallv, allgatherv): what each
    /// candidate is priced with; `None`: every block the size.
    pub counts: Option<Counts>,
    /// How far each size's candidates are priced.
    pub search: Search,
}

/// The counts a v-collective is tuned with (`--counts`).
#[derive(Clone, Debug)]
pub enum Counts {
    /// A generator's (`uniform:MAX`, `zipf:S`, `hot:K`) drawn with `seed`,
    /// its mean block each size: at every size the counts `simulate
    /// --counts SPEC --seed SEED --size SIZE` prices.
    Generated { spec: String, seed: u64 },
    /// Counts of their own (a CSV file's), the same at every size.
    Fixed(Arc<Sizes>),
}

impl Counts {
    /// The counts at a mean block of `mean` elements.
    fn at(&self, collective: Collective, ranks: usize, mean: u64, elem: u64) -> Result<Arc<Sizes>> {
        match self {
            Counts::Fixed(sizes) => Ok(sizes.clone()),
            Counts::Generated { spec, seed } => {
                let shape = collective.sizes_shape().ok_or_else(|| {
                    fail!(
                        Optimize,
                        Problem,
                        "--counts: {} has no counts per rank (alltoallv and allgatherv do)",
                        collective.name()
                    )
                })?;
                Ok(Arc::new(Sizes::parse(
                    spec, shape, ranks, mean, elem, *seed,
                )?))
            }
        }
    }

    /// What the counts are, in words (a table's description).
    fn describe(&self) -> String {
        match self {
            Counts::Generated { spec, seed } => format!("counts {spec}, seed {seed}"),
            Counts::Fixed(sizes) => format!(
                "counts of their own ({} elements over {} blocks)",
                sizes.total(),
                sizes.counts().len()
            ),
        }
    }
}

impl Problem<'_> {
    /// A hash (FNV-1a, 64 bits, hex) of everything a prediction depends on.
    pub fn key(&self) -> String {
        let mut model = self.config.clone();
        // How a run is driven does not change its result.
        model.engines = 0;
        model.trace = false;
        model.progress = None;
        model.threads = 1;
        let text = format!(
            "{TABLE_VERSION}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
            env!("CARGO_PKG_VERSION"),
            self.library,
            self.collective,
            self.dtype,
            self.op,
            self.engines,
            model,
            self.topology
        );
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut hash = |bytes: &[u8]| {
            for &b in bytes {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        hash(text.as_bytes());
        // A table without counts keeps the key it had before they were one.
        match &self.counts {
            None => {}
            Some(Counts::Generated { spec, seed }) => {
                hash(format!("|counts {spec} {seed}").as_bytes());
            }
            Some(Counts::Fixed(sizes)) => {
                hash(format!("|counts {} of {}", sizes.ranks(), sizes.counts().len()).as_bytes());
                for c in sizes.counts() {
                    hash(&c.to_le_bytes());
                }
            }
        }
        format!("{h:016x}")
    }

    /// An empty table for this problem, whose [`Problem::key`] is `key`.
    fn table(&self, key: String) -> Table {
        Table {
            version: TABLE_VERSION,
            key,
            description: {
                let mut d = format!("{} on {}", self.collective.name(), self.topology.describe());
                if let Some(c) = &self.counts {
                    d += &format!(", {}", c.describe());
                }
                if let Some(l) = self.library {
                    d += &format!(", among {}'s algorithms", l.name());
                }
                d
            },
            collective: self.collective.name().to_string(),
            ranks: self.topology.num_ranks(),
            decisions: Vec::new(),
        }
    }

    /// Every candidate at `size_bytes`. NCCL's algorithms, whose chunks are
    /// NCCL's (512 KiB and up with Simple), are candidates up to
    /// [`MAX_SEGMENTS`] such chunks, as a pipeline is up to that many
    /// segments.
    pub fn candidates(&self, size_bytes: u64) -> Vec<Candidate> {
        let mut out = Vec::new();
        let library = self.library;
        let buffer = if self.collective.size_is_block() {
            size_bytes.saturating_mul(self.topology.num_ranks() as u64)
        } else {
            size_bytes
        };
        let nccl_fits = buffer.div_ceil(512 << 10) <= MAX_SEGMENTS;
        for alg in topocoll_algorithms::of(self.collective.kind())
            .filter(|a| library.is_none_or(|l| l.runs(a)))
            .filter(|a| !a.channels || nccl_fits)
        {
            let segments: Vec<Option<u64>> = if alg.segmented {
                segments_at(size_bytes)
            } else {
                vec![None]
            };
            for &segment_bytes in &segments {
                for &engines in &self.engines {
                    out.push(Candidate {
                        algorithm: alg.name.to_string(),
                        segment_bytes,
                        engines,
                    });
                }
            }
        }
        out
    }

    /// The request at `size_bytes` every candidate is priced with: an
    /// error where the size itself is refused (a buffer past 2^50 bytes),
    /// whatever the algorithm.
    pub fn request(&self, size_bytes: u64) -> Result<Request<'_>> {
        let mut req = Request::new(
            self.collective,
            self.topology.num_ranks(),
            size_bytes,
            self.dtype,
            self.op,
            Some(self.topology),
        )?;
        if let Some(counts) = &self.counts {
            let sizes = counts.at(self.collective, req.ranks, req.count, self.dtype.size())?;
            req = req.with_sizes(sizes)?;
        }
        Ok(req)
    }

    /// Prices the candidates at `size_bytes` as [`Problem::search`] says
    /// and picks the fastest that verifies; ties go to the first in
    /// `topocoll list` order. A size the request refuses is refused, not
    /// priced. `progress` is told before each candidate.
    pub fn decide(&self, size_bytes: u64, mut progress: impl FnMut(&Progress)) -> Result<Decision> {
        self.request(size_bytes)?;
        let all = self.candidates(size_bytes);
        let order: Vec<usize> = match self.search {
            Search::Every => (0..all.len()).collect(),
            Search::Winner => self.fewest_ops_first(&all, size_bytes),
        };
        let mut predictions: Vec<Option<Prediction>> = vec![None; all.len()];
        let mut best: Option<(f64, usize)> = None;
        for (priced, &i) in order.iter().enumerate() {
            progress(&Progress {
                size_bytes,
                priced,
                candidates: all.len(),
                best: best.map(|(t, b)| (all[b].label(self.engines.len() > 1), t)),
            });
            let c = &all[i];
            let beats = |t: f64| best.is_none_or(|(b, j)| t < b || (t == b && i < j));
            let predicted = match self.search {
                Search::Every => self.price(c, size_bytes).map(Some),
                Search::Winner => self.price_to_win(c, size_bytes, best.map(|(t, _)| t), beats),
            };
            let (time_s, skipped, slower_than_s) = match predicted {
                Ok(Some(t)) => {
                    if beats(t) {
                        best = Some((t, i));
                    }
                    (Some(t), None, None)
                }
                Ok(None) => (None, None, best.map(|(t, _)| t)),
                Err(e) => (None, Some(Self::why_skipped(e)), None),
            };
            predictions[i] = Some(Prediction {
                candidate: c.clone(),
                time_s,
                skipped,
                slower_than_s,
            });
        }
        let candidates: Vec<Prediction> = predictions.into_iter().flatten().collect();
        let Some((predicted_s, i)) = best else {
            return Err(fail!(
                Optimize,
                Problem,
                "no {} algorithm applies at {} bytes on {} ranks",
                self.collective.name(),
                size_bytes,
                self.topology.num_ranks()
            ));
        };
        Ok(Decision {
            size_bytes,
            choice: candidates[i].candidate.clone(),
            predicted_s,
            candidates,
        })
    }

    /// Why a candidate was skipped, as its prediction says it.
    fn why_skipped(e: Error) -> String {
        match e {
            Error::Algorithm(topocoll_algorithms::Error::Unsupported { reason, .. }) => reason,
            other => other.to_string(),
        }
    }

    /// The candidates' indices, fewest operations first as far as the
    /// registry counts them (those it does not count first, in `topocoll
    /// list` order): few operations are quick to simulate, and the first
    /// times found stop the longer runs early.
    fn fewest_ops_first(&self, all: &[Candidate], size_bytes: u64) -> Vec<usize> {
        let req = self.request(size_bytes).ok();
        let count = |c: &Candidate| -> u64 {
            let Some(mut req) = req.clone() else {
                return 0;
            };
            req.segment_bytes = c.segment_bytes;
            topocoll_algorithms::find(self.collective.kind(), &c.algorithm)
                .and_then(|alg| alg.op_count(&req))
                .unwrap_or(0)
        };
        let mut order: Vec<(u64, usize)> = all.iter().map(count).zip(0..).collect();
        order.sort_by_key(|&(ops, i)| (ops, i));
        order.into_iter().map(|(_, i)| i).collect()
    }

    /// One candidate of a [`Search::Winner`] search: its time, verified
    /// where [`Search::Every`] would verify it (a written-out schedule)
    /// and only when `beats` says it beats the best so far; `None` where
    /// its simulation passed `best_s` before it ended.
    fn price_to_win(
        &self,
        c: &Candidate,
        size_bytes: u64,
        best_s: Option<f64>,
        beats: impl Fn(f64) -> bool,
    ) -> Result<Option<f64>> {
        let (req, mut cfg, alg) = self.run_of(c, size_bytes)?;
        cfg.stop_past = best_s;
        // Generated where it can be, so that a run stopped early has not
        // written out the rest.
        let priced = price::price(
            &req,
            alg,
            self.topology,
            std::slice::from_ref(&cfg),
            price::Check::Trust,
            Build::PreferStream,
        );
        let priced = match priced {
            Err(Error::Sim(topocoll_sim::Error::PastStop { .. })) => return Ok(None),
            other => other?,
        };
        let t = priced.runs[0].time_s;
        if beats(t) && (!priced.streamed || alg.op_count(&req)? <= MAX_MATERIALISED_OPS) {
            topocoll_schedule::check_ranks_fit(req.ranks)?;
            let s = if priced.streamed {
                topocoll_algorithms::build(alg, &req)?
            } else {
                priced.schedule
            };
            topocoll_schedule::verify(&s)?;
        }
        Ok(Some(t))
    }

    /// What candidate `c` runs at `size_bytes`: its request (with its
    /// segment), its node model (with its engines) and its algorithm.
    fn run_of(
        &self,
        c: &Candidate,
        size_bytes: u64,
    ) -> Result<(
        Request<'_>,
        SimConfig,
        &'static topocoll_algorithms::Algorithm,
    )> {
        let mut req = self.request(size_bytes)?;
        req.segment_bytes = c.segment_bytes;
        let mut cfg = self.config.clone();
        cfg.engines = c.engines;
        let alg = topocoll_algorithms::find(self.collective.kind(), &c.algorithm)?;
        Ok((req, cfg, alg))
    }

    /// The predicted time of one candidate at one size.
    pub fn price(&self, c: &Candidate, size_bytes: u64) -> Result<f64> {
        let (req, cfg, alg) = self.run_of(c, size_bytes)?;
        let priced = price::price(
            &req,
            alg,
            self.topology,
            &[cfg],
            price::Check::Verify,
            Build::StreamIfLarge,
        )?;
        Ok(priced.runs[0].time_s)
    }

    /// The table with a decision at every size of `sizes`, from `cache`
    /// where it holds them, priced (and written back) where it does not.
    /// `progress` is told before each candidate priced. A cache that
    /// cannot be written is not an error: the table is returned with why
    /// it was not kept.
    pub fn tune(
        &self,
        sizes: &[u64],
        cache: Option<&Cache>,
        mut progress: impl FnMut(&Progress),
    ) -> Result<(Table, Notes)> {
        let mut notes = Notes::default();
        let (mut table, changed) = self.cached(cache, &mut notes);
        let missing = self.missing(&table, sizes)?;
        let decisions = missing
            .iter()
            .map(|&size| self.decide(size, &mut progress))
            .collect::<Result<Vec<_>>>()?;
        self.keep(&mut table, decisions, changed, cache, &mut notes);
        Ok((table, notes))
    }

    /// The table `cache` holds for this problem, checked as
    /// [`Problem::fit`] checks it (an empty one where it holds none), and
    /// whether the check changed it; what was priced again is noted.
    pub fn cached(&self, cache: Option<&Cache>, notes: &mut Notes) -> (Table, bool) {
        // The key hashes the whole network: computed once.
        let key = self.key();
        let collective = self.collective.name();
        match cache.map(|c| (c, c.load(collective, &key))) {
            Some((c, Loaded::Table(t))) => {
                self.fit(t, &c.path(collective, &key), &mut notes.repriced)
            }
            Some((c, Loaded::Unreadable(why))) => {
                let path = c.path(collective, &key);
                notes.repriced.push(format!("'{}': {why}", path.display()));
                (self.table(key), true)
            }
            Some((_, Loaded::Missing)) | None => (self.table(key), false),
        }
    }

    /// The sizes of `sizes` that `table` has no decision at, in order,
    /// every one checked before any is priced (a size the request refuses
    /// is refused here).
    pub fn missing(&self, table: &Table, sizes: &[u64]) -> Result<Vec<u64>> {
        let mut missing: Vec<u64> = Vec::new();
        for &size in sizes {
            if table.get(size).is_none() && !missing.contains(&size) {
                self.request(size)?;
                missing.push(size);
            }
        }
        Ok(missing)
    }

    /// Adds `decisions` to `table` and, where anything was added or
    /// `changed`, writes it to `cache` (a cache that cannot be written is
    /// noted, not an error).
    pub fn keep(
        &self,
        table: &mut Table,
        decisions: Vec<Decision>,
        changed: bool,
        cache: Option<&Cache>,
        notes: &mut Notes,
    ) {
        let added = !decisions.is_empty();
        for d in decisions {
            table.insert(d);
        }
        if let (true, Some(c)) = (added || changed, cache) {
            notes.unkept = c.store(table).err();
        }
    }

    /// A cached table as this build would price it: a table for another
    /// problem (its collective or rank count) or whose sizes are not
    /// increasing is dropped whole; a decision this build would not make
    /// (a time that is not a finite non-negative number, a choice that is
    /// not one of its candidates at that size: an algorithm it does not
    /// have, a segment it does not try, an engine count that is not a
    /// choice) is dropped, to be priced again. Each drop is noted, naming
    /// the file and the field; whether anything was dropped is returned.
    /// An [`Search::Every`] search also drops, without a note, the
    /// decisions a [`Search::Winner`] search made, which lack its times.
    fn fit(&self, mut t: Table, path: &Path, notes: &mut Vec<String>) -> (Table, bool) {
        let file = path.display();
        let whole = if t.collective != self.collective.name() {
            Some(format!(
                "collective is '{}', not '{}'",
                t.collective,
                self.collective.name()
            ))
        } else if t.ranks != self.topology.num_ranks() {
            Some(format!(
                "ranks is {}, not {}",
                t.ranks,
                self.topology.num_ranks()
            ))
        } else {
            t.decisions
                .windows(2)
                .position(|w| w[0].size_bytes >= w[1].size_bytes)
                .map(|i| format!("decisions[{}].size_bytes: sizes must increase", i + 1))
        };
        if let Some(why) = whole {
            notes.push(format!("'{file}': {why}"));
            return (self.table(t.key), true);
        }
        let before = t.decisions.len();
        let mut i = 0;
        t.decisions.retain(|d| {
            // A decision of a `Winner` search lacks the times `Every`
            // shows: priced in full, nothing wrong with it to note.
            let partial = d.candidates.iter().any(|p| p.slower_than_s.is_some());
            if self.search == Search::Every && partial {
                i += 1;
                return false;
            }
            let why = self.misfit(d);
            if let Some(why) = &why {
                notes.push(format!("'{file}': decisions[{i}].{why}"));
            }
            i += 1;
            why.is_none()
        });
        let dropped = t.decisions.len() != before;
        (t, dropped)
    }

    /// Why this build would not have made decision `d`, if it would not.
    fn misfit(&self, d: &Decision) -> Option<String> {
        let time_ok = |t: f64| t.is_finite() && t >= 0.0;
        if !time_ok(d.predicted_s) {
            return Some(format!("predicted_s: {} is not a time", d.predicted_s));
        }
        if let Some(i) = d
            .candidates
            .iter()
            .position(|p| p.time_s.is_some_and(|t| !time_ok(t)))
        {
            return Some(format!("candidates[{i}].time_s: not a time"));
        }
        if !self.candidates(d.size_bytes).contains(&d.choice) {
            return Some(format!(
                "choice: {} is not a candidate of this build at {} bytes",
                d.choice.label(true),
                d.size_bytes
            ));
        }
        None
    }
}

/// The segments a pipelined candidate takes at `size_bytes` (see
/// [`SEGMENTS`], [`MAX_SEGMENTS`]): `None` alone, unsegmented, where the
/// message is no larger than the smallest.
pub fn segments_at(size_bytes: u64) -> Vec<Option<u64>> {
    if size_bytes <= SEGMENTS[0] {
        return vec![None];
    }
    let fits = |seg: u64| size_bytes.div_ceil(seg) <= MAX_SEGMENTS;
    let tried: Vec<Option<u64>> = SEGMENTS
        .iter()
        .filter(|&&seg| seg < size_bytes && fits(seg))
        .map(|&seg| Some(seg))
        .collect();
    if !tried.is_empty() {
        return tried;
    }
    vec![Some(size_bytes.div_ceil(MAX_SEGMENTS).next_power_of_two())]
}

/// What [`Problem::tune`] has to tell beside its table: why it could not
/// keep it, and each cached decision it priced again because this build
/// would not have made it (the file and the field).
#[derive(Debug, Default)]
pub struct Notes {
    pub unkept: Option<Error>,
    pub repriced: Vec<String>,
}

/// A cached table as read: none, one that does not read (why), or one.
enum Loaded {
    Missing,
    Unreadable(String),
    Table(Table),
}

/// Decision tables on disk, a JSON file per problem.
pub struct Cache {
    pub dir: PathBuf,
}

impl Cache {
    /// The file of the table of `collective` whose problem key is `key`.
    pub fn path(&self, collective: &str, key: &str) -> PathBuf {
        self.dir.join(format!("tune-{collective}-{key}.json"))
    }

    /// The cached table, if there is one of this version and key. (A file
    /// that does not read is priced again and replaced.)
    fn load(&self, collective: &str, key: &str) -> Loaded {
        let Ok(text) = std::fs::read_to_string(self.path(collective, key)) else {
            return Loaded::Missing;
        };
        match serde_json::from_str::<Table>(&text) {
            Err(e) => Loaded::Unreadable(format!("not a tuning table ({e})")),
            Ok(t) if t.version != TABLE_VERSION => Loaded::Missing,
            Ok(t) if t.key != key => {
                Loaded::Unreadable(format!("key is '{}', not the file's '{key}'", t.key))
            }
            Ok(t) => Loaded::Table(t),
        }
    }

    /// Writes `t` whole or not at all: to a file of its own, then renamed
    /// over the old one (ranks of one MPI job may store the same table at
    /// once).
    pub fn store(&self, t: &Table) -> Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(|e| {
            fail!(
                Optimize,
                Cache,
                "cannot create the tuning cache '{}': {e}",
                self.dir.display()
            )
        })?;
        let path = self.path(&t.collective, &t.key);
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        let text = serde_json::to_string_pretty(t).expect("a table serialises");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                fail!(
                    Optimize,
                    Cache,
                    "cannot write the tuning cache '{}': {e}",
                    path.display()
                )
            })
    }
}

/// The directory tables are cached in: `$TOPOCOLL_CACHE`, else
/// `$XDG_CACHE_HOME/topocoll`, else `~/.cache/topocoll`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    env("TOPOCOLL_CACHE")
        .map(PathBuf::from)
        .or_else(|| env("XDG_CACHE_HOME").map(|d| Path::new(&d).join("topocoll")))
        .or_else(|| env("HOME").map(|d| Path::new(&d).join(".cache").join("topocoll")))
}
