//! Schedules as LogGOPSim's GOAL text, written and read.

use crate::error::{Error, Result};
use crate::{Collective, Dtype, Op, OpId, Program, ReduceOp, Region, Schedule};
use std::fmt::Write as _;
use std::io::Write;

/// Writes a schedule in LogGOPSim's GOAL text format. Sizes are bytes and
/// every `calc` is nanoseconds: `Compute` its own time, a combine its bytes
/// at `compute_bandwidth` bytes/s (free without one, as in the simulator),
/// a copy nothing (free in topocoll's node model). A receive that combines
/// is, with a compute bandwidth, its `recv` and then a `calc` of its
/// combine (labelled `lIc`), which what waited for the receive waits for
/// instead. GOAL has no routes: a
/// send with a signed-offset route (A2AT's) takes the simulator's own;
/// returns how many sends lost theirs, for the caller to say so.
pub fn to_goal(s: &Schedule, compute_bandwidth: Option<f64>, out: &mut dyn Write) -> Result<u64> {
    let io = |e: std::io::Error| Error::io("writing GOAL", e);
    let elem = s.elem_bytes();
    writeln!(out, "num_ranks {}", s.ranks).map_err(io)?;
    let mut text = String::new();
    let mut lost = 0u64;
    for (rank, prog) in s.programs.iter().enumerate() {
        text.clear();
        let _ = writeln!(text, "\nrank {rank} {{");
        for (i, op) in prog.ops.iter().enumerate() {
            let _ = match op {
                Op::Send {
                    peer,
                    tag,
                    region,
                    route,
                } => {
                    lost += u64::from(*route != 0);
                    writeln!(
                        text,
                        "l{i}: send {}b to {peer} tag {tag}",
                        region.count * elem
                    )
                }
                Op::Recv {
                    peer,
                    tag,
                    region,
                    combine,
                } => {
                    let _ = writeln!(
                        text,
                        "l{i}: recv {}b from {peer} tag {tag}",
                        region.count * elem
                    );
                    match compute_bandwidth.filter(|_| *combine) {
                        Some(bw) => {
                            let ns = (region.count * elem) as f64 / bw * 1e9;
                            writeln!(
                                text,
                                "l{i}c: calc {}\nl{i}c requires l{i}",
                                ns.round() as u64
                            )
                        }
                        None => Ok(()),
                    }
                }
                Op::Copy { .. } => writeln!(text, "l{i}: calc 0"),
                Op::Combine { src, .. } => {
                    let ns =
                        compute_bandwidth.map_or(0.0, |bw| (src.count * elem) as f64 / bw * 1e9);
                    writeln!(text, "l{i}: calc {}", ns.round() as u64)
                }
                Op::Compute { seconds } => {
                    writeln!(text, "l{i}: calc {}", (seconds * 1e9).round() as u64)
                }
            };
        }
        // A combining receive's successors wait for its combine.
        let combined = |d: usize| {
            matches!(prog.ops[d], Op::Recv { combine: true, .. }) && compute_bandwidth.is_some()
        };
        for i in 0..prog.len() {
            for &d in prog.deps(i) {
                let c = if combined(d as usize) { "c" } else { "" };
                let _ = writeln!(text, "l{i} requires l{d}{c}");
            }
        }
        text.push_str("}\n");
        out.write_all(text.as_bytes()).map_err(io)?;
    }
    Ok(lost)
}

