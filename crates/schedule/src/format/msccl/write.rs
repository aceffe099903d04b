//! Writing a schedule as an MSCCL XML algorithm ([`to_msccl_xml`]).

use super::{MscclBytes, MscclExport, COLLECTIVES, MAX_CHANNELS};
use crate::error::fail;
use crate::error::Result;
use crate::{match_messages, Buf, Collective, Op, OpId, Region, Schedule};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;

/// The greatest common divisor.
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Writes `s` as an MSCCL XML algorithm (see the module) that the
/// runtimes choose at every size; returns what the format could not hold.
pub fn to_msccl_xml(s: &Schedule, out: &mut dyn Write) -> Result<MscclExport> {
    to_msccl_xml_for(s, MscclBytes::ALWAYS, out)
}

/// Writes `s` as an MSCCL XML algorithm for the message sizes `bytes`;
/// returns what the format could not hold.
pub fn to_msccl_xml_for(
    s: &Schedule,
    bytes: MscclBytes,
    out: &mut dyn Write,
) -> Result<MscclExport> {
    let max_bytes = bytes.max.unwrap_or(MscclBytes::NO_LIMIT);
    if max_bytes == 0 || max_bytes > MscclBytes::NO_LIMIT || bytes.min > max_bytes {
        return Err(fail!(Schedule, Export,
            "MSCCL XML: sizes {} to {max_bytes} bytes: MSCCL's runtimes take 0 <= minBytes <= maxBytes, maxBytes from 1 to 2^63-1",
            bytes.min
        ));
    }
    if s.collective.sizes_shape().is_some() {
        // A runtime runs an MSCCL algorithm for a call of one count, every
        // rank's buffers that count of equal chunks: there is no call with
        // a count per pair to run it for.
        return Err(fail!(Schedule, Export,
            "MSCCL XML has no {}: its algorithms run calls of one count in equal chunks, which cannot carry a count per {}; the JSON schedule carries them",
            s.collective.name(),
            if s.collective == Collective::Alltoallv { "pair" } else { "rank" }
        ));
    }
    let Some(&(coll, _)) = COLLECTIVES.iter().find(|(_, c)| *c == s.collective) else {
        return Err(fail!(
            Schedule,
            Export,
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
        return Err(fail!(
            Schedule,
            Export,
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
         coll=\"{coll}\" inplace=\"{}\" outofplace=\"{}\" minBytes=\"{}\" maxBytes=\"{max_bytes}\">",
        escape(&s.algorithm),
        i_chunks.max(o_chunks),
        u8::from(inplace),
        u8::from(!inplace),
        bytes.min
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
                .map_err(|e| fail!(Schedule, Export, "writing MSCCL XML: {e}"))?;
            text.clear();
        }
    }
    text.push_str("</algo>\n");
    out.write_all(text.as_bytes())
        .map_err(|e| fail!(Schedule, Export, "writing MSCCL XML: {e}"))?;
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
            chunk = gcd(chunk, crate::chunk(s.count, p as u64, r as u64).0);
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
                    return Err(fail!(
                        Schedule,
                        Export,
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
            return Err(fail!(
                Schedule,
                Export,
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
