//! The arguments verbs share, parsed into the library's types: what to
//! build (a collective, an algorithm, a network or a rank count, a size),
//! the simulator's node model, the runtime's execution flags, the flags a
//! command line gave (to refuse those a mode does not read), and output
//! files that a failed run leaves as they were.

use crate::algorithms::{self, Request, ALGORITHMS};
use crate::optimize::machine;
use crate::optimize::tune::{Counts, Notes, Problem};
use crate::runtime::job::{Backend, Job};
use crate::runtime::{Fault, Options};
use crate::schedule::{
    Collective, Dtype, FileFormat, MscclImport, ReduceOp, Schedule, ScheduleFile,
};
use crate::sim::{Fairness, Sharing, SimConfig, Skew};
use crate::topology::{self, Topology, TorusTie};
use crate::units::{self, parse_bytes};
use anyhow::{Context, Result};
use clap::{ArgGroup, Args, ValueEnum};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;
use topocoll_base::Error;

/// What to build: a collective, an algorithm, a network or a rank count, a size.
#[derive(Args, Clone, Debug, Default)]
#[command(group(ArgGroup::new("placement").multiple(true)))]
#[command(group(ArgGroup::new("one_choice").multiple(true)))]
pub struct BuildArgs {
    /// Network: torus:32x32, mesh:8x8, torus:8x8x8, hypercube:4, tofu:4x3x4, dragonnet:16,
    /// fattree:16, dragonfly:8,4,4,32, railfat:128,8, hyperx:8x8, or a TOML or SimGrid XML file.
    #[arg(long, short = 't')]
    pub topology: Option<String>,
    /// Ranks on each host of the topology (MPI's processes per node); data between two ranks
    /// of a host crosses the host's own link (--node-bandwidth) [default: 1].
    #[arg(long, group = "placement")]
    pub ranks_per_node: Option<usize>,
    /// How ranks are placed on hosts: block (ranks kK..kK+K-1 on host k), cyclic (rank r on
    /// host r mod H), or a rankfile: a host (name or index) per line in rank order, or Open
    /// MPI's `rank N=HOST ...` lines [default: block].
    #[arg(long, group = "placement")]
    pub map: Option<String>,
    /// Bytes/s of the link inside a host that its ranks exchange data over [default: 20e9].
    #[arg(
        long,
        group = "placement",
        allow_negative_numbers = true,
        allow_hyphen_values = true
    )]
    pub node_bandwidth: Option<f64>,
    /// Seconds of latency of the link inside a host [default: 0].
    #[arg(
        long,
        group = "placement",
        allow_negative_numbers = true,
        allow_hyphen_values = true
    )]
    pub node_latency: Option<f64>,
    /// Take cables out of the network: links by the names topocoll gives them
    /// (`topocoll simulate ... --fail '(0,0) -> (1,0)'`, a platform's own names),
    /// comma-separated, or random:K for K cables drawn with --seed. A failed link
    /// takes both directions of its cable; what remains is routed as a graph.
    /// LINKS@T1..T2 is an outage from T1 until T2 seconds instead: the routes
    /// stay, and a transfer that meets it fails, stopping the run, as in SimGrid.
    #[arg(long)]
    pub fail: Option<String>,
    /// Seed for --fail random:K, --skew and the --counts generators [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// alltoallv's and allgatherv's counts, in elements: a CSV file (alltoallv: P rows of P,
    /// row = sender; allgatherv: P values) or a generator drawn with --seed: uniform:MAX
    /// (MAX bytes), zipf:S or hot:K (mean block --size) [default: every block --size].
    #[arg(long)]
    pub counts: Option<String>,
    /// Number of ranks, for rank-based algorithms run without a topology.
    #[arg(long)]
    pub ranks: Option<usize>,
    /// alltoall, allgather, bcast, reduce, allreduce, reduce_scatter, scatter, gather,
    /// barrier, scan, exscan, alltoallv, allgatherv.
    #[arg(long, short = 'c')]
    pub collective: Option<String>,
    /// Algorithm name (see `topocoll list`).
    #[arg(long, short = 'a', group = "one_choice", value_parser = AlgorithmList::parse)]
    pub algorithm: Option<AlgorithmList>,
    /// Bytes: the block per peer for alltoall, allgather, scatter and gather; the
    /// whole buffer otherwise. Plain bytes or 64KiB, 1MiB, 1GiB, 1MB [default: 1KiB].
    #[arg(long, short = 's', group = "one_choice")]
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
    #[arg(long, group = "one_choice")]
    pub segment: Option<String>,
    /// WAN lanes per remote site for the multi-lane algorithms on a grid of
    /// sites: a number, or auto (the P the cost model picks) [default: auto].
    #[arg(long)]
    pub lanes: Option<String>,
    /// The tree's radix K (at least 2) for the k-nomial algorithms
    /// [default: 4].
    #[arg(long, group = "one_choice")]
    pub radix: Option<String>,
    /// The algorithm the nodes' leaders run, for the node-aware compositions
    /// (node_aware, node_aware_multi): a rank-based algorithm of the same
    /// collective [default: each composition's own, see docs/node-aware.md].
    #[arg(long, group = "one_choice")]
    pub inter: Option<String>,
    /// NCCL's channels, for the NCCL algorithms (nccl_ring, nccl_tree,
    /// nccl_pat): 1 to 64 [default: two per NIC of a GPU server, else 2].
    #[arg(long, group = "one_choice")]
    pub channels: Option<usize>,
    /// NCCL's protocol, for the NCCL algorithms: LL, LL128 or Simple, which
    /// sets their chunk size [default: Simple].
    #[arg(long, group = "one_choice")]
    pub protocol: Option<String>,
    /// The hosts `--map`'s file places the ranks on, when a verb has read
    /// and fitted them already (`replay`: SimGrid's hostfile, cycled to the
    /// trace's ranks).
    #[arg(skip)]
    pub hosts: Option<Vec<String>>,
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
        if let Some(text) = &self.fail {
            let fail = topology::Fail::parse(text, self.seed.unwrap_or(0))?;
            t = topology::fail(&t, &fail)?;
        }
        if placing {
            if self.ranks_per_node == Some(0) {
                return Err(Error::Invalid("--ranks-per-node must be at least 1".into()).into());
            }
            let map = match self.map.as_deref().unwrap_or("block") {
                "block" => topology::RankMap::Block,
                "cyclic" => topology::RankMap::Cyclic,
                path => topology::RankMap::List(match &self.hosts {
                    Some(hosts) => hosts.clone(),
                    None => rankfile(path)?,
                }),
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
        let file = ScheduleFile::open(Path::new(path))?;
        let xml = file.format() == FileFormat::Msccl;
        // (flag, given, whether an MSCCL file leaves it to the command line)
        for (flag, given, sizes_chunks) in [
            ("--size", self.size.is_some(), true),
            ("--dtype", self.dtype.is_some(), true),
            ("--segment", self.segment.is_some(), false),
            ("--lanes", self.lanes.is_some(), false),
            ("--radix", self.radix.is_some(), false),
            ("--inter", self.inter.is_some(), false),
            ("--channels", self.channels.is_some(), false),
            ("--protocol", self.protocol.is_some(), false),
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
        let s = match file.format() {
            FileFormat::Forest => {
                let named = |e: algorithms::Error| e.within(format_args!("schedule '{path}'"));
                algorithms::forest::from_json_reader(file.into_reader())
                    .and_then(|f| f.expand())
                    .map_err(named)?
            }
            _ => file.read(|collective| self.msccl_import(collective))?,
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

    /// What an MSCCL XML schedule's chunks hold: --size, --dtype and --op
    /// (their defaults follow the file's `collective`).
    fn msccl_import(&self, collective: Collective) -> topocoll_schedule::Result<MscclImport> {
        let dtype = self.dtype.as_deref().map(Dtype::parse).transpose()?;
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
        Ok(MscclImport { count, dtype, op })
    }

    /// Builds the schedule on `topo` (or on `--ranks`).
    pub fn build(&self, topo: Option<&Topology>) -> Result<Schedule> {
        Ok(algorithms::build(self.algorithm()?, &self.request(topo)?)?)
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
        check_root(self.root, collective)?;
        let (dtype, op) = elements(collective, self.dtype.as_deref(), self.op.as_deref())?;
        let size = parse_bytes(self.size()).map_err(|e| Error::Invalid(format!("--size: {e}")))?;
        let mut req = Request::new(collective, ranks, size, dtype, op, topo)?;
        if let Some(spec) = &self.counts {
            req = self.with_counts(req, spec)?;
        }
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
        if let Some(radix) = &self.radix {
            self.check_radix(collective)?;
            let k = radix
                .trim()
                .parse::<usize>()
                .map_err(|_| Error::Invalid(format!("--radix '{radix}' is not a whole number")))?;
            if k < 2 {
                return Err(Error::Invalid(format!(
                    "--radix {k}: a k-nomial tree needs a radix of at least 2"
                ))
                .into());
            }
            req.radix = Some(k);
        }
        if self.channels.is_some() || self.protocol.is_some() {
            self.check_channels(collective)?;
            req.channels = self.channels;
            req.protocol = self
                .protocol
                .as_deref()
                .map(algorithms::nccl::Protocol::parse)
                .transpose()?;
        }
        if let Some(inter) = &self.inter {
            self.check_inter(collective)?;
            req.inter = Some(algorithms::compose::inter_choice(
                collective.kind(),
                inter.trim(),
            )?);
        }
        Ok(req)
    }

    /// `req` with `--counts`: a generator's counts (mean block `--size`,
    /// drawn with `--seed`) or a CSV file's (which `--size` may not
    /// contradict).
    fn with_counts<'t>(&self, req: Request<'t>, spec: &str) -> Result<Request<'t>> {
        let Some(shape) = req.collective.sizes_shape() else {
            return Err(Error::Invalid(format!(
                "--counts: {} has no counts per rank (alltoallv and allgatherv do)",
                req.collective.name()
            ))
            .into());
        };
        let elem = req.dtype.size();
        let generated = crate::schedule::Generator::parse(spec, elem)?.is_some();
        if !generated && self.size.is_some() {
            return Err(Error::Invalid(format!(
                "--size: the blocks are {spec}'s counts; --size sets a generator's mean block"
            ))
            .into());
        }
        let sizes = crate::schedule::Sizes::parse(
            spec,
            shape,
            req.ranks,
            req.count,
            elem,
            self.seed.unwrap_or(0),
        )?;
        Ok(req.with_sizes(Arc::new(sizes))?)
    }

    /// The counts `tune` and `--algorithm auto` price a v-collective with:
    /// `--counts`' generator (drawn at each size, as `simulate` draws it)
    /// or the file's counts in `req`; `None` without `--counts`.
    pub fn tune_counts(&self, req: &Request) -> Result<Option<Counts>> {
        let Some(spec) = &self.counts else {
            return Ok(None);
        };
        Ok(
            match crate::schedule::Generator::parse(spec, req.dtype.size())? {
                Some(_) => Some(Counts::Generated {
                    spec: spec.clone(),
                    seed: self.seed.unwrap_or(0),
                }),
                None => req.sizes.clone().map(Counts::Fixed),
            },
        )
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

    /// The registry entries `--algorithm` names for `collective` (a comma
    /// list in sweeps); names that are no entry (`auto`, `native`, a
    /// misspelling refused elsewhere) are left out.
    fn listed(&self, collective: Collective) -> Vec<&'static algorithms::Algorithm> {
        self.algorithm
            .iter()
            .flat_map(AlgorithmList::names)
            .filter_map(|n| algorithms::find(collective.kind(), n).ok())
            .collect()
    }

    /// Whether one of the algorithms asked for pipelines in
    /// `--segment`-byte segments.
    pub fn takes_segment(&self, collective: Collective) -> bool {
        self.listed(collective).iter().any(|a| a.segmented)
    }

    /// `flag`, given, where none of the algorithms asked for `takes` it, is
    /// an error, not ignored: "--segment: bcast binomial does not pipeline
    /// in segments (the bcast algorithms that do: pipeline, ...)". (A sweep
    /// that mixes algorithms that take it with others passes it to those
    /// that do.)
    fn check_taken(
        &self,
        collective: Collective,
        (flag, given): (&str, bool),
        takes: fn(&algorithms::Algorithm) -> bool,
        (is_not, those): (&str, &str),
    ) -> Result<()> {
        if !given || self.listed(collective).into_iter().any(takes) {
            return Ok(());
        }
        let with: Vec<&str> = algorithms::of(collective.kind())
            .filter(|a| takes(a))
            .map(|a| a.name)
            .collect();
        Err(Error::Invalid(format!(
            "{flag}: {} {} {is_not} (the {} algorithms {those}: {})",
            collective.name(),
            self.algorithm_name()?,
            collective.name(),
            if with.is_empty() {
                "none".to_string()
            } else {
                with.join(", ")
            }
        ))
        .into())
    }

    /// `--segment` given where no algorithm asked for would use it is an
    /// error ([`BuildArgs::check_taken`]).
    pub fn check_segment(&self, collective: Collective) -> Result<()> {
        self.check_taken(
            collective,
            ("--segment", self.segment.is_some()),
            |a| a.segmented,
            ("does not pipeline in segments", "that do"),
        )
    }

    /// `--lanes` given where no algorithm asked for crosses a WAN in lanes
    /// is an error, as `--segment` is; the lane-crossing algorithms of every
    /// collective are named.
    pub fn check_lanes(&self, collective: Collective) -> Result<()> {
        if self.lanes.is_none() || self.listed(collective).iter().any(|a| a.lanes) {
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

    /// `--radix` given where no algorithm asked for builds a k-nomial tree
    /// is an error, as `--segment` is.
    pub fn check_radix(&self, collective: Collective) -> Result<()> {
        self.check_taken(
            collective,
            ("--radix", self.radix.is_some()),
            |a| a.radix,
            ("builds no k-nomial tree", "that take a radix"),
        )
    }

    /// `--inter` given where no algorithm asked for composes is an error,
    /// as `--segment` is.
    pub fn check_inter(&self, collective: Collective) -> Result<()> {
        self.check_taken(
            collective,
            ("--inter", self.inter.is_some()),
            |a| a.takes_inter(),
            ("is no node-aware composition", "that take --inter"),
        )
    }

    /// `--channels` or `--protocol` given where no algorithm asked for
    /// runs NCCL's channels is an error, as `--segment` is.
    pub fn check_channels(&self, collective: Collective) -> Result<()> {
        let nccl = self
            .algorithm
            .iter()
            .flat_map(AlgorithmList::names)
            .any(|n| n == "nccl");
        if nccl && self.protocol.is_none() {
            return Ok(());
        }
        let flag = if self.channels.is_some() {
            "--channels"
        } else {
            "--protocol"
        };
        self.check_taken(
            collective,
            (flag, self.channels.is_some() || self.protocol.is_some()),
            |a| a.channels,
            ("runs no NCCL channels", "that do"),
        )
    }

    /// `--segment`, `--lanes`, `--radix`, `--inter`, `--channels` and
    /// `--protocol` checked against the whole list of a sweep.
    pub fn check_per_algorithm(&self, collective: Collective) -> Result<()> {
        self.check_segment(collective)?;
        self.check_lanes(collective)?;
        self.check_radix(collective)?;
        self.check_channels(collective)?;
        self.check_inter(collective)
    }

    /// One point of a sweep (or a bench row): these arguments with one
    /// algorithm of the list, without `--segment` if that algorithm does
    /// not pipeline. Call [`BuildArgs::check_segment`] on the whole list
    /// first.
    pub fn for_algorithm(&self, algorithm: &str) -> BuildArgs {
        let mut b = self.clone();
        b.algorithm = Some(AlgorithmList::one(algorithm));
        let entry = b
            .collective()
            .ok()
            .and_then(|c| algorithms::find(c.kind(), algorithm).ok());
        let takes = |f: fn(&algorithms::Algorithm) -> bool| entry.is_some_and(f);
        if !takes(|a| a.segmented) {
            b.segment = None;
        }
        if !takes(|a| a.lanes) {
            b.lanes = None;
        }
        if !takes(|a| a.radix) {
            b.radix = None;
        }
        if !takes(|a| a.takes_inter()) {
            b.inter = None;
        }
        // `nccl` (NCCL's choice) starts from --channels too.
        if !takes(|a| a.channels) && algorithm != "nccl" {
            b.channels = None;
            b.protocol = None;
        }
        b
    }

    /// `--algorithm` as given: one name, or a sweep's list.
    pub fn algorithm_name(&self) -> Result<&str> {
        self.algorithm_list().map(AlgorithmList::as_str)
    }

    /// `--algorithm`'s names.
    pub fn algorithm_list(&self) -> Result<&AlgorithmList> {
        self.algorithm
            .as_ref()
            .ok_or_else(|| Error::Invalid("missing --algorithm".into()).into())
    }

    /// The registry entry `--algorithm` names for `--collective`.
    pub fn algorithm(&self) -> Result<&'static algorithms::Algorithm> {
        Ok(algorithms::find(
            self.collective()?.kind(),
            self.algorithm_name()?,
        )?)
    }
}

/// `--algorithm`: a name, or a comma list of names (a sweep's, bench's
/// rows, replay's `COLLECTIVE=NAME` choices), split once as clap reads
/// it; the text is kept as given, for the messages that quote it.
#[derive(Clone, Debug, PartialEq)]
pub struct AlgorithmList {
    text: String,
    names: Vec<String>,
}

impl AlgorithmList {
    /// clap's parser: never fails (a name is checked against the registry
    /// once the collective is known).
    pub fn parse(text: &str) -> std::result::Result<AlgorithmList, std::convert::Infallible> {
        Ok(AlgorithmList {
            text: text.to_string(),
            names: text.split(',').map(|n| n.trim().to_string()).collect(),
        })
    }

    /// A list of one name (a point of a sweep, a schedule file's label).
    pub fn one(name: &str) -> AlgorithmList {
        AlgorithmList {
            text: name.to_string(),
            names: vec![name.to_string()],
        }
    }

    /// The names, in the order given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// The text as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// A rankfile (`--map FILE`), its errors naming the flag.
pub fn rankfile(path: &str) -> Result<Vec<String>> {
    if let Err(e) = std::fs::metadata(path) {
        return Err(Error::Invalid(format!(
            "--map '{path}' is not block or cyclic, and cannot be read as a rankfile: {e}"
        ))
        .into());
    }
    topology::read_rankfile(Path::new(path))
        .map_err(|e| Error::Invalid(format!("--map: {e}")).into())
}

/// The flags a command line gave its verb (not those left at their
/// defaults), with the groups each belongs to: a struct of flags flattened
/// into a verb is a group of its name (`NodeModelArgs`), and fields may
/// join named groups (`placement`, `one_choice`, `flow_run`).
#[derive(Clone, Debug, Default)]
pub struct Given {
    flags: Vec<(String, Vec<String>)>,
}

impl Given {
    /// The flags `matches` (of the built command `cmd`) took from the
    /// command line, in the order `cmd` declares them.
    pub fn of(cmd: &clap::Command, matches: &clap::ArgMatches) -> Given {
        let flags = cmd
            .get_arguments()
            .filter(|a| {
                matches.value_source(a.get_id().as_str())
                    == Some(clap::parser::ValueSource::CommandLine)
            })
            .filter_map(|a| {
                let long = a.get_long()?;
                let groups = cmd
                    .get_groups()
                    .filter(|g| g.get_args().any(|id| id == a.get_id()))
                    .map(|g| g.get_id().to_string())
                    .collect();
                Some((format!("--{long}"), groups))
            })
            .collect();
        Given { flags }
    }

    /// The first flag given of any of `groups`.
    pub fn first_of(&self, groups: &[&str]) -> Option<&str> {
        self.flags
            .iter()
            .find(|(_, g)| g.iter().any(|g| groups.contains(&g.as_str())))
            .map(|(f, _)| f.as_str())
    }

    /// Whether the command line gave `flag`.
    pub fn has(&self, flag: &str) -> bool {
        self.flags.iter().any(|(f, _)| f == flag)
    }

    /// The first flag given that is none of `allowed`.
    pub fn first_except(&self, allowed: &[&str]) -> Option<&str> {
        self.flags
            .iter()
            .map(|(f, _)| f.as_str())
            .find(|f| !allowed.contains(f))
    }
}

/// The name a value of a flag is written with (`maxmin`, `json-compact`).
pub fn value_name(v: &impl ValueEnum) -> String {
    v.to_possible_value()
        .map_or_else(String::new, |p| p.get_name().to_string())
}

/// The simulator's node model and network overrides (`simulate`, `tune`):
/// flags only the flow model reads.
#[derive(Args, Clone, Debug)]
pub struct NodeModelArgs {
    /// Bandwidth of every link, bytes/s (overrides the topology's).
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub bandwidth: Option<f64>,
    /// Per-message software overhead on the sender's CPU, seconds.
    #[arg(
        long,
        default_value_t = 0.0,
        allow_negative_numbers = true,
        allow_hyphen_values = true
    )]
    pub overhead: f64,
    /// Bytes per second one CPU combines (reductions); free if absent.
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub compute_bandwidth: Option<f64>,
    /// Per-node injection bandwidth, bytes/s.
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub injection_bandwidth: Option<f64>,
    /// Per-node ejection bandwidth, bytes/s.
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub ejection_bandwidth: Option<f64>,
    /// maxmin (flows share links max-min fairly) or reservation (a flow reserves its path's bottleneck).
    #[arg(long, value_enum, default_value_t = SharingArg::Maxmin)]
    pub sharing: SharingArg,
    /// equal (plain max-min) or rtt (shares proportional to 1/route latency, as SimGrid).
    #[arg(long, value_enum, default_value_t = FairnessArg::Equal)]
    pub fairness: FairnessArg,
    /// plus (half an even ring goes +) or simgrid (+, except from coordinate n/2, which goes -).
    #[arg(long, value_enum, default_value_t = TorusTieArg::Plus)]
    pub torus_tie: TorusTieArg,
    /// Cap on any one flow's rate, bytes/s.
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub flow_cap: Option<f64>,
    /// TCP window in bytes: caps each flow at window / (2 x route latency).
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub tcp_window: Option<f64>,
    /// Bytes added to each message on the wire (SimGrid's SMPI adds 16).
    #[arg(long, default_value_t = 0)]
    pub header_bytes: u64,
    /// A transfer starts only once its receive is posted (as SimGrid's
    /// mailboxes); without it messages are eager.
    #[arg(long)]
    pub rendezvous: bool,
    /// Ranks start at random offsets in [0, SKEW) seconds.
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub skew: Option<f64>,
    /// Price as SimGrid's smpirun does by default (network/model:SMPI):
    /// its piecewise bandwidth and latency factors, weight-S, cross-traffic,
    /// the TCP window, rendezvous matching and SMPI's header; replay's
    /// `--cfg=network/...` options override it as they do in SimGrid.
    #[arg(long)]
    pub simgrid: bool,
    /// SimGrid's network options over `--simgrid` (KEY, VALUE), from
    /// replay's `--cfg`.
    #[arg(skip)]
    pub simgrid_options: Vec<(String, String)>,
}

/// How the simulator runs (the result does not depend on these).
#[derive(Args, Clone, Debug)]
pub struct DriverArgs {
    /// Simulate every rank even when the run is provably the same on every
    /// translate of the torus (by default such runs are folded onto one
    /// slice of ranks: same results to rounding, far faster).
    #[arg(long)]
    pub no_fold: bool,
    /// Simulate event by event even where no flow shares a link (by default
    /// such runs go rank by rank: same results to rounding, faster).
    #[arg(long)]
    pub no_by_rank: bool,
    /// Run rank by rank over all of a thread's ranks at a time, never plane
    /// by plane (by default a grid's ranks run in planes along its last
    /// axis where every rank sends only to the planes beside its own: the
    /// same result bit for bit, faster on large grids).
    #[arg(long)]
    pub no_tile: bool,
    /// Threads for a run simulated rank by rank (default: one per core for
    /// a single run, one per point in a sweep, whose points run side by
    /// side; the result does not depend on it).
    #[arg(long)]
    pub threads: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SharingArg {
    Maxmin,
    Reservation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FairnessArg {
    Equal,
    Rtt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TorusTieArg {
    Plus,
    Simgrid,
}

/// A `--cfg=KEY:VALUE` option, split at its first colon.
pub fn cfg_option(option: &str) -> Result<(&str, &str)> {
    option
        .split_once(':')
        .ok_or_else(|| Error::Invalid(format!("--cfg={option}: not KEY:VALUE")).into())
}

impl NodeModelArgs {
    /// Takes `key`:`value` for `--simgrid` when it is one of SimGrid's
    /// network options (`sim::simgrid::NETWORK_KEYS`), and says whether it
    /// was.
    pub fn take_network_option(&mut self, key: &str, value: &str) -> bool {
        let network = crate::sim::simgrid::NETWORK_KEYS.contains(&key);
        if network {
            self.simgrid_options.push((key.into(), value.into()));
        }
        network
    }

    /// The node model with `engines` engines, the drivers as `drivers`
    /// say; `trace` records a trace, `progress` is published to; `build`
    /// gives the seed.
    pub fn config(
        &self,
        build: &BuildArgs,
        engines: usize,
        drivers: &DriverArgs,
        trace: bool,
        progress: Option<Arc<AtomicU64>>,
    ) -> Result<SimConfig> {
        let sharing = match self.sharing {
            SharingArg::Maxmin => Sharing::MaxMin,
            SharingArg::Reservation => Sharing::Reservation,
        };
        let fairness = match self.fairness {
            FairnessArg::Equal => Fairness::Equal,
            FairnessArg::Rtt => Fairness::Rtt,
        };
        // Options that would be silently ignored are refused.
        if fairness == Fairness::Rtt && sharing == Sharing::Reservation {
            return Err(Error::Invalid(
                "--fairness rtt weights max-min shares; --sharing reservation has none".into(),
            )
            .into());
        }
        let draws_cables = matches!(
            build.fail.as_deref().map(|f| topology::Fail::parse(f, 0)),
            Some(Ok(topology::Fail::Random { .. }))
        );
        let draws_sizes = build
            .counts
            .as_deref()
            .is_some_and(|s| matches!(crate::schedule::Generator::parse(s, 1), Ok(Some(_))));
        if build.seed.is_some() && self.skew.is_none() && !draws_cables && !draws_sizes {
            return Err(Error::Invalid(
                "--seed draws the --skew offsets, --fail random:K's cables and the --counts generators: give one of them"
                    .into(),
            )
            .into());
        }
        let mut cfg = SimConfig {
            engines,
            overhead_s: self.overhead,
            compute_bandwidth: self.compute_bandwidth,
            injection_bandwidth: self.injection_bandwidth,
            ejection_bandwidth: self.ejection_bandwidth,
            sharing,
            fairness,
            flow_cap: self.flow_cap,
            tcp_window: self.tcp_window,
            header_bytes: self.header_bytes,
            rendezvous: self.rendezvous,
            simgrid: None,
            skew: self.skew.map_or(Skew::None, |max_s| Skew::Random {
                max_s,
                seed: build.seed.unwrap_or(0),
            }),
            trace,
            fold: !drivers.no_fold,
            by_rank: !drivers.no_by_rank,
            tile: !drivers.no_tile,
            threads: drivers
                .threads
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            progress,
            deadline: crate::limits::Deadline::NONE,
            solve_start: crate::sim::SolveStart::Pruned,
            stop_past: None,
        };
        let options: Vec<(&str, &str)> = self
            .simgrid_options
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        if self.simgrid {
            let set = [
                (
                    self.tcp_window.is_some(),
                    "--tcp-window (--cfg=network/TCP-gamma:BYTES)",
                ),
                (self.header_bytes != 0, "--header-bytes"),
                (sharing != Sharing::MaxMin, "--sharing"),
                (self.flow_cap.is_some(), "--flow-cap"),
            ];
            if let Some((_, flag)) = set.iter().find(|s| s.0) {
                return Err(Error::Invalid(format!(
                    "{flag}: --simgrid prices with SimGrid's own (give its --cfg options)"
                ))
                .into());
            }
            crate::sim::simgrid::configure(&mut cfg, &options)?;
        } else if let Some((k, v)) = options.first() {
            return Err(Error::Invalid(format!(
                "--cfg={k}:{v}: SimGrid's network options set its model: give --simgrid"
            ))
            .into());
        }
        Ok(cfg)
    }

    /// `build`'s topology (which a simulation needs) with the link and
    /// routing overrides applied; `latency` overrides every link's.
    pub fn topology(&self, build: &BuildArgs, latency: Option<f64>) -> Result<Topology> {
        let mut topo = build
            .topology()?
            .ok_or_else(|| Error::Invalid("simulate needs --topology".into()))?;
        topo.set_uniform_links(self.bandwidth, latency)?;
        if self.torus_tie == TorusTieArg::Simgrid {
            if !topo.has_torus_ties() {
                return Err(Error::Invalid(format!(
                    "--torus-tie simgrid: {} has no torus to tie on",
                    topo.describe()
                ))
                .into());
            }
            topo.set_torus_tie(TorusTie::SimGrid);
        }
        Ok(topo)
    }
}

/// `--engines`: a count, or a comma list of counts (a sweep).
pub fn parse_engines(text: &str) -> Result<Vec<usize>> {
    text.split(',')
        .map(|e| {
            e.trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "--engines '{e}' is not a whole number of at least 1"
                    ))
                    .into()
                })
        })
        .collect()
}

