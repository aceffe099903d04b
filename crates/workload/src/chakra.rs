//! MLCommons Chakra's execution traces, as ASTRA-sim replays them: one file
//! per rank, each a stream of protobuf messages of Chakra's schema
//! (`chakra/et_def.proto`, read through the hand-written [`et_def`]), each
//! message after its size as a varint (Chakra's `encodeMessage`): a
//! `GlobalMetadata` first, then the rank's `Node`s.
//!
//! The files of a trace are named as ASTRA-sim names them, `PREFIX.R.et`
//! for rank R: the trace is `PREFIX` (ASTRA-sim's workload argument) or any
//! one of its files, and every `PREFIX.R.et` beside it is a rank, from 0
//! with none missing. A file of another name is a one-rank trace.
//!
//! A node is a step of its rank that starts when its `data_deps` and
//! `ctrl_deps` are done (the workload's graph form, `Step::after`):
//! - `COMP_NODE`: its `duration_micros`, or with none, its `num_ops`
//!   attribute in flops over the host's speed (ASTRA-sim's replay and
//!   roofline modes); `MEM_LOAD_NODE` and `MEM_STORE_NODE`: their
//!   duration; `METADATA_NODE` and `INVALID_NODE`: nothing (ASTRA-sim skips
//!   them), their dependencies passed on;
//! - `COMM_SEND_NODE`, `COMM_RECV_NODE`: a blocking send to `comm_dst`, a
//!   blocking receive from `comm_src`, of `comm_size` bytes with tag
//!   `comm_tag` (0 without one);
//! - `COMM_COLL_NODE`: a collective call of all ranks, by `comm_type`, of
//!   `comm_size` bytes as ASTRA-sim's collectives take them: the buffer of
//!   an all-reduce, broadcast or reduce; the block each rank gives an
//!   all-gather; the whole input of a reduce-scatter; the whole send buffer
//!   of an all-to-all (comm_size / P to each rank). A broadcast's or
//!   reduce's root is its `root` attribute, 0 without one. Its `pg_name`
//!   attribute names its communicator group: none, `""` or `"0"` is the
//!   world; any other is a group of [`CommGroups`] (ASTRA-sim's
//!   `--comm-group-configuration` file), whose ranks run the call, P being
//!   the group's size and a root the group's rank.
//!
//! The k-th collective node of each rank, in the order below, is one call.
//! A rank's nodes are taken in file order, each after the nodes it depends
//! on (a stable topological order). Errors name the file and the message's
//! place in it (the metadata is 1, the first node 2).

pub mod et_def;

use crate::action::{Action, Call, Mode, Step, Workload};
use crate::error::fail;
use crate::error::{Error, Result};
use et_def::{attribute_proto::Value, CollectiveCommType, NodeType};
use prost::Message;
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use topocoll_schedule::CollectiveKind;

