//! The best schedule for a network: spanning trees packed into its links
//! ([`pack`]), pipelined in chunks, priced by the simulator beside every
//! built-in algorithm, with the cut bound ([`crate::cut`]) as the
//! certificate of how far from the best any schedule can be.
//!
//! What is synthesised, per collective:
//! - bcast: out-trees from the root, the buffer split between them by
//!   their packed rates, each part pipelined in chunks down its tree;
//! - reduce: in-trees to the root, the same reversed;
//! - allreduce: trees that reduce up and broadcast down, both at once;
//! - allgather: out-trees from every rank, packed together (each rank's
//!   block split between its own trees);
//! - reduce_scatter: the allgather's schedule reversed
//!   (`topocoll_schedule::reverse`).
//!
//! The chunk count is chosen per size by simulating each of a few and
//! keeping the fastest; `optimize` keeps a built-in algorithm where one is
//! faster, so it is never slower than the best of them.

mod arborescence;
mod edmonds;
pub(crate) mod lp;
pub mod pack;

use crate::cut::{cut_bound_within, CutBound};
use crate::error::fail;
use crate::error::Result;
use crate::share::{Alone, Packer, Share, Words};
use crate::split_bound::split_bound_within;
use crate::switch_bound::{switch_bound, SwitchBound};
use pack::{Arborescence, Edge, Packing};
use std::collections::{HashMap, HashSet};
use topocoll_algorithms::forest::{Forest, Piece, Stage};
use topocoll_algorithms::pipelined::{Phases, Pipeline};
use topocoll_algorithms::trees::{Tree, NO_AXIS, NO_PARENT};
use topocoll_algorithms::{Algorithm, Request};
use topocoll_base::limits::{ran_out, Deadline};
use topocoll_schedule::{Collective, Dtype, ReduceOp, Schedule};
use topocoll_sim::{simulate, SimConfig};
use topocoll_topology::{LinkId, Topology};

/// Most trees a root's data is split between (more trees pay less than
/// their ops cost).
const MAX_TREES: usize = 8;
/// Most copies of a root's trees ([`apportion`]).
const MAX_UNITS: usize = 64;
/// Equal shares a root's buffer is cut into for [`Parts::Even`].
const EVEN_UNITS: usize = 16;
/// Copies a root may have on average however large the network
/// ([`copies_for`]).
const COPY_BUDGET: usize = 4;
/// Chunks a tree part should still be cut into within [`MAX_OPS`] when
/// small networks take more copies than [`COPY_BUDGET`] ([`copies_for`]).
const COPY_CHUNKS: u64 = 64;
/// How far below its planned rate [`apportion`] may leave a tree.
const COPY_SLACK: f64 = 0.005;
/// Growth of a link's length per unit of load (the packing's ε): 0.1
/// reaches 96% of the optimum packing on tori and hypercubes in 100
/// rounds (docs/PERFORMANCE.md).
const EPS: f64 = 0.1;
/// Rounds of the packing (one tree per root per round), fewer on large
/// networks (each round costs a least arborescence per root).
fn rounds(roots: usize, edges: usize) -> usize {
    (2e8 / (roots as f64 * edges as f64 * 8.0)).clamp(8.0, 100.0) as usize
}
/// Most roots whose packing is also solved exactly ([`pack::exact`]):
/// beyond, its pricing rounds (a least arborescence per root) and its
/// simplex (a row per link and per root) cost more than the search's
/// other steps.
const MAX_EXACT_ROOTS: usize = 64;
/// Most operations a synthesised schedule may hold.
const MAX_OPS: u64 = 1 << 22;
/// Most chunks a tree part is cut into.
const MAX_CHUNKS: u64 = 4096;
/// How far above the least time the trees on the topology's routes may
/// come before trees on paths of their own are tried.
const OWN_PATHS_ABOVE: f64 = 0.01;
/// Ops a second a built-in's schedule is built and priced at, at least
/// (4,096 ranks' ring allgather, 33.5 M ops, builds at about 2.6 M a
/// second and simulates slower): one that would take longer than the
/// time left is not started.
const OPS_PER_SECOND: f64 = 2e6;

/// What `optimize` asks for.
#[derive(Clone, Debug)]
pub struct Problem<'a> {
    pub topo: &'a Topology,
    pub collective: Collective,
    /// As `simulate --size` reads it.
    pub size_bytes: u64,
    pub dtype: Dtype,
    pub op: ReduceOp,
    pub cfg: SimConfig,
}

/// A candidate's simulated time.
#[derive(Clone, Debug, PartialEq)]
pub struct Priced {
    /// `synthesized`, or a built-in algorithm's name.
    pub algorithm: String,
    pub time_s: f64,
    pub trees: usize,
    pub chunks: u64,
}

/// What `optimize` found.
#[derive(Clone, Debug)]
pub struct Optimized {
    /// The schedule chosen ([`Found::chosen`]), ready to write out.
    pub schedule: Best,
    pub best: Priced,
    pub cut: CutBound,
    /// The bound where switches stand between ranks ([`crate::switch_bound`]).
    pub switch: SwitchBound,
    /// The cut bound with half-duplex cables split as well as they can
    /// be, in seconds ([`crate::split_bound`]).
    pub split_s: f64,
    /// The least time: [`least_time`].
    pub bound_s: f64,
    /// Every candidate priced, fastest first.
    pub candidates: Vec<Priced>,
    /// Every candidate was priced: false where the deadline
    /// (`SimConfig::deadline`) stopped the search first.
    pub complete: bool,
    /// Wall time of the search alone ([`crate::timed`]: the cut bound,
    /// packing, building and pricing the candidates; not reading the
    /// network).
    pub solve_s: f64,
}

/// The least time any schedule of `collective` can take (for allreduce, any
/// built from a reduce-scatter and an allgather): the larger of the split
/// bound (the cut bound where no half-duplex cable is split) and the
/// switch bound; for allreduce, that of its reduce-scatter of M plus that
/// of its allgather of M / N (every bound is linear in the size, so the
/// allgather's is that of M divided by N).
pub fn least_time(topo: &Topology, collective: Collective, size_bytes: u64) -> Result<f64> {
    least_time_within(topo, collective, size_bytes, &Deadline::NONE)
}

/// [`least_time`], giving up with a `time_limit` error once `deadline`
/// passes.
fn least_time_within(
    topo: &Topology,
    collective: Collective,
    size_bytes: u64,
    deadline: &Deadline,
) -> Result<f64> {
    let largest = |c: Collective| -> Result<f64> {
        Ok(split_bound_within(topo, c, size_bytes, deadline)?
            .max(switch_bound(topo, c, size_bytes)?.seconds))
    };
    match collective {
        Collective::Allreduce => Ok(largest(Collective::ReduceScatter)?
            + largest(Collective::Allgather)? / topo.num_ranks() as f64),
        c => largest(c),
    }
}