/// `--algorithm auto` does not take `--segment`: its choice includes one.
pub fn refuse_segment(b: &BuildArgs) -> Result<()> {
    if b.segment.is_some() {
        return Err(Error::Invalid(
            "--segment: --algorithm auto chooses the segment (topocoll tune shows its choices)"
                .into(),
        )
        .into());
    }
    Ok(())
}

/// `--algorithm auto` at `b`'s size: the arguments that build the choice
/// of `problem`'s table (from the default cache, or priced now and kept
/// there), with its segment, and the name the run is reported under
/// (`auto:ring`, `auto:pipeline/32KiB`).
pub fn build_auto(problem: &Problem, b: &BuildArgs) -> Result<(BuildArgs, String)> {
    refuse_segment(b)?;
    let size = parse_bytes(b.size())?;
    let (choice, notes) =
        super::progress::with_candidates(problem.collective.name(), |progress| {
            machine::auto_choice(problem, size, progress)
        })?;
    warn_notes(notes);
    let mut chosen = b.for_algorithm(&choice.algorithm);
    chosen.segment = choice.segment_bytes.map(|s| s.to_string());
    Ok((chosen, format!("auto:{}", choice.label(false))))
}

/// `--algorithm nccl`: the NCCL algorithm, protocol and channel count
/// NCCL's own cost model picks for this size on `topo`
/// (`algorithms::model::nccl`), named `nccl:<algorithm>/<protocol>/<C>ch`,
/// and the seconds the model gives it.
/// `--channels` sets the channels NCCL starts from, as `NCCL_MIN_NCHANNELS`
/// and `NCCL_MAX_NCHANNELS` would.
pub fn build_nccl(b: &BuildArgs, topo: &Topology) -> Result<(BuildArgs, String, f64)> {
    use algorithms::model::nccl;
    if b.protocol.is_some() {
        return Err(Error::Invalid(
            "--protocol: --algorithm nccl takes NCCL's own choice of protocol".into(),
        )
        .into());
    }
    let mut probe = b.for_algorithm("nccl_ring");
    probe.protocol = None;
    let req = probe.request(Some(topo))?;
    let bytes = req.count
        * req.dtype.size()
        * if req.collective.size_is_block() {
            req.ranks as u64
        } else {
            1
        };
    let machine = nccl::Machine::of(&req)?;
    let choice = nccl::choose(&machine, req.collective, bytes).ok_or_else(|| {
        Error::Invalid(format!(
            "--algorithm nccl: NCCL runs no algorithm of its own for {} on {} rank{} (it runs allreduce, bcast, reduce, allgather and reduce_scatter)",
            req.collective.name(),
            req.ranks,
            if req.ranks == 1 { "" } else { "s" }
        ))
    })?;
    let mut chosen = b.for_algorithm(choice.algo.entry());
    chosen.channels = Some(choice.channels);
    chosen.protocol = Some(choice.protocol.name().to_string());
    Ok((chosen, choice.label(), choice.micros * 1e-6))
}

