//! Several jobs on one network: a job file (TOML) lists workloads, each
//! placed on hosts of its own and started at its time, and background
//! traffic beside them. Each job is priced alone (on its hosts, nothing
//! else running) and together with the others, so that its slowdown, and
//! the links the jobs share, say what they cost one another.
//!
//! ```toml
//! [[job]]
//! name = "a"                   # default: "job N"
//! trace = "a/index.txt"        # any trace `replay` reads, beside the job file
//! hosts = ["node-0", "node-1"] # hosts by name or index,
//! map = "block"                # block (default) or cyclic over them;
//! # rankfile = "a.hosts"       # or a host per rank
//! start = 0.001                # seconds (default 0)
//! algorithm = "allreduce=ring" # default: the command line's choice
//!
//! [[background]]
//! pattern = "permutation"      # or "uniform"
//! load = 0.5                   # of each host's fastest link out
//! message = "64KiB"
//! duration = 0.01              # seconds of offered traffic
//! hosts = ["node-4"]           # default: every host
//! seed = 1
//! # or: flows = "flows.csv"    # src,dst,bytes,start_s per line
//! ```
//!
//! The jobs become one workload: each job's ranks numbered after the
//! previous job's, its world a communicator of its own (placed as it is
//! placed alone, so its collectives run the same schedules), its ranks
//! sleeping until its start. Background traffic is a rank on each of its
//! hosts, sending its messages with `isend` at their times and receiving
//! what comes to it.

use crate::action::{Action, Mode, Step, Workload};
use crate::build::Semantics;
use crate::choice::Choice;
use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use topocoll_sim::SimConfig;
use topocoll_topology::{RankMap, Topology};

/// A job file as read.
#[derive(Clone, Debug)]
pub struct JobFile {
    pub file: String,
    pub jobs: Vec<Job>,
    pub background: Vec<Background>,
}

/// One job of a job file.
#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    pub trace: PathBuf,
    pub placement: Placement,
    pub start_s: f64,
    /// `COLLECTIVE=ALGORITHM,...`: its own choice of algorithms.
    pub algorithm: Option<String>,
    /// The line of its `[[job]]`.
    pub line: u64,
}

/// Where a job's ranks run.
#[derive(Clone, Debug, PartialEq)]
pub enum Placement {
    /// A host per rank, in rank order, from a rankfile.
    Rankfile(PathBuf),
    /// Ranks in blocks of ceil(P / H) over the H hosts.
    Block(Vec<String>),
    /// Rank r on host r mod H.
    Cyclic(Vec<String>),
}

/// Traffic beside the jobs.
#[derive(Clone, Debug)]
pub enum Background {
    /// Each host sends messages of `message_bytes` at `load` times its
    /// fastest link out, for `duration_s`: to one other host each
    /// (a random permutation without fixed points) or each message to a
    /// random other host (uniform).
    Pattern {
        pattern: Pattern,
        hosts: Option<Vec<String>>,
        load: f64,
        message_bytes: u64,
        duration_s: f64,
        seed: u64,
        line: u64,
    },
    /// Messages listed in a file: `SRC,DST,BYTES,START_S` per line (hosts by
    /// name or index; `#` lines and a header line are skipped).
    Flows { file: PathBuf, line: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Permutation,
    Uniform,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    job: Vec<RawJob>,
    #[serde(default)]
    background: Vec<RawBackground>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    name: Option<String>,
    trace: String,
    hosts: Option<Vec<toml::Value>>,
    map: Option<String>,
    rankfile: Option<String>,
    start: Option<f64>,
    algorithm: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBackground {
    pattern: Option<String>,
    flows: Option<String>,
    hosts: Option<Vec<toml::Value>>,
    load: Option<f64>,
    message: Option<String>,
    duration: Option<f64>,
    seed: Option<u64>,
}

/// The line of the `k`-th `[[table]]` header of `text` (from 1).
fn header_line(text: &str, table: &str, k: usize) -> u64 {
    let header = format!("[[{table}]]");
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim().starts_with(&header))
        .nth(k)
        .map_or(1, |(i, _)| i as u64 + 1)
}

/// Whether `path` names a job file: a `.toml` file.
pub fn is_job_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
}

