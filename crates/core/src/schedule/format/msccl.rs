//! MSCCL's XML algorithm format, read and written: the format MSCCL,
//! MSCCL++'s and RCCL's MSCCL executors run and MSCCLang, TACCL and
//! ForestColl emit.
//!
//! A file is one `<algo ngpus=".." coll="..">` of `<gpu id i_chunks o_chunks
//! s_chunks>`, each of `<tb id send recv chan>` threadblocks, each a
//! sequence of `<step s type srcbuf srcoff dstbuf dstoff cnt depid deps
//! hasdep>`. Buffers are counted in chunks: `i` input, `o` output, `s`
//! scratch. A threadblock sends only to its `send` peer and receives only
//! from its `recv` peer, over channel `chan`; messages on one (sender,
//! receiver, channel) connection meet in order. A threadblock runs its steps
//! in order, and a step also waits for step `deps` of threadblock `depid`
//! of the same GPU (-1: none).
//!
//! How a file maps onto a schedule ([`from_msccl_xml`]):
//! - a GPU is a rank, a channel a tag;
//! - a step waits for the step before it in its threadblock and for its
//!   `depid`/`deps` step; `nop` steps move no data and pass on what they
//!   wait for;
//! - `s` is a send to the threadblock's `send` peer, `r` a receive from its
//!   `recv` peer; `rcs` receives and sends what it received on; `rrc`
//!   receives and reduces with the chunk at `src` into `dst`; `rrcs` does so
//!   and sends the result on; `rrs` reduces what it receives with `src` and
//!   sends the result without keeping it (in a scratch region of its own);
//!   `cpy` copies `src` to `dst`; `re` reduces `src` into `dst`;
//! - buffers: an allreduce runs in place (`i` and `o` name one buffer, the
//!   output, as `inplace="1"`); a reduce_scatter's `i` is the whole buffer
//!   and its `o` the rank's part of it (`o` at offset rank × o_chunks of
//!   `i`, as NCCL's in-place reduce_scatter); an allgather's and an
//!   alltoall's `i` and `o` are the input and output;
//! - one loop of `nchunksperloop` chunks covers the whole buffer: the chunk
//!   is the buffer's elements over its chunks (one element by default).
//!
//! [`to_msccl_xml`] writes the inverse. A rank's ops go to one threadblock
//! per (peer sent to, channel), one per (peer received from, channel) and
//! one for local ops; a channel is 0 unless a pair of ranks sends messages
//! in another order of tags than the receiver takes them, where each tag gets
//! a channel of its own. A dependency beyond the one a step can name takes
//! a `nop` step before it. Each step carries `order`, its place in its
//! rank's program: MSCCL's parser ignores it, and [`from_msccl_xml`] reads
//! it to restore the program order. What cannot be said in the format is
//! counted in [`MscclExport`].

use crate::error::Result;
use crate::invalid;
use crate::limits::MAX_RANKS;
use crate::schedule::{
    match_messages, Buf, Collective, Dtype, Op, OpId, Program, ReduceOp, Region, Schedule,
};
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write as _;
use std::io::Write;

/// The most channels a file may use (MSCCL's `MSCCL_MAX_NUM_CHANNELS`).
pub const MAX_CHANNELS: u32 = 32;

/// The collectives the format names (`coll`), and topocoll's for them.
const COLLECTIVES: &[(&str, Collective)] = &[
    ("allreduce", Collective::Allreduce),
    ("allgather", Collective::Allgather),
    ("alltoall", Collective::Alltoall),
    ("reduce_scatter", Collective::ReduceScatter),
];

/// What [`from_msccl_xml`] needs beyond the file: the collective's size (in
/// elements, as `--size` gives it: the per-peer block of an allgather or
/// alltoall, the whole buffer otherwise; `None`: one element per chunk),
/// the element type and the reduction.
#[derive(Clone, Copy, Debug)]
pub struct MscclImport {
    pub count: Option<u64>,
    pub dtype: Dtype,
    pub op: ReduceOp,
}

/// What [`to_msccl_xml`] could not say in the format.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MscclExport {
    /// Ops that, in their threadblock, now also wait for the op before them,
    /// which they did not wait for directly.
    pub added_waits: u64,
    /// Sends whose signed-offset route is dropped (MSCCL has no routes).
    pub lost_routes: u64,
    /// `Compute` ops written as `nop` (MSCCL has no compute steps).
    pub lost_compute: u64,
}

/// One parsed `<step>`.
struct Step {
    kind: String,
    src: (char, u64),
    dst: (char, u64),
    cnt: u64,
    dep: Option<(usize, usize)>,
    order: Option<u64>,
    line: u32,
}

/// One parsed `<gpu>`: i_chunks, o_chunks, s_chunks and its threadblocks.
type Gpu = (u64, u64, u64, Vec<Tb>);

/// A ready step: its ordering key, tb and index.
type ReadyStep = std::cmp::Reverse<((u64, u64), usize, usize)>;

/// One parsed `<tb>`.
struct Tb {
    send: Option<u32>,
    recv: Option<u32>,
    chan: u32,
    steps: Vec<Step>,
}

fn attr<'a>(n: roxmltree::Node<'a, '_>, name: &str, at: &dyn Fn() -> String) -> Result<&'a str> {
    n.attribute(name)
        .ok_or_else(|| invalid!("{}: <{}> has no '{name}'", at(), n.tag_name().name()))
}