/// A cached decision this build would not make is priced again, and a
/// cache that could not be written costs a pricing next time, nothing
/// else: each said on stderr in a line, and the run goes on.
pub fn warn_notes(notes: Notes) {
    for why in notes.repriced {
        eprintln!("topocoll: warning: tuning cache {why}; priced again");
    }
    if let Some(e) = notes.unkept {
        eprintln!("topocoll: warning: {e}; the table is not kept");
    }
}

/// `--plot`'s file must be one the plotter writes.
pub fn check_plot_path(plot: Option<&str>) -> Result<()> {
    if let Some(p) = plot.filter(|p| !(p.ends_with(".svg") || p.ends_with(".png"))) {
        return Err(
            Error::Invalid(format!("--plot '{p}': give a file ending in .svg or .png")).into(),
        );
    }
    Ok(())
}

/// `--root` given for a collective without a root is refused, not
/// ignored: the one check of every verb that takes `--root`.
pub fn check_root(root: Option<u32>, collective: Collective) -> Result<()> {
    if let (Some(root), None) = (root, collective.root()) {
        return Err(Error::Invalid(format!(
            "--root {root}: {} has no root (bcast, reduce, scatter and gather do)",
            collective.name()
        ))
        .into());
    }
    Ok(())
}

/// Refuses two output flags that name one file (the same path, another
/// spelling of it, a link to it), before any work starts: the one written
/// last would hold what both wrote. `outputs` are the verb's output flags
/// with their paths where given (`-o`, `--trace`, `--plot`, `--export-*`,
/// `--schedule-out`).
pub fn distinct_outputs(outputs: &[(&str, Option<&str>)]) -> Result<()> {
    let given: Vec<(&str, FileIdentity)> = outputs
        .iter()
        .filter_map(|&(flag, path)| Some((flag, FileIdentity::of(path?))))
        .collect();
    for (i, (a, ida)) in given.iter().enumerate() {
        if let Some((b, _)) = given[i + 1..].iter().find(|(_, idb)| idb == ida) {
            return Err(Error::Invalid(format!(
                "{a} and {b} name the same file: give them different paths"
            ))
            .into());
        }
    }
    Ok(())
}