/// The rank files of the Chakra trace `path` names, in rank order, or
/// `None` when it names none: `path` is `PREFIX` with a `PREFIX.0.et`
/// beside it, a file named `.et`, or a file that does not hold text.
pub fn rank_files(path: &Path) -> Result<Option<Vec<PathBuf>>> {
    let name = path.to_string_lossy();
    if !path.is_file() {
        if Path::new(&format!("{name}.0.et")).is_file() {
            return siblings(path, &name).map(Some);
        }
        return Ok(None);
    }
    if !name.ends_with(".et") && !binary(path)? {
        return Ok(None);
    }
    // PREFIX.R.et: every rank of PREFIX.
    let prefix = name
        .strip_suffix(".et")
        .and_then(|s| s.rsplit_once('.'))
        .filter(|(_, r)| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
        .map(|(p, _)| p.to_string());
    match prefix {
        Some(p) => siblings(Path::new(&p), &p).map(Some),
        None => Ok(Some(vec![path.to_path_buf()])),
    }
}

/// Whether a file's first bytes are not text: a control character other
/// than white space (a protobuf stream's sizes and field keys are).
fn binary(path: &Path) -> Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let mut f = std::fs::File::open(path)
        .map_err(|e| Error::io(format!("cannot read trace '{}'", path.display()), e))?;
    let n = f
        .read(&mut head)
        .map_err(|e| Error::io(format!("cannot read trace '{}'", path.display()), e))?;
    Ok(head[..n]
        .iter()
        .any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')))
}

/// Every `PREFIX.R.et` beside `prefix`, R from 0 with none missing.
fn siblings(prefix: &Path, shown: &str) -> Result<Vec<PathBuf>> {
    let dir = match prefix.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let stem = prefix
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| Error::io(format!("cannot list the folder of trace '{shown}'"), e))?;
    let mut ranks: Vec<u64> = Vec::new();
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let r = file
            .strip_prefix(stem.as_str())
            .and_then(|s| s.strip_prefix('.'))
            .and_then(|s| s.strip_suffix(".et"))
            .filter(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|r| r.parse::<u64>().ok());
        ranks.extend(r);
    }
    ranks.sort_unstable();
    ranks.dedup();
    let n = ranks.len() as u64;
    if let Some(missing) = (0..n).find(|r| ranks.binary_search(r).is_err()) {
        return Err(fail!(Workload, Trace,
            "trace '{shown}': rank {missing}'s file {shown}.{missing}.et is missing (its ranks' files go from {shown}.0.et to {shown}.{}.et)",
            ranks[ranks.len() - 1]
        ));
    }
    if n as usize > topocoll_base::limits::MAX_RANKS {
        return Err(fail!(
            Workload,
            Trace,
            "trace '{shown}' has {n} rank files, more than {}",
            topocoll_base::limits::MAX_RANKS
        ));
    }
    Ok((0..n).map(|r| dir.join(format!("{stem}.{r}.et"))).collect())
}

/// ASTRA-sim's communicator groups, as its `--comm-group-configuration`
/// file gives them: a JSON object whose keys are group ids (whole numbers
/// from 1: a node's `pg_name` of `"0"` is the world) and whose values are
/// each group's ranks, in the group's rank order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommGroups {
    /// (id, ranks), by id.
    groups: Vec<(u32, Vec<u32>)>,
    /// The file they were read from, for errors.
    file: String,
}

impl CommGroups {
    /// Reads the groups of the JSON file `path`.
    pub fn read(path: &Path) -> Result<CommGroups> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("cannot read communicator groups '{name}'"), e))?;
        CommGroups::parse(&name, &text)
    }

    /// The groups of the JSON text `text` (`name` for errors).
    pub fn parse(name: &str, text: &str) -> Result<CommGroups> {
        let at = |e: &serde_json::Error| e.line() as u64;
        let json: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|e| {
                Error::parse(
                    name,
                    at(&e),
                    format!(
                        "not a JSON object of communicator groups ({{\"1\": [0, 1], ...}}): {e}"
                    ),
                )
            })?;
        let mut groups = Vec::with_capacity(json.len());
        for (key, value) in &json {
            let bad = |what: String| Error::parse(name, 1, format!("group \"{key}\": {what}"));
            let id: u32 = key.parse().ok().filter(|&id| id > 0).ok_or_else(|| {
                bad("a group's id is a whole number from 1 (0 is the world)".into())
            })?;
            let ranks = value
                .as_array()
                .ok_or_else(|| bad(format!("its ranks are a list, not {value}")))?;
            let mut list = Vec::with_capacity(ranks.len());
            for v in ranks {
                let r = v
                    .as_u64()
                    .and_then(|r| u32::try_from(r).ok())
                    .ok_or_else(|| bad(format!("{v} is not a rank")))?;
                if list.contains(&r) {
                    return Err(bad(format!("rank {r} is listed twice")));
                }
                list.push(r);
            }
            if list.is_empty() {
                return Err(bad("it holds no rank".into()));
            }
            groups.push((id, list));
        }
        groups.sort_unstable();
        Ok(CommGroups {
            groups,
            file: name.to_string(),
        })
    }
}

