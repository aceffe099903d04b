//! The `topocoll` command. Thin: every verb parses its flags, calls the
//! library, and prints. Errors are one line on stderr; bad input exits 2, a
//! schedule that fails verification exits 1.

use crate::algorithms::{self, Request, ALGORITHMS};
use crate::error::Error;
use crate::schedule::{self, Collective, Dtype, ReduceOp, Schedule};
use crate::topology::{self, Topology};
use crate::units::{self, format_bytes, parse_bytes};
use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::time::Instant;

/// `println!` that returns an error instead of panicking when standard
/// output is closed or full (a pipe into `head`, a full disk).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        anyhow::Context::context(writeln!(stdout, $($arg)*), "writing to standard output")?;
    }};
}

/// `print!` likewise.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        anyhow::Context::context(write!(stdout, $($arg)*), "writing to standard output")?;
    }};
}

mod calibrate;
mod model;
mod optimize;
mod packet;
mod reproduce;
mod run;
mod simulate;
mod tune;

#[derive(Parser)]
#[command(
    name = "topocoll",
    version,
    about = "Topology-aware collective communication: generate, verify, simulate and run schedules"
)]
struct Cli {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Subcommand)]
enum Verb {
    /// List the topologies, collectives and algorithms topocoll knows.
    List,
    /// Build a schedule and prove it implements its collective (exit 0 when correct).
    Verify(VerifyArgs),
    /// Build a schedule and write it as GOAL (LogGOPSim) or JSON.
    Schedule(ScheduleArgs),
    /// Simulate a schedule on a network model (flow-level, max-min or reservation sharing).
    Simulate(Box<simulate::SimulateArgs>),
    /// Reproduce a paper's experiments into a directory (tables, SVG and PNG plots).
    Reproduce(reproduce::ReproduceArgs),
    /// Evaluate an analytical model (e.g. `topocoll model trinaryx3`).
    Model(model::ModelArgs),
    /// Execute a schedule on real buffers (threads, or MPI under mpirun).
    Run(run::RunArgs),
    /// Time schedules (and MPI's own collectives) over a range of sizes.
    Bench(run::BenchArgs),
    /// Find the optimal broadcast on a tree network (branch and bound).
    Optimize(optimize::OptimizeArgs),
    /// Choose each size's fastest algorithm by simulation (the table
    /// `--algorithm auto` uses), plot it, export it as MPI tuning files;
    /// or calibrate this machine's node model (--calibrate).
    Tune(Box<tune::TuneArgs>),
}

/// What to build: a collective, an algorithm, a network or a rank count, a size.
#[derive(Args, Clone, Debug, Default)]
pub struct BuildArgs {
    /// Network: torus:32x32, mesh:8x8, torus:8x8x8, hypercube:4, tofu:4x3x4, dragonnet:16, or a TOML
    /// or SimGrid XML file.
    #[arg(long, short = 't')]
    pub topology: Option<String>,
    /// Ranks on each host of the topology (MPI's processes per node); data between two ranks
    /// of a host crosses the host's own link (--node-bandwidth) [default: 1].
    #[arg(long)]
    pub ranks_per_node: Option<usize>,
    /// How ranks are placed on hosts: block (ranks kK..kK+K-1 on host k), cyclic (rank r on
    /// host r mod H), or a rankfile: a host (name or index) per line in rank order, or Open
    /// MPI's `rank N=HOST ...` lines [default: block].
    #[arg(long)]
    pub map: Option<String>,
    /// Bytes/s of the link inside a host that its ranks exchange data over [default: 20e9].
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub node_bandwidth: Option<f64>,
    /// Seconds of latency of the link inside a host [default: 0].
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub node_latency: Option<f64>,
    /// Number of ranks, for rank-based algorithms run without a topology.
    #[arg(long)]
    pub ranks: Option<usize>,
    /// alltoall, allgather, bcast, reduce, allreduce, reduce_scatter, scatter, gather.
    #[arg(long, short = 'c')]
    pub collective: Option<String>,
    /// Algorithm name (see `topocoll list`).
    #[arg(long, short = 'a')]
    pub algorithm: Option<String>,
    /// Bytes: the block per peer for alltoall, allgather, scatter and gather; the
    /// whole buffer otherwise. Plain bytes or 64KiB, 1MiB, 1GiB, 1MB [default: 1KiB].
    #[arg(long, short = 's')]
    pub size: Option<String>,
    /// Root rank of bcast, reduce, scatter and gather [default: 0].
    #[arg(long)]
    pub root: Option<u32>,
    /// Element type: u8, i32, i64, f32, f64 (default: f64 for reductions, u8 otherwise).
    #[arg(long)]
    pub dtype: Option<String>,
    /// Reduction operator: sum, prod, min, max, band, bor, bxor [default: sum].
    #[arg(long)]
    pub op: Option<String>,
    /// Pipeline segment size in bytes, for pipelined algorithms.
    #[arg(long)]
    pub segment: Option<String>,
    /// WAN lanes per remote site for the multi-lane algorithms on a grid of
    /// sites: a number, or auto (the P the cost model picks) [default: auto].
    #[arg(long)]
    pub lanes: Option<String>,
}