/// What a path names: an existing file by its device and inode (so that a
/// link or another spelling is the same file), a file still to be made by
/// its directory's canonical path and its name.
#[derive(PartialEq)]
enum FileIdentity {
    Existing(u64, u64),
    New(std::path::PathBuf),
}

impl FileIdentity {
    fn of(path: &str) -> FileIdentity {
        use std::os::unix::fs::MetadataExt;
        let p = Path::new(path);
        if let Ok(m) = std::fs::metadata(p) {
            return FileIdentity::Existing(m.dev(), m.ino());
        }
        let absolute = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let dir = absolute
            .parent()
            .and_then(|d| std::fs::canonicalize(d).ok());
        match (dir, absolute.file_name()) {
            (Some(dir), Some(name)) => FileIdentity::New(dir.join(name)),
            _ => FileIdentity::New(absolute),
        }
    }
}

/// `--format` of a table: aligned text, CSV or JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    Text,
    Json,
    Csv,
}

/// `--format` of a single result: text or JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TextOrJson {
    Text,
    Json,
}

/// An output file, opened at once (a path that cannot be written fails
/// before any work) but emptied only when the first byte is written, so a
/// run that fails leaves an existing file as it was.
pub struct OutputFile {
    file: std::fs::File,
    path: String,
    emptied: bool,
}

