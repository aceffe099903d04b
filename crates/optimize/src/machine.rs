//! This machine as the simulator prices it, for `tune` without a network
//! and for `--algorithm auto` on the runtime: one host whose ranks share a
//! link inside it ([`Machine`]), its figures fitted from a few collectives
//! timed on the runtime ([`Calibration`]), and the choice `auto` makes
//! from a tuning table ([`auto_choice`]).

use crate::error::fail;
use crate::error::{Error, Result};
use crate::tune::{Cache, Candidate, Notes, Problem, Progress, Search};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use topocoll_schedule::{Collective, Dtype, ReduceOp};
use topocoll_sim::SimConfig;
use topocoll_topology::Topology;

/// This machine as the simulator prices it: one host whose ranks share a
/// link inside it, each message costing the sender `overhead_s` and taking
/// `latency_s` to arrive.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    /// How the figures were obtained.
    pub source: String,
    /// Seconds of CPU per message on the sender.
    pub overhead_s: f64,
    /// Seconds from a message's send to its arrival, beyond the sender's
    /// overhead and the bytes' time (the link inside the host's latency).
    #[serde(default)]
    pub latency_s: f64,
    /// Bytes/s of one message alone (one flow's cap).
    pub pair_bandwidth: f64,
    /// Bytes/s of the host's ranks' messages together (the link inside it).
    pub node_bandwidth: f64,
    /// Bytes/s one rank combines.
    pub compute_bandwidth: f64,
}

impl Machine {
    /// Figures of a typical shared-memory node, used until `tune
    /// --calibrate` has measured this one.
    pub fn typical() -> Machine {
        Machine {
            source: "typical figures (topocoll tune --calibrate measures this machine's)".into(),
            overhead_s: 2e-6,
            latency_s: 1e-6,
            pair_bandwidth: 5e9,
            node_bandwidth: 10e9,
            compute_bandwidth: 4e9,
        }
    }

    fn path(dir: &Path) -> PathBuf {
        dir.join("machine.json")
    }

    /// Keeps the calibration in `dir`, whole or not at all (a file of its
    /// own, renamed over the old one); returns the file.
    pub fn store(&self, dir: &Path) -> Result<PathBuf> {
        self.check().map_err(|why| {
            fail!(
                Optimize,
                Calibration,
                "the calibration measured a figure no machine has: {why}"
            )
        })?;
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("cannot create '{}'", dir.display()), e))?;
        let path = Self::path(dir);
        let tmp = dir.join(format!("machine.json.{}.tmp", std::process::id()));
        let text = serde_json::to_string_pretty(self).expect("a machine serialises");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| Error::io(format!("writing '{}'", path.display()), e))?;
        Ok(path)
    }

    /// The calibration kept in `dir`, or the typical figures where there is
    /// none. A file that is there but does not read, or holds a figure no
    /// machine has, is refused naming the file and the field (`tune
    /// --calibrate` writes it again).
    pub fn load(dir: Option<&Path>) -> Result<Machine> {
        let Some(path) = dir.map(Self::path) else {
            return Ok(Machine::typical());
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Machine::typical()),
            Err(e) => {
                return Err(fail!(
                    Optimize,
                    Calibration,
                    "cannot read the calibration '{}': {e}",
                    path.display()
                ))
            }
        };
        let redo = "run topocoll tune --calibrate again, or remove the file";
        let bad = |why: String| {
            fail!(
                Optimize,
                Calibration,
                "the calibration '{}': {why}; {redo}",
                path.display()
            )
        };
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not JSON ({e})")))?;
        // Each figure a number, named when it is not (serde's own message
        // gives a line and column, not the field).
        for field in [
            "overhead_s",
            "latency_s",
            "pair_bandwidth",
            "node_bandwidth",
            "compute_bandwidth",
        ] {
            match v.get(field) {
                Some(x) if !x.is_number() => {
                    return Err(bad(format!("{field} must be a number, got {x}")))
                }
                None if field != "latency_s" => return Err(bad(format!("{field} is missing"))),
                _ => {}
            }
        }
        let m: Machine = serde_json::from_value(v).map_err(|e| bad(e.to_string()))?;
        m.check().map_err(|why| {
            fail!(
                Optimize,
                Calibration,
                "the calibration '{}': {why}; {redo}",
                path.display()
            )
        })?;
        Ok(m)
    }

    /// Whether every figure is one a machine can have: the field and why
    /// when one is not.
    pub fn check(&self) -> std::result::Result<(), String> {
        for (field, v, most) in [
            ("overhead_s", self.overhead_s, 1.0),
            ("latency_s", self.latency_s, 1.0),
        ] {
            if !(v.is_finite() && (0.0..=most).contains(&v)) {
                return Err(format!("{field} must be from 0 to {most} seconds, got {v}"));
            }
        }
        for (field, v) in [
            ("pair_bandwidth", self.pair_bandwidth),
            ("node_bandwidth", self.node_bandwidth),
            ("compute_bandwidth", self.compute_bandwidth),
        ] {
            if !(v.is_finite() && (1.0..=1e18).contains(&v)) {
                return Err(format!("{field} must be from 1 to 1e18 bytes/s, got {v}"));
            }
        }
        Ok(())
    }

    /// One host with `ranks` ranks on it.
    pub fn topology(&self, ranks: usize) -> Result<Topology> {
        let mut t = topocoll_topology::parse_spec("torus:1")?;
        t.place_ranks(
            ranks,
            &topocoll_topology::RankMap::Block,
            self.node_bandwidth,
            self.latency_s,
        )?;
        t.name = format!("this machine ({ranks} ranks)");
        Ok(t)
    }

    /// The node model.
    pub fn config(&self, reduction: bool) -> SimConfig {
        SimConfig {
            overhead_s: self.overhead_s,
            compute_bandwidth: reduction.then_some(self.compute_bandwidth),
            flow_cap: Some(self.pair_bandwidth),
            ..SimConfig::default()
        }
    }
}

