//! SimGrid's time-independent traces, as SimGrid 3.32's tracer
//! (`smpirun -trace-ti`) writes them and its replayer (`smpirun -replay`)
//! reads them.
//!
//! A trace is named by an index, a file of file names, one per line. One
//! name: a shared trace, every rank's lines in one file. More: rank i's
//! lines are in the i-th file. A file that already holds actions (its first
//! line starts with a rank number and an action) is taken as a shared trace
//! itself. Names in an index are read relative to the index's folder, as
//! the tracer writes them beside it, or else, as SimGrid reads them, from
//! the working directory.
//!
//! A line is `RANK ACTION ARG...`, fields split on spaces and tabs. Blank
//! lines and lines starting with `#` are skipped. Each action's fields are
//! read at the places SimGrid's replayer reads them, defaults included,
//! so that a trace means here what it means there:
//! - counts are in elements of a datatype given by SimGrid's id (0 double,
//!   1 int, 2 char, 6 byte, ...), or of the default type: MPI_BYTE, or
//!   MPI_DOUBLE after an `init` with an argument;
//! - where the tracer leaves a field out (a zero receive count of
//!   `alltoall` or `allgather`), the replayer reads the next field in its
//!   place, and so does this reader;
//! - numbers read as SimGrid reads them: sizes as a double truncated
//!   (`1e6`), ranks and tags as a leading integer;
//! - a file's last line read without a newline after it is not replayed,
//!   as SimGrid's reader drops it;
//! - `comm_size`, `finalize`, `location` and `test` change no time, nor do
//!   `comm_split` and `comm_dup` (SimGrid's replay reads none of their
//!   fields and runs every call on the world; a test's outcome is left to
//!   the wait that follows).
//!
//! Communicators are topocoll's reading beyond SimGrid's (whose tracer
//! records none): `comm_split COLOR KEY ID` and `comm_dup ID` make the
//! rank's communicator ID from the world, and a last field `comm=ID` puts
//! any line on the rank's communicator ID, a creation's parent too
//! ([`crate::comm`] matches them across ranks). Peers stay world ranks, as
//! the tracer writes them; a root is a rank of the call's communicator, and
//! a v-collective's counts are one per rank of it. A `comm_split` or
//! `comm_dup` without fields makes nothing, as in SimGrid.

use crate::action::{Action, Call, Mode, Rooted, Step, Workload};
use crate::comm::{self, Comms, Creation, Make};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use topocoll_schedule::CollectiveKind;

/// Reads the trace named by `path`: an index of per-rank files, an index of
/// one shared file, or a shared trace itself.
pub fn read(path: &Path) -> Result<Workload> {
    from_text(path, &read_text(path)?)
}

/// [`read`] of the file at `path` whose text is `text` (the names of an
/// index are read beside it).
pub fn from_text(path: &Path, text: &str) -> Result<Workload> {
    let name = path.display().to_string();
    if holds_actions(text) {
        return shared(&name, text);
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    // SimGrid reads every nonempty line of an index as a file name.
    let files: Vec<PathBuf> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let given = Path::new(l.trim());
            let beside = dir.join(given);
            // SimGrid reads the names from its working directory; the
            // tracer writes them beside the index.
            if beside.exists() || !given.exists() {
                beside
            } else {
                given.to_path_buf()
            }
        })
        .collect();
    match files.len() {
        0 => Err(Error::parse(
            name,
            1,
            "an empty trace index: no file names and no actions",
        )),
        1 => {
            let f = &files[0];
            shared(&f.display().to_string(), &read_text(f)?)
        }
        n => {
            let texts = files
                .iter()
                .map(|f| Ok((f.display().to_string(), read_text(f)?)))
                .collect::<Result<Vec<(String, String)>>>()?;
            let names: Vec<String> = texts.iter().map(|t| t.0.clone()).collect();
            // Rank r's lines of its file, read when they are wanted: the
            // communicators first (from the files that make any), then each
            // rank's actions, one rank's lines at a time.
            let mine = |r: usize| -> Result<Vec<Line>> {
                let (name, text) = &texts[r];
                let all = lines(name, text)?;
                Ok(all.into_iter().filter(|l| l.rank == r as u64).collect())
            };
            let mut creations = Vec::with_capacity(n);
            for (r, (name, text)) in texts.iter().enumerate() {
                creations.push(
                    if text.contains("comm_split") || text.contains("comm_dup") {
                        rank_creations(name, &mine(r)?, n)?
                    } else {
                        Vec::new()
                    },
                );
            }
            let comms = comm::resolve(&creations, &names)?;
            let mut programs = Vec::with_capacity(n);
            for (r, name) in names.iter().enumerate() {
                programs.push(parse_rank(name, r, mine(r)?, &comms)?);
            }
            Ok(Workload {
                programs,
                files: names,
                comms: comms.comms,
                worlds: Vec::new(),
            })
        }
    }
}