/// Host names as a job file gives them: strings or indices.
fn host_names(file: &str, line: u64, list: &[toml::Value]) -> Result<Vec<String>> {
    list.iter()
        .map(|v| match v {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(i) if *i >= 0 => Ok(i.to_string()),
            other => Err(Error::parse(
                file,
                line,
                format!("hosts: {other} is neither a host's name nor an index"),
            )),
        })
        .collect()
}

/// Reads a job file; paths in it are read beside it.
pub fn read(path: &Path) -> Result<JobFile> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read job file '{file}'"), e))?;
    let raw: RawFile = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map_or(1, |s| text[..s.start].matches('\n').count() as u64 + 1);
        Error::parse(&file, line, e.message().replace('\n', " "))
    })?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut jobs = Vec::with_capacity(raw.job.len());
    for (k, j) in raw.job.into_iter().enumerate() {
        let line = header_line(&text, "job", k);
        let err = |what: String| Error::parse(&file, line, what);
        let placement = match (j.rankfile, j.hosts, j.map.as_deref()) {
            (Some(r), None, None) => Placement::Rankfile(dir.join(r)),
            (None, Some(h), map) => {
                let h = host_names(&file, line, &h)?;
                if h.is_empty() {
                    return Err(err("hosts: an empty list".into()));
                }
                match map.unwrap_or("block") {
                    "block" => Placement::Block(h),
                    "cyclic" => Placement::Cyclic(h),
                    other => {
                        return Err(err(format!("map: '{other}' is neither block nor cyclic")))
                    }
                }
            }
            (Some(_), Some(_), _) | (Some(_), None, Some(_)) => {
                return Err(err(
                    "give either rankfile or hosts (with map), not both".into()
                ))
            }
            (None, None, _) => {
                return Err(err(
                    "a job needs its hosts (hosts = [...]) or a rankfile".into()
                ))
            }
        };
        let start_s = j.start.unwrap_or(0.0);
        if !(start_s.is_finite() && start_s >= 0.0) {
            return Err(err(format!("start: {start_s} is not a time in seconds")));
        }
        jobs.push(Job {
            name: j.name.unwrap_or_else(|| format!("job {}", k + 1)),
            trace: dir.join(j.trace),
            placement,
            start_s,
            algorithm: j.algorithm,
            line,
        });
    }
    if jobs.is_empty() {
        return Err(Error::parse(&file, 1, "a job file needs a [[job]]"));
    }
    let mut background = Vec::new();
    for (k, b) in raw.background.into_iter().enumerate() {
        let line = header_line(&text, "background", k);
        background.push(read_background(&file, line, dir, b)?);
    }
    Ok(JobFile {
        file,
        jobs,
        background,
    })
}

fn read_background(file: &str, line: u64, dir: &Path, b: RawBackground) -> Result<Background> {
    let err = |what: String| Error::parse(file, line, what);
    match (b.pattern.as_deref(), b.flows) {
        (Some(_), Some(_)) | (None, None) => Err(err(
            "a background is a pattern (permutation, uniform) or a flows file".into(),
        )),
        (None, Some(f)) => {
            if b.hosts.is_some() || b.load.is_some() || b.message.is_some() {
                return Err(err(
                    "a flows file gives its hosts, sizes and times: no hosts, load or message"
                        .into(),
                ));
            }
            Ok(Background::Flows {
                file: dir.join(f),
                line,
            })
        }
        (Some(p), None) => {
            let pattern = match p {
                "permutation" => Pattern::Permutation,
                "uniform" => Pattern::Uniform,
                other => {
                    return Err(err(format!(
                        "pattern: '{other}' is neither permutation nor uniform"
                    )))
                }
            };
            let load = b
                .load
                .ok_or_else(|| err("a pattern needs its load".into()))?;
            if !(load.is_finite() && load > 0.0) {
                return Err(err(format!("load: {load} is not a positive fraction")));
            }
            let message = b
                .message
                .ok_or_else(|| err("a pattern needs its message size".into()))?;
            let message_bytes = topocoll_base::units::parse_bytes(&message)
                .map_err(|e| err(format!("message: {e}")))?;
            if message_bytes == 0 {
                return Err(err("message: 0 bytes".into()));
            }
            let duration_s = b
                .duration
                .ok_or_else(|| err("a pattern needs its duration".into()))?;
            if !(duration_s.is_finite() && duration_s > 0.0) {
                return Err(err(format!(
                    "duration: {duration_s} is not a time in seconds"
                )));
            }
            let hosts = b.hosts.map(|h| host_names(file, line, &h)).transpose()?;
            Ok(Background::Pattern {
                pattern,
                hosts,
                load,
                message_bytes,
                duration_s,
                seed: b.seed.unwrap_or(0),
                line,
            })
        }
    }
}

