//! Reading an MSCCL XML algorithm as a schedule ([`from_msccl_xml`]).
//!
//! The file is parsed once into plain structs (element positions kept as
//! byte offsets: a line number is worked out only for an error, since
//! finding one costs a pass over the text), then each GPU's steps become
//! its ops in an order every dependency respects. Every pass is linear in
//! the file but for the ready queue's logarithm.

use super::{MscclImport, COLLECTIVES, READ_CHANNELS};
use crate::error::fail;
use crate::error::Result;
use crate::{Buf, Collective, Dtype, Op, OpId, Program, Region, Schedule};
use std::collections::{BTreeMap, BinaryHeap};
use topocoll_base::limits::MAX_RANKS;

/// A nop passes on what it waits for to the step after it; past this many
/// such waits a zero-time compute op joins them, so that a long run of
/// nops costs linear time, not quadratic.
const NOP_JOIN: usize = 256;

/// The kinds of step (MSCCL's `type`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Nop,
    Send,
    Recv,
    RecvCopySend,
    RecvReduceCopy,
    RecvReduceCopySend,
    RecvReduceSend,
    Copy,
    Reduce,
}

const KINDS: &[(&str, Kind)] = &[
    ("nop", Kind::Nop),
    ("s", Kind::Send),
    ("r", Kind::Recv),
    ("rcs", Kind::RecvCopySend),
    ("rrc", Kind::RecvReduceCopy),
    ("rrcs", Kind::RecvReduceCopySend),
    ("rrs", Kind::RecvReduceSend),
    ("cpy", Kind::Copy),
    ("re", Kind::Reduce),
];

impl Kind {
    fn name(self) -> &'static str {
        KINDS.iter().find(|k| k.1 == self).map_or("?", |k| k.0)
    }
}

/// One parsed `<step>`. Buffers and offsets are kept as written: a step
/// type reads only the ones it uses (a nop none, an `r` only its
/// destination), as MSCCL's runtimes do, so `-1` where nothing is read
/// is no error.
struct Step {
    kind: Kind,
    src: (char, i64),
    dst: (char, i64),
    cnt: i64,
    dep: Option<(usize, usize)>,
    order: Option<u64>,
    /// Byte offset of the element in the text.
    pos: usize,
}

/// One parsed `<tb>`.
struct Tb {
    send: Option<u32>,
    recv: Option<u32>,
    chan: u32,
    steps: Vec<Step>,
}

/// One parsed `<gpu>`.
struct Gpu {
    i_chunks: u64,
    o_chunks: u64,
    s_chunks: u64,
    tbs: Vec<Tb>,
    pos: usize,
}

/// A ready step: its ordering key, tb and index.
type ReadyStep = std::cmp::Reverse<((u64, u64), usize, usize)>;

/// Where line numbers come from, worked out only for an error.
#[derive(Clone, Copy)]
struct Text<'a>(&'a str);

impl Text<'_> {
    /// The line (from 1) of byte `pos`.
    fn line(self, pos: usize) -> usize {
        let end = pos.min(self.0.len());
        1 + self.0.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    }
}

fn attr<'a>(n: roxmltree::Node<'a, '_>, name: &str, at: &dyn Fn() -> String) -> Result<&'a str> {
    n.attribute(name).ok_or_else(|| {
        fail!(
            Schedule,
            Format,
            "{}: <{}> has no '{name}'",
            at(),
            n.tag_name().name()
        )
    })
}

