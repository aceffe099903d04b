//! What the library runs, from the environment (docs/runtime.md, "Inside
//! an MPI program"), read once at `MPI_Init`. Every problem is one line
//! naming the variable or file, and the program stops there.

use crate::abi::Coll;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use topocoll_algorithms::{forest, Algorithm};
use topocoll_base::units::parse_bytes;
use topocoll_optimize::tune::Table;
use topocoll_schedule::{
    CollectiveKind, Dtype, FileFormat, MscclHeader, MscclImport, ReduceOp, Schedule,
};
use topocoll_topology::{RankMap, Topology};

/// The environment variables the library reads.
pub const ALGORITHMS_VAR: &str = "TOPOCOLL_ALGORITHMS";
pub const TABLE_VAR: &str = "TOPOCOLL_TABLE";
pub const SCHEDULES_VAR: &str = "TOPOCOLL_SCHEDULES";
pub const REPORT_VAR: &str = "TOPOCOLL_REPORT";
pub const TOPOLOGY_VAR: &str = "TOPOCOLL_TOPOLOGY";
pub const RANKS_PER_NODE_VAR: &str = "TOPOCOLL_RANKS_PER_NODE";

/// The bandwidth of the link inside a host when ranks share one (the
/// command line's `--node-bandwidth` default; it steers only the choice
/// of the node-aware algorithms' leaders, never correctness).
const NODE_BANDWIDTH: f64 = 20e9;

/// One way to serve a collective: the library's own, or an algorithm with
/// its pipeline segment.
#[derive(Clone, Copy, Debug)]
pub enum Choice {
    Native,
    Algorithm {
        entry: &'static Algorithm,
        segment_bytes: Option<u64>,
    },
}

impl Choice {
    /// `native`, `ring`, `pipeline/32KiB` (as `tune` labels its candidates).
    pub fn parse(kind: CollectiveKind, text: &str) -> Result<Choice, String> {
        let text = text.trim();
        if text == "native" {
            return Ok(Choice::Native);
        }
        let (name, segment) = match text.split_once('/') {
            Some((n, s)) => (n, Some(parse_bytes(s).map_err(|e| e.to_string())?)),
            None => (text, None),
        };
        let entry = topocoll_algorithms::find(kind, name).map_err(|e| e.to_string())?;
        Ok(Choice::Algorithm {
            entry,
            segment_bytes: segment,
        })
    }

    pub fn label(&self) -> String {
        match self {
            Choice::Native => "native".into(),
            Choice::Algorithm {
                entry,
                segment_bytes: None,
            } => entry.name.into(),
            Choice::Algorithm {
                entry,
                segment_bytes: Some(s),
            } => format!("{}/{}", entry.name, topocoll_base::units::format_bytes(*s)),
        }
    }
}

/// A schedule file, read and verified at start.
pub struct ScheduleFile {
    pub path: PathBuf,
    pub schedule: Arc<Schedule>,
}

/// An MSCCL XML file, its header read and its schedule verified (at one
/// element a chunk) at start; built at each call's size as it comes.
pub struct MscclFile {
    pub path: PathBuf,
    pub text: Arc<str>,
    pub header: MscclHeader,
}

/// An MSCCL XML file's schedule of `count` elements of `dtype` (`None`:
/// one a chunk), verified.
pub fn msccl_schedule(
    text: &str,
    count: Option<u64>,
    dtype: Dtype,
) -> topocoll_schedule::Result<Schedule> {
    let how = MscclImport {
        count,
        dtype,
        op: ReduceOp::Sum,
    };
    let s = topocoll_schedule::from_msccl_xml(text, &how)?;
    topocoll_schedule::verify(&s)?;
    Ok(s)
}

/// A decision table with its choices parsed.
pub struct TableFile {
    pub path: PathBuf,
    pub kind: CollectiveKind,
    pub ranks: usize,
    /// (size in bytes, choice), increasing sizes.
    pub decisions: Vec<(u64, Choice)>,
}