/// Reads LogGOPSim's GOAL text (as [`to_goal`] writes it, and as
/// LogGOPSim's own parser, `txt2bin`, reads it): `num_ranks N`, then
/// `rank R { ... }` blocks of ops, `[LABEL:] send Nb to R [tag T] [cpu C]
/// [nic N]`, `[LABEL:] recv Nb from R [tag T] [cpu C] [nic N]`, `[LABEL:]
/// calc T [cpu C]` (T nanoseconds), and dependencies, `A requires B` (A
/// starts when B is done) and `A irequires B` (A starts when B starts);
/// `//` and `/* */` comments.
///
/// The schedule is of bytes (`Dtype::U8`, regions in scratch), for the
/// barrier collective it is not (it holds no collective's data: it is
/// priced, never verified as one). What topocoll's IR has no word for is
/// mapped: a `calc` is a `Compute` of its nanoseconds, and `A irequires B`
/// makes A wait for what B waits for (B starts when those are done). The
/// cpu and nic numbers are left out (one CPU and one network port a rank);
/// a receive from any source (-1) or with any tag (-1) is refused, as
/// messages match by source and tag. `name` is what errors call the text.
pub fn from_goal(name: &str, text: &str) -> Result<Schedule> {
    from_goal_lines(name, text).map(|(s, _)| s)
}

/// [`from_goal`], and the line each op was read from: `lines[r][i]` is
/// the line of rank r's op i (from 1), for errors found after reading.
pub fn from_goal_lines(name: &str, text: &str) -> Result<(Schedule, Vec<Vec<u64>>)> {
    let mut ranks: Option<usize> = None;
    let mut programs: Vec<Option<(Program, Vec<u64>)>> = Vec::new();
    let mut open: Option<Block> = None;
    let err = |line: u64, what: String| Error::parse(name, line, what);
    let mut in_comment = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        let l = strip_comments(raw, &mut in_comment);
        let words: Vec<&str> = l.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        let number = |w: &str, what: &str| number(name, line, w, what);
        match (words[0], &mut open) {
            ("num_ranks", None) => {
                let n = words
                    .get(1)
                    .ok_or_else(|| err(line, "num_ranks without a number".into()))?;
                let n = number(n, "a rank count")? as usize;
                if n == 0 || n > crate::MAX_RANKS || ranks.is_some() || words.len() > 2 {
                    return Err(err(
                        line,
                        format!(
                            "'{}' is not one rank count of 1 to {}",
                            l.trim(),
                            crate::MAX_RANKS
                        ),
                    ));
                }
                ranks = Some(n);
                programs = (0..n).map(|_| None).collect();
            }
            ("rank", None) => {
                let n = ranks.ok_or_else(|| err(line, "a rank before num_ranks".into()))?;
                let (r, brace) = match words.as_slice() {
                    [_, r, "{"] => (*r, true),
                    [_, r] if r.ends_with('{') => (&r[..r.len() - 1], true),
                    _ => ("", false),
                };
                if !brace {
                    return Err(err(line, "expected 'rank R {'".into()));
                }
                let r = number(r, "a rank")? as usize;
                if r >= n {
                    return Err(err(line, format!("rank {r} is not below num_ranks {n}")));
                }
                if programs[r].is_some() {
                    return Err(err(line, format!("rank {r} is given twice")));
                }
                open = Some(Block {
                    rank: r,
                    line,
                    ops: Vec::new(),
                    lines: Vec::new(),
                    labels: Default::default(),
                    deps: Vec::new(),
                    scratch: 0,
                });
            }
            ("}", Some(_)) if words.len() == 1 => {
                let o = open.take().expect("open");
                let rank = o.rank;
                programs[rank] = Some(o.close(name)?);
            }
            (_, Some(o)) => {
                // `LABEL: op`, `op`, or `A requires B`.
                let (label, body): (Option<&str>, &[&str]) = match words.as_slice() {
                    [a, kind @ ("requires" | "irequires"), b] => {
                        o.deps
                            .push((line, *kind == "irequires", a.to_string(), b.to_string()));
                        continue;
                    }
                    [w, rest @ ..] if w.ends_with(':') => (Some(&w[..w.len() - 1]), rest),
                    [w, ":", rest @ ..] => (Some(*w), rest),
                    all => (None, all),
                };
                let n = ranks.expect("inside a rank");
                let op = parse_op(name, line, body, n, l.trim())?;
                if let Op::Send { region, .. } | Op::Recv { region, .. } = op {
                    o.scratch = o.scratch.max(region.count);
                }
                if let Some(label) = label {
                    if o.labels.insert(label.to_string(), o.ops.len()).is_some() {
                        return Err(err(line, format!("label '{label}' is defined twice")));
                    }
                }
                o.ops.push(op);
                o.lines.push(line);
            }
            (w, _) => {
                return Err(err(
                    line,
                    format!("unexpected '{w}' (num_ranks, rank R {{ or }})"),
                ))
            }
        }
    }
    if let Some(o) = open {
        return Err(err(
            o.line,
            format!("rank {}'s block is never closed", o.rank),
        ));
    }
    let n = ranks.ok_or_else(|| err(1, "no num_ranks".into()))?;
    let mut s = Schedule::new(Collective::Barrier, n, 0, Dtype::U8, ReduceOp::Sum, "goal");
    let (programs, lines) = programs.into_iter().map(Option::unwrap_or_default).unzip();
    s.programs = programs;
    Ok((s, lines))
}