/// The fastest schedule of `p`'s collective on its network among the
/// synthesised ones and the built-in algorithms. `p.cfg.deadline` bounds
/// the whole search: the bounds must finish within it (else a
/// `time_limit` error says how far they came), and the candidates priced
/// by then are what is found (`Optimized::complete` false).
pub fn optimize(p: &Problem) -> Result<Optimized> {
    optimize_shared(p, &Alone)
}

/// [`optimize`] with its candidates priced by the processes of `share`,
/// each its share (see [`search`]): every process ends with what one
/// process alone finds, but where the deadline stops some of them.
pub fn optimize_shared(p: &Problem, share: &dyn Share) -> Result<Optimized> {
    let (found, solve_s) = crate::timed(|| search(p, share));
    Ok(Optimized { solve_s, ..found? })
}

/// A synthesised candidate that may still be chosen: its price, its trees
/// where this process built them (`None` where another did), and their key
/// ([`forest_key`]).
type Kept = (Priced, Option<Forest>, u64);

/// The candidates priced so far, the fastest built-in, and the
/// synthesised ones that may still be chosen.
struct Found {
    /// The fastest built-in, with its schedule where this process built it.
    builtin: Option<(Priced, Option<Schedule>)>,
    /// Synthesised candidates within [`FEWER_CHUNKS_WITHIN`] of the
    /// fastest of them.
    synthesized: Vec<Kept>,
    candidates: Vec<Priced>,
    /// The keys of the synthesised candidates, in the order priced (a
    /// share's part lists only synthesised ones, so these pair with
    /// `candidates` there: [`Chains::pack`]).
    keys: Vec<u64>,
    /// Some candidate was priced before these (a share's part of the
    /// search starts from the state where the shares were dealt).
    priced_before: bool,
    /// The deadline stopped the search.
    stopped: bool,
    /// The synthesised forests built so far, as hashes of their JSON: an
    /// even split of trees of equal rates is the weighted split, and is
    /// priced (and listed) once.
    seen: HashSet<u64>,
    /// The fewest ops of a built-in left unbuilt for the time it would take.
    fewest_left: u64,
    /// The least time more chunks could still reach, of any chain of
    /// chunk counts stopped for gaining too little (see [`Found::price_chains`]).
    floor: f64,
}

impl Found {
    fn new() -> Found {
        Found {
            builtin: None,
            synthesized: Vec::new(),
            candidates: Vec::new(),
            keys: Vec::new(),
            priced_before: false,
            stopped: false,
            seen: Default::default(),
            fewest_left: u64::MAX,
            floor: f64::INFINITY,
        }
    }

    /// A fresh state for one share of the search dealt from `self`: the
    /// forests seen so far, and whether any candidate was priced.
    fn share_of(&self) -> Found {
        Found {
            seen: self.seen.clone(),
            priced_before: !self.candidates.is_empty(),
            ..Found::new()
        }
    }

    /// Whether a candidate was priced already, so that running out of
    /// time or room stops the search rather than failing it.
    fn priced_any(&self) -> bool {
        self.priced_before || !self.candidates.is_empty()
    }

    /// Builds and prices the built-in `alg` unless the time left is too
    /// short for it or it does not build: what became of it.
    fn price_builtin(&mut self, p: &Problem, req: &Request, alg: &Algorithm) -> Result<Outcome> {
        // A build is not interrupted: none starts once the time is up, nor
        // one whose ops could not be built and priced in the time left.
        let deadline = &p.cfg.deadline;
        if deadline.passed() {
            self.stopped = true;
            return Ok(Outcome::NotRun);
        }
        let ops = alg.op_count(req)?;
        if ops as f64 > deadline.remaining_s() * OPS_PER_SECOND {
            self.stopped = true;
            self.fewest_left = self.fewest_left.min(ops);
            return Ok(Outcome::TooLong(ops));
        }
        let Ok(s) = (alg.build)(req) else {
            return Ok(Outcome::Unbuilt);
        };
        if self.stopped || deadline.passed() {
            self.stopped = true;
            return Ok(Outcome::NotRun);
        }
        let time_s = match simulate(&s, p.topo, &p.cfg) {
            Ok(r) => r.time_s,
            Err(e) if ran_out(e.base()) && self.priced_any() => {
                self.stopped = true;
                return Ok(Outcome::NotRun);
            }
            Err(e) => return Err(e.into()),
        };
        let priced = Priced {
            algorithm: alg.name.to_string(),
            time_s,
            trees: 0,
            chunks: 0,
        };
        self.builtin_priced(priced, Some(s));
        Ok(Outcome::Priced(time_s))
    }

    /// Lists the built-in `priced`, the fastest built-in if it is.
    fn builtin_priced(&mut self, priced: Priced, s: Option<Schedule>) {
        self.candidates.push(priced.clone());
        if self
            .builtin
            .as_ref()
            .is_none_or(|(b, _)| priced.time_s < b.time_s)
        {
            self.builtin = Some((priced, s));
        }
    }

    /// Lists the synthesised `priced` (trees `f`, where built here, of key
    /// `key`), keeping those within [`FEWER_CHUNKS_WITHIN`] of the fastest.
    fn synthesized_priced(&mut self, priced: Priced, f: Option<Forest>, key: u64) {
        self.candidates.push(priced.clone());
        self.keys.push(key);
        self.synthesized.push((priced, f, key));
        let fastest = self
            .synthesized
            .iter()
            .map(|c| c.0.time_s)
            .fold(f64::INFINITY, f64::min);
        self.synthesized
            .retain(|c| c.0.time_s <= fastest * (1.0 + FEWER_CHUNKS_WITHIN));
    }