impl TableFile {
    /// The choice at `size_bytes`: the decision of the largest size at or
    /// below it, up to twice the table's largest size; `None` outside that.
    pub fn choice(&self, size_bytes: u64) -> Option<Choice> {
        let i = self.decisions.partition_point(|d| d.0 <= size_bytes);
        let last = self.decisions.last()?.0;
        if i == 0 || size_bytes > last.saturating_mul(2) {
            return None;
        }
        Some(self.decisions[i - 1].1)
    }
}

/// Everything configured.
#[derive(Default)]
pub struct Config {
    pub algorithms: HashMap<Coll, Choice>,
    pub tables: Vec<TableFile>,
    pub schedules: Vec<ScheduleFile>,
    pub msccl: Vec<MscclFile>,
    pub report: Option<PathBuf>,
    /// The network the world's ranks sit on, for the topology-aware and
    /// node-aware algorithms, on communicators of its rank count.
    pub topology: Option<Topology>,
}

impl Config {
    /// Reads the configuration through `var` (the process environment in
    /// the library, a map in tests).
    pub fn read(var: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let mut c = Config::default();
        if let Some(text) = var(ALGORITHMS_VAR).filter(|t| !t.trim().is_empty()) {
            c.algorithms = parse_algorithms(&text).map_err(|e| format!("{ALGORITHMS_VAR}: {e}"))?;
        }
        if let Some(list) = var(TABLE_VAR).filter(|t| !t.trim().is_empty()) {
            for path in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                c.tables.push(read_table(Path::new(path))?);
            }
        }
        if let Some(dir) = var(SCHEDULES_VAR).filter(|t| !t.trim().is_empty()) {
            (c.schedules, c.msccl) = read_schedules(Path::new(dir.trim()))?;
        }
        if let Some(spec) = var(TOPOLOGY_VAR).filter(|t| !t.trim().is_empty()) {
            let mut t =
                topocoll_topology::parse_spec(&spec).map_err(|e| format!("{TOPOLOGY_VAR}: {e}"))?;
            if let Some(k) = var(RANKS_PER_NODE_VAR).filter(|t| !t.trim().is_empty()) {
                let k: usize = k
                    .trim()
                    .parse()
                    .map_err(|_| format!("{RANKS_PER_NODE_VAR}: '{k}' is not a whole number"))?;
                if k > 1 {
                    t.place_ranks(k, &RankMap::Block, NODE_BANDWIDTH, 0.0)
                        .map_err(|e| format!("{RANKS_PER_NODE_VAR}: {e}"))?;
                }
            }
            c.topology = Some(t);
        } else if var(RANKS_PER_NODE_VAR).is_some_and(|t| !t.trim().is_empty()) {
            return Err(format!("{RANKS_PER_NODE_VAR} needs {TOPOLOGY_VAR}"));
        }
        c.report = var(REPORT_VAR)
            .filter(|t| !t.trim().is_empty())
            .map(PathBuf::from);
        Ok(c)
    }

    /// Whether anything configured could serve `coll` on `ranks` ranks
    /// (alltoallv gathers its counts only then).
    pub fn may_serve(&self, coll: Coll, ranks: usize) -> bool {
        let kind = coll.kind();
        match self.algorithms.get(&coll) {
            Some(Choice::Native) => false,
            Some(_) => true,
            None => {
                self.tables
                    .iter()
                    .any(|t| t.kind == kind && t.ranks == ranks)
                    || self
                        .schedules
                        .iter()
                        .any(|s| s.schedule.collective.kind() == kind && s.schedule.ranks == ranks)
                    || self
                        .msccl
                        .iter()
                        .any(|m| m.header.collective.kind() == kind && m.header.ranks == ranks)
            }
        }
    }
}