impl BuildArgs {
    /// `--size`, or its default. (An option, so that a verb that takes the
    /// size from elsewhere can tell whether it was given.)
    pub fn size(&self) -> &str {
        self.size.as_deref().unwrap_or("1KiB")
    }

    /// Loads the topology, if one was given, with its ranks placed
    /// (`--ranks-per-node`, `--map`).
    pub fn topology(&self) -> Result<Option<Topology>> {
        let placing = self.ranks_per_node.is_some()
            || self.map.is_some()
            || self.node_bandwidth.is_some()
            || self.node_latency.is_some();
        let Some(spec) = self.topology.as_deref() else {
            if placing {
                return Err(Error::Invalid(
                    "--ranks-per-node, --map and --node-bandwidth place ranks on a --topology's hosts: give one".into(),
                )
                .into());
            }
            return Ok(None);
        };
        let mut t = topology::parse_spec(spec)?;
        if placing {
            if self.ranks_per_node == Some(0) {
                return Err(Error::Invalid("--ranks-per-node must be at least 1".into()).into());
            }
            let map = match self.map.as_deref().unwrap_or("block") {
                "block" => topology::RankMap::Block,
                "cyclic" => topology::RankMap::Cyclic,
                path => topology::RankMap::List(read_rankfile(path)?),
            };
            if let (topology::RankMap::List(list), Some(k)) = (&map, self.ranks_per_node) {
                let want = t.num_ranks().saturating_mul(k);
                if list.len() != want {
                    return Err(Error::Invalid(format!(
                        "--map: the rankfile places {} ranks, --ranks-per-node {k} on {} hosts {want}",
                        list.len(),
                        t.num_ranks()
                    ))
                    .into());
                }
            }
            t.place_ranks(
                self.ranks_per_node.unwrap_or(1),
                &map,
                self.node_bandwidth.unwrap_or(20e9),
                self.node_latency.unwrap_or(0.0),
            )?;
        }
        Ok(Some(t))
    }

    /// Reads a schedule from a file (`--schedule`): topocoll's JSON, or
    /// MSCCL's XML (`.xml`, or a file that starts with `<`). It replaces
    /// --collective and --algorithm; a JSON file fixes the size, element
    /// type and segments too, so giving any of them as well is an error, not
    /// silently ignored. An MSCCL file counts in chunks: --size (the
    /// collective's size, as for its algorithms), --dtype and --op say what
    /// a chunk holds.
    pub fn read_schedule(&self, path: &str) -> Result<Schedule> {
        if self.collective.is_some() || self.algorithm.is_some() {
            return Err(Error::Invalid(
                "give either --schedule or --collective/--algorithm, not both".into(),
            )
            .into());
        }
        let file =
            std::fs::File::open(path).with_context(|| format!("cannot read schedule '{path}'"))?;
        let mut file = std::io::BufReader::new(file);
        let xml = is_msccl(path, &mut file);
        // (flag, given, whether an MSCCL file leaves it to the command line)
        for (flag, given, sizes_chunks) in [
            ("--size", self.size.is_some(), true),
            ("--dtype", self.dtype.is_some(), true),
            ("--segment", self.segment.is_some(), false),
            ("--lanes", self.lanes.is_some(), false),
            ("--root", self.root.is_some(), false),
            ("--op", self.op.is_some(), true),
        ] {
            if given && !(xml && sizes_chunks) {
                return Err(Error::Invalid(format!(
                    "{flag} cannot be given with --schedule: the schedule file fixes it"
                ))
                .into());
            }
        }
        let s = if xml {
            self.read_msccl(path, file)?
        } else {
            schedule::from_json_reader(file)?
        };
        if let Some(r) = self.ranks.filter(|&r| r != s.ranks) {
            return Err(Error::Invalid(format!(
                "--ranks {r}, but schedule '{path}' has {} ranks",
                s.ranks
            ))
            .into());
        }
        Ok(s)
    }

