//! Schedules as JSON, written and read: topocoll's own format.

use crate::error::fail;
use crate::error::{Error, Result};
use crate::{
    reference_fault, Buf, Collective, Dtype, Op, Program, ReduceOp, Region, Schedule, Sizes,
    SizesShape, MAX_BUFFER_BYTES, MAX_RANKS,
};
use serde::{Deserialize, Serialize};
use std::io::Write;
use topocoll_topology::LinkId;

#[derive(Serialize)]
struct JsonOp {
    #[serde(flatten)]
    op: Op,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deps: Vec<u32>,
}

/// An op as read: every field any kind has, so that a field the op's kind
/// does not have (a misspelt `route`, say) is an error rather than ignored,
/// which `#[serde(flatten)]` on `Op` would not catch.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonOpIn {
    kind: String,
    peer: Option<u32>,
    tag: Option<u32>,
    region: Option<Region>,
    route: Option<u32>,
    combine: Option<bool>,
    src: Option<Region>,
    dst: Option<Region>,
    seconds: Option<f64>,
    #[serde(default)]
    deps: Vec<u32>,
}

impl JsonOpIn {
    /// The op, or an error naming the field that is missing or does not
    /// belong to the op's kind.
    fn op(&self) -> std::result::Result<Op, String> {
        let has = [
            ("peer", self.peer.is_some()),
            ("tag", self.tag.is_some()),
            ("region", self.region.is_some()),
            ("route", self.route.is_some()),
            ("combine", self.combine.is_some()),
            ("src", self.src.is_some()),
            ("dst", self.dst.is_some()),
            ("seconds", self.seconds.is_some()),
        ];
        let fields: &[&str] = match self.kind.as_str() {
            "send" => &["peer", "tag", "region", "route"],
            "recv" => &["peer", "tag", "region", "combine"],
            "copy" | "combine" => &["src", "dst"],
            "compute" => &["seconds"],
            other => {
                return Err(format!(
                    "unknown op kind '{other}' (send, recv, copy, combine, compute)"
                ))
            }
        };
        if let Some((name, _)) = has.iter().find(|(n, set)| *set && !fields.contains(n)) {
            return Err(format!("a {} op has no field '{name}'", self.kind));
        }
        let need = |name: &str| format!("a {} op needs '{name}'", self.kind);
        Ok(match self.kind.as_str() {
            "send" => Op::Send {
                peer: self.peer.ok_or_else(|| need("peer"))?,
                tag: self.tag.ok_or_else(|| need("tag"))?,
                region: self.region.ok_or_else(|| need("region"))?,
                route: self.route.unwrap_or(0),
            },
            "recv" => Op::Recv {
                peer: self.peer.ok_or_else(|| need("peer"))?,
                tag: self.tag.ok_or_else(|| need("tag"))?,
                region: self.region.ok_or_else(|| need("region"))?,
                combine: self.combine.ok_or_else(|| need("combine"))?,
            },
            "copy" => Op::Copy {
                src: self.src.ok_or_else(|| need("src"))?,
                dst: self.dst.ok_or_else(|| need("dst"))?,
            },
            "combine" => Op::Combine {
                src: self.src.ok_or_else(|| need("src"))?,
                dst: self.dst.ok_or_else(|| need("dst"))?,
            },
            _ => Op::Compute {
                seconds: self.seconds.ok_or_else(|| need("seconds"))?,
            },
        })
    }
}

#[derive(Serialize)]
struct JsonProgram {
    scratch: u64,
    ops: Vec<JsonOp>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonProgramIn {
    #[serde(default)]
    scratch: u64,
    ops: Vec<JsonOpIn>,
}

/// The format's name and version, written first in every schedule file.
pub const FORMAT: &str = "topocoll-schedule/1";

#[derive(Serialize)]
struct JsonSchedule {
    format: &'static str,
    collective: Collective,
    ranks: usize,
    count: u64,
    dtype: Dtype,
    op: ReduceOp,
    algorithm: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    offsets: Vec<Vec<i64>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    paths: Vec<Vec<LinkId>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sizes: Option<JsonSizes>,
    programs: Vec<JsonProgram>,
}

/// A v-collective's counts: allgatherv's P counts, alltoallv's P rows of P
/// (row = sender, column = receiver), in elements.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum JsonSizes {
    PerRank(Vec<u64>),
    PerPair(Vec<Vec<u64>>),
}