fn number<T: std::str::FromStr>(
    n: roxmltree::Node,
    name: &str,
    at: &dyn Fn() -> String,
) -> Result<T> {
    let v = attr(n, name, at)?;
    v.trim().parse().map_err(|_| {
        fail!(
            Schedule,
            Format,
            "{}: {name}=\"{}\" is not a number in range",
            at(),
            topocoll_base::units::shorten(v)
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
        p => Err(fail!(
            Schedule,
            Format,
            "{}: {name}=\"{p}\" is neither -1 nor another GPU (0 to {})",
            at(),
            ranks - 1
        )),
    }
}

/// The collective an MSCCL XML file implements (from its `<algo>` alone:
/// the rest is read by [`from_msccl_xml`]).
pub(in crate::format) fn collective_of(text: &str) -> Result<Collective> {
    let doc = parse(text)?;
    Ok(read_algo(algo_element(&doc)?)?.collective)
}

/// What an MSCCL XML file's `<algo>` element says of where it applies: its
/// collective, its rank count (`ngpus`) and the sizes a runtime chooses it
/// for (`minBytes`, `maxBytes`: 0 and no limit where not given).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MscclHeader {
    pub collective: Collective,
    pub ranks: usize,
    pub min_bytes: u64,
    pub max_bytes: u64,
}

impl MscclHeader {
    /// Whether a runtime takes the algorithm for a call of `bytes`: MSCCL's
    /// rule, `minBytes <= bytes < maxBytes`, with the largest `maxBytes`
    /// (what [`super::MscclBytes::ALWAYS`] writes) or 0 read as no limit.
    pub fn takes(&self, bytes: u64) -> bool {
        let unlimited = self.max_bytes == 0 || self.max_bytes >= super::MscclBytes::NO_LIMIT;
        bytes >= self.min_bytes && (unlimited || bytes < self.max_bytes)
    }
}

/// Reads an MSCCL XML file's [`MscclHeader`] (the rest is read by
/// [`from_msccl_xml`], at a size).
pub fn msccl_header(text: &str) -> Result<MscclHeader> {
    let doc = parse(text)?;
    let root = algo_element(&doc)?;
    let algo = read_algo(root)?;
    let top = || "MSCCL XML: <algo>".to_string();
    let bytes = |name: &str, default: u64| -> Result<u64> {
        match root.attribute(name) {
            None => Ok(default),
            Some(_) => number(root, name, &top),
        }
    };
    Ok(MscclHeader {
        collective: algo.collective,
        ranks: algo.ranks,
        min_bytes: bytes("minBytes", 0)?,
        max_bytes: bytes("maxBytes", 0)?,
    })
}

/// The parsed document.
fn parse(text: &str) -> Result<roxmltree::Document<'_>> {
    // (The parser's message may quote the character it met: a newline.)
    roxmltree::Document::parse(text).map_err(|e| {
        let said: String = e
            .to_string()
            .chars()
            .flat_map(|c| match c.is_control() {
                true => c.escape_default().collect::<Vec<_>>(),
                false => vec![c],
            })
            .collect();
        fail!(Schedule, Format, "MSCCL XML: {said}")
    })
}

/// The root element, an `<algo>`.
fn algo_element<'a, 'i>(doc: &'a roxmltree::Document<'i>) -> Result<roxmltree::Node<'a, 'i>> {
    let root = doc.root_element();
    if root.tag_name().name() != "algo" {
        return Err(fail!(
            Schedule,
            Format,
            "MSCCL XML: the root element is <{}>, not <algo>",
            root.tag_name().name()
        ));
    }
    Ok(root)
}

/// What the `<algo>` element says.
struct Algo<'a> {
    ranks: usize,
    collective: Collective,
    coll: &'a str,
    name: &'a str,
    /// `nchunksperloop`, where given.
    per_loop: Option<u64>,
    /// Whether `i` and `o` name one memory (`inplace`, 1 unless given as 0).
    inplace: bool,
}

/// Reads an MSCCL XML algorithm as a schedule (see the module).
pub fn from_msccl_xml(text: &str, how: &MscclImport) -> Result<Schedule> {
    let doc = parse(text)?;
    let root = algo_element(&doc)?;
    let text = Text(text);
    let algo = read_algo(root)?;
    let ranks = algo.ranks;

    // The GPUs, their chunk counts and threadblocks.
    let mut gpus: Vec<Option<Gpu>> = (0..ranks).map(|_| None).collect();
    for g in root.children().filter(|n| n.is_element()) {
        read_gpu(text, g, &mut gpus)?;
    }
    let gpus: Vec<Gpu> = gpus
        .into_iter()
        .enumerate()
        .map(|(g, x)| {
            x.ok_or_else(|| {
                fail!(
                    Schedule,
                    Format,
                    "MSCCL XML: ngpus=\"{ranks}\" but <gpu id=\"{g}\"> is missing"
                )
            })
        })
        .collect::<Result<_>>()?;

    let layout = Layout::new(&gpus, &algo, how, text)?;
    let mut s = Schedule::new(
        algo.collective,
        ranks,
        layout.count,
        how.dtype,
        how.op,
        algo.name,
    );
    for (g, gpu) in gpus.iter().enumerate() {
        let homes = layout.homes(g, gpu, how.dtype, text)?;
        s.programs[g] = gpu_program(&s, g, gpu, &homes, text)?;
    }
    Ok(s)
}