fn number<T: std::str::FromStr>(
    n: roxmltree::Node,
    name: &str,
    at: &dyn Fn() -> String,
) -> Result<T> {
    let v = attr(n, name, at)?;
    v.trim().parse().map_err(|_| {
        invalid!(
            "{}: {name}=\"{}\" is not a number in range",
            at(),
            crate::units::shorten(v)
        )
    })
}

/// A peer attribute: -1 for none, else a rank other than `me`.
fn peer(
    n: roxmltree::Node,
    name: &str,
    me: usize,
    ranks: usize,
    at: &dyn Fn() -> String,
) -> Result<Option<u32>> {
    let p: i64 = number(n, name, at)?;
    match p {
        -1 => Ok(None),
        p if p >= 0 && (p as usize) < ranks && p as usize != me => Ok(Some(p as u32)),
        p => Err(invalid!(
            "{}: {name}=\"{p}\" is neither -1 nor another GPU (0 to {})",
            at(),
            ranks - 1
        )),
    }
}

/// Reads an MSCCL XML algorithm as a schedule (see the module).
/// The collective an MSCCL XML file implements (read with its chunks
/// counted as bytes, so a malformed file fails here as it would anywhere).
pub(super) fn collective_of(text: &str) -> Result<Collective> {
    let probe = MscclImport {
        count: None,
        dtype: Dtype::U8,
        op: ReduceOp::Sum,
    };
    Ok(from_msccl_xml(text, &probe)?.collective)
}

pub fn from_msccl_xml(text: &str, how: &MscclImport) -> Result<Schedule> {
    // (The parser's message may quote the character it met: a newline.)
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        let said: String = e
            .to_string()
            .chars()
            .flat_map(|c| match c.is_control() {
                true => c.escape_default().collect::<Vec<_>>(),
                false => vec![c],
            })
            .collect();
        invalid!("MSCCL XML: {said}")
    })?;
    let algo = doc.root_element();
    if algo.tag_name().name() != "algo" {
        return Err(invalid!(
            "MSCCL XML: the root element is <{}>, not <algo>",
            algo.tag_name().name()
        ));
    }
    let (ranks, collective, coll, name) = read_algo(algo)?;

    // The GPUs, their chunk counts and threadblocks.
    let mut gpus: Vec<Option<Gpu>> = (0..ranks).map(|_| None).collect();
    for g in algo.children().filter(|n| n.is_element()) {
        read_gpu(&doc, g, &mut gpus)?;
    }
    let gpus: Vec<Gpu> = gpus
        .into_iter()
        .enumerate()
        .map(|(g, x)| {
            x.ok_or_else(|| invalid!("MSCCL XML: ngpus=\"{ranks}\" but GPU {g} is missing"))
        })
        .collect::<Result<_>>()?;

    let (count, chunk) = read_chunk(&gpus, collective, coll, how)?;
    let elem = how.dtype.size();
    let mut s = Schedule::new(collective, ranks, count, how.dtype, how.op, name);
    for (g, (_, o_chunks, s_chunks, tbs)) in gpus.iter().enumerate() {
        let o_base = match collective {
            Collective::ReduceScatter => g as u64 * o_chunks * chunk,
            _ => 0,
        };
        let scratch_base = s_chunks
            .checked_mul(chunk)
            .filter(|&b| b.saturating_mul(elem) <= crate::schedule::MAX_BUFFER_BYTES);
        let Some(scratch_base) = scratch_base else {
            return Err(invalid!(
                "MSCCL XML: GPU {g}'s scratch of {s_chunks} chunks is larger than 2^50 bytes"
            ));
        };
        s.programs[g] = gpu_program(&s, g, tbs, chunk, o_base, scratch_base)?;
    }
    Ok(s)
}