    /// An MSCCL XML schedule, its chunks sized by --size, --dtype and --op.
    fn read_msccl(&self, path: &str, mut file: impl std::io::Read) -> Result<Schedule> {
        use std::io::Read;
        const MAX_XML_BYTES: u64 = 1 << 30;
        let mut text = String::new();
        (&mut file)
            .take(MAX_XML_BYTES + 1)
            .read_to_string(&mut text)
            .with_context(|| format!("cannot read schedule '{path}' as UTF-8 text"))?;
        if text.len() as u64 > MAX_XML_BYTES {
            return Err(Error::Invalid(format!("schedule '{path}' is larger than 1 GiB")).into());
        }
        // The collective is the file's: read it first for the defaults.
        let dtype = self.dtype.as_deref().map(Dtype::parse).transpose()?;
        let probe = schedule::MscclImport {
            count: None,
            dtype: dtype.unwrap_or(Dtype::U8),
            op: ReduceOp::Sum,
        };
        let collective = schedule::from_msccl_xml(&text, &probe)?.collective;
        let dtype = dtype.unwrap_or(if collective.is_reduction() {
            Dtype::F64
        } else {
            Dtype::U8
        });
        if let (Some(_), false) = (&self.op, collective.is_reduction()) {
            return Err(
                Error::Invalid(format!("--op: {} does not reduce", collective.name())).into(),
            );
        }
        let op = match &self.op {
            Some(o) => ReduceOp::parse(o, dtype)?,
            None => ReduceOp::Sum,
        };
        let count = match &self.size {
            None => None,
            Some(text) => {
                let bytes = units::parse_bytes(text)?;
                if bytes % dtype.size() != 0 {
                    return Err(Error::Invalid(format!(
                        "--size {text} is not a whole number of {} elements",
                        dtype.name()
                    ))
                    .into());
                }
                Some(bytes / dtype.size())
            }
        };
        Ok(schedule::from_msccl_xml(
            &text,
            &schedule::MscclImport { count, dtype, op },
        )?)
    }

    /// Builds the schedule on `topo` (or on `--ranks`).
    pub fn build(&self, topo: Option<&Topology>) -> Result<Schedule> {
        Ok(algorithms::build(
            self.algorithm_name()?,
            &self.request(topo)?,
        )?)
    }