/// The base network's hosts: their names, in host order.
fn hosts_of(topo: &Topology) -> Vec<String> {
    topo.rank_node.iter().map(|&n| topo.node_name(n)).collect()
}

/// The host index `entry` names (a name or an index), or its refusal.
fn host_index(names: &[String], entry: &str, file: &str, line: u64, what: &str) -> Result<usize> {
    names
        .iter()
        .position(|n| n == entry)
        .or_else(|| entry.parse::<usize>().ok().filter(|&k| k < names.len()))
        .ok_or_else(|| {
            Error::parse(
                file,
                line,
                format!(
                    "{what}: host '{}' is not one of the network's {} hosts (a name or an index below {})",
                    topocoll_base::units::shorten(entry),
                    names.len(),
                    names.len()
                ),
            )
        })
}

/// The host index of each of a job's `ranks` ranks.
fn place(job: &Job, ranks: usize, names: &[String], file: &str) -> Result<Vec<usize>> {
    let what = format!("job '{}'", job.name);
    let list: Vec<String> = match &job.placement {
        Placement::Rankfile(p) => {
            let l = topocoll_topology::read_rankfile(p)
                .map_err(|e| Error::parse(file, job.line, format!("{what}: {e}")))?;
            if l.len() < ranks {
                return Err(Error::parse(
                    file,
                    job.line,
                    format!(
                        "{what}: its rankfile places {} ranks, its trace has {ranks}",
                        l.len()
                    ),
                ));
            }
            l.into_iter().take(ranks).collect()
        }
        Placement::Block(h) => {
            let per = ranks.div_ceil(h.len());
            (0..ranks).map(|r| h[r / per].clone()).collect()
        }
        Placement::Cyclic(h) => (0..ranks).map(|r| h[r % h.len()].clone()).collect(),
    };
    list.iter()
        .map(|e| host_index(names, e, file, job.line, &what))
        .collect()
}

/// The base network with these hosts (indices) as its ranks, in order.
fn placed(base: &Topology, hosts: &[usize], node_bw: f64, node_lat: f64) -> Result<Topology> {
    let mut t = base.clone();
    let list = hosts.iter().map(usize::to_string).collect();
    t.place_ranks(1, &RankMap::List(list), node_bw, node_lat)?;
    Ok(t)
}

/// One job's result.
#[derive(Clone, Debug)]
pub struct JobResult {
    pub name: String,
    pub ranks: usize,
    pub hosts: Vec<String>,
    pub start_s: f64,
    /// Its time alone: its last rank's finish with nothing else running.
    pub alone_s: f64,
    /// Its time together: its last rank's finish, less its start.
    pub together_s: f64,
    /// together / alone.
    pub slowdown: f64,
}

/// A link that more than one job (or the background) uses alone.
#[derive(Clone, Debug)]
pub struct SharedLink {
    pub link: u32,
    pub from: String,
    pub to: String,
    /// The jobs that use it, by name ("background" for the background).
    pub users: Vec<String>,
}

/// A job file priced.
#[derive(Clone, Debug)]
pub struct JobsReport {
    pub jobs: Vec<JobResult>,
    /// When the last rank of all (background too) finishes.
    pub time_s: f64,
    pub shared: Vec<SharedLink>,
    pub background_ranks: usize,
}

/// What every run of a job file shares: the base network (one rank a host,
/// not placed), the bandwidth and latency of a host's own link, the
/// semantics, the simulator's configuration and the command line's choice
/// of algorithms.
pub struct Setting<'a> {
    pub base: &'a Topology,
    pub node_bandwidth: f64,
    pub node_latency: f64,
    pub choice: &'a Choice,
    pub sem: &'a Semantics,
    pub cfg: &'a SimConfig,
}