/// The cache directory: `flag` (a command line's `--cache-dir`), or the
/// default ([`crate::tune::default_cache_dir`]).
pub fn cache_dir(flag: Option<&str>) -> Option<PathBuf> {
    flag.map(PathBuf::from)
        .or_else(crate::tune::default_cache_dir)
}

/// The runtime's network and node model: `ranks` ranks on this machine,
/// or `topo` when given, with the calibration in the default cache.
pub struct MachineProblem {
    pub topology: Topology,
    pub config: SimConfig,
}

impl MachineProblem {
    pub fn new(topo: Option<Topology>, ranks: usize, reduction: bool) -> Result<Self> {
        let m = Machine::load(cache_dir(None).as_deref())?;
        let topology = match topo {
            Some(t) => t,
            None => m.topology(ranks)?,
        };
        Ok(MachineProblem {
            topology,
            config: m.config(reduction),
        })
    }

    pub fn problem(
        &self,
        collective: Collective,
        dtype: Dtype,
        op: ReduceOp,
        engines: Vec<usize>,
    ) -> Problem<'_> {
        Problem {
            collective,
            dtype,
            op,
            topology: &self.topology,
            config: self.config.clone(),
            engines,
            library: None,
            counts: None,
            search: Search::Winner,
        }
    }

    /// The simulator's time for `s` with `engines`.
    pub fn predict(&self, s: &topocoll_schedule::Schedule, engines: usize) -> Result<f64> {
        let mut cfg = self.config.clone();
        cfg.engines = engines;
        let priced = crate::price::price_schedule(s.clone(), &self.topology, &[cfg])?;
        Ok(priced.runs[0].time_s)
    }
}

/// `--algorithm auto` at `size_bytes`: the choice of `problem`'s table
/// (from the default cache, or priced now and kept there), with what
/// [`Problem::tune`] notes: cached decisions priced again, and why the
/// table could not be kept if it could not (which costs a pricing next
/// time, nothing else).
pub fn auto_choice(
    problem: &Problem,
    size_bytes: u64,
    progress: impl FnMut(&Progress),
) -> Result<(Candidate, Notes)> {
    let cache = cache_dir(None).map(|dir| Cache { dir });
    let (table, notes) = problem.tune(&[size_bytes], cache.as_ref(), progress)?;
    let choice = table
        .get(size_bytes)
        .ok_or_else(|| {
            fail!(
                Optimize,
                Problem,
                "tune decided nothing at {size_bytes} bytes"
            )
        })?
        .choice
        .clone();
    Ok((choice, notes))
}

/// `auto` for a workload's calls (`replay --algorithm allreduce=auto`):
/// for a call of the world's ranks, the algorithm and pipeline segment of
/// the tune table of `topology` under `config` at the call's size, as
/// [`auto_choice`] gives them (byte-sized elements, as a replay's
/// schedules are), each (collective, root, size) decided once.
pub fn auto_picker(
    topology: Topology,
    config: SimConfig,
) -> impl Fn(Collective, u64) -> Result<Candidate> + Send + Sync {
    type Key = (topocoll_schedule::CollectiveKind, Option<u32>, u64);
    type Decided = std::collections::HashMap<Key, Candidate>;
    let decided = std::sync::Mutex::new(Decided::default());
    move |collective: Collective, bytes| {
        let key = (collective.kind(), collective.root(), bytes);
        if let Some(c) = decided
            .lock()
            .map_err(|_| fail!(Optimize, Problem, "auto: a pricing thread failed"))?
            .get(&key)
        {
            return Ok(c.clone());
        }
        let problem = Problem {
            collective,
            dtype: Dtype::U8,
            op: ReduceOp::Sum,
            topology: &topology,
            config: config.clone(),
            engines: vec![config.engines],
            library: None,
            counts: None,
            search: Search::Winner,
        };
        let (choice, _) = auto_choice(&problem, bytes, |_| {})?;
        decided
            .lock()
            .map_err(|_| fail!(Optimize, Problem, "auto: a pricing thread failed"))?
            .insert(key, choice.clone());
        Ok(choice)
    }
}