impl OutputFile {
    pub fn open(path: &str) -> Result<OutputFile> {
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

/// Flags shared by `run` and `bench`.
#[derive(Args, Clone, Debug)]
pub struct ExecArgs {
    /// Sends each rank keeps in flight (the node's engines) [default: 4].
    #[arg(long)]
    pub engines: Option<usize>,
    /// threads (P ranks in this process) or mpi (one rank per MPI process,
    /// under mpirun; needs a build with --features mpi). `bench` takes a
    /// list, e.g. threads,mpi [default: threads].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub backend: Vec<BackendArg>,
    /// Fail (every rank, with an error) when one execution of the schedule
    /// (one iteration) takes longer than this, in seconds; building,
    /// verifying and filling buffers are not counted [default: 600].
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub timeout: Option<f64>,
    /// Skip the verifier (an unverified schedule may fail, never corrupts memory).
    #[arg(long)]
    pub no_verify: bool,
    /// Threads backend: 1 runs the replay on the calling thread alone, N ≥ 2 the task pool with N workers (default: the replay with one thread per core; where a schedule has no replay, the task pool, on one worker with 1).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Testing: make rank R fail when its operation OP becomes ready (R:OP).
    #[arg(long, hide = true)]
    pub fault: Option<String>,
}

/// `--backend`'s values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    Threads,
    Mpi,
}

/// The refusal of `flag` by a build without the MPI backend.
pub fn without_mpi(flag: &str) -> anyhow::Error {
    Error::Invalid(format!(
        "{flag}: this topocoll was built without MPI (cargo build --release --features mpi)"
    ))
    .into()
}

/// `--backend`'s values as the runtime's backends [default: threads].
pub fn backends(given: &[BackendArg]) -> Result<Vec<Backend>> {
    if given.is_empty() {
        return Ok(vec![Backend::Threads]);
    }
    given
        .iter()
        .map(|b| match b {
            BackendArg::Threads => Ok(Backend::Threads),
            BackendArg::Mpi if Backend::Mpi.available() => Ok(Backend::Mpi),
            BackendArg::Mpi => Err(without_mpi("--backend mpi")),
        })
        .collect()
}

/// More worker threads than this are refused: the system may not start
/// them, and two per core already keep every core busy.
const MAX_WORKERS: usize = 1024;

impl ExecArgs {
    /// The runtime's options these flags give.
    pub fn options(&self) -> Result<Options> {
        let engines = self.engines.unwrap_or(4);
        let timeout = self.timeout.unwrap_or(600.0);
        if engines == 0 {
            return Err(Error::Invalid("--engines must be at least 1".into()).into());
        }
        // Up to 10^9 s (32 years): a deadline past that overflows the clock.
        if !(timeout.is_finite() && timeout > 0.0 && timeout <= 1e9) {
            return Err(Error::Invalid(format!(
                "--timeout {timeout} must be a positive number of seconds, at most 1e9"
            ))
            .into());
        }
        if let Some(w) = self.workers {
            if !(1..=MAX_WORKERS).contains(&w) {
                return Err(Error::Invalid(format!(
                    "--workers {w} must be from 1 to {MAX_WORKERS}"
                ))
                .into());
            }
        }
        let fault = match &self.fault {
            None => None,
            Some(f) => {
                let (r, o) = f
                    .split_once(':')
                    .ok_or_else(|| Error::Invalid("--fault takes RANK:OP".into()))?;
                Some(Fault {
                    rank: r
                        .parse()
                        .map_err(|_| Error::Invalid("--fault: bad rank".into()))?,
                    op: o
                        .parse()
                        .map_err(|_| Error::Invalid("--fault: bad op".into()))?,
                })
            }
        };
        Ok(Options {
            engines,
            timeout: Some(Duration::from_secs_f64(timeout)),
            fault,
            workers: self.workers.unwrap_or(0),
        })
    }
}

/// An error as one line of text, each link of its chain after the one
/// before; a parameter the library names (`node_bandwidth`) is shown as
/// the flag that gives it (`--node-bandwidth`).
pub fn render(e: &anyhow::Error) -> String {
    e.chain()
        .map(
            |link| match crate::Error::of(link).as_ref().and_then(crate::Error::base) {
                Some(Error::Param { param, message }) => {
                    format!("--{}{message}", param.replace('_', "-"))
                }
                _ => link.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join(": ")
}

/// Under mpirun, a process whose part failed prints its error, naming its
/// rank, and stops every process with exit status 2 (the others may be
/// waiting for it); otherwise the result is returned as it is.
pub fn stop_all_on_error(job: &Job, result: Result<i32>) -> Result<i32> {
    if let Err(e) = &result {
        if job.size().is_some() {
            let msg = render(e).replace('\n', " ");
            // One write for the whole line: stderr is unbuffered, so
            // eprintln! would write it in pieces that other ranks' lines
            // can land between.
            let line = format!("topocoll: rank {}: {msg}\n", job.rank());
            let _ = std::io::stderr().write_all(line.as_bytes());
            job.exit_all(2);
        }
    }
    result
}

/// Builds (and verifies) the schedule a run executes; under MPI the rank
/// count is the world's. `--algorithm auto` builds the tuning table's
/// choice for this machine (one host with the ranks on it, its calibrated
/// node model; on --topology's network when given) at `engines`, named
/// `auto:<choice>`.
pub fn build_for_run(job: &Job, b: &BuildArgs, verify: bool, engines: usize) -> Result<Schedule> {
    let mut b = b.clone();
    if let Some(p) = job.size() {
        match b.ranks {
            Some(r) if r != p && b.topology.is_none() => {
                return Err(
                    Error::Invalid(format!("--ranks {r} but mpirun started {p} processes")).into(),
                )
            }
            _ => b.ranks = Some(p),
        }
    }
    let mut label = None;
    if b.algorithm.as_ref().is_some_and(|l| l.as_str() == "auto") {
        refuse_segment(&b)?;
        let collective = b.collective()?;
        let topo = b.topology()?;
        let ranks = b.request(topo.as_ref())?.ranks;
        let m = machine::MachineProblem::new(topo, ranks, collective.is_reduction())?;
        let req = b.request(Some(&m.topology))?;
        let mut problem = m.problem(collective, req.dtype, req.op, vec![engines]);
        problem.counts = b.tune_counts(&req)?;
        let (chosen, l) = build_auto(&problem, &b)?;
        b = chosen;
        label = Some(l);
    }
    let topo = b.topology()?;
    if verify {
        crate::schedule::check_ranks_fit(b.request(topo.as_ref())?.ranks)?;
    }
    let mut s = b.build(topo.as_ref())?;
    if let Some(l) = label {
        s.algorithm = l;
    }
    job.fits(&s)?;
    if verify {
        crate::schedule::verify(&s)?;
    }
    Ok(s)
}

/// Reads (and verifies) a schedule from a file for a run; under MPI it
/// must have as many ranks as mpirun started.
pub fn load_for_run(job: &Job, b: &BuildArgs, path: &str, verify: bool) -> Result<Schedule> {
    if b.topology.is_some() {
        return Err(Error::Invalid(
            "--topology cannot be given with run --schedule: the schedule file fixes the ranks and routes".into(),
        )
        .into());
    }
    let s = b.read_schedule(path)?;
    job.fits(&s)?;
    if verify {
        crate::schedule::verify(&s)?;
    }
    Ok(s)
}

/// Most timed (or warm-up) iterations: each is recorded, and a count near
/// usize::MAX overflowed the record and the loop.
pub const MAX_ITERATIONS: usize = 10_000_000;

/// An iteration count from `min` to [`MAX_ITERATIONS`].
pub fn check_count(flag: &str, n: usize, min: usize) -> Result<()> {
    if (min..=MAX_ITERATIONS).contains(&n) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "{flag} must be from {min} to {MAX_ITERATIONS}, not {n}"
        ))
        .into())
    }
}