/// Prices a job file: each job alone and all together.
pub fn run(jf: &JobFile, s: &Setting) -> Result<JobsReport> {
    let names = hosts_of(s.base);
    let mut loaded: Vec<(Workload, Vec<usize>, Choice)> = Vec::with_capacity(jf.jobs.len());
    let mut owner: Vec<Option<usize>> = vec![None; names.len()];
    for (j, job) in jf.jobs.iter().enumerate() {
        let w = match crate::read(&job.trace)? {
            crate::Trace::Actions(w) => w,
            crate::Trace::Goal(_) => {
                return Err(Error::parse(
                    &jf.file,
                    job.line,
                    format!("job '{}': a GOAL schedule cannot be a job (it has no calls to choose for and no communicators)", job.name),
                ))
            }
        };
        let hosts = place(job, w.ranks(), &names, &jf.file)?;
        for &h in &hosts {
            match owner[h] {
                Some(o) if o != j => {
                    return Err(Error::parse(
                        &jf.file,
                        job.line,
                        format!(
                            "job '{}' is placed on host '{}', which job '{}' is placed on already",
                            job.name, names[h], jf.jobs[o].name
                        ),
                    ))
                }
                _ => owner[h] = Some(j),
            }
        }
        let choice = match &job.algorithm {
            Some(a) => Choice::parse(a).map_err(|e| {
                Error::parse(&jf.file, job.line, format!("job '{}': {e}", job.name))
            })?,
            None => s.choice.clone(),
        };
        if choice.has_auto() {
            // The tune table is of one whole network; a job runs on its hosts.
            return Err(Error::parse(
                &jf.file,
                job.line,
                format!(
                    "job '{}': auto chooses for the whole network, not a job's hosts; name the algorithm",
                    job.name
                ),
            ));
        }
        loaded.push((w, hosts, choice));
    }
    let bg = jf
        .background
        .iter()
        .map(|b| background(b, s.base, &names, &jf.file))
        .collect::<Result<Vec<_>>>()?;
    // Alone: each job on its hosts, from time 0.
    let mut alone = Vec::with_capacity(loaded.len());
    let mut used: Vec<(String, Vec<u32>)> = Vec::new();
    for ((w, hosts, choice), job) in loaded.iter().zip(&jf.jobs) {
        let topo = placed(s.base, hosts, s.node_bandwidth, s.node_latency)?;
        let r = crate::replay(w, &topo, choice, s.sem, s.cfg)?;
        alone.push(r.result.time_s);
        used.push((job.name.clone(), links_used(&r.result)));
    }
    let bg_all = merge_background(&bg);
    if let Some((w, hosts)) = &bg_all {
        let topo = placed(s.base, hosts, s.node_bandwidth, s.node_latency)?;
        let r = crate::replay(w, &topo, s.choice, s.sem, s.cfg)?;
        used.push(("background".into(), links_used(&r.result)));
    }
    // Together: one workload.
    let parts: Vec<Part> = loaded
        .iter()
        .zip(&jf.jobs)
        .map(|((w, hosts, choice), job)| Part {
            w,
            hosts,
            start_s: job.start_s,
            choice,
        })
        .collect();
    let (w, hosts, offsets) = together(&parts, bg_all.as_ref());
    let topo = placed(s.base, &hosts, s.node_bandwidth, s.node_latency)?;
    let choice = PerJob {
        parts: &parts,
        offsets: &offsets,
    };
    let r = replay_jobs(&w, &topo, &choice, s)?;
    let mut jobs = Vec::with_capacity(parts.len());
    for (j, (p, job)) in parts.iter().zip(&jf.jobs).enumerate() {
        let (lo, n) = (offsets[j], p.w.ranks());
        let finish = r.result.rank_finish_s[lo..lo + n]
            .iter()
            .copied()
            .fold(0.0, f64::max);
        let together_s = (finish - job.start_s).max(0.0);
        jobs.push(JobResult {
            name: job.name.clone(),
            ranks: n,
            hosts: p.hosts.iter().map(|&h| names[h].clone()).collect(),
            start_s: job.start_s,
            alone_s: alone[j],
            together_s,
            slowdown: if alone[j] > 0.0 {
                together_s / alone[j]
            } else {
                1.0
            },
        });
    }
    Ok(JobsReport {
        jobs,
        time_s: r.result.time_s,
        shared: shared_links(&used, s.base),
        background_ranks: bg_all.map_or(0, |b| b.1.len()),
    })
}