/// The `<algo>` element's GPU count, collective (and its name in the file)
/// and algorithm name.
fn read_algo<'a>(algo: roxmltree::Node<'a, '_>) -> Result<(usize, Collective, &'a str, &'a str)> {
    let top = || "MSCCL XML: <algo>".to_string();
    let ranks: usize = number(algo, "ngpus", &top)?;
    if ranks == 0 || ranks > MAX_RANKS {
        return Err(invalid!(
            "MSCCL XML: ngpus=\"{ranks}\" (1 to {MAX_RANKS} supported)"
        ));
    }
    let coll = attr(algo, "coll", &top)?;
    let Some(&(_, collective)) = COLLECTIVES.iter().find(|(n, _)| *n == coll) else {
        return Err(invalid!(
            "MSCCL XML: coll=\"{}\" is not one topocoll reads ({})",
            crate::units::shorten(coll),
            COLLECTIVES
                .iter()
                .map(|c| c.0)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let name = algo.attribute("name").unwrap_or("msccl");
    if name.chars().any(|c| c.is_control() || c == ',' || c == '"') {
        return Err(invalid!(
            "MSCCL XML: algorithm name {:?} has a control character, comma or quote",
            crate::units::shorten(name)
        ));
    }
    Ok((ranks, collective, coll, name))
}

/// Reads one `<gpu>` (its chunk counts and threadblocks) into its place in
/// `gpus`, one per rank.
fn read_gpu(doc: &roxmltree::Document, g: roxmltree::Node, gpus: &mut [Option<Gpu>]) -> Result<()> {
    let ranks = gpus.len();
    let line = doc.text_pos_at(g.range().start).row;
    if g.tag_name().name() != "gpu" {
        return Err(invalid!(
            "MSCCL XML: line {line}: <{}> in <algo>, where only <gpu> goes",
            g.tag_name().name()
        ));
    }
    let at = || format!("MSCCL XML: line {line}");
    let id: usize = number(g, "id", &at)?;
    if id >= ranks || gpus[id].is_some() {
        return Err(invalid!(
            "MSCCL XML: line {line}: gpu id=\"{id}\" is out of range or given twice ({ranks} GPUs)"
        ));
    }
    let chunks = |n: &str| -> Result<u64> { number(g, n, &at) };
    let (i_chunks, o_chunks, s_chunks) = (
        chunks("i_chunks")?,
        chunks("o_chunks")?,
        chunks("s_chunks")?,
    );
    let mut tbs: Vec<Option<Tb>> = Vec::new();
    for t in g.children().filter(|n| n.is_element()) {
        read_tb(doc, g, t, id, ranks, &mut tbs)?;
    }
    let tbs: Vec<Tb> = tbs
        .into_iter()
        .enumerate()
        .map(|(t, tb)| {
            tb.ok_or_else(|| invalid!("MSCCL XML: gpu {id} has no tb {t} (ids must run from 0)"))
        })
        .collect::<Result<_>>()?;
    // One threadblock per connection and direction, as MSCCL requires:
    // otherwise the order in which messages meet is not defined.
    let mut seen = BTreeMap::new();
    for (t, tb) in tbs.iter().enumerate() {
        for (dir, p) in [("sends to", tb.send), ("receives from", tb.recv)] {
            if let Some(p) = p {
                if let Some(u) = seen.insert((dir, p, tb.chan), t) {
                    return Err(invalid!(
                        "MSCCL XML: gpu {id}: tbs {u} and {t} both {dir} GPU {p} on channel {}",
                        tb.chan
                    ));
                }
            }
        }
    }
    gpus[id] = Some((i_chunks, o_chunks, s_chunks, tbs));
    Ok(())
}

/// Reads one `<tb>` of GPU `id` (the element `g`) and its steps into its
/// place in `tbs`.
fn read_tb(
    doc: &roxmltree::Document,
    g: roxmltree::Node,
    t: roxmltree::Node,
    id: usize,
    ranks: usize,
    tbs: &mut Vec<Option<Tb>>,
) -> Result<()> {
    let line = doc.text_pos_at(t.range().start).row;
    let at = || format!("MSCCL XML: line {line} (gpu {id})");
    if t.tag_name().name() != "tb" {
        return Err(invalid!(
            "{}: <{}> in <gpu>, where only <tb> goes",
            at(),
            t.tag_name().name()
        ));
    }
    let tid: usize = number(t, "id", &at)?;
    let chan: u32 = number(t, "chan", &at)?;
    if chan >= MAX_CHANNELS {
        return Err(invalid!(
            "{}: chan=\"{chan}\" (MSCCL has channels 0 to {})",
            at(),
            MAX_CHANNELS - 1
        ));
    }
    let mut tb = Tb {
        send: peer(t, "send", id, ranks, &at)?,
        recv: peer(t, "recv", id, ranks, &at)?,
        chan,
        steps: Vec::new(),
    };
    for (k, st) in t.children().filter(|n| n.is_element()).enumerate() {
        tb.steps.push(read_step(doc, st, k, id, tid)?);
    }
    let count = g.children().filter(|n| n.is_element()).count();
    if tid >= count {
        return Err(invalid!(
            "{}: tb id=\"{tid}\": the GPU's {count} tbs have ids 0 to {}",
            at(),
            count - 1
        ));
    }
    if tid >= tbs.len() {
        tbs.resize_with(tid + 1, || None);
    }
    if tbs[tid].is_some() {
        return Err(invalid!("{}: tb id=\"{tid}\" is given twice", at()));
    }
    tbs[tid] = Some(tb);
    Ok(())
}

/// Reads step `k` of threadblock `tid` of GPU `id`.
fn read_step(
    doc: &roxmltree::Document,
    st: roxmltree::Node,
    k: usize,
    id: usize,
    tid: usize,
) -> Result<Step> {
    let line = doc.text_pos_at(st.range().start).row;
    let at = || format!("MSCCL XML: line {line} (gpu {id} tb {tid})");
    if st.tag_name().name() != "step" {
        return Err(invalid!(
            "{}: <{}> in <tb>, where only <step> goes",
            at(),
            st.tag_name().name()
        ));
    }
    let s: usize = number(st, "s", &at)?;
    if s != k {
        return Err(invalid!("{}: step s=\"{s}\" is the tb's step {k}", at()));
    }
    let buf = |b: &str, off: &str| -> Result<(char, u64)> {
        let name = attr(st, b, &at)?;
        let c = match name {
            "i" | "o" | "s" => name.chars().next().unwrap_or('i'),
            other => {
                return Err(invalid!(
                    "{}: {b}=\"{}\" is not i, o or s",
                    at(),
                    crate::units::shorten(other)
                ))
            }
        };
        Ok((c, number(st, off, &at)?))
    };
    let depid: i64 = number(st, "depid", &at)?;
    let deps: i64 = number(st, "deps", &at)?;
    let dep = match (depid, deps) {
        (-1, _) => None,
        (d, s) if d >= 0 && s >= 0 => Some((d as usize, s as usize)),
        _ => {
            return Err(invalid!(
                "{}: depid=\"{depid}\" deps=\"{deps}\" name no step",
                at()
            ))
        }
    };
    let kind = attr(st, "type", &at)?.to_string();
    Ok(Step {
        src: buf("srcbuf", "srcoff")?,
        dst: buf("dstbuf", "dstoff")?,
        cnt: number(st, "cnt", &at)?,
        dep,
        order: st
            .attribute("order")
            .map(|_| number(st, "order", &at))
            .transpose()?,
        kind,
        line,
    })
}

/// The collective's size in elements and the chunk's, from the GPUs' chunk
/// counts and the size asked for.
fn read_chunk(
    gpus: &[Gpu],
    collective: Collective,
    coll: &str,
    how: &MscclImport,
) -> Result<(u64, u64)> {
    let ranks = gpus.len();
    let (i_chunks, o_chunks) = (gpus[0].0, gpus[0].1);
    if let Some(g) = gpus.iter().position(|x| (x.0, x.1) != (i_chunks, o_chunks)) {
        return Err(invalid!(
            "MSCCL XML: GPU {g} has i_chunks={} o_chunks={}, GPU 0 {i_chunks} and {o_chunks}",
            gpus[g].0,
            gpus[g].1
        ));
    }
    let p = ranks as u64;
    let consistent = match collective {
        Collective::Allreduce => i_chunks > 0 && (o_chunks == 0 || o_chunks == i_chunks),
        Collective::Allgather => i_chunks > 0 && o_chunks == p * i_chunks,
        Collective::Alltoall => i_chunks > 0 && o_chunks == i_chunks && i_chunks % p == 0,
        _ => o_chunks > 0 && i_chunks == p * o_chunks,
    };
    if !consistent {
        return Err(invalid!(
            "MSCCL XML: a {coll} on {ranks} GPUs cannot have i_chunks={i_chunks} and o_chunks={o_chunks}"
        ));
    }
    // Elements of the i buffer per element of the collective's size.
    let per_count = if collective == Collective::Alltoall {
        p
    } else {
        1
    };
    let count = match how.count {
        Some(c) => c,
        None => i_chunks / per_count,
    };
    let chunk = count
        .checked_mul(per_count)
        .filter(|e| e % i_chunks == 0 && *e > 0)
        .map(|e| e / i_chunks)
        .ok_or_else(|| {
            invalid!(
                "MSCCL XML: a size of {count} elements is not a whole number of the file's {} chunks{}",
                i_chunks / per_count,
                if per_count > 1 { " per peer" } else { "" }
            )
        })?;
    let elem = how.dtype.size();
    let total = count.checked_mul(p).and_then(|e| e.checked_mul(elem));
    if total.is_none_or(|b| b > crate::schedule::MAX_BUFFER_BYTES) {
        return Err(invalid!(
            "MSCCL XML: {count} elements on {ranks} ranks makes a buffer larger than 2^50 bytes"
        ));
    }
    Ok((count, chunk))
}

/// The ops of one GPU, in an order every dependency respects: the file's
/// `order` where every data-moving step has one, else step by step across
/// threadblocks (each tb's first steps, then their second, ...).
fn gpu_program(
    s: &Schedule,
    g: usize,
    tbs: &[Tb],
    chunk: u64,
    o_base: u64,
    scratch_base: u64,
) -> Result<Program> {
    let gpu = GpuChunks {
        s,
        g,
        chunk,
        o_base,
        scratch_base,
    };
    let mut prog = Program::default();
    let mut scratch = scratch_base;
    let index: Vec<usize> = tbs
        .iter()
        .scan(0, |n, tb| {
            let at = *n;
            *n += tb.steps.len();
            Some(at)
        })
        .collect();
    let total: usize = tbs.iter().map(|t| t.steps.len()).sum();
    let node = |t: usize, k: usize| index[t] + k;
    let (mut waits, succ) = step_graph(g, tbs, &index, total)?;
    let key = step_keys(tbs, &index, total);
    let mut ready: BinaryHeap<ReadyStep> = BinaryHeap::new();
    for (t, tb) in tbs.iter().enumerate() {
        if !tb.steps.is_empty() && waits[node(t, 0)] == 0 {
            ready.push(std::cmp::Reverse((key[node(t, 0)], t, 0)));
        }
    }
    // What each step's completion is: its last op, or a nop's own waits.
    let mut done: Vec<Vec<OpId>> = vec![Vec::new(); total];
    let mut handled = 0;
    while let Some(std::cmp::Reverse((_, t, k))) = ready.pop() {
        handled += 1;
        let st = &tbs[t].steps[k];
        let mut deps: Vec<OpId> = Vec::new();
        if k > 0 {
            deps.extend_from_slice(&done[node(t, k - 1)]);
        }
        if let Some((dt, dk)) = st.dep {
            deps.extend_from_slice(&done[node(dt, dk)]);
        }
        deps.sort_unstable();
        deps.dedup();
        let last = gpu.step_ops(&tbs[t], t, k, &deps, &mut prog, &mut scratch)?;
        done[node(t, k)] = match last {
            Some(op) => vec![op],
            None => deps,
        };
        for &n in &succ[node(t, k)] {
            waits[n] -= 1;
            if waits[n] == 0 {
                let t2 = index.partition_point(|&i| i <= n) - 1;
                ready.push(std::cmp::Reverse((key[n], t2, n - index[t2])));
            }
        }
    }
    if handled < total {
        let (t, k) = (0..tbs.len())
            .flat_map(|t| (0..tbs[t].steps.len()).map(move |k| (t, k)))
            .find(|&(t, k)| waits[node(t, k)] > 0)
            .unwrap_or((0, 0));
        return Err(invalid!(
            "MSCCL XML: gpu {g}: steps wait for each other in a cycle (tb {t} step {k} never runs)"
        ));
    }
    prog.scratch = scratch;
    Ok(prog)
}

/// How many steps each step of GPU `g` waits for, and its successors (steps
/// numbered tb after tb, from `index`).
fn step_graph(
    g: usize,
    tbs: &[Tb],
    index: &[usize],
    total: usize,
) -> Result<(Vec<u32>, Vec<Vec<usize>>)> {
    let node = |t: usize, k: usize| index[t] + k;
    let mut waits = vec![0u32; total];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); total];
    for (t, tb) in tbs.iter().enumerate() {
        for (k, st) in tb.steps.iter().enumerate() {
            if k > 0 {
                succ[node(t, k - 1)].push(node(t, k));
                waits[node(t, k)] += 1;
            }
            if let Some((dt, dk)) = st.dep {
                if dt >= tbs.len() || dk >= tbs[dt].steps.len() {
                    return Err(invalid!(
                        "MSCCL XML: line {} (gpu {g} tb {t} step {k}): depid={dt} deps={dk} is not a step of this GPU",
                        st.line
                    ));
                }
                succ[node(dt, dk)].push(node(t, k));
                waits[node(t, k)] += 1;
            }
        }
    }
    Ok((waits, succ))
}