/// `simulate`'s arguments: what to build, the model to price it with
/// (flow or packet, each with its own flags) and what to write.
#[derive(Args, Clone)]
#[command(group(ArgGroup::new("flow_run").multiple(true)))]
pub struct SimulateArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    /// Transfers each node drives at once (NCT / RDMA engines; 4 as on Tofu, and
    /// as `topocoll run`); a list (1,2,4) sweeps.
    #[arg(long, default_value = "4", group = "flow_run")]
    pub engines: String,
    #[command(flatten)]
    pub node: NodeModelArgs,
    /// SimGrid's network options over `--simgrid` (`network/model:CM02`,
    /// `network/crosstraffic:0`, `smpi/bw-factor:0:1`, ...).
    #[arg(long = "cfg", value_name = "KEY:VALUE", group = "flow_run")]
    pub cfg: Vec<String>,
    /// Latency of every link, seconds (overrides the topology's).
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub latency: Option<f64>,
    /// Write a Chrome trace JSON (Perfetto, chrome://tracing) here.
    #[arg(long, group = "flow_run")]
    pub trace: Option<String>,
    /// text, json (one object, indented; a sweep: an array), json-compact
    /// (the same on one line, for programs), or csv (a row per run; a sweep
    /// in text is csv).
    #[arg(long, value_enum, default_value_t = SimFormat::Text)]
    pub format: SimFormat,
    /// Run as a sweep even with single values: --size, --engines and --algorithm
    /// take comma lists (sizes also ranges like 1KiB..1MiB: 1KiB, 2KiB, 4KiB, ... doubling up to at most 1MiB).
    #[arg(long, group = "flow_run")]
    pub sweep: bool,
    /// Write the result (or the sweep table) here instead of standard output.
    #[arg(long, short = 'o', group = "flow_run")]
    pub output: Option<String>,
    /// Draw a sweep into this SVG or PNG file: time against size, a line per
    /// algorithm and engine count.
    #[arg(long, group = "flow_run")]
    pub plot: Option<String>,
    /// Skip the verifier (it runs by default before simulating).
    #[arg(long)]
    pub no_verify: bool,
    #[command(flatten)]
    pub drivers: DriverArgs,
    /// Simulate a schedule read from a file instead of building one: JSON
    /// (as written by `topocoll schedule --format json`, or by hand), whose
    /// collective, algorithm, size and element type come from the file
    /// (giving --size, --dtype or --segment too is an error; --engines may
    /// still be a list), or MSCCL XML, sized by --size and --dtype.
    #[arg(long)]
    pub schedule: Option<String>,
    /// For generated algorithms (marked [stream] by `topocoll list`):
    /// generate each operation when the simulator reaches it instead
    /// of writing the schedule out, in memory that follows the ops in flight. The
    /// verifier needs the schedule written out, so it does not run (the test
    /// suite checks the generator op by op against the written-out schedule).
    /// Chosen automatically when the written-out schedule would be too large.
    #[arg(long, group = "flow_run")]
    pub stream: bool,
    /// flow (links shared max-min by flows; any topology) or packet (the
    /// Dragon net packet by packet: dragonnet:N topologies).
    #[arg(long, value_enum, default_value_t = Model::Flow)]
    pub model: Model,
    #[command(flatten)]
    pub packet: PacketArgs,
    /// The schedule read from `--schedule`.
    #[arg(skip)]
    pub loaded: Option<Arc<Schedule>>,
    /// Where a single run publishes its progress (`SimConfig::progress`).
    #[arg(skip)]
    pub progress: Option<Arc<AtomicU64>>,
}