/// The links a run moved bytes on (a host's own link aside).
fn links_used(r: &topocoll_sim::SimResult) -> Vec<u32> {
    r.links
        .iter()
        .enumerate()
        .filter(|(_, l)| l.bytes > 0.0 && l.from != l.to)
        .map(|(i, _)| i as u32)
        .collect()
}

fn shared_links(used: &[(String, Vec<u32>)], base: &Topology) -> Vec<SharedLink> {
    let mut by_link: std::collections::BTreeMap<u32, Vec<String>> = Default::default();
    for (name, links) in used {
        for &l in links {
            by_link.entry(l).or_default().push(name.clone());
        }
    }
    by_link
        .into_iter()
        .filter(|(_, u)| u.len() > 1)
        .map(|(l, users)| {
            let link = &base.links[l as usize];
            SharedLink {
                link: l,
                from: base.node_name(link.from),
                to: base.node_name(link.to),
                users,
            }
        })
        .collect()
}

/// A job as it joins the others.
struct Part<'a> {
    w: &'a Workload,
    hosts: &'a [usize],
    start_s: f64,
    choice: &'a Choice,
}

/// The jobs (and the background) as one workload: the ranks of each after
/// the previous one's, each one's communicators its own, its world among
/// the workload's placed worlds; and each rank's host, and each job's first
/// rank.
fn together(
    parts: &[Part],
    bg: Option<&(Workload, Vec<usize>)>,
) -> (Workload, Vec<usize>, Vec<usize>) {
    let total = parts.iter().map(|p| p.w.ranks()).sum::<usize>() + bg.map_or(0, |b| b.0.ranks());
    let mut out = Workload {
        programs: Vec::with_capacity(total),
        files: Vec::with_capacity(total),
        comms: vec![(0..total as u32).collect()],
        worlds: Vec::new(),
    };
    let mut hosts = Vec::with_capacity(total);
    let mut offsets = Vec::with_capacity(parts.len());
    let mut add = |w: &Workload, start_s: f64, on: &[usize], out: &mut Workload| {
        let (rank0, comm0) = (out.programs.len() as u32, out.comms.len() as u32);
        out.worlds.push(comm0);
        for c in &w.comms {
            out.comms.push(c.iter().map(|&r| r + rank0).collect());
        }
        for (steps, file) in w.programs.iter().zip(&w.files) {
            out.programs.push(shifted(steps, rank0, comm0, start_s));
            out.files.push(file.clone());
        }
        hosts.extend_from_slice(on);
        rank0 as usize
    };
    for p in parts {
        offsets.push(add(p.w, p.start_s, p.hosts, &mut out));
    }
    if let Some((w, on)) = bg {
        add(w, 0.0, on, &mut out);
    }
    (out, hosts, offsets)
}

/// A rank's steps with its ranks after `rank0`, its communicators after
/// `comm0`, and a sleep until `start_s` first.
fn shifted(steps: &[Step], rank0: u32, comm0: u32, start_s: f64) -> Vec<Step> {
    let lead = usize::from(start_s > 0.0);
    let mut out = Vec::with_capacity(steps.len() + lead);
    if lead == 1 {
        out.push(Step {
            action: Action::Sleep { seconds: start_s },
            line: 0,
            after: None,
        });
    }
    for s in steps {
        let action = match &s.action {
            Action::Send {
                to,
                tag,
                comm,
                bytes,
                mode,
            } => Action::Send {
                to: to + rank0,
                tag: *tag,
                comm: comm + comm0,
                bytes: *bytes,
                mode: *mode,
            },
            Action::Recv {
                from,
                tag,
                comm,
                bytes,
                mode,
            } => Action::Recv {
                from: from + rank0,
                tag: *tag,
                comm: comm + comm0,
                bytes: *bytes,
                mode: *mode,
            },
            Action::Wait {
                src,
                dst,
                tag,
                comm,
            } => Action::Wait {
                src: src + rank0,
                dst: dst + rank0,
                tag: *tag,
                comm: comm + comm0,
            },
            Action::SendRecv {
                comm,
                to,
                send_bytes,
                from,
                recv_bytes,
            } => Action::SendRecv {
                comm: comm + comm0,
                to: to + rank0,
                send_bytes: *send_bytes,
                from: from + rank0,
                recv_bytes: *recv_bytes,
            },
            Action::Call(c) => {
                let mut c = c.clone();
                c.comm += comm0;
                Action::Call(c)
            }
            other => other.clone(),
        };
        // A graph's steps name earlier steps: after the sleep, one more.
        let after = s.after.as_ref().map(|a| {
            if lead == 0 {
                a.clone()
            } else if a.is_empty() {
                vec![0]
            } else {
                a.iter().map(|k| k + 1).collect()
            }
        });
        out.push(Step {
            action,
            line: s.line,
            after,
        });
    }
    out
}