/// Reads a trace from text: `name` is what errors call it.
pub fn parse(name: &str, text: &str) -> Result<Workload> {
    shared(name, text)
}

pub(crate) fn read_text(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read trace '{}'", path.display()), e))
}

/// Whether the first line that is not blank or a comment reads as an action
/// (`RANK NAME ...`) rather than a file name.
fn holds_actions(text: &str) -> bool {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    first.is_some_and(|l| {
        let mut f = l.split([' ', '\t']).filter(|t| !t.is_empty());
        f.next().is_some_and(|r| r.parse::<u64>().is_ok()) && f.next().is_some()
    })
}

/// A line of fields, its rank and its line number, and the handle of the
/// communicator its last field `comm=ID` names (taken off its fields).
struct Line<'t> {
    rank: u64,
    number: u64,
    /// The line's fields, borrowed from the file's text: a trace of
    /// millions of actions is not copied field by field.
    fields: Vec<&'t str>,
    comm: Option<u32>,
}

/// The lines of a file that SimGrid's reader replays.
fn lines<'t>(name: &str, text: &'t str) -> Result<Vec<Line<'t>>> {
    let mut out = Vec::new();
    let mut raw: Vec<&str> = text.split('\n').collect();
    // The last piece has no newline after it: SimGrid's reader stops at the
    // end of the file before it replays that line.
    raw.pop();
    for (i, l) in raw.iter().enumerate() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut fields: Vec<&str> = l.split([' ', '\t']).filter(|t| !t.is_empty()).collect();
        let number = i as u64 + 1;
        let comm = match fields.last().and_then(|f| f.strip_prefix("comm=")) {
            Some(id) if fields.len() > 2 => {
                let id = id.parse::<u32>().map_err(|_| {
                    Error::parse(
                        name,
                        number,
                        format!("'comm={id}' does not name a communicator (comm=ID, ID a number)"),
                    )
                })?;
                fields.pop();
                Some(id)
            }
            _ => None,
        };
        let rank = fields[0].parse::<u64>().map_err(|_| {
            Error::parse(
                name,
                number,
                format!("'{}' is not a rank number", fields[0]),
            )
        })?;
        if fields.len() < 2 {
            return Err(Error::parse(name, number, "a rank with no action"));
        }
        if rank >= topocoll_base::limits::MAX_RANKS as u64 {
            return Err(Error::parse(
                name,
                number,
                format!("rank {rank} is too large"),
            ));
        }
        out.push(Line {
            rank,
            number,
            fields,
            comm,
        });
    }
    Ok(out)
}

/// A shared trace: every rank's lines in one file.
fn shared(name: &str, text: &str) -> Result<Workload> {
    let lines = lines(name, text)?;
    let ranks = lines.iter().map(|l| l.rank + 1).max().unwrap_or(0) as usize;
    if ranks == 0 {
        return Err(Error::parse(name, 1, "the trace holds no action"));
    }
    let mut by_rank: Vec<Vec<Line>> = (0..ranks).map(|_| Vec::new()).collect();
    for l in lines {
        by_rank[l.rank as usize].push(l);
    }
    let files = vec![name.to_string(); ranks];
    let creations = by_rank
        .iter()
        .map(|mine| rank_creations(name, mine, ranks))
        .collect::<Result<Vec<_>>>()?;
    let comms = comm::resolve(&creations, &files)?;
    let mut programs = Vec::with_capacity(ranks);
    for (r, mine) in by_rank.into_iter().enumerate() {
        programs.push(parse_rank(name, r, mine, &comms)?);
    }
    Ok(Workload {
        programs,
        files,
        comms: comms.comms,
        worlds: Vec::new(),
    })
}