/// `allreduce=ring,bcast=binomial,alltoall=native`.
fn parse_algorithms(text: &str) -> Result<HashMap<Coll, Choice>, String> {
    let mut out = HashMap::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((coll, alg)) = item.split_once('=') else {
            return Err(format!("'{item}' is not COLLECTIVE=ALGORITHM"));
        };
        let kind = CollectiveKind::parse(coll.trim()).map_err(|e| e.to_string())?;
        let choice = Choice::parse(kind, alg)?;
        if out.insert(Coll::from_kind(kind), choice).is_some() {
            return Err(format!("{} is given twice", kind.name()));
        }
    }
    Ok(out)
}

/// A `tune --format json` table.
fn read_table(path: &Path) -> Result<TableFile, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{TABLE_VAR}: cannot read '{shown}': {e}"))?;
    let t: Table = serde_json::from_str(&text)
        .map_err(|e| format!("{TABLE_VAR}: '{shown}' is not a tune table: {e}"))?;
    let kind =
        CollectiveKind::parse(&t.collective).map_err(|e| format!("{TABLE_VAR}: '{shown}': {e}"))?;
    let mut decisions = Vec::with_capacity(t.decisions.len());
    for (i, d) in t.decisions.iter().enumerate() {
        let choice = match d.choice.algorithm.as_str() {
            "native" => Choice::Native,
            name => Choice::Algorithm {
                entry: topocoll_algorithms::find(kind, name)
                    .map_err(|e| format!("{TABLE_VAR}: '{shown}': decisions[{i}]: {e}"))?,
                segment_bytes: d.choice.segment_bytes,
            },
        };
        if decisions.last().is_some_and(|&(s, _)| s >= d.size_bytes) {
            return Err(format!(
                "{TABLE_VAR}: '{shown}': decisions[{i}]: sizes must increase"
            ));
        }
        decisions.push((d.size_bytes, choice));
    }
    if decisions.is_empty() {
        return Err(format!("{TABLE_VAR}: '{shown}' has no decisions"));
    }
    Ok(TableFile {
        path: path.to_path_buf(),
        kind,
        ranks: t.ranks,
        decisions,
    })
}

/// Every schedule in `dir`, each verified: the `*.json` files, topocoll's
/// schedule JSON or a forest of trees (what `optimize --schedule-out`
/// writes for a synthesised schedule, expanded into its schedule), and the
/// `*.xml` files, MSCCL XML (what `schedule --format msccl` and `optimize
/// --schedule-out F.xml` write), built at each call's size.
fn read_schedules(dir: &Path) -> Result<(Vec<ScheduleFile>, Vec<MscclFile>), String> {
    let shown = dir.display();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("{SCHEDULES_VAR}: cannot read directory '{shown}': {e}"))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "xml"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    let mut msccl = Vec::new();
    for path in paths {
        let shown = path.display();
        let bad = |e: &dyn std::fmt::Display| format!("{SCHEDULES_VAR}: '{shown}': {e}");
        let file = topocoll_schedule::ScheduleFile::open(&path)
            .map_err(|e| format!("{SCHEDULES_VAR}: cannot read '{shown}': {e}"))?;
        let s = match file.format() {
            FileFormat::Msccl => {
                let text = file.text().map_err(|e| bad(&e))?;
                let header = topocoll_schedule::msccl_header(&text).map_err(|e| bad(&e))?;
                msccl_schedule(&text, None, Dtype::U8).map_err(|e| bad(&e))?;
                msccl.push(MscclFile {
                    path: path.clone(),
                    text: text.into(),
                    header,
                });
                continue;
            }
            FileFormat::Forest => forest::from_json_reader(file.into_reader())
                .and_then(|f| f.expand())
                .map_err(|e| bad(&e))?,
            FileFormat::Json => {
                topocoll_schedule::from_json_reader(file.into_reader()).map_err(|e| bad(&e))?
            }
        };
        topocoll_schedule::verify(&s).map_err(|e| bad(&e))?;
        out.push(ScheduleFile {
            path: path.clone(),
            schedule: Arc::new(s),
        });
    }
    Ok((out, msccl))
}