/// Each job's calls served by its own choice: the choice of the job whose
/// ranks a communicator holds.
struct PerJob<'a> {
    parts: &'a [Part<'a>],
    offsets: &'a [usize],
}

fn replay_jobs(
    w: &Workload,
    topo: &Topology,
    choice: &PerJob,
    s: &Setting,
) -> Result<crate::Replayed> {
    let pick = |comm: u32| -> &Choice {
        let first = w.comms[comm as usize].first().copied().unwrap_or(0) as usize;
        let j = choice
            .offsets
            .partition_point(|&o| o <= first)
            .saturating_sub(1);
        choice.parts.get(j).map_or(s.choice, |p| p.choice)
    };
    crate::replay_with(w, topo, &pick, s.sem, s.cfg)
}

/// A background as a workload of one rank on each of its hosts, and those
/// hosts.
fn background(
    b: &Background,
    base: &Topology,
    names: &[String],
    file: &str,
) -> Result<(Workload, Vec<usize>)> {
    // (source host, destination host, bytes, start) of each message.
    let mut msgs: Vec<(usize, usize, u64, f64)> = Vec::new();
    match b {
        Background::Pattern {
            pattern,
            hosts,
            load,
            message_bytes,
            duration_s,
            seed,
            line,
        } => {
            let on: Vec<usize> = match hosts {
                Some(h) => h
                    .iter()
                    .map(|e| host_index(names, e, file, *line, "background"))
                    .collect::<Result<_>>()?,
                None => (0..names.len()).collect(),
            };
            if on.len() < 2 {
                return Err(Error::parse(
                    file,
                    *line,
                    "a background pattern needs two hosts or more",
                ));
            }
            let mut rng = SplitMix(*seed);
            let perm = derangement(on.len(), &mut rng);
            for (i, &h) in on.iter().enumerate() {
                let rate = load * fastest_out(base, h);
                let every = *message_bytes as f64 / rate;
                let n = (duration_s / every).floor() as u64;
                if n > 1 << 24 {
                    return Err(Error::parse(file, *line, format!("the background sends {n} messages a host, more than 2^24 (a larger message or a shorter duration)")));
                }
                for k in 0..n {
                    let to = match pattern {
                        Pattern::Permutation => on[perm[i]],
                        Pattern::Uniform => {
                            let mut t = rng.below(on.len() as u64 - 1) as usize;
                            if t >= i {
                                t += 1;
                            }
                            on[t]
                        }
                    };
                    msgs.push((h, to, *message_bytes, k as f64 * every));
                }
            }
        }
        Background::Flows { file: f, line } => {
            let shown = f.display().to_string();
            let text = std::fs::read_to_string(f).map_err(|e| {
                Error::io(
                    format!("cannot read flows file '{shown}' (job file line {line})"),
                    e,
                )
            })?;
            for (i, l) in text.lines().enumerate() {
                let l = l.trim();
                if l.is_empty() || l.starts_with('#') {
                    continue;
                }
                let fields: Vec<&str> = l.split(',').map(str::trim).collect();
                let at = i as u64 + 1;
                if i == 0 && fields.get(2).is_some_and(|b| b.parse::<f64>().is_err()) {
                    continue; // a header
                }
                if fields.len() != 4 {
                    return Err(Error::parse(&shown, at, "a flow is SRC,DST,BYTES,START_S"));
                }
                let src = host_index(names, fields[0], &shown, at, "flow")?;
                let dst = host_index(names, fields[1], &shown, at, "flow")?;
                let bytes = topocoll_base::units::parse_bytes(fields[2])
                    .map_err(|e| Error::parse(&shown, at, format!("bytes: {e}")))?;
                let start: f64 = fields[3]
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| {
                        Error::parse(
                            &shown,
                            at,
                            format!("'{}' is not a start in seconds", fields[3]),
                        )
                    })?;
                if src == dst {
                    return Err(Error::parse(&shown, at, "a flow from a host to itself"));
                }
                msgs.push((src, dst, bytes, start));
            }
        }
    }
    Ok(background_workload(&msgs, names.len()))
}