/// A line's text with its comments taken out; `in_comment` carries a
/// block comment from one line to the next.
fn strip_comments(raw: &str, in_comment: &mut bool) -> String {
    let mut l = String::new();
    let mut rest = raw;
    loop {
        if *in_comment {
            match rest.find("*/") {
                Some(j) => {
                    *in_comment = false;
                    rest = &rest[j + 2..];
                }
                None => return l,
            }
        } else {
            let c = rest.find("/*");
            let d = rest.find("//");
            match (c, d) {
                (Some(c), d) if d.is_none_or(|d| c < d) => {
                    l.push_str(&rest[..c]);
                    l.push(' ');
                    *in_comment = true;
                    rest = &rest[c + 2..];
                }
                (_, Some(d)) => {
                    l.push_str(&rest[..d]);
                    return l;
                }
                _ => {
                    l.push_str(rest);
                    return l;
                }
            }
        }
    }
}

/// A whole number at line `line` of `name`, or the error saying it is not
/// `what`.
fn number(name: &str, line: u64, w: &str, what: &str) -> Result<u64> {
    w.parse::<u64>()
        .map_err(|_| Error::parse(name, line, format!("'{w}' is not {what}")))
}

/// A `send`, `recv` or `calc` (the words after its label) of a schedule of
/// `ranks` ranks; `text` is the line, for the error that says it is none.
fn parse_op(name: &str, line: u64, body: &[&str], ranks: usize, text: &str) -> Result<Op> {
    let err = |what: String| Error::parse(name, line, what);
    let number = |w: &str, what: &str| number(name, line, w, what);
    match body {
        ["send" | "recv", size, dir, peer, more @ ..] => {
            let bytes = size
                .strip_suffix('b')
                .ok_or_else(|| err(format!("'{size}' is not a size in bytes (like 8b)")))?;
            let bytes = number(bytes, "a size in bytes")?;
            let send = body[0] == "send";
            if (send && *dir != "to") || (!send && *dir != "from") {
                return Err(err(format!(
                    "expected '{}' after the size",
                    if send { "to" } else { "from" }
                )));
            }
            if *peer == "-1" {
                return Err(err(
                    "a receive from any source (-1) is not replayed: messages match by source"
                        .into(),
                ));
            }
            let peer = number(peer, "a rank")?;
            let mut tag = 0u64;
            for pair in more.chunks(2) {
                match (pair[0], pair.get(1)) {
                    ("tag", Some(&"-1")) => {
                        return Err(err(
                            "a receive with any tag (-1) is not replayed: messages match by tag"
                                .into(),
                        ))
                    }
                    ("tag", Some(t)) => tag = number(t, "a tag")?,
                    ("cpu" | "nic", Some(v)) => {
                        number(v, "a number")?;
                    }
                    (w, _) => return Err(err(format!("unexpected '{w}'"))),
                }
            }
            if peer as usize >= ranks || tag > u32::MAX as u64 {
                return Err(err(format!("peer {peer} or tag {tag} is out of range")));
            }
            let region = Region::scratch(0, bytes);
            Ok(if send {
                Op::send(peer as u32, tag as u32, region)
            } else {
                Op::Recv {
                    peer: peer as u32,
                    tag: tag as u32,
                    region,
                    combine: false,
                }
            })
        }
        ["calc", ns, more @ ..] => {
            match more {
                [] => {}
                ["cpu", v] => {
                    number(v, "a number")?;
                }
                _ => return Err(err(format!("unexpected '{}'", more.join(" ")))),
            }
            Ok(Op::Compute {
                seconds: number(ns, "a time in nanoseconds")? as f64 * 1e-9,
            })
        }
        _ => Err(err(format!(
            "'{text}' is not a send, recv, calc or dependency"
        ))),
    }
}