    /// Prices `packed`'s chains of chunk counts for `form`: each split of
    /// the roots' buffers between their trees, the chunk count doubled
    /// while a doubling pays at least [`FEWER_CHUNKS_WITHIN`] (and the
    /// schedule is not too large). The fill and drain shrink as 1 /
    /// chunks, so what all further doublings could still gain is at most
    /// what the last one did: the chain's floor. A forest built before
    /// ends its chain: the rest of it was priced already. Keeps the
    /// synthesised candidates within [`FEWER_CHUNKS_WITHIN`] of the
    /// fastest.
    fn price_chains(
        &mut self,
        p: &Problem,
        req: &Request,
        form: Form,
        packed: &[Packed],
    ) -> Result<()> {
        let n = p.topo.num_ranks();
        let most = packed
            .iter()
            .flat_map(|pk| pk.1.trees.iter().map(Vec::len))
            .max()
            .unwrap_or(0);
        // A rooted form is cheap to price both ways; a spread one, whose
        // many roots' trees cross everywhere, is split by the rates, and
        // on networks too large for that, between as many of each root's
        // heaviest trees as fit.
        let mut splits = match form {
            Form::Rooted { .. } => vec![Parts::Even, Parts::Weighted],
            Form::Spread { .. } | Form::Phased => vec![Parts::Weighted],
        };
        while let Some(split) = splits.pop() {
            let mut last = f64::INFINITY;
            let mut chunks = 1u64;
            while chunks <= MAX_CHUNKS {
                if p.cfg.deadline.passed() {
                    self.stopped = true;
                    return Ok(());
                }
                let Some(f) = synthesize(req, form, split, packed, chunks)? else {
                    if chunks == 1 && split == Parts::Weighted {
                        let fit = (MAX_OPS / least_ops(n)) as usize;
                        if fit > 0 {
                            splits.push(Parts::Top(fit.min(MAX_TREES)));
                        }
                    } else if split == Parts::Weighted && form == Form::Phased {
                        // Still gaining when the copies filled the
                        // schedule: one copy a tree fits more chunks.
                        splits.push(Parts::Top(most.min(MAX_TREES)));
                    }
                    break;
                };
                let key = forest_key(&f)?;
                if !self.seen.insert(key) {
                    break;
                }
                let time_s = match simulate(&f.expand()?, p.topo, &p.cfg) {
                    Ok(r) => r.time_s,
                    Err(e) if ran_out(e.base()) && self.priced_any() => {
                        self.stopped = true;
                        return Ok(());
                    }
                    Err(e) => return Err(e.into()),
                };
                let trees = match split {
                    Parts::Top(k) => most.min(k),
                    _ => most,
                };
                let priced = Priced {
                    algorithm: "synthesized".into(),
                    time_s,
                    trees,
                    chunks,
                };
                self.synthesized_priced(priced, Some(f), key);
                if time_s > last * (1.0 - FEWER_CHUNKS_WITHIN) {
                    let floor = time_s.min(last) - (last - time_s).max(0.0);
                    self.floor = self.floor.min(floor);
                    break;
                }
                last = time_s;
                chunks *= 2;
            }
        }
        Ok(())
    }

    /// The time of the fastest candidate so far.
    fn best_time(&self) -> f64 {
        self.candidates
            .iter()
            .map(|c| c.time_s)
            .fold(f64::INFINITY, f64::min)
    }

    /// The candidate chosen: among the synthesised ones within
    /// [`FEWER_CHUNKS_WITHIN`] of the least time of any (the fastest, or
    /// the floor more chunks could reach), the one of fewest chunks (the
    /// fastest of those); the fastest built-in where it is faster still.
    fn chosen(&mut self) -> Option<(Priced, Pick)> {
        let fastest = self
            .synthesized
            .iter()
            .map(|c| c.0.time_s)
            .fold(f64::INFINITY, f64::min);
        let least = fastest.min(self.floor);
        let within =
            |c: &Kept| c.0.time_s <= least * (1.0 + FEWER_CHUNKS_WITHIN) || c.0.time_s == fastest;
        let synth = self
            .synthesized
            .drain(..)
            .filter(within)
            .min_by(|a, b| {
                (a.0.chunks, a.0.trees)
                    .cmp(&(b.0.chunks, b.0.trees))
                    .then(a.0.time_s.total_cmp(&b.0.time_s))
            })
            .map(|(p, f, key)| (p, Pick::Forest(f, key)));
        let builtin = self.builtin.take().map(|(p, s)| (p, Pick::Builtin(s)));
        match (synth, builtin) {
            (Some(s), Some(b)) if b.0.time_s < s.0.time_s => Some(b),
            (Some(s), _) => Some(s),
            (None, b) => b,
        }
    }
}

/// The candidate chosen, its schedule where this process built it.
enum Pick {
    Forest(Option<Forest>, u64),
    Builtin(Option<Schedule>),
}

/// A forest's key: a hash of its JSON, so that a forest built twice (an
/// even split of trees of equal rates is the weighted split) is priced
/// and listed once.
fn forest_key(f: &Forest) -> Result<u64> {
    use std::hash::{Hash, Hasher};
    let mut json = Vec::new();
    f.to_json(&mut json)?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    json.hash(&mut h);
    Ok(h.finish())
}

/// How far above the fastest synthesised candidate one of fewer chunks
/// may come and be chosen instead (fewer messages, a smaller file).
const FEWER_CHUNKS_WITHIN: f64 = 0.01;

/// The fastest schedule, as it is written out.
#[derive(Clone, Debug)]
pub enum Best {
    /// A synthesised schedule's trees ([`Forest::expand`] writes its ops).
    Forest(Forest),
    /// A built-in algorithm's schedule.
    Schedule(Schedule),
}

impl Best {
    /// Every operation of the schedule.
    pub fn schedule(&self) -> Result<std::borrow::Cow<'_, Schedule>> {
        Ok(match self {
            Best::Forest(f) => std::borrow::Cow::Owned(f.expand()?),
            Best::Schedule(s) => std::borrow::Cow::Borrowed(s),
        })
    }
}

/// What became of a built-in a process priced, as it tells the others.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Outcome {
    /// Not started: this process's share had stopped (the deadline, or
    /// no room to simulate in).
    NotRun,
    /// It does not build here.
    Unbuilt,
    /// Left out for the time its ops would take.
    TooLong(u64),
    Priced(f64),
    /// It failed: every process prices it again to meet the same error.
    Failed,
}

impl Outcome {
    fn pack(self, w: &mut Packer) {
        match self {
            Outcome::NotRun => w.u64(0),
            Outcome::Unbuilt => w.u64(1),
            Outcome::TooLong(ops) => {
                w.u64(2);
                w.u64(ops);
            }
            Outcome::Priced(t) => {
                w.u64(3);
                w.f64(t);
            }
            Outcome::Failed => w.u64(4),
        }
    }

    fn read(r: &mut Words) -> Result<Outcome> {
        Ok(match r.u64()? {
            0 => Outcome::NotRun,
            1 => Outcome::Unbuilt,
            2 => Outcome::TooLong(r.u64()?),
            3 => Outcome::Priced(r.f64()?),
            _ => Outcome::Failed,
        })
    }
}

/// What a process found of one synthesis item (a form's plan): `None`
/// where it failed (every process prices it again to meet the same
/// error).
struct Chains {
    /// The candidates in the order priced, each with its forest's key.
    priced: Vec<(Priced, u64)>,
    floor: f64,
    stopped: bool,
}

impl Chains {
    fn pack(found: &Result<Found>, w: &mut Packer) {
        let Ok(f) = found else {
            w.u64(0);
            return;
        };
        w.u64(1);
        w.u64(u64::from(f.stopped));
        w.f64(f.floor);
        w.u64(f.candidates.len() as u64);
        for (c, &key) in f.candidates.iter().zip(&f.keys) {
            w.f64(c.time_s);
            w.u64(c.trees as u64);
            w.u64(c.chunks);
            w.u64(key);
        }
    }

    fn read(r: &mut Words) -> Result<Option<Chains>> {
        if r.u64()? == 0 {
            return Ok(None);
        }
        let stopped = r.u64()? != 0;
        let floor = r.f64()?;
        let n = r.u64()?;
        let mut priced = Vec::new();
        for _ in 0..n {
            let time_s = r.f64()?;
            let trees = r.u64()? as usize;
            let chunks = r.u64()?;
            let key = r.u64()?;
            let algorithm = "synthesized".into();
            priced.push((
                Priced {
                    algorithm,
                    time_s,
                    trees,
                    chunks,
                },
                key,
            ));
        }
        Ok(Some(Chains {
            priced,
            floor,
            stopped,
        }))
    }
}