    /// The request these arguments describe.
    pub fn request<'t>(&self, topo: Option<&'t Topology>) -> Result<Request<'t>> {
        let ranks = match (topo, self.ranks) {
            (Some(t), Some(r)) if r != t.num_ranks() => {
                return Err(Error::Invalid(format!(
                    "--ranks {r} disagrees with the topology's {} ranks",
                    t.num_ranks()
                ))
                .into())
            }
            (Some(t), _) => t.num_ranks(),
            (None, Some(r)) => r,
            (None, None) => return Err(Error::Invalid("give --topology or --ranks".into()).into()),
        };
        let collective = self.collective()?;
        if let (Some(root), None) = (self.root, collective.root()) {
            return Err(Error::Invalid(format!(
                "--root {root}: {} has no root (bcast, reduce, scatter and gather do)",
                collective.name()
            ))
            .into());
        }
        let dtype = match &self.dtype {
            Some(d) => Dtype::parse(d)?,
            None if collective.is_reduction() => Dtype::F64,
            None => Dtype::U8,
        };
        if let (Some(op), false) = (&self.op, collective.is_reduction()) {
            return Err(Error::Invalid(format!(
                "--op {op}: {} combines nothing (reduce, allreduce and reduce_scatter do)",
                collective.name()
            ))
            .into());
        }
        let op = ReduceOp::parse(self.op.as_deref().unwrap_or("sum"), dtype)?;
        let size = parse_bytes(self.size()).map_err(|e| Error::Invalid(format!("--size: {e}")))?;
        let mut req = Request::new(collective, ranks, size, dtype, op, topo)?;
        if let Some(seg) = &self.segment {
            self.check_segment(collective)?;
            let seg = parse_bytes(seg).map_err(|e| Error::Invalid(format!("--segment: {e}")))?;
            if seg == 0 {
                return Err(Error::Invalid("--segment must be at least one byte".into()).into());
            }
            // Segments are whole elements, like --size.
            if !seg.is_multiple_of(dtype.size()) {
                return Err(Error::Invalid(format!(
                    "--segment {seg} bytes is not a whole number of {} elements ({} bytes each)",
                    dtype.name(),
                    dtype.size()
                ))
                .into());
            }
            req.segment_bytes = Some(seg);
        }
        if let Some(lanes) = &self.lanes {
            self.check_lanes(collective)?;
            req.lanes = match lanes.trim() {
                "auto" => None,
                n => Some(n.parse::<usize>().map_err(|_| {
                    Error::Invalid(format!("--lanes '{n}' is neither a whole number nor auto"))
                })?),
            };
        }
        Ok(req)
    }

    pub fn collective_name(&self) -> Result<&str> {
        self.collective
            .as_deref()
            .ok_or_else(|| Error::Invalid("missing --collective".into()).into())
    }

    /// The collective asked for (`--collective` and `--root`).
    pub fn collective(&self) -> Result<Collective> {
        Ok(Collective::parse(
            self.collective_name()?,
            self.root.unwrap_or(0),
        )?)
    }

    /// Whether one of the algorithms asked for (`--algorithm`, a comma list
    /// in sweeps) pipelines in `--segment`-byte segments.
    pub fn takes_segment(&self, collective: Collective) -> bool {
        self.algorithm
            .as_deref()
            .unwrap_or("")
            .split(',')
            .any(|n| algorithms::find(collective.name(), n.trim()).is_ok_and(|a| a.segmented))
    }

    /// `--segment` given where no algorithm asked for would use it is an
    /// error, not ignored. (A sweep that mixes pipelined algorithms with
    /// others passes it to those that pipeline.)
    pub fn check_segment(&self, collective: Collective) -> Result<()> {
        if self.segment.is_none() || self.takes_segment(collective) {
            return Ok(());
        }
        let pipelined: Vec<&str> = ALGORITHMS
            .iter()
            .filter(|a| a.segmented && a.collective == collective.name())
            .map(|a| a.name)
            .collect();
        Err(Error::Invalid(format!(
            "--segment: {} {} does not pipeline in segments (the {} algorithms that do: {})",
            collective.name(),
            self.algorithm_name()?,
            collective.name(),
            if pipelined.is_empty() {
                "none".to_string()
            } else {
                pipelined.join(", ")
            }
        ))
        .into())
    }

    /// `--lanes` given where no algorithm asked for crosses a WAN in lanes
    /// is an error, as `--segment` is.
    pub fn check_lanes(&self, collective: Collective) -> Result<()> {
        let takes = |n: &str| algorithms::find(collective.name(), n.trim()).is_ok_and(|a| a.lanes);
        if self.lanes.is_none()
            || self
                .algorithm
                .as_deref()
                .unwrap_or("")
                .split(',')
                .any(takes)
        {
            return Ok(());
        }
        let laned: Vec<String> = ALGORITHMS
            .iter()
            .filter(|a| a.lanes)
            .map(|a| format!("{} {}", a.collective, a.name))
            .collect();
        Err(Error::Invalid(format!(
            "--lanes: {} {} does not cross a WAN in lanes (the algorithms that do: {})",
            collective.name(),
            self.algorithm_name()?,
            laned.join(", ")
        ))
        .into())
    }

    /// `--segment` and `--lanes` checked against the whole list of a sweep.
    pub fn check_per_algorithm(&self, collective: Collective) -> Result<()> {
        self.check_segment(collective)?;
        self.check_lanes(collective)
    }

    /// One point of a sweep (or a bench row): these arguments with one
    /// algorithm of the list, without `--segment` if that algorithm does
    /// not pipeline. Call [`BuildArgs::check_segment`] on the whole list
    /// first.
    pub fn for_algorithm(&self, algorithm: &str) -> BuildArgs {
        let mut b = self.clone();
        b.algorithm = Some(algorithm.to_string());
        if b.segment.is_some() && b.collective().is_ok_and(|c| !b.takes_segment(c)) {
            b.segment = None;
        }
        let laned = b
            .collective()
            .is_ok_and(|c| algorithms::find(c.name(), algorithm).is_ok_and(|a| a.lanes));
        if !laned {
            b.lanes = None;
        }
        b
    }

    pub fn algorithm_name(&self) -> Result<&str> {
        self.algorithm
            .as_deref()
            .ok_or_else(|| Error::Invalid("missing --algorithm".into()).into())
    }
}