impl JsonSizes {
    fn of(v: &Sizes) -> JsonSizes {
        match v.shape() {
            SizesShape::PerRank => JsonSizes::PerRank(v.counts().to_vec()),
            SizesShape::PerPair => {
                JsonSizes::PerPair(v.counts().chunks(v.ranks()).map(<[u64]>::to_vec).collect())
            }
        }
    }

    /// The sizes, checked against the collective's shape and rank count.
    fn sizes(self, collective: Collective, ranks: usize) -> Result<Sizes> {
        let Some(shape) = collective.sizes_shape() else {
            return Err(fail!(
                Schedule,
                Format,
                "schedule JSON: {} takes no sizes (alltoallv and allgatherv do)",
                collective.name()
            ));
        };
        let sizes = match (self, shape) {
            (JsonSizes::PerRank(c), SizesShape::PerRank) if c.len() == ranks => Sizes::per_rank(c)?,
            (JsonSizes::PerRank(c), SizesShape::PerRank) => {
                return Err(fail!(
                    Schedule,
                    Format,
                    "schedule JSON: sizes has {} counts, want {ranks} (ranks)",
                    c.len()
                ))
            }
            (JsonSizes::PerPair(rows), SizesShape::PerPair) => {
                if let Some((i, row)) = rows.iter().enumerate().find(|(_, r)| r.len() != ranks) {
                    return Err(fail!(
                        Schedule,
                        Format,
                        "schedule JSON: sizes row {} has {} values, want {ranks} (ranks)",
                        i + 1,
                        row.len()
                    ));
                }
                if rows.len() != ranks {
                    return Err(fail!(
                        Schedule,
                        Format,
                        "schedule JSON: sizes has {} rows, want {ranks} (ranks)",
                        rows.len()
                    ));
                }
                Sizes::per_pair(ranks, rows.into_iter().flatten().collect())?
            }
            (_, SizesShape::PerRank) => {
                return Err(fail!(
                    Schedule,
                    Format,
                    "schedule JSON: allgatherv's sizes are one count per rank, not rows"
                ))
            }
            (_, SizesShape::PerPair) => {
                return Err(fail!(
                    Schedule,
                    Format,
                    "schedule JSON: alltoallv's sizes are rows of counts, one per rank"
                ))
            }
        };
        Ok(sizes)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonScheduleIn {
    /// `topocoll-schedule/1` when given (files without it are read as 1).
    format: Option<String>,
    /// Read as a value first: serde's internally tagged enums ignore
    /// unknown fields of unit variants (a `root` given to allreduce).
    collective: serde_json::Value,
    ranks: usize,
    count: u64,
    dtype: Dtype,
    op: ReduceOp,
    algorithm: String,
    #[serde(default)]
    offsets: Vec<Vec<i64>>,
    #[serde(default)]
    paths: Vec<Vec<LinkId>>,
    #[serde(default)]
    sizes: Option<JsonSizes>,
    programs: Vec<JsonProgramIn>,
}

/// Writes a schedule as JSON: `{collective, ranks, count, dtype, op,
/// algorithm, offsets?, paths?, sizes?, programs: [{scratch, ops: [{kind,
/// ..., deps}]}]}` (`offsets`, `paths` and `sizes` only where there are).
pub fn to_json(s: &Schedule, out: &mut dyn Write) -> Result<()> {
    let doc = JsonSchedule {
        format: FORMAT,
        collective: s.collective,
        ranks: s.ranks,
        count: s.count,
        dtype: s.dtype,
        op: s.op,
        algorithm: s.algorithm.clone(),
        offsets: s.offsets.clone(),
        paths: s.paths.clone(),
        sizes: s.sizes().map(JsonSizes::of),
        programs: s
            .programs
            .iter()
            .map(|p| JsonProgram {
                scratch: p.scratch,
                ops: p
                    .ops
                    .iter()
                    .enumerate()
                    .map(|(i, op)| JsonOp {
                        op: *op,
                        deps: p.deps(i).to_vec(),
                    })
                    .collect(),
            })
            .collect(),
    };
    serde_json::to_writer(&mut *out, &doc).map_err(|e| Error::io("writing JSON", e.into()))?;
    writeln!(out).map_err(|e| Error::io("writing JSON", e))
}

/// Reads a schedule written by [`to_json`] (or by hand).
///
/// What the command line would refuse is refused here too (no ranks, a
/// bitwise op on floats, a buffer past 2^50 bytes), and so is an op whose
/// dependencies, route or peer point nowhere: the simulator, told not to
/// verify, indexes by them. Everything else is the verifier's to judge.
pub fn from_json(text: &str) -> Result<Schedule> {
    from_json_reader(text.as_bytes())
}

/// A serde message with the reader's type names put in words.
fn plain(message: &str) -> String {
    message
        .replace("struct JsonScheduleIn", "a schedule object")
        .replace("struct JsonProgramIn", "a program object")
        .replace("struct JsonOpIn", "an op object")
        .replace("struct Region", "a region object")
}

/// [`from_json`] from a reader, parsed as it is read: a file that is not
/// JSON (`/dev/zero`, say) fails at its first bytes, not after filling
/// memory with it.
///
/// Whole on purpose: one pass over the document, checking it field by
/// field, each refusal naming its field; the checks read top to bottom as
/// the format's rules.
pub fn from_json_reader(reader: impl std::io::Read) -> Result<Schedule> {
    let doc: JsonScheduleIn = serde_json::from_reader(std::io::BufReader::new(reader))
        .map_err(|e| fail!(Schedule, Format, "schedule JSON: {}", plain(&e.to_string())))?;
    if let Some(f) = doc.format.as_deref().filter(|&f| f != FORMAT) {
        return Err(fail!(
            Schedule,
            Format,
            "schedule JSON: format '{f}' is not {FORMAT}, the one this topocoll reads"
        ));
    }
    let collective: Collective = serde_json::from_value(doc.collective.clone())
        .map_err(|e| fail!(Schedule, Format, "schedule JSON: collective: {e}"))?;
    let fields = doc
        .collective
        .as_object()
        .map(|o| o.keys().collect::<Vec<_>>());
    if let Some(extra) = fields
        .unwrap_or_default()
        .into_iter()
        .find(|k| *k != "name" && !(*k == "root" && collective.root().is_some()))
    {
        return Err(fail!(
            Schedule,
            Format,
            "schedule JSON: collective {} has no field '{extra}'",
            collective.name()
        ));
    }
    if doc.programs.len() != doc.ranks {
        return Err(fail!(
            Schedule,
            Format,
            "schedule JSON: {} programs for {} ranks",
            doc.programs.len(),
            doc.ranks
        ));
    }
    // Names are printed in reports and CSV tables.
    if doc
        .algorithm
        .chars()
        .any(|c| c.is_control() || c == ',' || c == '"')
    {
        return Err(fail!(
            Schedule,
            Format,
            "schedule JSON: algorithm name {:?} has a control character, comma or quote",
            doc.algorithm
        ));
    }
    if doc.ranks == 0 || doc.ranks > MAX_RANKS {
        return Err(fail!(
            Schedule,
            Format,
            "schedule JSON: {} ranks (1 to {MAX_RANKS} supported)",
            doc.ranks
        ));
    }
    if doc.dtype.is_float() && matches!(doc.op, ReduceOp::Band | ReduceOp::Bor | ReduceOp::Bxor) {
        return Err(fail!(
            Schedule,
            Format,
            "schedule JSON: op {} needs an integer dtype, not {}",
            doc.op.name(),
            doc.dtype.name()
        ));
    }
    collective
        .check(doc.ranks)
        .map_err(|e| fail!(Schedule, Format, "schedule JSON: {e}"))?;
    let elem = doc.dtype.size();
    let too_big = |elems: u64| elems.checked_mul(elem).is_none_or(|b| b > MAX_BUFFER_BYTES);
    let ranks = doc.ranks as u64;
    if too_big(doc.count)
        || (collective.size_is_block() && too_big(doc.count.saturating_mul(ranks)))
    {
        return Err(fail!(
            Schedule,
            Format,
            "schedule JSON: count {} on {} ranks makes a buffer larger than 2^50 bytes",
            doc.count,
            doc.ranks
        ));
    }
    let sizes = match doc.sizes {
        Some(js) => Some(js.sizes(collective, doc.ranks)?),
        None if collective.sizes_shape().is_some() => {
            return Err(fail!(
                Schedule,
                Format,
                "schedule JSON: {} needs its sizes (a 'sizes' field)",
                collective.name()
            ))
        }
        None => None,
    };
    if let Some(v) = &sizes {
        v.check(v.shape(), doc.ranks, MAX_BUFFER_BYTES / elem)
            .map_err(|e| fail!(Schedule, Format, "schedule JSON: {e}"))?;
    }
    // A path's links are checked against a topology where one is given
    // (`topocoll_sim::check_routes`); what needs none is checked here.
    if let Some(i) = doc.paths.iter().position(Vec::is_empty) {
        return Err(fail!(
            Schedule,
            Format,
            "schedule JSON: paths[{i}] (route {}) is empty: a path lists the links a send crosses",
            doc.offsets.len() + i + 1
        ));
    }
    let routes = (doc.offsets.len(), doc.paths.len());
    let mut s = Schedule::new(
        collective,
        doc.ranks,
        doc.count,
        doc.dtype,
        doc.op,
        &doc.algorithm,
    );
    s.offsets = doc.offsets;
    s.paths = doc.paths;
    s.sizes = sizes.map(std::sync::Arc::new);
    let sizes_arc = s.sizes.clone();
    let sizes_ref = sizes_arc.as_deref();
    for (rank, (prog, jp)) in s.programs.iter_mut().zip(doc.programs).enumerate() {
        if too_big(jp.scratch) {
            return Err(fail!(
                Schedule,
                Format,
                "schedule JSON: rank {rank}'s scratch of {} elements is larger than 2^50 bytes",
                jp.scratch
            ));
        }
        *prog = Program {
            scratch: jp.scratch,
            ..Default::default()
        };
        for (i, jo) in jp.ops.into_iter().enumerate() {
            let at = || format!("schedule JSON: rank {rank} op {i}");
            let op = jo
                .op()
                .map_err(|e| fail!(Schedule, Format, "{}: {e}", at()))?;
            if let Op::Compute { seconds } = op {
                if !(seconds.is_finite() && (0.0..=1e9).contains(&seconds)) {
                    return Err(fail!(
                        Schedule,
                        Format,
                        "{}: compute time {seconds:e} s is not a duration from 0 to 1e9 s",
                        at()
                    ));
                }
            }
            if let Some(fault) = reference_fault(&op, i, &jo.deps, doc.ranks, routes) {
                return Err(fail!(Schedule, Format, "{}: {fault}", at()));
            }
            // Every region inside its buffer, so that nothing (a simulation
            // run without the verifier, say) prices or touches bytes that
            // are not there.
            let regions: &[&Region] = match &op {
                Op::Send { region, .. } | Op::Recv { region, .. } => &[region],
                Op::Copy { src, dst } | Op::Combine { src, dst } => &[src, dst],
                Op::Compute { .. } => &[],
            };
            for r in regions {
                let len = match r.buf {
                    Buf::Input => collective.input_len(doc.ranks, doc.count, rank, sizes_ref),
                    Buf::Output => collective.output_len(doc.ranks, doc.count, rank, sizes_ref),
                    Buf::Scratch => jp.scratch,
                };
                if r.offset.checked_add(r.count).is_none_or(|end| end > len) {
                    return Err(fail!(Schedule, Format,
                        "{}: region of {} elements from {} ends past the {} buffer's {len} elements",
                        at(),
                        r.count,
                        r.offset,
                        format!("{:?}", r.buf).to_lowercase()
                    ));
                }
            }
            prog.push(op, &jo.deps);
        }
    }
    Ok(s)
}