/// Reads a trace of one file per rank, in rank order, every collective on
/// the world.
pub fn read(files: &[PathBuf]) -> Result<Workload> {
    read_with_groups(files, &CommGroups::default())
}

/// Reads a trace of one file per rank, in rank order, its collectives on
/// the communicator groups their `pg_name` names.
pub fn read_with_groups(files: &[PathBuf], groups: &CommGroups) -> Result<Workload> {
    let ranks = files.len();
    for (id, list) in &groups.groups {
        if let Some(r) = list.iter().find(|&&r| r as usize >= ranks) {
            return Err(Error::parse(
                &groups.file,
                1,
                format!("group \"{id}\": rank {r} is not a rank of the trace's {ranks}"),
            ));
        }
    }
    let comms = Comms {
        ids: groups.groups.iter().map(|g| g.0).collect(),
        sizes: groups.groups.iter().map(|g| g.1.len()).collect(),
        members: groups.groups.iter().map(|g| g.1.clone()).collect(),
    };
    let (mut programs, mut names) = (Vec::new(), Vec::new());
    for (r, f) in files.iter().enumerate() {
        let name = f.display().to_string();
        let bytes =
            std::fs::read(f).map_err(|e| Error::io(format!("cannot read trace '{name}'"), e))?;
        let (_, nodes) = decode(&name, &bytes)?;
        programs.push(steps(&name, r, ranks, &comms, &nodes)?);
        names.push(name);
    }
    let mut w = Workload::on_world(programs, names);
    w.comms.extend(comms.members);
    Ok(w)
}

/// The communicator groups as the nodes name them: group `ids[i]` is the
/// workload's communicator `i + 1`, of `sizes[i]` ranks, `members[i]`.
struct Comms {
    ids: Vec<u32>,
    sizes: Vec<usize>,
    members: Vec<Vec<u32>>,
}

/// One rank's file (its bytes; `name` for errors): its metadata and its
/// nodes, each with its place in the file (from 2).
pub fn decode(
    name: &str,
    bytes: &[u8],
) -> Result<(et_def::GlobalMetadata, Vec<(u64, et_def::Node)>)> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(Error::parse(
            name,
            1,
            "the file is gzip-compressed: decompress it first (gunzip)",
        ));
    }
    let mut at = 0usize;
    let mut place = 0u64;
    let mut meta = None;
    let mut nodes = Vec::new();
    while at < bytes.len() {
        place += 1;
        let (size, used) = varint(&bytes[at..]).ok_or_else(|| {
            Error::parse(
                name,
                place,
                format!("the file ends (or is not Chakra's) inside message {place}'s size, at byte {at}"),
            )
        })?;
        at += used;
        let left = bytes.len() - at;
        if size > left as u64 {
            return Err(Error::parse(
                name,
                place,
                format!("message {place} is {size} bytes, but the file holds {left} more: it is truncated"),
            ));
        }
        let body = &bytes[at..at + size as usize];
        at += size as usize;
        let bad = |what: &str, e: prost::DecodeError| {
            Error::parse(
                name,
                place,
                format!("message {place} is not a Chakra {what}: {e}"),
            )
        };
        if meta.is_none() {
            meta =
                Some(et_def::GlobalMetadata::decode(body).map_err(|e| bad("GlobalMetadata", e))?);
        } else {
            nodes.push((
                place,
                et_def::Node::decode(body).map_err(|e| bad("Node", e))?,
            ));
        }
    }
    let meta =
        meta.ok_or_else(|| Error::parse(name, 1, "an empty file: no Chakra GlobalMetadata"))?;
    Ok((meta, nodes))
}

/// One rank's file as Chakra's `encodeMessage` writes it: each message
/// after its size as a varint, `meta` first.
pub fn encode(meta: &et_def::GlobalMetadata, nodes: &[et_def::Node]) -> Vec<u8> {
    let mut out = meta.encode_length_delimited_to_vec();
    for n in nodes {
        out.extend(n.encode_length_delimited_to_vec());
    }
    out
}