/// A rank's creations of communicators: its `comm_split COLOR KEY ID` and
/// `comm_dup ID` lines (with `comm=PARENT`, of that one; else of the
/// world) on a world of `ranks` ranks.
fn rank_creations(name: &str, lines: &[Line], ranks: usize) -> Result<Vec<Creation>> {
    let reader = Reader {
        name,
        ranks,
        default_type: 1,
    };
    let mut out = Vec::new();
    for line in lines {
        let f = Fields { r: &reader, line };
        let (make, id) = match line.fields[1] {
            "comm_split" | "comm_dup" if line.fields.len() == 2 => continue,
            "comm_split" => {
                f.need(3)?;
                let (color, key) = (f.int(2)?, f.int(3)?);
                (Make::Split { color, key }, f.handle(4)?)
            }
            "comm_dup" => (Make::Dup, f.handle(2)?),
            _ => continue,
        };
        out.push(Creation {
            id,
            parent: line.comm.unwrap_or(0),
            make,
            line: line.number,
        });
    }
    Ok(out)
}

/// Rank `r`'s lines as actions, on the communicators `comms`.
fn parse_rank(name: &str, r: usize, lines: Vec<Line>, comms: &Comms) -> Result<Vec<Step>> {
    let mut reader = Reader {
        name,
        ranks: comms.comms[0].len(),
        default_type: 1,
    };
    let mut out = Vec::with_capacity(lines.len());
    for l in lines {
        let c = comms.at(r, l.comm.unwrap_or(0), name, l.number)?;
        let on = On {
            id: c,
            ranks: &comms.comms[c as usize],
            me: r as u32,
        };
        if let Some(action) = reader.action(&l, &on)? {
            out.push(Step {
                action,
                line: l.number,
                after: None,
            });
        }
    }
    Ok(out)
}

/// Reads one rank's actions; `default_type` is the size in bytes of the
/// type a count without its own datatype field counts.
struct Reader<'a> {
    name: &'a str,
    ranks: usize,
    default_type: u64,
}

/// The fields of one line, read at SimGrid's places.
struct Fields<'a> {
    r: &'a Reader<'a>,
    line: &'a Line<'a>,
}

/// The communicator a line is on: its index, its world ranks in its order,
/// and the rank whose line it is.
struct On<'a> {
    id: u32,
    ranks: &'a [u32],
    me: u32,
}

impl On<'_> {
    /// The rank's place in the communicator.
    fn rank_of(&self, world: u32) -> Option<u32> {
        if self.id == 0 {
            return Some(world);
        }
        self.ranks
            .iter()
            .position(|&w| w == world)
            .map(|i| i as u32)
    }
}