/// `simulate --model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Model {
    Flow,
    Packet,
}

/// `simulate --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SimFormat {
    Text,
    Json,
    JsonCompact,
    Csv,
}

/// The packet model's flags (`simulate --model packet`).
#[derive(Args, Clone, Debug)]
pub struct PacketArgs {
    /// Packet model: payload bytes per packet (the switch element's buffer).
    #[arg(long)]
    pub buffer: Option<String>,
    /// Packet model: a switch element's processor time per packet, seconds [default: 0].
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub packet_time: Option<f64>,
    /// Packet model, centralised control: the set-up time of every
    /// switch-over, seconds [default: 0].
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub switch_time: Option<f64>,
    /// Packet model: every link's rate, bytes/s (overrides the topology's).
    #[arg(long, allow_negative_numbers = true, allow_hyphen_values = true)]
    pub link_rate: Option<f64>,
    /// Packet model: distributed (each switch element keeps its own phase),
    /// centralised (all switch together after a barrier) or none (packet
    /// switching) [default: distributed for XOR phases, none otherwise].
    #[arg(long)]
    pub control: Option<String>,
}

impl SimulateArgs {
    /// The flow model's node model with `engines` engines.
    pub fn config(&self, engines: usize) -> Result<SimConfig> {
        self.node.config(
            &self.build,
            engines,
            &self.drivers,
            self.trace.is_some(),
            self.progress.clone(),
        )
    }