/// The key that orders ready steps: the file's `order` where every
/// data-moving step has one (a nop takes that of the next step of its tb
/// that moves data), else (step, tb).
fn step_keys(tbs: &[Tb], index: &[usize], total: usize) -> Vec<(u64, u64)> {
    let node = |t: usize, k: usize| index[t] + k;
    let ordered = tbs.iter().all(|tb| {
        tb.steps
            .iter()
            .all(|st| st.kind == "nop" || st.order.is_some())
    });
    let mut key = vec![(0u64, 0u64); total];
    for (t, tb) in tbs.iter().enumerate() {
        let mut next = u64::MAX;
        for (k, st) in tb.steps.iter().enumerate().rev() {
            key[node(t, k)] = if ordered {
                next = st.order.unwrap_or(next);
                (next, u64::from(st.kind != "nop"))
            } else {
                (k as u64, t as u64)
            };
        }
    }
    key
}

/// What turning one GPU's steps into ops reads: the schedule, the GPU, the
/// chunk, and where the GPU's part of `o` (a reduce_scatter's) and its
/// scratch for `rrs` steps start.
struct GpuChunks<'a> {
    s: &'a Schedule,
    g: usize,
    chunk: u64,
    o_base: u64,
    scratch_base: u64,
}

impl GpuChunks<'_> {
    /// Appends the ops of step `k` of threadblock `t` (`tb`), waiting for
    /// `deps`, to `prog`; returns its last op (`None` for a nop). `rrs`
    /// steps take their temporary regions from `scratch` up.
    fn step_ops(
        &self,
        tb: &Tb,
        t: usize,
        k: usize,
        deps: &[OpId],
        prog: &mut Program,
        scratch: &mut u64,
    ) -> Result<Option<OpId>> {
        let GpuChunks {
            s,
            g,
            chunk,
            o_base,
            scratch_base,
        } = *self;
        let st = &tb.steps[k];
        let at = || format!("MSCCL XML: line {} (gpu {g} tb {t} step {k})", st.line);
        let region = |(b, off): (char, u64)| -> Result<Region> {
            let len = st.cnt.checked_mul(chunk);
            let start = off.checked_mul(chunk);
            let (Some(count), Some(offset)) = (len, start) else {
                return Err(invalid!(
                    "{}: offset {off} and cnt {} overflow",
                    at(),
                    st.cnt
                ));
            };
            let (buf, offset) = match (b, s.collective) {
                ('s', _) => (Buf::Scratch, offset),
                ('i', Collective::Allgather | Collective::Alltoall) => (Buf::Input, offset),
                ('o', Collective::ReduceScatter) => (Buf::Output, offset.saturating_add(o_base)),
                _ => (Buf::Output, offset),
            };
            let r = Region { buf, offset, count };
            let len = match buf {
                Buf::Scratch => scratch_base,
                b => s.buffer_len(g, b),
            };
            if r.offset.checked_add(r.count).is_none_or(|end| end > len) {
                return Err(invalid!(
                    "{}: {} chunks from chunk {off} of {b} end past its {} chunks",
                    at(),
                    st.cnt,
                    len / chunk
                ));
            }
            Ok(r)
        };
        let send_peer = || {
            tb.send
                .ok_or_else(|| invalid!("{}: a '{}' step in a tb with send=\"-1\"", at(), st.kind))
        };
        let recv_peer = || {
            tb.recv
                .ok_or_else(|| invalid!("{}: a '{}' step in a tb with recv=\"-1\"", at(), st.kind))
        };
        let tag = tb.chan;
        let mut push = |op: Op, deps: &[OpId]| -> OpId { prog.push(op, deps) };
        let last = match st.kind.as_str() {
            "nop" => None,
            "s" => Some(push(Op::Send { peer: send_peer()?, tag, region: region(st.src)?, route: 0 }, deps)),
            "r" => Some(push(Op::Recv { peer: recv_peer()?, tag, region: region(st.dst)?, combine: false }, deps)),
            "rcs" => {
                let dst = region(st.dst)?;
                let to = send_peer()?;
                let r = push(Op::Recv { peer: recv_peer()?, tag, region: dst, combine: false }, deps);
                Some(push(Op::Send { peer: to, tag, region: dst, route: 0 }, &[r]))
            }
            "rrc" | "rrcs" => {
                let (src, dst) = (region(st.src)?, region(st.dst)?);
                let from = recv_peer()?;
                let to = if st.kind == "rrcs" { Some(send_peer()?) } else { None };
                let r = if src == dst {
                    push(Op::Recv { peer: from, tag, region: dst, combine: true }, deps)
                } else {
                    let c = push(Op::Copy { src, dst }, deps);
                    push(Op::Recv { peer: from, tag, region: dst, combine: true }, &[c])
                };
                Some(match to {
                    Some(to) => push(Op::Send { peer: to, tag, region: dst, route: 0 }, &[r]),
                    None => r,
                })
            }
            "rrs" => {
                let src = region(st.src)?;
                let (from, to) = (recv_peer()?, send_peer()?);
                let temp = Region { buf: Buf::Scratch, offset: *scratch, count: src.count };
                *scratch = scratch
                    .checked_add(src.count)
                    .filter(|&e| e.saturating_mul(s.dtype.size()) <= crate::schedule::MAX_BUFFER_BYTES)
                    .ok_or_else(|| invalid!("{}: the scratch for rrs steps passes 2^50 bytes", at()))?;
                let r = push(Op::Recv { peer: from, tag, region: temp, combine: false }, deps);
                let c = push(Op::Combine { src, dst: temp }, &[r]);
                Some(push(Op::Send { peer: to, tag, region: temp, route: 0 }, &[c]))
            }
            "cpy" => Some(push(Op::Copy { src: region(st.src)?, dst: region(st.dst)? }, deps)),
            "re" => Some(push(Op::Combine { src: region(st.src)?, dst: region(st.dst)? }, deps)),
            other => {
                return Err(invalid!(
                    "{}: type=\"{}\" is not a step topocoll reads (nop, s, r, rcs, rrc, rrcs, rrs, cpy, re)",
                    at(),
                    crate::units::shorten(other)
                ))
            }
        };
        Ok(last)
    }
}