impl Fields<'_> {
    fn err(&self, what: impl std::fmt::Display) -> Error {
        Error::parse(
            self.r.name,
            self.line.number,
            format!("{}: {what}", self.line.fields[1]),
        )
    }

    /// Refuses a line shorter than its action's mandatory fields.
    fn need(&self, mandatory: usize) -> Result<()> {
        let given = self.line.fields.len() - 2;
        if given < mandatory {
            return Err(self.err(format!(
                "{given} field{} after the action, it needs {mandatory}",
                if given == 1 { "" } else { "s" }
            )));
        }
        Ok(())
    }

    fn field(&self, i: usize) -> Result<&str> {
        self.line
            .fields
            .get(i)
            .copied()
            .ok_or_else(|| self.err(format!("field {} is missing", i - 1)))
    }

    /// A floating-point field (flops, seconds).
    fn double(&self, i: usize) -> Result<f64> {
        let s = self.field(i)?;
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.err(format!("'{s}' is not a number"))),
        }
    }

    /// A count: read as a double and truncated, as SimGrid reads it.
    fn count(&self, i: usize) -> Result<i64> {
        let v = self.double(i)?.trunc();
        if v.abs() > (1u64 << 53) as f64 {
            return Err(self.err(format!("count {v} is out of range")));
        }
        Ok(v as i64)
    }

    /// A count that must not be negative.
    fn size(&self, i: usize) -> Result<u64> {
        let v = self.count(i)?;
        u64::try_from(v).map_err(|_| self.err(format!("count {v} is negative")))
    }

    /// An integer read as C's `stoi` reads it: its leading digits.
    fn int(&self, i: usize) -> Result<i64> {
        let s = self.field(i)?;
        let (sign, digits) = match s.as_bytes().first() {
            Some(b'-') => (-1, &s[1..]),
            Some(b'+') => (1, &s[1..]),
            _ => (1, s),
        };
        let end = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        match digits[..end].parse::<i64>() {
            Ok(v) if v <= i32::MAX as i64 => Ok(sign * v),
            _ => Err(self.err(format!("'{s}' is not an integer"))),
        }
    }

    /// A rank of the world.
    fn rank(&self, i: usize) -> Result<u32> {
        let v = self.int(i)?;
        if v < 0 || v as usize >= self.r.ranks {
            return Err(self.err(format!(
                "rank {v} is not one of the trace's {} ranks (wildcard receives are not replayed)",
                self.r.ranks
            )));
        }
        Ok(v as u32)
    }

    /// A peer: a world rank, of the line's communicator.
    fn peer(&self, i: usize, on: &On) -> Result<u32> {
        let v = self.rank(i)?;
        if on.rank_of(v).is_none() {
            return Err(self.err(format!(
                "rank {v} is not a rank of communicator {} (its ranks are {:?})",
                self.line.comm.unwrap_or(0),
                on.ranks
            )));
        }
        Ok(v)
    }

    /// A communicator's handle: a number.
    fn handle(&self, i: usize) -> Result<u32> {
        let s = self.field(i)?;
        s.parse::<u32>()
            .map_err(|_| self.err(format!("'{s}' is not a communicator's number")))
    }

    /// The size in bytes of the datatype at field `i`, or of the default.
    fn dtype(&self, i: usize) -> Result<u64> {
        match self.line.fields.get(i) {
            None => Ok(self.r.default_type),
            Some(id) => datatype_size(id)
                .ok_or_else(|| self.err(format!("'{id}' is not a SimGrid datatype id (0..59)"))),
        }
    }

    /// The root at field `i` (0 when absent), a rank of the communicator.
    fn root(&self, i: usize, on: &On) -> Result<u32> {
        if i >= self.line.fields.len() {
            return Ok(0);
        }
        let v = self.int(i)?;
        if v < 0 || v as usize >= on.ranks.len() {
            return Err(self.err(format!(
                "root {v} is not one of the {} ranks of communicator {}",
                on.ranks.len(),
                self.line.comm.unwrap_or(0)
            )));
        }
        Ok(v as u32)
    }

    /// `n` counts from field `from` on (in elements of a type given later).
    fn counts(&self, from: usize, n: usize) -> Result<Vec<u64>> {
        (from..from + n)
            .map(|i| {
                let v = self.int(i)?;
                u64::try_from(v).map_err(|_| self.err(format!("count {v} is negative")))
            })
            .collect()
    }
}