#[derive(Args)]
struct VerifyArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// Verify a schedule read from a file (JSON as `topocoll schedule --format json` writes, or
    /// MSCCL XML)
    /// instead of building one.
    #[arg(long)]
    schedule: Option<String>,
}

#[derive(Args)]
struct ScheduleArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// json (topocoll's own), goal (LogGOPSim) or msccl (MSCCL's XML).
    #[arg(long, default_value = "json")]
    format: String,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o')]
    output: Option<String>,
    /// GOAL: bytes per second a combine runs at, for its `calc` time (free
    /// without it, as in the simulator).
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    compute_bandwidth: Option<f64>,
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    // Parse errors in one line, as every other error (clap's own take
    // several, with usage); help and version print as clap prints them.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            return match e.print() {
                Ok(()) => 0,
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => CLOSED_PIPE,
                Err(e) => {
                    eprintln!("topocoll: writing to standard output: {e}");
                    2
                }
            };
        }
        Err(e) => {
            // Up to the usage: the message, what it names on later lines
            // (missing arguments) and clap's tips, joined.
            let text = e.to_string();
            let said: Vec<&str> = text
                .lines()
                .take_while(|l| !l.starts_with("Usage:"))
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
                .collect();
            let said = said.join(" ");
            eprintln!(
                "topocoll: {} (see --help)",
                one_line(said.strip_prefix("error: ").unwrap_or(&said))
            );
            return 2;
        }
    };
    match run(cli) {
        Ok(code) => code,
        // The reader of standard output stopped reading (`| head`): stop
        // quietly, with the status of a process a closed pipe ends.
        Err(e) if broken_pipe(&e) => CLOSED_PIPE,
        Err(e) => {
            let is_verify = matches!(e.downcast_ref::<Error>(), Some(Error::Verify(_)));
            let msg = one_line(&format!("{e:#}"));
            eprintln!("topocoll: {msg}");
            if is_verify {
                1
            } else {
                2
            }
        }
    }
}

/// The exit status of a process ended by a write into a closed pipe
/// (128 + SIGPIPE), as the shell reports one killed by the signal.
const CLOSED_PIPE: i32 = 128 + 13;

/// Whether an error is a write into a pipe nobody reads any more.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// An error message as one line of at most 600 characters: a parser may
/// quote a whole input line (megabytes, for a one-line TOML file).
fn one_line(msg: &str) -> String {
    const MAX: usize = 600;
    let msg = msg.replace('\n', " ");
    match msg.char_indices().nth(MAX) {
        None => msg,
        Some((cut, _)) => format!(
            "{}... ({} more characters)",
            &msg[..cut],
            msg[cut..].chars().count()
        ),
    }
}

/// A rankfile: the host of each rank, in rank order: one host (a name or an
/// index) per line, or Open MPI's `rank N=HOST [slot=...]` lines in any
/// order; blank lines and `#` comments are skipped.
fn read_rankfile(path: &str) -> Result<Vec<String>> {
    const MAX_BYTES: u64 = 64 << 20;
    let meta = std::fs::metadata(path).with_context(|| {
        format!("--map '{path}' is not block or cyclic, and cannot be read as a rankfile")
    })?;
    if meta.len() > MAX_BYTES {
        return Err(
            Error::Invalid(format!("--map: rankfile '{path}' is larger than 64 MiB")).into(),
        );
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read rankfile '{path}' as UTF-8 text"))?;
    let mut plain = Vec::new();
    let mut numbered: Vec<(usize, String)> = Vec::new();
    for (k, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("rank") {
            let (rank, host) = rest.split_once('=').ok_or_else(|| {
                Error::Invalid(format!(
                    "--map: rankfile '{path}' line {}: 'rank N=HOST'",
                    k + 1
                ))
            })?;
            let rank: usize = rank.trim().parse().map_err(|_| {
                Error::Invalid(format!(
                    "--map: rankfile '{path}' line {}: '{}' is not a rank number",
                    k + 1,
                    units::shorten(rank.trim())
                ))
            })?;
            let host = host.split_whitespace().next().unwrap_or("");
            numbered.push((rank, host.to_string()));
        } else {
            plain.push(line.to_string());
        }
    }
    match (plain.is_empty(), numbered.is_empty()) {
        (false, true) => Ok(plain),
        (true, false) => {
            numbered.sort_by_key(|x| x.0);
            if let Some((i, (r, _))) = numbered.iter().enumerate().find(|(i, (r, _))| i != r) {
                return Err(Error::Invalid(format!(
                    "--map: rankfile '{path}' names rank {r} where rank {i} is missing or given twice"
                ))
                .into());
            }
            Ok(numbered.into_iter().map(|x| x.1).collect())
        }
        (true, true) => {
            Err(Error::Invalid(format!("--map: rankfile '{path}' names no rank")).into())
        }
        (false, false) => Err(Error::Invalid(format!(
            "--map: rankfile '{path}' mixes 'rank N=HOST' lines with plain host lines"
        ))
        .into()),
    }
}

/// Whether a schedule file is MSCCL XML: named `.xml`, or its first
/// character past white space is `<` (looked at without taking it from the
/// reader).
pub(crate) fn is_msccl(path: &str, file: &mut impl std::io::BufRead) -> bool {
    if path.to_ascii_lowercase().ends_with(".xml") {
        return true;
    }
    file.fill_buf().is_ok_and(|head| {
        head.iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'<')
    })
}