/// A varint of at most 10 bytes at the start of `b`, and its length.
fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().take(10).enumerate() {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Rank `r`'s nodes (of a trace of `ranks` ranks) as its steps: each node
/// after those it depends on, in file order otherwise.
fn steps(
    name: &str,
    r: usize,
    ranks: usize,
    comms: &Comms,
    nodes: &[(u64, et_def::Node)],
) -> Result<Vec<Step>> {
    let mut index: FxHashMap<u64, usize> = FxHashMap::default();
    for (i, (place, n)) in nodes.iter().enumerate() {
        if let Some(j) = index.insert(n.id, i) {
            return Err(Error::parse(
                name,
                *place,
                format!(
                    "node {} is defined twice (message {} too)",
                    n.id, nodes[j].0
                ),
            ));
        }
    }
    let mut waits: Vec<Vec<usize>> = Vec::with_capacity(nodes.len());
    for (place, n) in nodes {
        let mut mine = Vec::with_capacity(n.data_deps.len() + n.ctrl_deps.len());
        for d in n.data_deps.iter().chain(&n.ctrl_deps) {
            let &j = index.get(d).ok_or_else(|| {
                Error::parse(
                    name,
                    *place,
                    format!(
                        "node {} depends on node {d}, which the file does not hold",
                        n.id
                    ),
                )
            })?;
            if j == index[&n.id] {
                return Err(Error::parse(
                    name,
                    *place,
                    format!("node {} depends on itself", n.id),
                ));
            }
            mine.push(j);
        }
        mine.sort_unstable();
        mine.dedup();
        waits.push(mine);
    }
    let order = topological(&waits).map_err(|i| {
        let (place, n) = &nodes[i];
        Error::parse(
            name,
            *place,
            format!("node {}'s dependencies form a cycle", n.id),
        )
    })?;
    let mut step_of = vec![0u32; nodes.len()];
    let mut out = Vec::with_capacity(nodes.len());
    for &i in &order {
        let (place, n) = &nodes[i];
        let after = waits[i].iter().map(|&j| step_of[j]).collect();
        step_of[i] = out.len() as u32;
        out.push(Step {
            action: action(name, *place, r, ranks, comms, n)?,
            line: *place,
            after: Some(after),
        });
    }
    Ok(out)
}

/// An order of the nodes in which each comes after those it waits for,
/// file order where they leave it free; or a node of a cycle.
fn topological(waits: &[Vec<usize>]) -> std::result::Result<Vec<usize>, usize> {
    let n = waits.len();
    let mut left: Vec<usize> = waits.iter().map(Vec::len).collect();
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (a, w) in waits.iter().enumerate() {
        for &b in w {
            after[b].push(a);
        }
    }
    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| left[i] == 0).collect();
    let mut out = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        out.push(i);
        for &a in &after[i] {
            left[a] -= 1;
            if left[a] == 0 {
                ready.insert(a);
            }
        }
    }
    if out.len() == n {
        Ok(out)
    } else {
        Err((0..n).find(|&i| left[i] > 0).unwrap_or(0))
    }
}