/// [`optimize`], untimed.
///
/// Shared between processes, the search runs in rounds (the built-ins;
/// then each synthesised form's plans, on the topology's routes and on
/// paths of their own), each process working the items of a round that
/// are its own ([`Share::mine`]) from the state the round started in,
/// then every process taking every item's result in item order, as one
/// process would have found it. Where an item's result could differ from
/// that (it failed, or priced a forest an earlier item of the round had),
/// every process works it again from the state it reached. Alone, each
/// round is priced in order on the search's own state.
fn search(p: &Problem, share: &dyn Share) -> Result<Optimized> {
    let deadline = &p.cfg.deadline;
    let cut = cut_bound_within(p.topo, p.collective, p.size_bytes, deadline)?;
    let switch = switch_bound(p.topo, p.collective, p.size_bytes)?;
    let split_s = split_bound_within(p.topo, p.collective, p.size_bytes, deadline)?;
    // The least time is the larger of the two bounds just found, but for
    // allreduce, whose halves each take their own larger one.
    let bound_s = match p.collective {
        Collective::Allreduce => least_time_within(p.topo, p.collective, p.size_bytes, deadline)?,
        _ => split_s.max(switch.seconds),
    };
    let n = p.topo.num_ranks();
    let req = Request::new(
        p.collective,
        p.topo.num_ranks(),
        p.size_bytes,
        p.dtype,
        p.op,
        Some(p.topo),
    )?;
    let mut found = Found::new();
    price_builtins(p, &req, share, &mut found)?;
    // The trees on the topology's routes first; where switches stand
    // between ranks and those fall short of the least time, again with
    // paths of the edges' own ([`pack::edges_with_paths`]). Each round's
    // exchanges happen whether it runs or not, so that processes whose
    // deadlines struck apart still meet.
    for own_paths in [false, true] {
        let runs = !own_paths
            || (pack::has_switches(p.topo)
                && found.best_time() > bound_s * (1.0 + OWN_PATHS_ABOVE));
        for form in forms(p.collective) {
            // A spread form's every root has a tree of 2 (N - 1) ops at
            // least: where N of them do not fit, no packing is worth its
            // time.
            let plans = (runs && !found.stopped && !(form.spread() && least_ops(n) > MAX_OPS))
                .then(|| plans_for(p, form, own_paths));
            price_plans(p, &req, share, &mut found, form, plans)?;
        }
    }
    let chosen = found.chosen();
    let fetched = fetch_chosen(share, chosen.as_ref())?;
    let Found {
        mut candidates,
        stopped,
        fewest_left,
        ..
    } = found;
    let Some((best, pick)) = chosen else {
        if fewest_left < u64::MAX {
            return Err(crate::Error::from(deadline.error(&format!(
                "leaves too little time to build and price any {} on {n} ranks: \
                 the fewest ops of those left ({fewest_left}) take about {:.0} s",
                p.collective.name(),
                fewest_left as f64 / OPS_PER_SECOND
            ))));
        }
        deadline.check(|| "before any schedule was priced".into())?;
        return Err(fail!(
            Optimize,
            Problem,
            "no schedule of {} applies on {}",
            p.collective.name(),
            p.topo.describe()
        ));
    };
    let schedule = match pick {
        Pick::Forest(Some(f), _) => Best::Forest(f),
        Pick::Forest(None, _) => Best::Forest(fetched.ok_or_else(|| {
            fail!(
                Optimize,
                Problem,
                "no process sharing the search held the schedule chosen"
            )
        })?),
        Pick::Builtin(Some(s)) => Best::Schedule(s),
        // Priced by another process: built again here.
        Pick::Builtin(None) => {
            let alg = topocoll_algorithms::of(p.collective.kind())
                .find(|a| a.name == best.algorithm)
                .expect("a built-in priced is registered");
            Best::Schedule((alg.build)(&req)?)
        }
    };
    candidates.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    Ok(Optimized {
        schedule,
        best,
        cut,
        switch,
        split_s,
        bound_s,
        candidates,
        complete: !stopped,
        solve_s: 0.0,
    })
}