/// The ranks of a background: one on each host that sends or receives, its
/// receives posted at once, its sends at their times, then a wait for all.
fn background_workload(msgs: &[(usize, usize, u64, f64)], hosts: usize) -> (Workload, Vec<usize>) {
    let mut rank_of = vec![None; hosts];
    let mut on = Vec::new();
    for &(a, b, ..) in msgs {
        for h in [a, b] {
            if rank_of[h].is_none() {
                rank_of[h] = Some(on.len() as u32);
                on.push(h);
            }
        }
    }
    let mut programs: Vec<Vec<Step>> = vec![Vec::new(); on.len()];
    let step = |action| Step {
        action,
        line: 0,
        after: None,
    };
    for &(a, b, bytes, _) in msgs {
        let (ra, rb) = (rank_of[a].unwrap(), rank_of[b].unwrap());
        programs[rb as usize].push(step(Action::Recv {
            from: ra,
            tag: 0,
            comm: 0,
            bytes: Some(bytes),
            mode: Mode::Immediate,
        }));
    }
    let mut sends: Vec<Vec<(f64, u32, u64)>> = vec![Vec::new(); on.len()];
    for &(a, b, bytes, t) in msgs {
        sends[rank_of[a].unwrap() as usize].push((t, rank_of[b].unwrap(), bytes));
    }
    for (r, mut mine) in sends.into_iter().enumerate() {
        mine.sort_by(|x, y| x.0.total_cmp(&y.0));
        let mut now = 0.0;
        for (t, to, bytes) in mine {
            if t > now {
                programs[r].push(step(Action::Sleep { seconds: t - now }));
                now = t;
            }
            programs[r].push(step(Action::Send {
                to,
                tag: 0,
                comm: 0,
                bytes,
                mode: Mode::Immediate,
            }));
        }
        programs[r].push(step(Action::WaitAll));
    }
    let files = vec!["background".to_string(); on.len()];
    (Workload::on_world(programs, files), on)
}

/// The backgrounds as one (their ranks on a host merged).
fn merge_background(bg: &[(Workload, Vec<usize>)]) -> Option<(Workload, Vec<usize>)> {
    match bg.len() {
        0 => None,
        1 => Some(bg[0].clone()),
        _ => {
            // Several backgrounds: each its own ranks, side by side.
            let mut programs = Vec::new();
            let mut hosts = Vec::new();
            let mut comms = vec![Vec::new()];
            for (w, on) in bg {
                let rank0 = programs.len() as u32;
                let comm0 = comms.len() as u32;
                for c in &w.comms {
                    comms.push(c.iter().map(|&r| r + rank0).collect());
                }
                for steps in &w.programs {
                    programs.push(shifted(steps, rank0, comm0, 0.0));
                }
                hosts.extend_from_slice(on);
            }
            comms[0] = (0..programs.len() as u32).collect();
            let files = vec!["background".to_string(); programs.len()];
            Some((
                Workload {
                    programs,
                    files,
                    comms,
                    worlds: Vec::new(),
                },
                hosts,
            ))
        }
    }
}

/// The bandwidth of host `h`'s fastest link out.
fn fastest_out(t: &Topology, h: usize) -> f64 {
    let node = t.rank_node[h];
    t.links
        .iter()
        .filter(|l| l.from == node && l.to != node)
        .map(|l| l.bandwidth)
        .fold(0.0, f64::max)
}

/// A seeded generator (SplitMix64).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random permutation of 0..n that moves every element (n ≥ 2): shuffled
/// until no element stays.
fn derangement(n: usize, rng: &mut SplitMix) -> Vec<usize> {
    loop {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            p.swap(i, rng.below(i as u64 + 1) as usize);
        }
        if p.iter().enumerate().all(|(i, &x)| i != x) {
            return p;
        }
    }
}