/// A node's action on rank `r`.
fn action(
    name: &str,
    place: u64,
    r: usize,
    ranks: usize,
    comms: &Comms,
    n: &et_def::Node,
) -> Result<Action> {
    let err = |what: String| Error::parse(name, place, format!("node {}: {what}", n.id));
    let attr = |key: &str| attribute(n, key).map_err(&err);
    let rank = |key: &str, v: i128| {
        u32::try_from(v)
            .ok()
            .filter(|&p| (p as usize) < ranks)
            .ok_or_else(|| err(format!("{key} {v} is not a rank of the trace's {ranks}")))
    };
    let size = |v: Option<i128>| {
        u64::try_from(v.unwrap_or(0))
            .map_err(|_| err(format!("comm_size {} is negative", v.unwrap_or(0))))
    };
    let seconds = n.duration_micros as f64 * 1e-6;
    let kind = NodeType::try_from(n.r#type).map_err(|_| {
        err(format!(
            "unknown node type {} (Chakra's are 0 to 7: INVALID_NODE, METADATA_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE)",
            n.r#type
        ))
    })?;
    Ok(match kind {
        NodeType::InvalidNode | NodeType::MetadataNode => Action::Sleep { seconds: 0.0 },
        NodeType::MemLoadNode | NodeType::MemStoreNode => Action::Sleep { seconds },
        NodeType::CompNode => match real(n, "num_ops").map_err(&err)? {
            Some(flops) if n.duration_micros == 0 => {
                if !(flops >= 0.0 && flops.is_finite()) {
                    return Err(err(format!("num_ops {flops} is not a count of operations")));
                }
                Action::Compute { flops }
            }
            _ => Action::Sleep { seconds },
        },
        NodeType::CommSendNode => {
            let to = attr("comm_dst")?.ok_or_else(|| err("a send without comm_dst".into()))?;
            if let Some(src) = attr("comm_src")? {
                if src != r as i128 {
                    return Err(err(format!(
                        "a send from comm_src {src} in rank {r}'s file"
                    )));
                }
            }
            Action::Send {
                to: rank("comm_dst", to)?,
                tag: tag(attr("comm_tag")?).map_err(&err)?,
                comm: 0,
                bytes: size(attr("comm_size")?)?,
                mode: Mode::Blocking,
            }
        }
        NodeType::CommRecvNode => {
            let from = attr("comm_src")?.ok_or_else(|| err("a receive without comm_src".into()))?;
            if let Some(dst) = attr("comm_dst")? {
                if dst != r as i128 {
                    return Err(err(format!(
                        "a receive into comm_dst {dst} in rank {r}'s file"
                    )));
                }
            }
            Action::Recv {
                from: rank("comm_src", from)?,
                tag: tag(attr("comm_tag")?).map_err(&err)?,
                comm: 0,
                bytes: Some(size(attr("comm_size")?)?),
                mode: Mode::Blocking,
            }
        }
        NodeType::CommCollNode => {
            let t =
                attr("comm_type")?.ok_or_else(|| err("a collective without comm_type".into()))?;
            let bytes = size(attr("comm_size")?)?;
            let (comm, size) = group(n, r, ranks, comms).map_err(&err)?;
            let root = match attr("root")? {
                Some(v) => u32::try_from(v)
                    .ok()
                    .filter(|&p| (p as usize) < size)
                    .ok_or_else(|| err(format!("root {v} is not a rank of the call's {size}")))?,
                None => 0,
            };
            let (kind, bytes) = collective(t, bytes, size).map_err(&err)?;
            Action::Call(Call {
                collective: kind.with_root(root),
                comm,
                bytes,
                counts: Vec::new(),
                flops: 0.0,
                rooted: None,
            })
        }
    })
}

/// The communicator of collective node `n` on rank `r` of `ranks` (0, the
/// world, or a group's index among the workload's communicators) and its
/// size.
fn group(
    n: &et_def::Node,
    r: usize,
    ranks: usize,
    comms: &Comms,
) -> std::result::Result<(u32, usize), String> {
    let Some(a) = n.attr.iter().find(|a| a.name == "pg_name") else {
        return Ok((0, ranks));
    };
    let text = match &a.value {
        Some(Value::StringVal(s)) => s.clone(),
        other => match attribute(n, "pg_name")? {
            Some(v) => v.to_string(),
            None => return Err(format!("pg_name is not a group's name ({other:?})")),
        },
    };
    let text = text.trim();
    if text.is_empty() || text == "0" {
        return Ok((0, ranks));
    }
    let i = text
        .parse::<u32>()
        .ok()
        .and_then(|id| comms.ids.iter().position(|&g| g == id))
        .ok_or_else(|| {
            if comms.ids.is_empty() {
                format!("pg_name \"{text}\" names a communicator group, and none was given (--comm-groups FILE)")
            } else {
                format!("pg_name \"{text}\" is not a group of the communicator groups")
            }
        })?;
    if !comms.members[i].contains(&(r as u32)) {
        return Err(format!(
            "rank {r} calls a collective on group {text}, which does not hold it"
        ));
    }
    Ok((i as u32 + 1, comms.sizes[i]))
}