/// Prices every built-in of the collective that applies: each process
/// its share, in order, then every one takes every outcome in order.
fn price_builtins(p: &Problem, req: &Request, share: &dyn Share, found: &mut Found) -> Result<()> {
    let algs: Vec<&Algorithm> = topocoll_algorithms::of(p.collective.kind())
        .filter(|alg| alg.check(req).is_ok())
        .collect();
    // One process prices them in order on the search's own state; a
    // built-in that stops the search ends the round.
    if share.size() == 1 {
        for alg in algs {
            if found.price_builtin(p, req, alg)? == Outcome::NotRun {
                break;
            }
        }
        return Ok(());
    }
    // This process's share, in order; as alone, a built-in that stops
    // the search (the deadline, no room left) ends the share, and one that
    // fails ends it too: every process meets the failure again in order.
    let mut mine = Found::new();
    let mut out = Packer::default();
    let mut ended = false;
    for (i, alg) in algs.iter().enumerate() {
        if !share.mine(i) {
            continue;
        }
        let outcome = if ended {
            Outcome::NotRun
        } else {
            mine.price_builtin(p, req, alg).unwrap_or(Outcome::Failed)
        };
        ended |= matches!(outcome, Outcome::NotRun | Outcome::Failed);
        outcome.pack(&mut out);
    }
    let all = share.all_gather(out.0)?;
    let mut words: Vec<Words> = all.iter().map(|b| Words(b)).collect();
    let mut local = mine.builtin.take();
    for (i, alg) in algs.iter().enumerate() {
        let from = &mut words[share.owner(i)];
        let outcome = if from.done() {
            Outcome::NotRun
        } else {
            Outcome::read(from)?
        };
        match outcome {
            Outcome::NotRun => found.stopped = true,
            Outcome::Unbuilt => {}
            Outcome::TooLong(ops) => {
                found.stopped = true;
                found.fewest_left = found.fewest_left.min(ops);
            }
            Outcome::Priced(time_s) => {
                let priced = Priced {
                    algorithm: alg.name.to_string(),
                    time_s,
                    trees: 0,
                    chunks: 0,
                };
                // This process's fastest keeps its schedule.
                let s = match &local {
                    Some((b, _)) if b.algorithm == alg.name => local.take().and_then(|(_, s)| s),
                    _ => None,
                };
                found.builtin_priced(priced, s);
            }
            Outcome::Failed => {
                if found.price_builtin(p, req, alg)? == Outcome::NotRun {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// A form's plans as [`plans_for`] found them; `None` where the search
/// did not look for them.
type Plans = Option<Result<Vec<Vec<Packed>>>>;

/// Prices the chains of every plan of `form`: each process its share of
/// the plans, from the state the round starts in, then every one takes
/// every plan's candidates in order (see [`search`]). Every process finds
/// every plan (the packings are what the items are dealt from).
fn price_plans(
    p: &Problem,
    req: &Request,
    share: &dyn Share,
    found: &mut Found,
    form: Form,
    plans: Plans,
) -> Result<()> {
    if share.size() > 1 {
        return price_plans_shared(p, req, share, found, form, plans);
    }
    // One process prices them in order on the search's own state.
    let Some(packed) = usable(found, plans)? else {
        return Ok(());
    };
    for pk in &packed {
        if found.stopped {
            break;
        }
        found.price_chains(p, req, form, pk)?;
    }
    Ok(())
}

/// The plans to price, if any: none where the search did not look for
/// them, or where looking ran out of time or room once a candidate was
/// priced (the search stops); looking's other failures end it.
fn usable(found: &mut Found, plans: Plans) -> Result<Option<Vec<Vec<Packed>>>> {
    match plans {
        None => Ok(None),
        Some(Err(e)) if ran_out(e.base()) && !found.candidates.is_empty() => {
            found.stopped = true;
            Ok(None)
        }
        Some(Err(e)) => Err(e),
        Some(Ok(packed)) => Ok(Some(packed)),
    }
}

/// [`price_plans`] shared between processes.
fn price_plans_shared(
    p: &Problem,
    req: &Request,
    share: &dyn Share,
    found: &mut Found,
    form: Form,
    plans: Plans,
) -> Result<()> {
    // Every process must deal the same items: plans that one process did
    // not find (its deadline struck first) are dealt by none.
    let count = match &plans {
        Some(Ok(v)) => v.len() as u64,
        Some(Err(_)) => u64::MAX - 1,
        None => u64::MAX,
    };
    let mut out = Packer::default();
    out.u64(count);
    let counts = share.all_gather(out.0)?;
    let dealt = count < u64::MAX - 1
        && counts
            .iter()
            .all(|b| Words(b).u64().is_ok_and(|c| c == count));
    let mut forests: HashMap<u64, Forest> = HashMap::new();
    let mut out = Packer::default();
    if let (true, Some(Ok(packed))) = (dealt, &plans) {
        for (k, pk) in packed.iter().enumerate() {
            if !share.mine(k) {
                continue;
            }
            let mut part = found.share_of();
            let r = part.price_chains(p, req, form, pk).map(|()| part);
            Chains::pack(&r, &mut out);
            if let Ok(part) = r {
                forests.extend(
                    part.synthesized
                        .into_iter()
                        .filter_map(|(_, f, key)| Some((key, f?))),
                );
            }
        }
    }
    let all = share.all_gather(out.0)?;
    if !dealt && matches!(plans, Some(Ok(_))) {
        found.stopped = true;
        return Ok(());
    }
    let Some(packed) = usable(found, plans)? else {
        return Ok(());
    };
    let mut words: Vec<Words> = all.iter().map(|b| Words(b)).collect();
    for (k, pk) in packed.iter().enumerate() {
        if found.stopped {
            break;
        }
        let from = &mut words[share.owner(k)];
        let chains = if from.done() {
            None
        } else {
            Chains::read(from)?
        };
        match chains {
            Some(c) if c.priced.iter().all(|(_, key)| !found.seen.contains(key)) => {
                for (priced, key) in c.priced {
                    found.seen.insert(key);
                    found.synthesized_priced(priced, forests.remove(&key), key);
                }
                found.floor = found.floor.min(c.floor);
                found.stopped |= c.stopped;
            }
            // Failed, or met a forest an earlier plan priced: priced again
            // here from the state reached.
            _ => found.price_chains(p, req, form, pk)?,
        }
    }
    Ok(())
}

/// The trees of the candidate chosen (`chosen`), sent by the process that
/// built them to every other (rank 0's choice is the one every process
/// takes: it is the one written). Alone, nothing is sent.
fn fetch_chosen(share: &dyn Share, chosen: Option<&(Priced, Pick)>) -> Result<Option<Forest>> {
    if share.size() == 1 {
        return Ok(None);
    }
    let wanted = match chosen {
        Some((_, Pick::Forest(_, key))) => Some(*key),
        _ => None,
    };
    let mut out = Packer::default();
    if let Some(key) = wanted {
        out.u64(key);
    }
    let asked = share.all_gather(out.0)?;
    let key = Words(&asked[0]).u64().ok();
    let mut json = Vec::new();
    if let (Some(key), Some((_, Pick::Forest(Some(f), mine)))) = (key, chosen) {
        if *mine == key {
            f.to_json(&mut json)?;
        }
    }
    let sent = share.all_gather(json)?;
    match sent.iter().find(|b| !b.is_empty()) {
        Some(bytes) => Ok(Some(topocoll_algorithms::forest::from_json_reader(
            bytes.as_slice(),
        )?)),
        None => Ok(None),
    }
}

/// The fewest ops of a spread form's schedule on `n` ranks: a tree of
/// 2 (n - 1) ops (a send and a receive an edge) for each of n roots.
fn least_ops(n: usize) -> u64 {
    2 * (n.max(1) as u64 - 1) * n as u64
}

/// The shape of a synthesised schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// One root's trees carry the whole buffer: reduced up them, broadcast
    /// down them, or both (an allreduce through one root).
    Rooted { root: usize, phases: Phases },
    /// Every rank's own trees carry its own piece: its block broadcast
    /// (allgather), its chunk reduced to it (reduce_scatter), or its chunk
    /// reduced to it and broadcast back (allreduce as a reduce-scatter and
    /// an allgather, each chunk's two halves pipelined together).
    Spread { phases: Phases },
    /// An allreduce as a reduce-scatter and then an allgather, each on its
    /// own trees: every rank's chunk reduced up its reduce-scatter trees,
    /// then broadcast down its allgather trees once reduced. Where the two
    /// halves want different links (a half-duplex cable split one way for
    /// one, the other way for the other; a degraded torus), this meets
    /// the halves' bounds where [`Form::Spread`]'s shared trees cannot.
    Phased,
}

impl Form {
    /// Whether every rank is a root of its own trees.
    fn spread(self) -> bool {
        matches!(self, Form::Spread { .. } | Form::Phased)
    }

    /// Which way its pipelines carry the data.
    fn phases(self) -> Phases {
        match self {
            Form::Rooted { phases, .. } | Form::Spread { phases } => phases,
            Form::Phased => Phases::Allreduce,
        }
    }
}

/// The forms tried for a collective.
fn forms(c: Collective) -> Vec<Form> {
    let rooted = |root: u32, phases| Form::Rooted {
        root: root as usize,
        phases,
    };
    let spread = |phases| Form::Spread { phases };
    match c {
        Collective::Bcast { root } => vec![rooted(root, Phases::Bcast)],
        Collective::Reduce { root } => vec![rooted(root, Phases::Reduce)],
        Collective::Allreduce => vec![
            spread(Phases::Allreduce),
            rooted(0, Phases::Allreduce),
            Form::Phased,
        ],
        Collective::Allgather => vec![spread(Phases::Bcast)],
        Collective::ReduceScatter => vec![spread(Phases::Reduce)],
        _ => Vec::new(),
    }
}

/// The candidate edges with the links each uses, and the packing.
type Packed = (Vec<Edge>, Packing);

/// The trees of `form` packed into `p`'s network: for each root, trees
/// whose edges load the links of their route down (broadcast), back up
/// (reduce), or both. A rooted form gets its exact packing
/// ([`pack::exact`]); a spread one both the multiplicative weights' and
/// the exact one where the program is small enough, each priced: on a
/// torus less a few cables the first's many light trees share links under
/// max-min sharing as planned (1.00–1.01× the bound, the program's few
/// heavy ones 1.08–1.15×), on small heterogeneous graphs with half-duplex
/// cables the second's fewer trees come closer (up to 1.54× against
/// 1.34×, 1.14× against 1.00×).
fn packings_for(p: &Problem, form: Form, own_paths: bool) -> Result<Vec<Packed>> {
    let n = p.topo.num_ranks();
    if n < 2 {
        return Ok(Vec::new());
    }
    let roots: Vec<usize> = match form {
        Form::Rooted { root, .. } => vec![root],
        Form::Spread { .. } | Form::Phased => (0..n).collect(),
    };
    let phases = form.phases();
    let mut edges = if own_paths {
        pack::edges_with_paths(p.topo)
    } else {
        pack::edges(p.topo)
    };
    if phases.reduces() {
        let mut back = Vec::new();
        for e in edges.iter_mut() {
            back.clear();
            match &e.path {
                Some(path) => back.extend_from_slice(&path.up),
                None => p.topo.route(e.to as usize, e.from as usize, &mut back),
            }
            if phases.bcasts() {
                e.links.extend_from_slice(&back);
            } else {
                e.links.clone_from(&back);
            }
        }
    }
    let rounds = rounds(roots.len(), edges.len());
    // Each root keeps up to a tree a round, a parent a rank.
    let trees_bytes = (rounds * roots.len() * n * std::mem::size_of::<usize>()) as u64;
    topocoll_base::memory::check(
        trees_bytes,
        &format!("the {} roots' packed trees on {n} ranks", roots.len()),
    )?;
    let deadline = &p.cfg.deadline;
    let packing = pack::pack(p.topo, &edges, &roots, rounds, EPS, deadline)?;
    let exact = if roots.len() <= MAX_EXACT_ROOTS {
        pack::exact(p.topo, &edges, &roots, &packing, deadline)?
    } else {
        None
    };
    let mut found = match (form, exact) {
        (Form::Rooted { .. }, Some(exact)) => vec![exact],
        (Form::Spread { .. } | Form::Phased, Some(exact)) => vec![packing, exact],
        (_, None) => vec![packing],
    };
    for packing in found.iter_mut() {
        for trees in packing.trees.iter_mut() {
            trees.sort_by(|a, b| b.1.total_cmp(&a.1));
            trees.truncate(MAX_TREES);
        }
    }
    Ok(found.into_iter().map(|pk| (edges.clone(), pk)).collect())
}

/// The packings a form's schedule is built from: one for a rooted or
/// spread form, one of each of its halves for [`Form::Phased`] (the
/// multiplicative weights' with each other, the exact ones with each
/// other).
fn plans_for(p: &Problem, form: Form, own_paths: bool) -> Result<Vec<Vec<Packed>>> {
    if form != Form::Phased {
        return Ok(packings_for(p, form, own_paths)?
            .into_iter()
            .map(|pk| vec![pk])
            .collect());
    }
    let up = packings_for(
        p,
        Form::Spread {
            phases: Phases::Reduce,
        },
        own_paths,
    )?;
    let down = packings_for(
        p,
        Form::Spread {
            phases: Phases::Bcast,
        },
        own_paths,
    )?;
    Ok(up.into_iter().zip(down).map(|(u, d)| vec![u, d]).collect())
}

/// Parent pointers of an arborescence.
fn tree_of(root: usize, a: &Arborescence, edges: &[Edge]) -> Result<Tree> {
    let parent: Vec<u32> = a
        .iter()
        .map(|&e| {
            if e == usize::MAX {
                NO_PARENT
            } else {
                edges[e].from
            }
        })
        .collect();
    let axis = vec![NO_AXIS; parent.len()];
    Ok(Tree::from_parents(root as u32, parent, axis)?)
}

/// Copies of each tree, `[root][tree]`, in proportion to the trees'
/// weights across every root as closely as [`MAX_UNITS`] copies of the
/// heaviest root allow, zero for trees left out. Each copy runs as a tree
/// of its own and carries the same rate, so that where copies cross a
/// link, max-min sharing (equal per flow) gives each tree, of whichever
/// root, the rate the packing planned for it. The fewest copies whose
/// rates come within [`COPY_SLACK`] of the plan are taken: one root's
/// weights 2:1:1:1:1 take 6 copies (16 would give them 5:3:3:3:2, and the
/// tree with 2 would run a quarter slower than planned where it crosses
/// the others); an allgather root with one tree of weight 7 beside a root
/// with trees of 4 and 3 gets 7 copies, not one.
fn apportion(roots: &[Vec<f64>], budget: usize) -> Vec<Vec<usize>> {
    let heaviest = roots
        .iter()
        .map(|w| w.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let mut best = (f64::INFINITY, Vec::new());
    for units in 1..=MAX_UNITS {
        let unit = heaviest / units as f64;
        let copies: Vec<Vec<usize>> = roots
            .iter()
            .map(|w| w.iter().map(|&x| (x / unit).round() as usize).collect())
            .collect();
        if units > 1 && copies.iter().flatten().sum::<usize>() > budget {
            break;
        }
        let slow = slowdown(roots, &copies);
        if slow < best.0 {
            best = (slow, copies);
        }
        if best.0 <= 1.0 + COPY_SLACK {
            break;
        }
    }
    if best.1.is_empty() {
        // No count of units within the budget leaves every root a copy
        // (many roots of many trees of like weights: the heaviest's tree
        // rounds to no copy until the copies in all pass the budget).
        // Each root keeps its heaviest trees, one copy each, as many as
        // the budget allows a root.
        let each = (budget / roots.len().max(1)).max(1);
        best.1 = roots.iter().map(|w| heaviest_ones(w, each)).collect();
    }
    let common = best.1.iter().flatten().fold(0, |g, &k| gcd(g, k)).max(1);
    for k in best.1.iter_mut().flatten() {
        *k /= common;
    }
    best.1
}

/// One copy each for the `k` heaviest of `weights` (the earlier of equal
/// ones), none for the others.
fn heaviest_ones(weights: &[f64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
    let mut copies = vec![0; weights.len()];
    for &i in order.iter().take(k) {
        copies[i] = 1;
    }
    copies
}

/// How much longer than planned a schedule of `copies` takes where every
/// tree's copies cross one link: a root's trees carry their weights' parts
/// of its buffer at their copies' part of the rate. Trees left out (no
/// copies) leave their part to their root's others, which run no faster
/// than planned where they cross no other tree.
fn slowdown(roots: &[Vec<f64>], copies: &[Vec<usize>]) -> f64 {
    let weight: f64 = roots.iter().flatten().sum();
    let all = copies.iter().flatten().sum::<usize>() as f64;
    let mut worst: f64 = 1.0;
    for (w, k) in roots.iter().zip(copies) {
        let total: f64 = w.iter().sum();
        let kept: f64 = w.iter().zip(k).filter(|c| *c.1 > 0).map(|c| c.0).sum();
        if total == 0.0 {
            continue;
        }
        if kept == 0.0 {
            return f64::INFINITY;
        }
        for (&x, &c) in w.iter().zip(k) {
            if c > 0 {
                // The tree's rate where it shares, as a part of its plan.
                let rate = (c as f64 / all) / (x / weight);
                worst = worst.max(total / kept / rate.min(1.0));
            }
        }
    }
    worst
}

/// The copies of each packing's trees for `split` (see [`apportion`]) on
/// `n` ranks: `[packing][root][tree]`. The copies in all are held to
/// [`COPY_BUDGET`] a root, or on small networks to as many as leave room
/// in [`MAX_OPS`] for [`COPY_CHUNKS`] chunks (a copy's pipeline has about
/// two operations a rank and chunk).
fn copies_for(split: Parts, plan: &[Packed], n: usize) -> Vec<Vec<Vec<usize>>> {
    let weights: Vec<Vec<f64>> = plan
        .iter()
        .flat_map(|(_, pk)| pk.trees.iter().map(|ts| ts.iter().map(|t| t.1).collect()))
        .collect();
    let by_root: Vec<Vec<usize>> = match split {
        Parts::Top(k) => weights
            .iter()
            .map(|w| (0..w.len()).map(|i| usize::from(i < k)).collect())
            .collect(),
        Parts::Even => weights.iter().map(|w| shares(w, EVEN_UNITS)).collect(),
        Parts::Weighted => {
            let per_copy = 2 * (n.max(2) as u64 - 1) * COPY_CHUNKS;
            let budget = (COPY_BUDGET * weights.len()).max((MAX_OPS / per_copy) as usize);
            apportion(&weights, budget)
        }
    };
    let mut by_root = by_root.into_iter();
    plan.iter()
        .map(|(_, pk)| by_root.by_ref().take(pk.trees.len()).collect())
        .collect()
}

/// `units` equal shares apportioned between one root's trees by their
/// weights (largest remainders), then divided by their greatest common
/// divisor: few copies, each tree's within a share of its weight.
fn shares(weights: &[f64], units: usize) -> Vec<usize> {
    let total: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights.iter().map(|w| units as f64 * w / total).collect();
    let mut shares: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let given: usize = shares.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().take(units - given) {
        shares[i] += 1;
    }
    let common = shares.iter().fold(0, |g, &k| gcd(g, k)).max(1);
    shares.iter().map(|k| k / common).collect()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// How a root's buffer is split between its trees' copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Parts {
    /// Evenly between few copies: [`EVEN_UNITS`] equal shares apportioned
    /// between the trees ([`shares`]), a share a copy. Max-min sharing then
    /// rebalances where trees cross, which can beat the packing's plan
    /// (and where engines bind, fewer messages pay), but trees that cross
    /// nothing finish unevenly by the rounding.
    Even,
    /// By the packing's rates: a tree carries the part its rate is of the
    /// root's total, split evenly between its copies ([`apportion`]), so
    /// trees finish together as planned.
    Weighted,
    /// By the rates, between the `k` heaviest trees of each root only, one
    /// copy each: the fewest messages, for networks where every tree's
    /// copies do not fit in [`MAX_OPS`].
    Top(usize),
}

/// The rooted pipeline of one root's trees over `count` elements: each
/// tree runs as its number of `copies` ([`copies_for`]), the buffer split
/// between them as `split` says.
#[allow(clippy::too_many_arguments)]
fn pipeline(
    root: usize,
    trees: &[(Arborescence, f64)],
    copies: &[usize],
    edges: &[Edge],
    count: u64,
    chunks: u64,
    phases: Phases,
    split: Parts,
    paths: &mut PathIds,
) -> Result<Pipeline> {
    let weights: Vec<f64> = trees.iter().map(|t| t.1).collect();
    // The trees kept share the buffer.
    let total: f64 = weights
        .iter()
        .zip(copies)
        .filter(|c| *c.1 > 0)
        .map(|c| c.0)
        .sum();
    let mut ts = Vec::new();
    let mut parts = Vec::new();
    let own_paths = trees.iter().any(|t| {
        t.0.iter()
            .any(|&e| e != usize::MAX && edges[e].path.is_some())
    });
    let mut hops = Vec::new();
    let all: usize = copies.iter().sum();
    let (mut at, mut planned) = (0u64, 0.0f64);
    for (i, &k) in copies.iter().enumerate() {
        for _ in 0..k {
            planned += match split {
                Parts::Weighted | Parts::Top(_) => weights[i] / k as f64,
                Parts::Even => total / all as f64,
            };
            let end = ((count as f64 * planned / total).round() as u64).min(count);
            if end > at {
                ts.push(tree_of(root, &trees[i].0, edges)?);
                if own_paths {
                    hops.push(paths.hops(&trees[i].0, edges));
                }
                parts.push((at, end - at));
                at = end;
            }
        }
    }
    // Rounding leaves the last elements to the last part.
    if let Some(last) = parts.last_mut() {
        last.1 = count - last.0;
    }
    let largest = parts.iter().map(|x| x.1).max().unwrap_or(0);
    let seg = largest.div_ceil(chunks).max(1);
    let mut pl = Pipeline::new(ts, parts, seg, phases)?;
    pl.hop_routes = hops;
    Ok(pl)
}

/// The paths of their own that a schedule's tree edges take
/// ([`pack::Path`]), each numbered once, in the order the schedule is to
/// are numbered in ([`Forest::paths`]).
#[derive(Default)]
struct PathIds {
    ids: HashMap<Vec<LinkId>, u32>,
    list: Vec<Vec<LinkId>>,
}

impl PathIds {
    /// The route id of `links`: the next path's if they are new. A
    /// synthesised schedule has no offset routes, so path k is route k + 1.
    fn id(&mut self, links: &[LinkId]) -> u32 {
        if let Some(&id) = self.ids.get(links) {
            return id;
        }
        self.list.push(links.to_vec());
        let id = self.list.len() as u32;
        self.ids.insert(links.to_vec(), id);
        id
    }

    /// `Pipeline::hop_routes` of one tree: each rank's routes from its
    /// parent and back, 0 (the topology's) where its edge has no path.
    fn hops(&mut self, tree: &Arborescence, edges: &[Edge]) -> Vec<[u32; 2]> {
        tree.iter()
            .map(|&e| match edges.get(e).and_then(|e| e.path.as_ref()) {
                Some(p) => [self.id(&p.down), self.id(&p.up)],
                None => [0, 0],
            })
            .collect()
    }
}

/// The synthesised schedule of `form` with `chunks` chunks a tree part, as
/// its trees, or `None` when it would be too large.
fn synthesize(
    req: &Request,
    form: Form,
    split: Parts,
    plan: &[Packed],
    chunks: u64,
) -> Result<Option<Forest>> {
    let (edges, packing) = &plan[0];
    let mut f = Forest::new(req);
    let mut paths = PathIds::default();
    let copies = copies_for(split, plan, f.ranks);
    match form {
        // An empty buffer: nothing to carry, no ops (as each spread
        // form's root of an empty piece has none).
        Form::Rooted { .. } if f.count == 0 => {}
        Form::Rooted { root, .. } => {
            let pl = pipeline(
                root,
                &packing.trees[0],
                &copies[0][0],
                edges,
                f.count,
                chunks,
                form.phases(),
                split,
                &mut paths,
            )?;
            f.stages.push(Stage {
                piece: Piece::Whole,
                phases: form.phases(),
                after_previous: false,
                pipelines: vec![(root as u32, pl)],
            });
        }
        Form::Spread { phases } => {
            let piece = if phases.reduces() {
                Piece::Chunk
            } else {
                Piece::Block
            };
            let st = spread(
                &f, phases, piece, split, &plan[0], &copies[0], chunks, &mut paths,
            )?;
            f.stages.push(st);
        }
        Form::Phased => {
            let up = spread(
                &f,
                Phases::Reduce,
                Piece::Chunk,
                split,
                &plan[0],
                &copies[0],
                chunks,
                &mut paths,
            )?;
            f.stages.push(up);
            let mut down = spread(
                &f,
                Phases::Bcast,
                Piece::Chunk,
                split,
                &plan[1],
                &copies[1],
                chunks,
                &mut paths,
            )?;
            down.after_previous = true;
            f.stages.push(down);
        }
    }
    if f.pipeline_ops() > MAX_OPS {
        return Ok(None);
    }
    f.paths = paths.list;
    Ok(Some(f))
}

/// Every rank's piece carried by its own trees (see [`Form::Spread`]):
/// one rooted pipeline per rank whose piece is not empty.
#[allow(clippy::too_many_arguments)]
fn spread(
    f: &Forest,
    phases: Phases,
    piece: Piece,
    split: Parts,
    packed: &Packed,
    copies: &[Vec<usize>],
    chunks: u64,
    paths: &mut PathIds,
) -> Result<Stage> {
    let (edges, packing) = packed;
    let n = f.ranks;
    let mut pipelines = Vec::new();
    for (root, (trees, copies)) in packing.trees.iter().zip(copies).enumerate().take(n) {
        let len = match piece {
            Piece::Block | Piece::Whole => f.count,
            Piece::Chunk => topocoll_schedule::chunk(f.count, n as u64, root as u64).1,
        };
        if len == 0 {
            continue;
        }
        let pl = pipeline(
            root, trees, copies, edges, len, chunks, phases, split, paths,
        )?;
        pipelines.push((root as u32, pl));
    }
    Ok(Stage {
        piece,
        phases,
        after_previous: false,
        pipelines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use topocoll_topology::parse_spec;

    fn problem(t: &Topology, c: Collective, size: u64) -> Problem<'_> {
        Problem {
            topo: t,
            collective: c,
            size_bytes: size,
            dtype: if c.is_reduction() {
                Dtype::F64
            } else {
                Dtype::U8
            },
            op: ReduceOp::Sum,
            cfg: SimConfig {
                engines: 8,
                ..SimConfig::default()
            },
        }
    }

    #[test]
    fn copies_carry_one_rate_across_roots() {
        // One root: the fewest copies in the weights' proportions.
        assert_eq!(
            apportion(&[vec![2.0, 1.0, 1.0, 1.0, 1.0]], 1000),
            vec![vec![2, 1, 1, 1, 1]]
        );
        // Two roots: a copy carries the same rate whichever root it is of.
        assert_eq!(
            apportion(&[vec![7.0], vec![4.0, 3.0]], 1000),
            vec![vec![7], vec![4, 3]]
        );
        // Where the budget binds, the closest apportionment within it.
        let tight = apportion(&[vec![7.0], vec![4.0, 3.0]], 3);
        assert!(tight.iter().flatten().sum::<usize>() <= 3);
        assert!(slowdown(&[vec![7.0], vec![4.0, 3.0]], &tight) > 1.0 + COPY_SLACK);
        // Many roots of even trees: where no count of units gives every
        // root a copy within the budget, each keeps its heaviest trees.
        let even = vec![vec![1.0; 8]; 144];
        let few = apportion(&even, 4 * 144);
        assert_eq!(few.len(), 144);
        assert!(few.iter().all(|k| k.iter().sum::<usize>() == 4), "{few:?}");
        // A tree too light for a copy leaves its part to the others.
        let light = apportion(&[vec![100.0, 0.1]], 1000);
        assert_eq!(light, vec![vec![1, 0]]);
        assert!(slowdown(&[vec![100.0, 0.1]], &light) <= 1.0 + COPY_SLACK);
    }

    #[test]
    fn synthesized_schedules_verify() {
        for spec in ["torus:3x3", "mesh:2x3", "hypercube:3"] {
            let t = parse_spec(spec).unwrap();
            for c in [
                Collective::Bcast { root: 1 },
                Collective::Reduce { root: 2 },
                Collective::Allreduce,
                Collective::Allgather,
                Collective::ReduceScatter,
            ] {
                let p = problem(&t, c, 8 * 361);
                let req =
                    Request::new(c, t.num_ranks(), p.size_bytes, p.dtype, p.op, Some(&t)).unwrap();
                for form in forms(c) {
                    for packed in plans_for(&p, form, false).unwrap() {
                        for chunks in [1, 3] {
                            for split in [Parts::Even, Parts::Weighted] {
                                let f = synthesize(&req, form, split, &packed, chunks)
                                    .unwrap()
                                    .unwrap();
                                let s = f.expand().unwrap();
                                // Written out and read back, the trees
                                // expand to the same ops, bit for bit.
                                let mut text = Vec::new();
                                f.to_json(&mut text).unwrap();
                                let back =
                                    topocoll_algorithms::forest::from_json_reader(text.as_slice())
                                        .unwrap()
                                        .expand()
                                        .unwrap();
                                assert_eq!(back, s, "{spec} {} {form:?}", c.name());
                                let ops: usize = s.programs.iter().map(|p| p.len()).sum();
                                assert_eq!(f.total_ops(), ops as u64);
                                topocoll_schedule::verify(&s).unwrap_or_else(|e| {
                                    panic!(
                                        "{spec} {} {form:?} {split:?} chunks {chunks}: {e}",
                                        c.name()
                                    )
                                });
                            }
                        }
                    }
                }
            }
        }
    }
}