    /// The topology with the link and routing overrides applied.
    pub fn topology(&self) -> Result<Topology> {
        self.node.topology(&self.build, self.latency)
    }
}

/// `tune`'s arguments: the problem (a network and node model, or this
/// machine), the sizes, the cache and the exports; or, with
/// `--calibrate`, the measurement of this machine ([`CalibrateArgs`]).
#[derive(Args)]
#[command(group(ArgGroup::new("machine_model").multiple(true)))]
pub struct TuneArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    /// Transfers each node drives at once; a list (1,2,4) makes the engine
    /// count a choice too.
    #[arg(long, default_value = "4")]
    pub engines: String,
    #[command(flatten)]
    pub node: NodeModelArgs,
    /// Latency of every link, seconds (overrides the topology's).
    #[arg(
        long,
        group = "machine_model",
        allow_negative_numbers = true,
        allow_hyphen_values = true
    )]
    pub latency: Option<f64>,
    #[command(flatten)]
    pub drivers: DriverArgs,
    /// text (the choices), json (the whole table) or csv (every candidate's prediction).
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// Write the table here instead of standard output.
    #[arg(long, short = 'o')]
    pub output: Option<String>,
    /// Draw the predictions into this SVG or PNG file, the choice marked.
    #[arg(long)]
    pub plot: Option<String>,
    /// Sizes to decide at: a range (8B..1GiB: 8B, 16B, ... doubling) or a
    /// list (1KiB,1MiB); sizes are as --size's [default: 8B..1GiB].
    #[arg(long)]
    pub sizes: Option<String>,
    /// Where decision tables and the calibration are kept [default:
    /// $TOPOCOLL_CACHE, $XDG_CACHE_HOME/topocoll or ~/.cache/topocoll].
    #[arg(long)]
    pub cache_dir: Option<String>,
    /// Price every size again, ignoring (and replacing) the cached table.
    #[arg(long)]
    pub no_cache: bool,
    /// Also write the table as an Open MPI coll/tuned dynamic rules file.
    #[arg(long)]
    pub export_ompi: Option<String>,
    /// Also write the table as MPICH's collective selection JSON.
    #[arg(long)]
    pub export_mpich: Option<String>,
    /// Also tune among NCCL's algorithms and protocols (nccl_ring,
    /// nccl_tree, nccl_pat) and write the choice as the configuration
    /// NCCL's example tuner plugin reads (nccl_tuner.conf).
    #[arg(long)]
    pub export_nccl: Option<String>,
    /// --export-mpich: the selection file to put the rules in, replacing its
    /// rules for the collective (MPICH needs a rule for every collective a
    /// program calls: start from MPICH's own, see docs/tuning.md).
    #[arg(long)]
    pub mpich_base: Option<String>,
    #[command(flatten)]
    pub calibrate: CalibrateArgs,
}

/// `tune --calibrate`'s own flags (it also takes --ranks and --cache-dir).
#[derive(Args, Clone, Debug)]
pub struct CalibrateArgs {
    /// Measure this machine's node parameters on the runtime instead
    /// (see docs/tuning.md) and keep them for tuning without --topology.
    #[arg(long)]
    pub calibrate: bool,
    /// --calibrate: threads or mpi (under mpirun) [default: threads].
    #[arg(long, value_enum)]
    pub backend: Option<BackendArg>,
}

impl TuneArgs {
    /// The flow model's node model with `engines` engines.
    pub fn config(&self, engines: usize) -> Result<SimConfig> {
        self.node
            .config(&self.build, engines, &self.drivers, false, None)
    }
}

/// `--dtype` and `--op` for `collective`: f64 for reductions and bytes
/// otherwise by default, sum by default, and `--op` refused where nothing
/// is combined.
pub fn elements(
    collective: Collective,
    dtype: Option<&str>,
    op: Option<&str>,
) -> Result<(Dtype, ReduceOp)> {
    let dtype = match dtype {
        Some(d) => Dtype::parse(d)?,
        None if collective.is_reduction() => Dtype::F64,
        None => Dtype::U8,
    };
    if let (Some(op), false) = (op, collective.is_reduction()) {
        return Err(Error::Invalid(format!(
            "--op {op}: {} combines nothing (reduce, allreduce and reduce_scatter do)",
            collective.name()
        ))
        .into());
    }
    Ok((dtype, ReduceOp::parse(op.unwrap_or("sum"), dtype)?))
}