/// An output file, opened at once (a path that cannot be written fails
/// before any work) but emptied only when the first byte is written, so a
/// run that fails leaves an existing file as it was.
pub(crate) struct OutputFile {
    file: std::fs::File,
    path: String,
    emptied: bool,
}

impl OutputFile {
    pub(crate) fn open(path: &str) -> Result<OutputFile> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("cannot create '{path}'"))?;
        // Only a regular file is emptied: a pipe or a terminal
        // (`-o /dev/stdout`) cannot be, and has nothing to keep.
        let regular = file.metadata().is_ok_and(|m| m.is_file());
        Ok(OutputFile {
            file,
            path: path.to_string(),
            emptied: !regular,
        })
    }

    /// Whether `other` is the same file (another spelling, a link).
    pub(crate) fn same_file(&self, other: &OutputFile) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (self.file.metadata(), other.file.metadata()) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => self.path == other.path,
        }
    }
}

/// Errors name the file: "writing 'out.csv': No space left on device".
impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.emptied {
            let path = &self.path;
            self.file
                .set_len(0)
                .map_err(|e| std::io::Error::new(e.kind(), format!("emptying '{path}': {e}")))?;
            self.emptied = true;
        }
        let path = &self.path;
        self.file
            .write(buf)
            .map_err(|e| std::io::Error::new(e.kind(), format!("writing '{path}': {e}")))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let path = &self.path;
        self.file
            .flush()
            .map_err(|e| std::io::Error::new(e.kind(), format!("writing '{path}': {e}")))
    }
}

fn run(cli: Cli) -> Result<i32> {
    match cli.verb {
        Verb::List => list(),
        Verb::Verify(a) => verify(a),
        Verb::Schedule(a) => write_schedule(a),
        Verb::Simulate(a) => simulate::run(*a),
        Verb::Reproduce(a) => reproduce::run(a),
        Verb::Model(a) => model::run(a),
        Verb::Run(a) => run::run(a),
        Verb::Bench(a) => run::bench(a),
        Verb::Optimize(a) => optimize::run(a),
        Verb::Tune(a) => tune::run(*a),
    }
}

fn list() -> Result<i32> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "Topologies (--topology):")?;
    for (spec, what) in [
        ("torus:32x32", "torus of any dimension count; dimension-order routing, shortest way round, ties +"),
        ("mesh:8x8", "mesh of any dimension count; dimension-order routing"),
        ("hypercube:4", "binary n-cube; e-cube routing, lowest bit first"),
        ("tofu:4x3x4", "Tofu 6D (X,Y,Z,a,b,c = 2x3x2) as its virtual 3D torus (8x9x8 here)"),
        ("dragonnet:16", "Dragon net: indirect binary n-cube of 2x2 switch elements (--model packet)"),
        ("FILE.toml", "any of the above, a tree of hosts and switches, a grid of sites, or a graph (see examples/)"),
        ("FILE.xml", "a SimGrid platform: TORUS, FAT_TREE, DRAGONFLY or flat cluster, or hosts, links, routes"),
    ] {
        writeln!(out, "  {spec:<14} {what}")?;
    }
    writeln!(out, "\nCollectives (--collective):")?;
    for (name, what) in schedule::collective_names() {
        writeln!(out, "  {name:<14} {what}")?;
    }
    writeln!(
        out,
        "\nAlgorithms (--collective NAME --algorithm NAME; [stream]: can be generated op by op, see simulate --stream):"
    )?;
    for a in ALGORITHMS {
        let stream = if a.stream.is_some() { " [stream]" } else { "" };
        writeln!(
            out,
            "  {:<14} {:<18} {}{stream}",
            a.collective, a.name, a.summary
        )?;
    }
    Ok(0)
}