impl Reader<'_> {
    /// One line's action. It stays one match of one arm per action, each
    /// arm reading its fields at SimGrid's places: the table reads against
    /// SimGrid's parsers (`smpi_replay.cpp`) arm by arm, which split
    /// functions would scatter.
    fn action(&mut self, line: &Line, on: &On) -> Result<Option<Action>> {
        let f = Fields { r: self, line };
        let p = on.ranks.len();
        let comm = on.id;
        // A call served as an alltoallv: this rank's row of bytes.
        let alltoallv = |counts: Vec<u64>, rooted: Option<Rooted>| {
            Action::Call(Call {
                collective: topocoll_schedule::Collective::Alltoallv,
                comm,
                bytes: counts.iter().copied().max().unwrap_or(0),
                counts,
                flops: 0.0,
                rooted,
            })
        };
        let call = |collective: CollectiveKind, root: u32, bytes: u64, flops: f64| {
            Action::Call(Call {
                collective: collective.with_root(root),
                comm,
                bytes,
                counts: Vec::new(),
                flops,
                rooted: None,
            })
        };
        let action = match line.fields[1] {
            "init" => {
                // SimGrid: an argument makes MPI_DOUBLE the default type
                // (MPE's traces), none MPI_BYTE (TAU's and its own tracer's).
                self.default_type = if line.fields.len() > 2 { 8 } else { 1 };
                return Ok(None);
            }
            // Communicators were made before (rank_creations).
            "finalize" | "comm_size" | "comm_split" | "comm_dup" => return Ok(None),
            "location" => {
                f.need(2)?;
                return Ok(None);
            }
            "test" => {
                f.need(3)?;
                f.rank(2)?;
                f.rank(3)?;
                f.int(4)?;
                return Ok(None);
            }
            "compute" => {
                f.need(1)?;
                Action::Compute {
                    flops: f.double(2)?.max(0.0),
                }
            }
            "sleep" => {
                f.need(1)?;
                Action::Sleep {
                    seconds: f.double(2)?.max(0.0),
                }
            }
            name @ ("send" | "isend" | "recv" | "irecv") => {
                f.need(3)?;
                let (peer, tag) = (f.peer(2, on)?, f.int(3)?);
                let count = f.count(4)?;
                let elem = f.dtype(5)?;
                let mode = if name.starts_with('i') {
                    Mode::Immediate
                } else {
                    Mode::Blocking
                };
                if name.ends_with("send") {
                    let count = u64::try_from(count)
                        .map_err(|_| f.err(format!("count {count} is negative")))?;
                    Action::Send {
                        to: peer,
                        tag,
                        comm,
                        bytes: count * elem,
                        mode,
                    }
                } else {
                    // A negative count: the receiver does not know the size
                    // (SimGrid probes for it); the send gives it.
                    Action::Recv {
                        from: peer,
                        tag,
                        comm,
                        bytes: u64::try_from(count).ok().map(|c| c * elem),
                        mode,
                    }
                }
            }
            "wait" => {
                f.need(3)?;
                Action::Wait {
                    src: f.peer(2, on)?,
                    dst: f.peer(3, on)?,
                    tag: f.int(4)?,
                    comm,
                }
            }
            "waitall" => Action::WaitAll,
            "sendRecv" => {
                f.need(6)?;
                let (send, to, recv, from) =
                    (f.size(2)?, f.peer(3, on)?, f.size(4)?, f.peer(5, on)?);
                Action::SendRecv {
                    comm,
                    to,
                    send_bytes: send * f.dtype(6)?,
                    from,
                    recv_bytes: recv * f.dtype(7)?,
                }
            }
            "barrier" => call(CollectiveKind::Barrier, 0, 0, 0.0),
            "bcast" => {
                f.need(1)?;
                let n = f.size(2)?;
                call(CollectiveKind::Bcast, f.root(3, on)?, n * f.dtype(4)?, 0.0)
            }
            "reduce" => {
                f.need(2)?;
                let (n, flops) = (f.size(2)?, f.double(3)?);
                let root = f.root(4, on)?;
                call(CollectiveKind::Reduce, root, n * f.dtype(5)?, flops)
            }
            "allreduce" => {
                f.need(2)?;
                let (n, flops) = (f.size(2)?, f.double(3)?);
                call(CollectiveKind::Allreduce, 0, n * f.dtype(4)?, flops)
            }
            name @ ("scan" | "exscan") => {
                f.need(2)?;
                let (n, flops) = (f.size(2)?, f.double(3)?);
                let kind = if name == "scan" {
                    CollectiveKind::Scan
                } else {
                    CollectiveKind::Exscan
                };
                call(kind, 0, n * f.dtype(4)?, flops)
            }
            // What a rank sends each peer: its send count of its send type.
            "alltoall" => {
                f.need(2)?;
                let send = f.size(2)?;
                f.size(3)?;
                call(CollectiveKind::Alltoall, 0, send * f.dtype(4)?, 0.0)
            }
            "allgather" => {
                f.need(2)?;
                let send = f.size(2)?;
                f.size(3)?;
                call(CollectiveKind::Allgather, 0, send * f.dtype(4)?, 0.0)
            }
            "gather" => {
                f.need(2)?;
                let send = f.size(2)?;
                f.size(3)?;
                let root = f.root(4, on)?;
                call(CollectiveKind::Gather, root, send * f.dtype(5)?, 0.0)
            }
            // The block: what the root sends each rank, what the others receive.
            "scatter" => {
                f.need(2)?;
                let (send, recv) = (f.size(2)?, f.size(3)?);
                let root = f.root(4, on)?;
                let (s, r) = (f.dtype(5)?, f.dtype(6)?);
                let me = on
                    .rank_of(on.me)
                    .expect("a rank is of its own communicators");
                let block = if me == root { send * s } else { recv * r };
                call(CollectiveKind::Scatter, root, block, 0.0)
            }
            "reducescatter" => {
                f.need(p + 1)?;
                let counts = f.counts(2, p)?;
                let flops = f.double(2 + p)?;
                let elem = f.dtype(3 + p)?;
                if counts.iter().any(|&c| c != counts[0]) {
                    return Err(f.err(
                        "counts that differ between ranks are not replayed (topocoll's reduce_scatter gives every rank an equal chunk)",
                    ));
                }
                call(
                    CollectiveKind::ReduceScatter,
                    0,
                    counts[0] * elem * p as u64,
                    flops,
                )
            }
            "alltoallv" => {
                f.need(2 * p + 2)?;
                let send = f.counts(3, p)?;
                f.counts(4 + p, p)?;
                let elem = f.dtype(4 + 2 * p)?;
                alltoallv(send.iter().map(|c| c * elem).collect(), None)
            }
            "allgatherv" => {
                f.need(p + 1)?;
                f.size(2)?;
                let recv = f.counts(3, p)?;
                // SimGrid: the receive type follows the counts when the line
                // is long enough to hold it (with or without displacements).
                let elem = if line.fields.len() > 3 + 2 * p {
                    f.dtype(4 + p)?
                } else if line.fields.len() > 3 + p + 2 {
                    self.default_type
                } else {
                    f.dtype(4 + p)?
                };
                let counts: Vec<u64> = recv.iter().map(|c| c * elem).collect();
                Action::Call(Call {
                    collective: topocoll_schedule::Collective::Allgatherv,
                    comm,
                    bytes: counts.iter().copied().max().unwrap_or(0),
                    counts,
                    flops: 0.0,
                    rooted: None,
                })
            }
            // SimGrid's gatherv: the send count, P receive counts, the root
            // and the send and receive types. The root's receive counts are
            // the other ranks' send counts in a correct program.
            "gatherv" => {
                f.need(p + 1)?;
                let send = f.size(2)?;
                f.counts(3, p)?;
                let root = f.root(3 + p, on)?;
                let bytes = send * f.dtype(4 + p)?;
                f.dtype(5 + p)?;
                let mut counts = vec![0; p];
                counts[root as usize] = bytes;
                alltoallv(counts, Some(Rooted::Gatherv { root }))
            }
            // SimGrid's scatterv: P send counts, the receive count, the root
            // and the send and receive types; the others' receive counts are
            // the root's send counts in a correct program.
            "scatterv" => {
                f.need(p + 1)?;
                let send = f.counts(2, p)?;
                f.size(2 + p)?;
                let root = f.root(3 + p, on)?;
                let elem = f.dtype(4 + p)?;
                f.dtype(5 + p)?;
                let me = on
                    .rank_of(on.me)
                    .expect("a rank is of its own communicators");
                let counts: Vec<u64> = if me == root {
                    send.iter().map(|c| c * elem).collect()
                } else {
                    vec![0; p]
                };
                alltoallv(counts, Some(Rooted::Scatterv { root }))
            }
            other => {
                return Err(Error::parse(
                    self.name,
                    line.number,
                    format!("unknown action '{other}'{}", did_you_mean(other)),
                ))
            }
        };
        Ok(Some(action))
    }
}