/// The greatest common divisor.
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Writes `s` as an MSCCL XML algorithm (see the module); returns what the
/// format could not hold.
pub fn to_msccl_xml(s: &Schedule, out: &mut dyn Write) -> Result<MscclExport> {
    let Some(&(coll, _)) = COLLECTIVES.iter().find(|(_, c)| *c == s.collective) else {
        return Err(invalid!(
            "MSCCL XML has no {}: it writes {}",
            s.collective.name(),
            COLLECTIVES
                .iter()
                .map(|c| c.0)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let p = s.ranks;
    let partner = match_messages(s)?;
    let chunk = export_chunk(s);
    if s.collective == Collective::ReduceScatter && !s.count.is_multiple_of(p as u64) {
        return Err(invalid!(
            "MSCCL XML: a reduce_scatter of {} elements on {p} ranks: MSCCL's parts are equal",
            s.count
        ));
    }
    let (channel_of, nchannels) = channels(s)?;
    let export = Export {
        s,
        partner: &partner,
        chunk,
        channel_of,
    };

    let mut report = MscclExport::default();
    let mut text = String::new();
    let (i_chunks, o_chunks) = match s.collective {
        Collective::Allreduce | Collective::ReduceScatter => {
            let n = s.count / chunk;
            (
                n,
                if s.collective == Collective::Allreduce {
                    n
                } else {
                    n / p as u64
                },
            )
        }
        _ => (
            s.buffer_len(0, Buf::Input) / chunk,
            s.buffer_len(0, Buf::Output) / chunk,
        ),
    };
    let inplace = matches!(
        s.collective,
        Collective::Allreduce | Collective::ReduceScatter
    );
    let _ = writeln!(
        text,
        "<algo name=\"{}\" proto=\"Simple\" nchannels=\"{nchannels}\" nchunksperloop=\"{}\" ngpus=\"{p}\" \
         coll=\"{coll}\" inplace=\"{}\" outofplace=\"{}\" minBytes=\"0\" maxBytes=\"0\">",
        escape(&s.algorithm),
        i_chunks.max(o_chunks),
        u8::from(inplace),
        u8::from(!inplace)
    );
    for (r, prog) in s.programs.iter().enumerate() {
        let tbs = export.threadblocks(r, &mut report);
        let s_chunks = prog.scratch / chunk;
        let _ = writeln!(
            text,
            "  <gpu id=\"{r}\" i_chunks=\"{i_chunks}\" o_chunks=\"{o_chunks}\" s_chunks=\"{s_chunks}\">"
        );
        tbs.write(&mut text);
        let _ = writeln!(text, "  </gpu>");
        if text.len() > 1 << 20 {
            out.write_all(text.as_bytes())
                .map_err(|e| invalid!("writing MSCCL XML: {e}"))?;
            text.clear();
        }
    }
    text.push_str("</algo>\n");
    out.write_all(text.as_bytes())
        .map_err(|e| invalid!("writing MSCCL XML: {e}"))?;
    Ok(report)
}

/// The chunk: every buffer, region and (for a reduce_scatter) rank's part
/// a whole number of chunks.
fn export_chunk(s: &Schedule) -> u64 {
    let p = s.ranks;
    let mut chunk = 0;
    for r in 0..p {
        for b in [Buf::Input, Buf::Output] {
            chunk = gcd(chunk, s.buffer_len(r, b));
        }
        chunk = gcd(chunk, s.programs[r].scratch);
        if s.collective == Collective::ReduceScatter {
            chunk = gcd(chunk, crate::schedule::chunk(s.count, p as u64, r as u64).0);
        }
        for op in &s.programs[r].ops {
            let regions: &[&Region] = match op {
                Op::Send { region, .. } | Op::Recv { region, .. } => &[region],
                Op::Copy { src, dst } | Op::Combine { src, dst } => &[src, dst],
                Op::Compute { .. } => &[],
            };
            for g in regions {
                chunk = gcd(gcd(chunk, g.offset), g.count);
            }
        }
    }
    chunk.max(1)
}

/// Channels by (sender, receiver) pair: the channel of each tag.
type Channels = BTreeMap<(u32, u32), BTreeMap<u32, u32>>;

/// The channel of each message: 0 for a pair of ranks whose sends and
/// receives take the same order of tags (such pairs are left out), else
/// one per tag; and how many channels that makes.
fn channels(s: &Schedule) -> Result<(Channels, u32)> {
    let mut by_pair: BTreeMap<(u32, u32), (Vec<u32>, Vec<u32>)> = BTreeMap::new();
    for (r, prog) in s.programs.iter().enumerate() {
        for op in &prog.ops {
            match *op {
                Op::Send { peer, .. } if peer as usize == r => {
                    return Err(invalid!(
                        "MSCCL XML: rank {r} sends to itself, which MSCCL cannot"
                    ))
                }
                Op::Send { peer, tag, .. } => {
                    by_pair.entry((r as u32, peer)).or_default().0.push(tag)
                }
                Op::Recv { peer, tag, .. } => {
                    by_pair.entry((peer, r as u32)).or_default().1.push(tag)
                }
                _ => {}
            }
        }
    }
    let mut channel_of: Channels = BTreeMap::new();
    let mut nchannels = 1;
    for (pair, (sends, recvs)) in &by_pair {
        if sends == recvs {
            continue;
        }
        let mut tags = sends.clone();
        tags.sort_unstable();
        tags.dedup();
        if tags.len() as u32 > MAX_CHANNELS {
            return Err(invalid!(
                "MSCCL XML: rank {} sends rank {} {} tags in another order than it receives them: \
                 more than MSCCL's {MAX_CHANNELS} channels",
                pair.0,
                pair.1,
                tags.len()
            ));
        }
        nchannels = nchannels.max(tags.len() as u32);
        channel_of.insert(*pair, tags.into_iter().zip(0..).collect());
    }
    Ok((channel_of, nchannels))
}

/// What writing a rank's threadblocks reads: the schedule, its messages'
/// partners, the chunk and the channels.
struct Export<'a> {
    s: &'a Schedule,
    partner: &'a [Vec<OpId>],
    chunk: u64,
    channel_of: Channels,
}

/// One rank's threadblocks as written: by (kind, peer, channel) in order of
/// first use, each its step lines (`HASDEP` standing for whether another
/// step depends on it, which `depended` holds).
struct Threadblocks {
    key: Vec<(u8, u32, u32)>,
    steps: Vec<Vec<String>>,
    depended: Vec<Vec<bool>>,
}

impl Export<'_> {
    fn buf(&self, b: Buf) -> char {
        match (b, self.s.collective) {
            (Buf::Scratch, _) => 's',
            (Buf::Input, _) => 'i',
            (Buf::Output, Collective::Allreduce | Collective::ReduceScatter) => 'i',
            (Buf::Output, _) => 'o',
        }
    }

    fn chan(&self, from: u32, to: u32, tag: u32) -> u32 {
        self.channel_of.get(&(from, to)).map_or(0, |m| m[&tag])
    }

    /// A region as (buffer, chunk offset).
    fn reg(&self, g: &Region) -> (char, u64) {
        (self.buf(g.buf), g.offset / self.chunk)
    }

    /// The region of rank `q`'s op `j`, a send or receive.
    fn remote(&self, q: u32, j: OpId) -> (char, u64) {
        match self.s.programs[q as usize].ops[j as usize] {
            Op::Send { region, .. } | Op::Recv { region, .. } => self.reg(&region),
            _ => ('i', 0),
        }
    }

    /// Rank `r`'s ops as threadblocks of steps: a send's, a receive's by
    /// (peer, channel), the local ops' one; a dependency beyond the one a
    /// step names takes a nop before it.
    fn threadblocks(&self, r: usize, report: &mut MscclExport) -> Threadblocks {
        let prog = &self.s.programs[r];
        let ru = r as u32;
        let mut tb_key: Vec<(u8, u32, u32)> = Vec::new();
        let mut tb_steps: Vec<Vec<String>> = Vec::new();
        let mut place: Vec<(usize, usize)> = Vec::with_capacity(prog.len());
        let mut last_op: Vec<Option<usize>> = Vec::new();
        let mut depended: Vec<Vec<bool>> = Vec::new();
        for (i, op) in prog.ops.iter().enumerate() {
            let key = match *op {
                Op::Send { peer, tag, .. } => (0, peer, self.chan(ru, peer, tag)),
                Op::Recv { peer, tag, .. } => (1, peer, self.chan(peer, ru, tag)),
                _ => (2, 0, 0),
            };
            let t = match tb_key.iter().position(|&k| k == key) {
                Some(t) => t,
                None => {
                    tb_key.push(key);
                    tb_steps.push(Vec::new());
                    last_op.push(None);
                    depended.push(Vec::new());
                    tb_key.len() - 1
                }
            };
            let deps = prog.deps(i);
            let before = last_op[t];
            if before.is_some_and(|b| !deps.contains(&(b as OpId))) {
                report.added_waits += 1;
            }
            let extra: Vec<(usize, usize)> = deps
                .iter()
                .filter(|&&d| Some(d as usize) != before)
                .map(|&d| place[d as usize])
                .collect();
            // Dependencies the step cannot name go to nops before it.
            let (named, rest) = match extra.split_last() {
                Some((last, rest)) => (Some(*last), rest),
                None => (None, &[][..]),
            };
            for &d in rest {
                let line = step_line(
                    tb_steps[t].len(),
                    "nop",
                    ('i', 0),
                    ('i', 0),
                    0,
                    Some(d),
                    None,
                );
                tb_steps[t].push(line);
                depended[t].push(false);
                depended[d.0][d.1] = true;
            }
            if let Some(d) = named {
                depended[d.0][d.1] = true;
            }
            let line = self.op_step(r, i, tb_steps[t].len(), named, report);
            place.push((t, tb_steps[t].len()));
            tb_steps[t].push(line);
            depended[t].push(false);
            last_op[t] = Some(i);
        }
        Threadblocks {
            key: tb_key,
            steps: tb_steps,
            depended,
        }
    }

    /// The step line of rank `r`'s op `i`, step `at` of its threadblock,
    /// naming the dependency `named`.
    fn op_step(
        &self,
        r: usize,
        i: usize,
        at: usize,
        named: Option<(usize, usize)>,
        report: &mut MscclExport,
    ) -> String {
        let chunk = self.chunk;
        match self.s.programs[r].ops[i] {
            Op::Send {
                peer,
                region,
                route,
                ..
            } => {
                report.lost_routes += u64::from(route != 0);
                let there = self.remote(peer, self.partner[r][i]);
                step_line(
                    at,
                    "s",
                    self.reg(&region),
                    there,
                    region.count / chunk,
                    named,
                    Some(i),
                )
            }
            Op::Recv {
                peer,
                region,
                combine,
                ..
            } => {
                let kind = if combine { "rrc" } else { "r" };
                let from = if combine {
                    self.reg(&region)
                } else {
                    self.remote(peer, self.partner[r][i])
                };
                step_line(
                    at,
                    kind,
                    from,
                    self.reg(&region),
                    region.count / chunk,
                    named,
                    Some(i),
                )
            }
            Op::Copy { src, dst } => step_line(
                at,
                "cpy",
                self.reg(&src),
                self.reg(&dst),
                src.count / chunk,
                named,
                Some(i),
            ),
            Op::Combine { src, dst } => step_line(
                at,
                "re",
                self.reg(&src),
                self.reg(&dst),
                src.count / chunk,
                named,
                Some(i),
            ),
            Op::Compute { .. } => {
                report.lost_compute += 1;
                step_line(at, "nop", ('i', 0), ('i', 0), 0, named, Some(i))
            }
        }
    }
}

/// Step `at` of its threadblock as a `<step>` line, `HASDEP` in place of
/// its `hasdep`.
fn step_line(
    at: usize,
    kind: &str,
    src: (char, u64),
    dst: (char, u64),
    cnt: u64,
    dep: Option<(usize, usize)>,
    order: Option<usize>,
) -> String {
    let (depid, deps) = dep.map_or((-1, -1), |(t, k)| (t as i64, k as i64));
    format!(
        "<step s=\"{}\" type=\"{kind}\" srcbuf=\"{}\" srcoff=\"{}\" dstbuf=\"{}\" dstoff=\"{}\" cnt=\"{cnt}\" depid=\"{depid}\" deps=\"{deps}\" hasdep=\"HASDEP\"{}/>",
        at,
        src.0,
        src.1,
        dst.0,
        dst.1,
        order.map_or(String::new(), |o| format!(" order=\"{o}\""))
    )
}

impl Threadblocks {
    /// Writes the `<tb>` elements.
    fn write(&self, text: &mut String) {
        for (t, ((kind, peer, ch), steps)) in self.key.iter().zip(&self.steps).enumerate() {
            let (send, recv) = match kind {
                0 => (*peer as i64, -1),
                1 => (-1, *peer as i64),
                _ => (-1, -1),
            };
            let _ = writeln!(
                text,
                "    <tb id=\"{t}\" send=\"{send}\" recv=\"{recv}\" chan=\"{ch}\">"
            );
            for (k, line) in steps.iter().enumerate() {
                let has = if self.depended[t][k] { "1" } else { "0" };
                let _ = writeln!(text, "      {}", line.replace("HASDEP", has));
            }
            let _ = writeln!(text, "    </tb>");
        }
    }
}

/// `s` as an XML attribute value.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