fn verify(a: VerifyArgs) -> Result<i32> {
    let t0 = Instant::now();
    let b = &a.build;
    let (s, what) = match &a.schedule {
        Some(path) => {
            let s = b.read_schedule(path)?;
            // The verifier does not need a network, but one given must fit.
            if let Some(t) = b.topology()?.filter(|t| t.num_ranks() != s.ranks) {
                return Err(Error::Invalid(format!(
                    "topology {} has {} ranks, but schedule '{path}' has {}",
                    t.name,
                    t.num_ranks(),
                    s.ranks
                ))
                .into());
            }
            (s, format!("schedule {path}"))
        }
        None => {
            let topo = b.topology()?;
            // Refused before building where the ranks alone cannot fit.
            schedule::check_ranks_fit(b.request(topo.as_ref())?.ranks)?;
            let s = b.build(topo.as_ref())?;
            let on = topo
                .as_ref()
                .map(|t| t.describe())
                .unwrap_or_else(|| format!("{} ranks", s.ranks));
            (
                s,
                format!("{} {} on {on}", b.collective_name()?, b.algorithm_name()?),
            )
        }
    };
    let built = t0.elapsed();
    let t1 = Instant::now();
    let report = schedule::verify(&s)?;
    let checked = t1.elapsed();
    outln!(
        "ok: {what}: {} ops, {} transfers, {} moved, {} element(s) of {} per {}; built in {:.3} s, verified in {:.3} s",
        report.ops,
        report.transfers,
        format_bytes(report.bytes_moved),
        s.count,
        s.dtype.name(),
        if s.collective.size_is_block() { "block" } else { "buffer" },
        built.as_secs_f64(),
        checked.as_secs_f64()
    );
    Ok(0)
}

fn write_schedule(a: ScheduleArgs) -> Result<i32> {
    if !matches!(a.format.as_str(), "json" | "goal" | "msccl") {
        return Err(Error::Invalid(format!(
            "--format '{}' is not json, goal or msccl",
            a.format
        ))
        .into());
    }
    let mut out: Box<dyn Write> = match &a.output {
        Some(path) => Box::new(std::io::BufWriter::new(OutputFile::open(path)?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let topo = a.build.topology()?;
    let s = a.build.build(topo.as_ref())?;
    if let Some(bw) = a.compute_bandwidth {
        if a.format != "goal" {
            return Err(Error::Invalid(
                "--compute-bandwidth times the combines of --format goal".into(),
            )
            .into());
        }
        if !(bw.is_finite() && bw > 0.0) {
            return Err(Error::Invalid(format!(
                "--compute-bandwidth must be a positive number of bytes/s, got {bw}"
            ))
            .into());
        }
    }
    if a.format == "json" {
        schedule::to_json(&s, &mut out)?;
    } else if a.format == "msccl" {
        let lost = schedule::to_msccl_xml(&s, &mut out)?;
        for (n, what) in [
            (
                lost.added_waits,
                "ops also wait for the op before them in their threadblock, as MSCCL runs a threadblock's steps in order",
            ),
            (
                lost.lost_routes,
                "sends lose their signed-offset routes (MSCCL has no routes)",
            ),
            (
                lost.lost_compute,
                "compute ops are written as nop steps and lose their time",
            ),
        ] {
            if n > 0 {
                eprintln!("topocoll: warning: MSCCL XML: {n} {what}");
            }
        }
    } else {
        let lost = schedule::to_goal(&s, a.compute_bandwidth, &mut out)?;
        if lost > 0 {
            eprintln!(
                "topocoll: warning: GOAL has no routes: {lost} sends lose their signed-offset routes and take the simulator's own"
            );
        }
    }
    out.flush()?;
    Ok(0)
}