/// Every action SimGrid 3.32's replayer knows.
pub const ACTIONS: [&str; 31] = [
    "init",
    "finalize",
    "comm_size",
    "comm_split",
    "comm_dup",
    "send",
    "isend",
    "recv",
    "irecv",
    "test",
    "sendRecv",
    "wait",
    "waitall",
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "alltoall",
    "alltoallv",
    "gather",
    "scatter",
    "gatherv",
    "scatterv",
    "allgather",
    "allgatherv",
    "reducescatter",
    "scan",
    "exscan",
    "compute",
    "sleep",
    "location",
];

fn did_you_mean(word: &str) -> String {
    topocoll_base::error::did_you_mean(word, ACTIONS.iter().copied())
}

/// The size in bytes of SimGrid's datatype `id` (`smpi_datatype.cpp`'s
/// ids; sizes as on x86-64 Linux).
pub fn datatype_size(id: &str) -> Option<u64> {
    const SIZES: [u64; 60] = [
        8, 4, 1, 2, 8, 4, 1, 8, 1,
        1, // double int char short long float byte long_long schar uchar
        2, 4, 8, 8, 16, 4, 1, 1, 2,
        4, // ushort unsigned ulong ull long_double wchar c_bool int8 int16 int32
        8, 1, 2, 4, 8, 8, 16, 32, 8,
        8, // int64 uint8 uint16 uint32 uint64 c_float_complex c_double_complex c_long_double_complex aint offset
        8, 16, 16, 8, 8, 8, 16, 16, 4,
        4, // float_int long_int double_int short_int 2int 2float 2double 2long real real4
        8, 16, 8, 16, 16, 4, 2, 4, 8,
        16, // real8 real16 complex8 complex16 complex32 integer1 integer2 integer4 integer8 integer16
        32, 1, 8, 16, 32, 0, 0, 1, 8,
        8, // long_double_int cxx_bool cxx_float_complex cxx_double_complex cxx_long_double_complex ub lb packed ptr count
    ];
    let i: usize = id.parse().ok()?;
    SIZES.get(i).copied()
}