/// A collective's kind and its bytes as a request takes them, from
/// Chakra's `comm_type` and `comm_size` on `ranks` ranks.
fn collective(
    t: i128,
    size: u64,
    ranks: usize,
) -> std::result::Result<(CollectiveKind, u64), String> {
    let t = i32::try_from(t)
        .ok()
        .and_then(|t| CollectiveCommType::try_from(t).ok())
        .ok_or_else(|| format!("unknown comm_type {t} (Chakra's are 0 to 9)"))?;
    Ok(match t {
        CollectiveCommType::AllReduce => (CollectiveKind::Allreduce, size),
        CollectiveCommType::Reduce => (CollectiveKind::Reduce, size),
        CollectiveCommType::Broadcast => (CollectiveKind::Bcast, size),
        CollectiveCommType::AllGather => (CollectiveKind::Allgather, size),
        CollectiveCommType::ReduceScatter => (CollectiveKind::ReduceScatter, size),
        CollectiveCommType::AllToAll => (CollectiveKind::Alltoall, size / ranks as u64),
        CollectiveCommType::Barrier => (CollectiveKind::Barrier, 0),
        other => {
            return Err(format!(
                "comm_type {} ({other:?}) is not replayed: neither ASTRA-sim nor Chakra says what its comm_size counts",
                other as i32
            ))
        }
    })
}

/// A tag as the workload keeps it.
fn tag(v: Option<i128>) -> std::result::Result<i64, String> {
    i64::try_from(v.unwrap_or(0))
        .map_err(|_| format!("comm_tag {} is out of range", v.unwrap_or(0)))
}

/// Node `n`'s attribute `key` as a whole number, if it has one: any of
/// protobuf's integer types, a bool, or a float that is whole.
fn attribute(n: &et_def::Node, key: &str) -> std::result::Result<Option<i128>, String> {
    let Some(a) = n.attr.iter().find(|a| a.name == key) else {
        return Ok(None);
    };
    let whole = |f: f64| (f.is_finite() && f.fract() == 0.0).then_some(f as i128);
    let v = match &a.value {
        Some(Value::Int32Val(v) | Value::Sint32Val(v) | Value::Sfixed32Val(v)) => {
            Some(i128::from(*v))
        }
        Some(Value::Int64Val(v) | Value::Sint64Val(v) | Value::Sfixed64Val(v)) => {
            Some(i128::from(*v))
        }
        Some(Value::Uint32Val(v) | Value::Fixed32Val(v)) => Some(i128::from(*v)),
        Some(Value::Uint64Val(v) | Value::Fixed64Val(v)) => Some(i128::from(*v)),
        Some(Value::BoolVal(v)) => Some(i128::from(*v)),
        Some(Value::DoubleVal(v)) => whole(*v),
        Some(Value::FloatVal(v)) => whole(f64::from(*v)),
        _ => None,
    };
    v.map(Some)
        .ok_or_else(|| format!("attribute {key} is not a whole number ({:?})", a.value))
}

/// Node `n`'s attribute `key` as a number, if it has one: a float, or any
/// of protobuf's integer types.
fn real(n: &et_def::Node, key: &str) -> std::result::Result<Option<f64>, String> {
    match n.attr.iter().find(|a| a.name == key).map(|a| &a.value) {
        Some(Some(Value::DoubleVal(v))) => Ok(Some(*v)),
        Some(Some(Value::FloatVal(v))) => Ok(Some(f64::from(*v))),
        _ => Ok(attribute(n, key)?.map(|v| v as f64)),
    }
}