/// The runs `tune --calibrate` times, each isolating one figure of
/// [`Machine`] (see [`Calibration::fit`]).
#[derive(Clone, Copy, Debug)]
pub struct CalibrationRun {
    pub collective: &'static str,
    pub algorithm: &'static str,
    pub size_bytes: u64,
    /// Sends in flight per rank, as a function of the rank count.
    pub engines: fn(usize) -> usize,
}

/// Large blocks: long enough that per-message costs are a small part.
pub const LARGE: u64 = 16 << 20;

/// The four timed runs, in the order [`Calibration::fit`] reads them.
pub const CALIBRATION_RUNS: [CalibrationRun; 4] = [
    // An 8-byte recursive-doubling allreduce: R rounds of dependent
    // exchanges, R(o + L).
    CalibrationRun {
        collective: "allreduce",
        algorithm: "recursive_doubling",
        size_bytes: 8,
        engines: |p| p,
    },
    // A linear scatter of 8-byte blocks, sent all at once: (P-1)o + L.
    CalibrationRun {
        collective: "scatter",
        algorithm: "linear",
        size_bytes: 8,
        engines: |p| p - 1,
    },
    // The one-engine scatter of large blocks: the pair bandwidth.
    CalibrationRun {
        collective: "scatter",
        algorithm: "linear",
        size_bytes: LARGE,
        engines: |_| 1,
    },
    // A linear all-to-all of large blocks, every message at once: the node
    // bandwidth.
    CalibrationRun {
        collective: "alltoall",
        algorithm: "linear",
        size_bytes: LARGE,
        engines: |p| p,
    },
];

/// What `tune --calibrate` measured: the median seconds of each of
/// [`CALIBRATION_RUNS`] and the reduction kernel's rate.
#[derive(Clone, Debug)]
pub struct Calibration {
    pub ranks: usize,
    /// Seconds of each run of [`CALIBRATION_RUNS`], in order.
    pub times_s: [f64; 4],
    /// Bytes of the buffer combined per second (f64 sum in place).
    pub compute_bandwidth: f64,
}

impl Calibration {
    /// The node model these measurements give:
    ///
    /// - overhead and latency: the allreduce's R rounds (R = log2 P, and 2
    ///   more to fold other rank counts) and the all-at-once scatter,
    ///   solved for o and L (on 2 ranks, where the two are one, all of it
    ///   is latency). A dependent exchange is what small collectives are
    ///   made of, and it is measured as the collectives are: from each
    ///   rank's own start, on ranks that may share cores;
    /// - pair bandwidth: the one-engine scatter with large blocks, less the
    ///   overheads and latencies;
    /// - node bandwidth: the all-to-all's P(P-1) blocks over its time less
    ///   the root's overheads;
    /// - compute bandwidth: as measured.
    pub fn fit(&self, source: String) -> Result<Machine> {
        let ranks = self.ranks;
        if ranks < 2 {
            return Err(fail!(
                Optimize,
                Calibration,
                "a calibration needs at least 2 ranks"
            ));
        }
        let [small, at_once, seq, all] = self.times_s;
        let p = ranks as f64;
        let pof2 = ranks.next_power_of_two();
        let rounds = f64::from(pof2.trailing_zeros()) + if pof2 == ranks { 0.0 } else { 2.0 };
        let step = small / rounds;
        let overhead_s = if ranks > 2 {
            ((at_once - step) / (p - 2.0)).clamp(0.0, step)
        } else {
            0.0
        };
        let latency_s = step - overhead_s;
        let pair_bandwidth =
            (p - 1.0) * LARGE as f64 / (seq - (p - 1.0) * (overhead_s + latency_s)).max(1e-9);
        let node_bandwidth = (p * (p - 1.0) * LARGE as f64
            / (all - (p - 1.0) * overhead_s - latency_s).max(1e-9))
        .max(pair_bandwidth);
        Ok(Machine {
            source,
            overhead_s,
            latency_s,
            pair_bandwidth,
            node_bandwidth,
            compute_bandwidth: self.compute_bandwidth,
        })
    }
}