/// The rank being read: its ops in the order written, its labels and its
/// dependencies (line, whether `irequires`, from, to), resolved at its
/// closing brace.
struct Block {
    rank: usize,
    line: u64,
    ops: Vec<Op>,
    /// The line of each op.
    lines: Vec<u64>,
    labels: std::collections::HashMap<String, usize>,
    deps: Vec<(u64, bool, String, String)>,
    scratch: u64,
}

impl Block {
    /// The rank's program: each op's dependencies resolved (`requires` as
    /// they are, `irequires` as what the op they name waits for), the ops
    /// ordered after those they wait for; and the line of each op in that
    /// order.
    fn close(self, name: &str) -> Result<(Program, Vec<u64>)> {
        let err = |line: u64, what: String| Error::parse(name, line, what);
        let mut waits: Vec<Vec<OpId>> = vec![Vec::new(); self.ops.len()];
        let mut starts: Vec<(usize, usize)> = Vec::new();
        for (dl, start, a, b) in &self.deps {
            let find = |x: &String| {
                self.labels.get(x).copied().ok_or_else(|| {
                    err(
                        *dl,
                        format!(
                            "a dependency names label '{x}', which rank {} does not define",
                            self.rank
                        ),
                    )
                })
            };
            let (a, b) = (find(a)?, find(b)?);
            if a == b {
                return Err(err(*dl, "an op cannot wait for itself".into()));
            }
            if *start {
                starts.push((a, b));
            } else {
                waits[a].push(b as OpId);
            }
        }
        // Until nothing changes: an op may start with one that starts with
        // another.
        for _ in 0..=starts.len() {
            let mut changed = false;
            for &(a, b) in &starts {
                let of_b: Vec<OpId> = waits[b]
                    .iter()
                    .copied()
                    .filter(|d| !waits[a].contains(d))
                    .collect();
                changed |= !of_b.is_empty();
                waits[a].extend(of_b);
            }
            if !changed {
                break;
            }
        }
        // The IR lists an op after those it waits for: order the ops so (a
        // cycle is refused).
        let order = topological(&waits).ok_or_else(|| {
            err(
                self.line,
                format!("rank {}'s dependencies form a cycle", self.rank),
            )
        })?;
        let mut prog = Program::default();
        let mut at = vec![0 as OpId; self.ops.len()];
        for &i in &order {
            let mut deps: Vec<OpId> = waits[i].iter().map(|&j| at[j as usize]).collect();
            deps.sort_unstable();
            deps.dedup();
            at[i] = prog.push(self.ops[i], &deps);
        }
        prog.scratch = self.scratch;
        let lines = order.iter().map(|&i| self.lines[i]).collect();
        Ok((prog, lines))
    }
}

/// An order of the ops in which each comes after those it waits for, or
/// `None` for a cycle.
fn topological(waits: &[Vec<OpId>]) -> Option<Vec<usize>> {
    let n = waits.len();
    let mut left: Vec<usize> = waits.iter().map(Vec::len).collect();
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (a, w) in waits.iter().enumerate() {
        for &b in w {
            after[b as usize].push(a);
        }
    }
    // Ready ops in the order written, so a file in order keeps its order.
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&i| left[i] == 0).collect();
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
    (out.len() == n).then_some(out)
}