/// Reads the `<algo>` element.
fn read_algo<'a>(algo: roxmltree::Node<'a, '_>) -> Result<Algo<'a>> {
    let top = || "MSCCL XML: <algo>".to_string();
    let ranks: usize = number(algo, "ngpus", &top)?;
    if ranks == 0 || ranks > MAX_RANKS {
        return Err(fail!(
            Schedule,
            Format,
            "MSCCL XML: <algo>: ngpus=\"{ranks}\" (1 to {MAX_RANKS} supported)"
        ));
    }
    let coll = attr(algo, "coll", &top)?;
    let Some(&(_, collective)) = COLLECTIVES.iter().find(|(n, _)| *n == coll) else {
        let why = match coll {
            "custom" => "a custom collective, whose result topocoll cannot check".to_string(),
            "reduce" | "broadcast" | "gather" | "scatter" | "alltoallv" | "send" | "recv" => {
                format!("MSCCL's {coll}, which topocoll does not read yet")
            }
            _ => "not one MSCCL names".to_string(),
        };
        return Err(fail!(
            Schedule,
            Format,
            "MSCCL XML: <algo>: coll=\"{}\" is {why}: topocoll reads {}",
            topocoll_base::units::shorten(coll),
            COLLECTIVES
                .iter()
                .map(|c| c.0)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let name = algo.attribute("name").unwrap_or("msccl");
    if name.chars().any(|c| c.is_control() || c == ',' || c == '"') {
        return Err(fail!(
            Schedule,
            Format,
            "MSCCL XML: <algo>: algorithm name {:?} has a control character, comma or quote",
            topocoll_base::units::shorten(name)
        ));
    }
    let per_loop = match algo.attribute("nchunksperloop") {
        None => None,
        Some(_) => Some(number::<u64>(algo, "nchunksperloop", &top)?),
    };
    let inplace = match algo.attribute("inplace") {
        None => true,
        Some(_) => number::<i64>(algo, "inplace", &top)? != 0,
    };
    Ok(Algo {
        ranks,
        collective,
        coll,
        name,
        per_loop,
        inplace,
    })
}

/// Reads one `<gpu>` (its chunk counts and threadblocks) into its place in
/// `gpus`, one per rank.
fn read_gpu(text: Text, g: roxmltree::Node, gpus: &mut [Option<Gpu>]) -> Result<()> {
    let ranks = gpus.len();
    let pos = g.range().start;
    if g.tag_name().name() != "gpu" {
        return Err(fail!(
            Schedule,
            Format,
            "MSCCL XML: line {}: <{}> in <algo>, where only <gpu> goes",
            text.line(pos),
            g.tag_name().name()
        ));
    }
    let at = || format!("MSCCL XML: line {}: <gpu>", text.line(pos));
    let id: usize = number(g, "id", &at)?;
    if id >= ranks || gpus[id].is_some() {
        return Err(fail!(
            Schedule,
            Format,
            "{}: id=\"{id}\" is out of range or given twice ({ranks} GPUs)",
            at()
        ));
    }
    let chunks = |n: &str| -> Result<u64> { number(g, n, &at) };
    let (i_chunks, o_chunks, s_chunks) = (
        chunks("i_chunks")?,
        chunks("o_chunks")?,
        chunks("s_chunks")?,
    );
    let count = g.children().filter(|n| n.is_element()).count();
    let mut tbs: Vec<Option<Tb>> = Vec::new();
    for t in g.children().filter(|n| n.is_element()) {
        read_tb(text, t, id, ranks, count, &mut tbs)?;
    }
    let tbs: Vec<Tb> = tbs
        .into_iter()
        .enumerate()
        .map(|(t, tb)| {
            tb.ok_or_else(|| {
                fail!(
                    Schedule,
                    Format,
                    "{}: gpu {id} has no <tb id=\"{t}\"> (ids must run from 0)",
                    at()
                )
            })
        })
        .collect::<Result<_>>()?;
    // One threadblock per connection and direction, as MSCCL requires:
    // otherwise the order in which messages meet is not defined.
    let mut seen = BTreeMap::new();
    for (t, tb) in tbs.iter().enumerate() {
        for (dir, p) in [("sends to", tb.send), ("receives from", tb.recv)] {
            if let Some(p) = p {
                if let Some(u) = seen.insert((dir, p, tb.chan), t) {
                    return Err(fail!(
                        Schedule,
                        Format,
                        "{}: gpu {id}: tbs {u} and {t} both {dir} GPU {p} on channel {}",
                        at(),
                        tb.chan
                    ));
                }
            }
        }
    }
    gpus[id] = Some(Gpu {
        i_chunks,
        o_chunks,
        s_chunks,
        tbs,
        pos,
    });
    Ok(())
}

/// Reads one `<tb>` of GPU `id` (which has `count` threadblocks) and its
/// steps into its place in `tbs`.
fn read_tb(
    text: Text,
    t: roxmltree::Node,
    id: usize,
    ranks: usize,
    count: usize,
    tbs: &mut Vec<Option<Tb>>,
) -> Result<()> {
    let pos = t.range().start;
    let at = || format!("MSCCL XML: line {}: <tb> of gpu {id}", text.line(pos));
    if t.tag_name().name() != "tb" {
        return Err(fail!(
            Schedule,
            Format,
            "MSCCL XML: line {}: <{}> in <gpu> {id}, where only <tb> goes",
            text.line(pos),
            t.tag_name().name()
        ));
    }
    let tid: usize = number(t, "id", &at)?;
    let chan: u32 = number(t, "chan", &at)?;
    if chan >= READ_CHANNELS {
        return Err(fail!(
            Schedule,
            Format,
            "{}: chan=\"{chan}\" (MSCCL's runtimes have channels 0 to {})",
            at(),
            READ_CHANNELS - 1
        ));
    }
    if tid >= count {
        return Err(fail!(
            Schedule,
            Format,
            "{}: id=\"{tid}\": the GPU's {count} tbs have ids 0 to {}",
            at(),
            count - 1
        ));
    }
    let mut tb = Tb {
        send: peer(t, "send", id, ranks, &at)?,
        recv: peer(t, "recv", id, ranks, &at)?,
        chan,
        steps: Vec::new(),
    };
    for (k, st) in t.children().filter(|n| n.is_element()).enumerate() {
        tb.steps.push(read_step(text, st, k, id, tid)?);
    }
    if tid >= tbs.len() {
        tbs.resize_with(tid + 1, || None);
    }
    if tbs[tid].is_some() {
        return Err(fail!(
            Schedule,
            Format,
            "{}: id=\"{tid}\" is given twice",
            at()
        ));
    }
    tbs[tid] = Some(tb);
    Ok(())
}

/// Reads step `k` of threadblock `tid` of GPU `id`.
fn read_step(text: Text, st: roxmltree::Node, k: usize, id: usize, tid: usize) -> Result<Step> {
    let pos = st.range().start;
    let at = || {
        format!(
            "MSCCL XML: line {}: <step> {k} of gpu {id} tb {tid}",
            text.line(pos)
        )
    };
    if st.tag_name().name() != "step" {
        return Err(fail!(
            Schedule,
            Format,
            "MSCCL XML: line {}: <{}> in <tb> {tid} of gpu {id}, where only <step> goes",
            text.line(pos),
            st.tag_name().name()
        ));
    }
    let s: usize = number(st, "s", &at)?;
    if s != k {
        return Err(fail!(
            Schedule,
            Format,
            "{}: s=\"{s}\" is the tb's step {k}",
            at()
        ));
    }
    let type_name = attr(st, "type", &at)?;
    let Some(&(_, kind)) = KINDS.iter().find(|(n, _)| *n == type_name) else {
        return Err(fail!(
            Schedule,
            Format,
            "{}: type=\"{}\" is not a step MSCCL runs (nop, s, r, rcs, rrc, rrcs, rrs, cpy, re)",
            at(),
            topocoll_base::units::shorten(type_name)
        ));
    };
    let buf = |b: &str, off: &str| -> Result<(char, i64)> {
        let name = attr(st, b, &at)?;
        let c = match name {
            "i" | "o" | "s" => name.chars().next().unwrap_or('i'),
            other => {
                return Err(fail!(
                    Schedule,
                    Format,
                    "{}: {b}=\"{}\" is not i, o or s",
                    at(),
                    topocoll_base::units::shorten(other)
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
            return Err(fail!(
                Schedule,
                Format,
                "{}: depid=\"{depid}\" deps=\"{deps}\" name no step",
                at()
            ))
        }
    };
    Ok(Step {
        kind,
        src: buf("srcbuf", "srcoff")?,
        dst: buf("dstbuf", "dstoff")?,
        cnt: number(st, "cnt", &at)?,
        dep,
        order: st
            .attribute("order")
            .map(|_| number(st, "order", &at))
            .transpose()?,
        pos,
    })
}

/// The collective's buffers counted in chunks, and the chunk in elements.
struct Layout {
    collective: Collective,
    ranks: u64,
    inplace: bool,
    /// Chunks of the `i` and `o` buffers.
    i_len: u64,
    o_len: u64,
    /// The collective's size in elements (as `--size` gives it).
    count: u64,
    /// Elements per chunk.
    chunk: u64,
}

/// Where one of the file's buffers lies in a rank's memory: a buffer, the
/// element it starts at, its length in elements.
#[derive(Clone, Copy)]
struct Home {
    buf: Buf,
    base: u64,
    len: u64,
}

/// One GPU's buffers: where `i`, `o` and `s` lie, where the scratch of
/// `rrs` steps starts, and the copy that puts the rank's data where the
/// file expects it before any step runs (an out-of-place allreduce's or
/// reduce_scatter's input, an in-place allgather's or alltoall's).
struct Homes {
    i: Home,
    o: Home,
    s: Home,
    rrs_base: u64,
    prologue: Option<(Region, Region)>,
    chunk: u64,
}

impl Layout {
    /// The chunks of the loop (`nchunksperloop`, else what the GPUs'
    /// chunk counts imply), checked against each GPU's, and the chunk for
    /// the size asked for.
    fn new(gpus: &[Gpu], algo: &Algo, how: &MscclImport, text: Text) -> Result<Layout> {
        let (collective, coll) = (algo.collective, algo.coll);
        let p = algo.ranks as u64;
        // The loop's chunks are the i and o buffers' chunks times these.
        let (i_times, o_times) = match collective {
            Collective::Allgather => (p, 1),
            Collective::ReduceScatter => (1, p),
            _ => (1, 1),
        };
        let per_loop = match algo.per_loop {
            Some(n) => n,
            None => gpus
                .iter()
                .flat_map(|g| {
                    [
                        g.i_chunks.checked_mul(i_times),
                        g.o_chunks.checked_mul(o_times),
                    ]
                })
                .map(|n| n.unwrap_or(u64::MAX))
                .max()
                .unwrap_or(0),
        };
        if per_loop == 0 || per_loop == u64::MAX {
            return Err(fail!(
                Schedule,
                Format,
                "MSCCL XML: <algo>: a {coll} of {} chunks per loop",
                if per_loop == 0 { "no" } else { "too many" }
            ));
        }
        if collective != Collective::Allreduce && per_loop % p != 0 {
            return Err(fail!(Schedule, Format,
                "MSCCL XML: <algo>: nchunksperloop=\"{per_loop}\" is not a multiple of ngpus=\"{p}\", as a {coll}'s buffers need"
            ));
        }
        let (i_len, o_len) = match collective {
            Collective::Allgather => (per_loop / p, per_loop),
            Collective::ReduceScatter => (per_loop, per_loop / p),
            _ => (per_loop, per_loop),
        };
        for (g, gpu) in gpus.iter().enumerate() {
            if gpu.i_chunks > i_len || gpu.o_chunks > o_len {
                return Err(fail!(Schedule, Format,
                    "MSCCL XML: line {}: <gpu> {g}: i_chunks=\"{}\" o_chunks=\"{}\", but a {coll} of {per_loop} chunks per loop on {p} GPUs has {i_len} and {o_len}",
                    text.line(gpu.pos),
                    gpu.i_chunks,
                    gpu.o_chunks
                ));
            }
        }
        // Elements of the loop's buffer per element of the collective's size.
        let per_count = match collective {
            Collective::Allgather | Collective::Alltoall => p,
            _ => 1,
        };
        let count = how.count.unwrap_or(per_loop / per_count);
        let chunk = count
            .checked_mul(per_count)
            .filter(|e| e % per_loop == 0 && *e > 0)
            .map(|e| e / per_loop)
            .ok_or_else(|| {
                fail!(Schedule, Format,
                    "MSCCL XML: a size of {count} elements is not a whole number of the file's {} chunks{}",
                    per_loop / per_count,
                    if per_count > 1 { " per peer" } else { "" }
                )
            })?;
        let elem = how.dtype.size();
        let total = count.checked_mul(p).and_then(|e| e.checked_mul(elem));
        if total.is_none_or(|b| b > crate::MAX_BUFFER_BYTES) {
            return Err(fail!(
                Schedule,
                Format,
                "MSCCL XML: {count} elements on {p} ranks makes a buffer larger than 2^50 bytes"
            ));
        }
        Ok(Layout {
            collective,
            ranks: p,
            inplace: algo.inplace,
            i_len,
            o_len,
            count,
            chunk,
        })
    }

    /// Where GPU `g`'s buffers lie (see [`Homes`]).
    fn homes(&self, g: usize, gpu: &Gpu, dtype: Dtype, text: Text) -> Result<Homes> {
        let Layout {
            collective,
            ranks,
            inplace,
            i_len,
            o_len,
            count,
            chunk,
        } = *self;
        let g64 = g as u64;
        let home = |buf, base, len| Home { buf, base, len };
        let region = |buf, offset, count| Region { buf, offset, count };
        // Lengths in elements (within 2^50 bytes: Layout checked P × count).
        let (i_el, o_el) = (i_len * chunk, o_len * chunk);
        // (i, o, elements of scratch holding a copy of the input, prologue)
        let (i, o, copy, prologue) = match collective {
            Collective::Allreduce | Collective::ReduceScatter => {
                let whole = region(Buf::Output, 0, count);
                let o = match collective {
                    Collective::ReduceScatter => home(Buf::Output, g64 * o_el, o_el),
                    _ => home(Buf::Output, 0, o_el),
                };
                if inplace {
                    (home(Buf::Output, 0, i_el), o, 0, None)
                } else {
                    let copy = region(Buf::Scratch, 0, count);
                    (home(Buf::Scratch, 0, i_el), o, count, Some((whole, copy)))
                }
            }
            Collective::Allgather => {
                let o = home(Buf::Output, 0, o_el);
                if inplace {
                    let mine = region(Buf::Output, g64 * count, count);
                    let input = region(Buf::Input, 0, count);
                    (
                        home(Buf::Output, g64 * count, i_el),
                        o,
                        0,
                        Some((input, mine)),
                    )
                } else {
                    (home(Buf::Input, 0, i_el), o, 0, None)
                }
            }
            _ => {
                let o = home(Buf::Output, 0, o_el);
                if inplace {
                    let all = ranks * count;
                    let input = region(Buf::Input, 0, all);
                    (o, o, 0, Some((input, region(Buf::Output, 0, all))))
                } else {
                    (home(Buf::Input, 0, i_el), o, 0, None)
                }
            }
        };
        let s_el = gpu.s_chunks.checked_mul(chunk);
        let rrs_base = s_el
            .and_then(|s| s.checked_add(copy))
            .filter(|&b| b.saturating_mul(dtype.size()) <= crate::MAX_BUFFER_BYTES);
        let (Some(s_el), Some(rrs_base)) = (s_el, rrs_base) else {
            return Err(fail!(
                Schedule,
                Format,
                "MSCCL XML: line {}: <gpu> {g}: a scratch of {} chunks is larger than 2^50 bytes",
                text.line(gpu.pos),
                gpu.s_chunks
            ));
        };
        Ok(Homes {
            i,
            o,
            s: home(Buf::Scratch, copy, s_el),
            rrs_base,
            prologue,
            chunk,
        })
    }
}

/// The ops of one GPU, in an order every dependency respects: the file's
/// `order` where every data-moving step has one, else step by step across
/// threadblocks (each tb's first steps, then their second, ...).
fn gpu_program(s: &Schedule, g: usize, gpu: &Gpu, homes: &Homes, text: Text) -> Result<Program> {
    let tbs = &gpu.tbs;
    let mut prog = Program::default();
    let mut scratch = homes.rrs_base;
    // Steps that wait for nothing wait for the prologue, if any.
    let start: Vec<OpId> = match homes.prologue {
        Some((src, dst)) => vec![prog.push(Op::Copy { src, dst }, &[])],
        None => Vec::new(),
    };
    let mut index = Vec::with_capacity(tbs.len());
    let mut total = 0usize;
    for tb in tbs {
        index.push(total);
        total += tb.steps.len();
    }
    let node = |t: usize, k: usize| index[t] + k;
    let (mut waits, succ) = step_graph(g, tbs, &index, total, text)?;
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
    let ops = StepOps { s, g, homes, text };
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
        if deps.is_empty() {
            deps.extend_from_slice(&start);
        }
        let last = ops.push(&tbs[t], t, k, &deps, &mut prog, &mut scratch)?;
        done[node(t, k)] = match last {
            Some(op) => vec![op],
            None if deps.len() > NOP_JOIN => vec![prog.push(Op::Compute { seconds: 0.0 }, &deps)],
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
        return Err(fail!(Schedule, Format,
            "MSCCL XML: line {}: <step> {k} of gpu {g} tb {t} never runs: steps wait for each other in a cycle",
            text.line(tbs[t].steps[k].pos)
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
    text: Text,
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
                    return Err(fail!(Schedule, Format,
                        "MSCCL XML: line {}: <step> {k} of gpu {g} tb {t}: depid=\"{dt}\" deps=\"{dk}\" is not a step of this GPU",
                        text.line(st.pos)
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
            .all(|st| st.kind == Kind::Nop || st.order.is_some())
    });
    let mut key = vec![(0u64, 0u64); total];
    for (t, tb) in tbs.iter().enumerate() {
        let mut next = u64::MAX;
        for (k, st) in tb.steps.iter().enumerate().rev() {
            key[node(t, k)] = if ordered {
                next = st.order.unwrap_or(next);
                (next, u64::from(st.kind != Kind::Nop))
            } else {
                (k as u64, t as u64)
            };
        }
    }
    key
}

/// What turning one GPU's steps into ops reads.
struct StepOps<'a> {
    s: &'a Schedule,
    g: usize,
    homes: &'a Homes,
    text: Text<'a>,
}

impl StepOps<'_> {
    /// The region a step names: `cnt` chunks from chunk `off` of buffer
    /// `b`, inside that buffer.
    fn region(&self, st: &Step, (b, off): (char, i64), at: &dyn Fn() -> String) -> Result<Region> {
        let h = self.homes;
        let home = match b {
            'i' => h.i,
            'o' => h.o,
            _ => h.s,
        };
        let (Ok(off), Ok(cnt)) = (u64::try_from(off), u64::try_from(st.cnt)) else {
            return Err(fail!(
                Schedule,
                Format,
                "{}: offset {off} and cnt {} name no chunks of {b}",
                at(),
                st.cnt
            ));
        };
        let (Some(offset), Some(count)) = (off.checked_mul(h.chunk), cnt.checked_mul(h.chunk))
        else {
            return Err(fail!(
                Schedule,
                Format,
                "{}: offset {off} and cnt {cnt} overflow",
                at()
            ));
        };
        if offset.checked_add(count).is_none_or(|end| end > home.len) {
            return Err(fail!(
                Schedule,
                Format,
                "{}: {cnt} chunks from chunk {off} of {b} end past its {} chunks",
                at(),
                home.len / h.chunk
            ));
        }
        Ok(Region {
            buf: home.buf,
            offset: home.base + offset,
            count,
        })
    }

    /// Appends the ops of step `k` of threadblock `t` (`tb`), waiting for
    /// `deps`, to `prog`; returns its last op (`None` for a step that moves nothing). `rrs`
    /// steps take their temporary regions from `scratch` up.
    ///
    /// Whole on purpose: one arm per MSCCL step type, side by side as the
    /// format lists them, each a few lines over the same resolved regions.
    fn push(
        &self,
        tb: &Tb,
        t: usize,
        k: usize,
        deps: &[OpId],
        prog: &mut Program,
        scratch: &mut u64,
    ) -> Result<Option<OpId>> {
        let (s, g, text) = (self.s, self.g, self.text);
        let st = &tb.steps[k];
        let at = || {
            format!(
                "MSCCL XML: line {}: <step> {k} of gpu {g} tb {t}",
                text.line(st.pos)
            )
        };
        let region = |x| self.region(st, x, &at);
        let send_peer = || {
            tb.send.ok_or_else(|| {
                fail!(
                    Schedule,
                    Format,
                    "{}: a '{}' step in a tb with send=\"-1\"",
                    at(),
                    st.kind.name()
                )
            })
        };
        let recv_peer = || {
            tb.recv.ok_or_else(|| {
                fail!(
                    Schedule,
                    Format,
                    "{}: a '{}' step in a tb with recv=\"-1\"",
                    at(),
                    st.kind.name()
                )
            })
        };
        let tag = tb.chan;
        let mut push = |op: Op, deps: &[OpId]| -> OpId { prog.push(op, deps) };
        let last = match st.kind {
            Kind::Nop => None,
            Kind::Send => Some(push(
                Op::Send {
                    peer: send_peer()?,
                    tag,
                    region: region(st.src)?,
                    route: 0,
                },
                deps,
            )),
            Kind::Recv => Some(push(
                Op::Recv {
                    peer: recv_peer()?,
                    tag,
                    region: region(st.dst)?,
                    combine: false,
                },
                deps,
            )),
            Kind::RecvCopySend => {
                let dst = region(st.dst)?;
                let to = send_peer()?;
                let r = push(
                    Op::Recv {
                        peer: recv_peer()?,
                        tag,
                        region: dst,
                        combine: false,
                    },
                    deps,
                );
                Some(push(
                    Op::Send {
                        peer: to,
                        tag,
                        region: dst,
                        route: 0,
                    },
                    &[r],
                ))
            }
            Kind::RecvReduceCopy | Kind::RecvReduceCopySend => {
                let (src, dst) = (region(st.src)?, region(st.dst)?);
                let from = recv_peer()?;
                let to = if st.kind == Kind::RecvReduceCopySend {
                    Some(send_peer()?)
                } else {
                    None
                };
                let r = if src == dst {
                    push(
                        Op::Recv {
                            peer: from,
                            tag,
                            region: dst,
                            combine: true,
                        },
                        deps,
                    )
                } else {
                    let c = push(Op::Copy { src, dst }, deps);
                    push(
                        Op::Recv {
                            peer: from,
                            tag,
                            region: dst,
                            combine: true,
                        },
                        &[c],
                    )
                };
                Some(match to {
                    Some(to) => push(
                        Op::Send {
                            peer: to,
                            tag,
                            region: dst,
                            route: 0,
                        },
                        &[r],
                    ),
                    None => r,
                })
            }
            Kind::RecvReduceSend => {
                let src = region(st.src)?;
                let (from, to) = (recv_peer()?, send_peer()?);
                let temp = Region {
                    buf: Buf::Scratch,
                    offset: *scratch,
                    count: src.count,
                };
                *scratch = scratch
                    .checked_add(src.count)
                    .filter(|&e| e.saturating_mul(s.dtype.size()) <= crate::MAX_BUFFER_BYTES)
                    .ok_or_else(|| {
                        fail!(
                            Schedule,
                            Format,
                            "{}: the scratch for rrs steps passes 2^50 bytes",
                            at()
                        )
                    })?;
                let r = push(
                    Op::Recv {
                        peer: from,
                        tag,
                        region: temp,
                        combine: false,
                    },
                    deps,
                );
                let c = push(Op::Combine { src, dst: temp }, &[r]);
                Some(push(
                    Op::Send {
                        peer: to,
                        tag,
                        region: temp,
                        route: 0,
                    },
                    &[c],
                ))
            }
            // A copy onto itself (an in-place reading of `i` to `o`)
            // moves nothing.
            Kind::Copy => match (region(st.src)?, region(st.dst)?) {
                (src, dst) if src == dst => None,
                (src, dst) => Some(push(Op::Copy { src, dst }, deps)),
            },
            Kind::Reduce => Some(push(
                Op::Combine {
                    src: region(st.src)?,
                    dst: region(st.dst)?,
                },
                deps,
            )),
        };
        Ok(last)
    }
}
