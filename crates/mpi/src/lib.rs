//! `libtopocoll_mpi.so`: topocoll's verified schedules inside an unchanged
//! MPI program, by PMPI interposition (docs/runtime.md, "Inside an MPI
//! program").
//!
//! # Where things are
//!
//! - `shim.c` is the MPI side: the interposed `MPI_*` collectives, the
//!   communicators' private duplicates, the transport over
//!   `PMPI_Isend`/`PMPI_Irecv`/`PMPI_Waitsome`, start and end. It is the one
//!   file that knows an MPI library's ABI; [`abi`] mirrors its codes.
//! - [`config`] reads what to run from the environment at `MPI_Init`.
//! - This file decides each call (a schedule file, a fixed algorithm, a
//!   table's choice, or the library's own collective), builds and verifies
//!   each schedule once per shape and keeps it, and keeps the counts the
//!   report gives at `MPI_Finalize` ([`report`]).
//! - [`layout`] maps a call's buffers onto the schedule's three; [`exec`]
//!   runs one rank's program over a [`exec::Transport`]; [`reduce`] combines.
//!
//! # Invariants
//!
//! - Every rank of a communicator makes the same decision for the same call:
//!   it depends only on the configuration (the same environment on every
//!   rank) and on what every rank's arguments agree on (collective, size,
//!   datatype, operator, root, communicator size).
//! - Nothing runs that the verifier has not proved: a schedule is verified
//!   when it is built or read, before its first call.
//! - A schedule's messages travel on a duplicate of the caller's
//!   communicator, so they never match the application's own receives.

pub mod abi;
pub mod config;
pub mod exec;
mod interpose;
pub mod layout;
pub mod reduce;
pub mod report;

use abi::{Call, Coll, Fallback, Kind, MpiOp};
use config::{Choice, Config};
use exec::{Combiner, Transport};
use report::Report;
use rustc_hash::FxHashMap;
use std::collections::HashSet;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use topocoll_algorithms::Request;
use topocoll_schedule::{
    dependency_counts, Collective, Dtype, Op, Program, ReduceOp, Schedule, Sizes, Successors,
};

/// A schedule ready to run: verified, with each rank's successor lists
/// made on the rank's first call.
pub struct Entry {
    /// What the report calls it: the algorithm, or the schedule file.
    pub label: Arc<str>,
    pub schedule: Arc<Schedule>,
    /// Bytes of one of the schedule's elements in the caller's buffers.
    pub unit: usize,
    ranks: Vec<OnceLock<RankPlan>>,
}

struct RankPlan {
    succ: Successors,
    ndeps: Vec<u32>,
}

impl Entry {
    pub fn new(label: String, schedule: Arc<Schedule>, unit: usize) -> Entry {
        let ranks = (0..schedule.ranks).map(|_| OnceLock::new()).collect();
        Entry {
            label: label.into(),
            schedule,
            unit,
            ranks,
        }
    }

    fn plan(&self, rank: usize) -> (&Program, &RankPlan) {
        let prog = &self.schedule.programs[rank];
        let plan = self.ranks[rank].get_or_init(|| RankPlan {
            succ: Successors::new(prog),
            ndeps: dependency_counts(prog),
        });
        (prog, plan)
    }

    /// Runs rank `rank`'s program on `layout`'s buffers.
    pub fn run(
        &self,
        rank: usize,
        bufs: &mut exec::Buffers,
        comb: Combiner,
        t: &mut dyn Transport,
    ) -> Result<(), String> {
        let (prog, plan) = self.plan(rank);
        exec::execute(prog, &plan.succ, &plan.ndeps, bufs, self.unit, comb, t)
    }
}

/// What serves one shape of call.
#[derive(Clone)]
enum Decision {
    Run(Arc<Entry>),
    Native(Fallback),
}

/// A shape of call: everything the decision depends on.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    coll: Coll,
    ranks: usize,
    root: u32,
    count: u64,
    type_size: u64,
    /// The v-collectives' counts.
    counts: Option<Vec<u64>>,
}

/// The library's state in this process.
pub struct Library {
    config: Config,
    /// The report's name for the library's own collective.
    native: Arc<str>,
    tag_ub: u32,
    cache: Mutex<FxHashMap<Key, Decision>>,
    report: Mutex<Report>,
    warned: Mutex<HashSet<String>>,
}

static LIBRARY: OnceLock<Library> = OnceLock::new();

impl Library {
    pub fn new(config: Config, tag_ub: u32) -> Library {
        Library {
            config,
            native: "native".into(),
            tag_ub,
            cache: Mutex::new(FxHashMap::default()),
            report: Mutex::new(Report::default()),
            warned: Mutex::new(HashSet::new()),
        }
    }

    /// Says `line` on stderr, once per process.
    fn warn(&self, line: String) {
        self.warn_once(line.clone(), line);
    }

    /// Warns, once, that the schedule file at `path`, for `file_ranks`
    /// ranks, is skipped on a communicator of `ranks`.
    fn warn_other_ranks(&self, path: &std::path::Path, file_ranks: usize, ranks: usize) {
        self.warn(format!(
            "schedule '{}' is for {file_ranks} ranks, not {ranks}: skipped for this communicator",
            path.display()
        ));
    }

    /// Says `line` on stderr the first time `what` is warned of.
    fn warn_once(&self, what: String, line: String) {
        if self.warned.lock().unwrap().insert(what) {
            eprintln!("topocoll-mpi: {line}");
        }
    }

    fn decide(&self, key: &Key) -> Decision {
        if let Some(d) = self.cache.lock().unwrap().get(key) {
            return d.clone();
        }
        let d = self.decide_anew(key);
        self.cache.lock().unwrap().insert(key.clone(), d.clone());
        d
    }

    fn decide_anew(&self, key: &Key) -> Decision {
        let kind = key.coll.kind();
        let size_bytes = size_bytes(key);
        if size_bytes == 0 && key.coll != Coll::Barrier {
            return Decision::Native(Fallback::Empty);
        }
        let collective = kind.with_root(key.root);
        // A schedule file for exactly this call comes first.
        for f in &self.config.schedules {
            let s = &f.schedule;
            if s.collective.kind() != kind {
                continue;
            }
            if s.ranks != key.ranks {
                self.warn_other_ranks(&f.path, s.ranks, key.ranks);
                continue;
            }
            let file_bytes = s.count.saturating_mul(s.elem_bytes());
            let elems_fit = !key.coll.reduces() || s.elem_bytes() % key.type_size == 0;
            let counts_match = match (&key.counts, s.sizes()) {
                (None, None) => true,
                (Some(c), Some(sz)) => s.elem_bytes() == key.type_size && sz.counts() == &c[..],
                _ => false,
            };
            if s.collective == collective && file_bytes == size_bytes && elems_fit && counts_match {
                let entry = Entry::new(file_name(&f.path), s.clone(), s.elem_bytes() as usize);
                return self.checked(entry);
            }
        }
        // Then an MSCCL XML file for this collective and rank count whose
        // sizes take the call's, built at its size.
        for f in &self.config.msccl {
            let h = &f.header;
            if h.collective != collective || !h.takes(size_bytes) {
                continue;
            }
            if h.ranks != key.ranks {
                self.warn_other_ranks(&f.path, h.ranks, key.ranks);
                continue;
            }
            match msccl_at(key, &f.text) {
                Ok(s) => {
                    let name = file_name(&f.path);
                    return self.checked(Entry::new(name, Arc::new(s), key.type_size as usize));
                }
                // A size its chunks do not divide: once a file, then the
                // choices below serve it.
                Err(e) => self.warn_once(
                    format!("sizes of {}", f.path.display()),
                    format!(
                        "schedule '{}' does not serve every size ({size_bytes} bytes: {e}); the next choice serves those",
                        f.path.display()
                    ),
                ),
            }
        }
        let choice = match self.config.algorithms.get(&key.coll) {
            Some(c) => *c,
            None => {
                let tables: Vec<_> = self
                    .config
                    .tables
                    .iter()
                    .filter(|t| t.kind == kind)
                    .collect();
                let Some(t) = tables.iter().find(|t| t.ranks == key.ranks) else {
                    for t in &tables {
                        self.warn(format!(
                            "table '{}' is for {} ranks, not {}: skipped for this communicator",
                            t.path.display(),
                            t.ranks,
                            key.ranks
                        ));
                    }
                    return Decision::Native(Fallback::NotConfigured);
                };
                match t.choice(size_bytes) {
                    Some(c) => c,
                    None => return Decision::Native(Fallback::OutsideTable),
                }
            }
        };
        let Choice::Algorithm {
            entry,
            segment_bytes,
        } = choice
        else {
            return Decision::Native(Fallback::Native);
        };
        let topology = self
            .config
            .topology
            .as_ref()
            .filter(|t| t.num_ranks() == key.ranks);
        match build(key, collective, entry, segment_bytes, topology) {
            Ok(s) => self.checked(Entry::new(
                choice.label(),
                Arc::new(s),
                key.type_size as usize,
            )),
            Err(e) => {
                self.warn(format!(
                    "{} {} on {} ranks at {} bytes: {e}; the MPI library's own runs",
                    kind.name(),
                    choice.label(),
                    key.ranks,
                    size_bytes
                ));
                Decision::Native(Fallback::NotApplicable)
            }
        }
    }

    /// The entry, if its messages fit one MPI count and its tags the
    /// library's `MPI_TAG_UB`.
    fn checked(&self, e: Entry) -> Decision {
        let unit = e.unit as u64;
        let fits = e
            .schedule
            .programs
            .iter()
            .flat_map(|p| &p.ops)
            .all(|op| match op {
                Op::Send { region, tag, .. } | Op::Recv { region, tag, .. } => {
                    region.count.saturating_mul(unit) <= i32::MAX as u64 && *tag <= self.tag_ub
                }
                _ => true,
            });
        if fits {
            Decision::Run(Arc::new(e))
        } else {
            Decision::Native(Fallback::TooLarge)
        }
    }
}

/// A call's count (of elements, or of bytes) as topocoll's schedules count
/// it: `MPI_Reduce_scatter_block`'s `recvcount` is one rank's block, and
/// topocoll's reducescatter counts the whole vector; every other count is
/// already topocoll's (the block per peer for alltoall, allgather, scatter
/// and gather, the largest block for the v-collectives, the whole buffer
/// otherwise; a barrier's is 0).
fn schedule_count(coll: Coll, ranks: usize, count: u64) -> u64 {
    match coll {
        Coll::ReduceScatterBlock => count * ranks as u64,
        _ => count,
    }
}

/// topocoll's `--size` for a call.
fn size_bytes(key: &Key) -> u64 {
    schedule_count(key.coll, key.ranks, key.count) * key.type_size
}

/// The schedule-building element type closest in size to the caller's
/// (its size steers an algorithm's choices by bytes; the run uses the
/// caller's own element size).
fn dtype_for(type_size: u64) -> Dtype {
    match type_size {
        4 => Dtype::I32,
        8 => Dtype::I64,
        _ => Dtype::U8,
    }
}

/// What the report calls a schedule file: its name.
fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Builds and verifies an MSCCL XML file's schedule at the call's size, an
/// element of the schedule one of the caller's.
fn msccl_at(key: &Key, text: &str) -> topocoll_schedule::Result<Schedule> {
    let count = schedule_count(key.coll, key.ranks, key.count);
    config::msccl_schedule(text, Some(count), dtype_for(key.type_size))
}

/// Builds and verifies `alg`'s schedule for the call's shape.
fn build(
    key: &Key,
    collective: Collective,
    alg: &'static topocoll_algorithms::Algorithm,
    segment_bytes: Option<u64>,
    topology: Option<&topocoll_topology::Topology>,
) -> Result<Schedule, String> {
    let dtype = dtype_for(key.type_size);
    let count = schedule_count(key.coll, key.ranks, key.count);
    let mut req = Request::new(
        collective,
        key.ranks,
        count * dtype.size(),
        dtype,
        ReduceOp::Sum,
        topology,
    )
    .map_err(|e| e.to_string())?;
    req.segment_bytes = segment_bytes;
    if let Some(c) = &key.counts {
        let sizes = match key.coll {
            Coll::Allgatherv => Sizes::per_rank(c.clone()),
            _ => Sizes::per_pair(key.ranks, c.clone()),
        }
        .map_err(|e| e.to_string())?;
        req = req.with_sizes(Arc::new(sizes)).map_err(|e| e.to_string())?;
    }
    let s = topocoll_algorithms::build(alg, &req).map_err(|e| e.to_string())?;
    topocoll_schedule::verify(&s).map_err(|e| e.to_string())?;
    Ok(s)
}

// ---- the transport shim.c provides ----

extern "C" {
    fn tc_isend(ctx: *mut c_void, buf: *const u8, bytes: u64, peer: c_int, tag: c_int) -> c_int;
    fn tc_irecv(ctx: *mut c_void, buf: *mut u8, bytes: u64, peer: c_int, tag: c_int) -> c_int;
    fn tc_waitsome(ctx: *mut c_void, out: *mut c_int) -> c_int;
    fn tc_slots(ctx: *mut c_void) -> c_int;
}

/// The communicator's duplicate, through `shim.c`.
struct Shim {
    ctx: *mut c_void,
}

thread_local! {
    /// `tc_waitsome`'s output, kept from call to call.
    static DONE: std::cell::RefCell<Vec<c_int>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Transport for Shim {
    unsafe fn send(&mut self, buf: *const u8, len: usize, peer: u32, tag: u32) -> Option<usize> {
        let s = tc_isend(self.ctx, buf, len as u64, peer as c_int, tag as c_int);
        usize::try_from(s).ok()
    }

    unsafe fn recv(&mut self, buf: *mut u8, len: usize, peer: u32, tag: u32) -> Option<usize> {
        let s = tc_irecv(self.ctx, buf, len as u64, peer as c_int, tag as c_int);
        usize::try_from(s).ok()
    }

    fn wait(&mut self, done: &mut Vec<usize>) -> Option<()> {
        DONE.with(|out| {
            let mut out = out.borrow_mut();
            // SAFETY: the context is the communicator's, alive for the call.
            let slots = unsafe { tc_slots(self.ctx) } as usize;
            out.resize(slots.max(1), 0);
            let n = unsafe { tc_waitsome(self.ctx, out.as_mut_ptr()) };
            let n = usize::try_from(n).ok()?;
            done.extend(out[..n].iter().map(|&s| s as usize));
            Some(())
        })
    }
}

// ---- what shim.c calls ----

/// Why the configuration was refused, for [`topocoll_mpi_say_refusal`].
static REFUSAL: Mutex<Option<String>> = Mutex::new(None);

/// Reads the configuration; 0, or 1 when it is refused (`shim.c` then has
/// one rank say why and every rank exit).
#[no_mangle]
pub extern "C" fn topocoll_mpi_init(tag_ub: c_int) -> c_int {
    match Config::read(|v| std::env::var(v).ok()) {
        Ok(config) => {
            let _ = LIBRARY.set(Library::new(config, tag_ub.max(0) as u32));
            0
        }
        Err(e) => {
            *REFUSAL.lock().unwrap() = Some(e);
            1
        }
    }
}

/// Says on stderr, in one line, why the configuration was refused.
#[no_mangle]
pub extern "C" fn topocoll_mpi_say_refusal() {
    if let Some(e) = REFUSAL.lock().unwrap().as_ref() {
        eprintln!("topocoll-mpi: {e}");
    }
}

/// Whether the configuration may serve `coll` on `comm_size` ranks.
#[no_mangle]
pub extern "C" fn topocoll_mpi_wants(coll: c_int, comm_size: c_int) -> c_int {
    let (Some(lib), Some(coll)) = (LIBRARY.get(), Coll::from_code(coll)) else {
        return 0;
    };
    lib.config.may_serve(coll, comm_size as usize) as c_int
}

/// Runs a call: 0 when done, a fallback code for `shim.c` to call the
/// library's own collective, -1 after saying why the run failed.
///
/// # Safety
/// `call` is a `struct tc_call` filled by `shim.c` for a correct MPI call.
#[no_mangle]
pub unsafe extern "C" fn topocoll_mpi_run(call: *const Call) -> c_int {
    let c = &*call;
    let Some(lib) = LIBRARY.get() else {
        return Fallback::NotConfigured.code();
    };
    let Some(coll) = Coll::from_code(c.coll) else {
        return Fallback::NotConfigured.code();
    };
    let start = Instant::now();
    let p = c.size as usize;
    let counts = match coll {
        Coll::Allgatherv => Some(
            std::slice::from_raw_parts(c.counts, p)
                .iter()
                .map(|&x| x as u64)
                .collect(),
        ),
        Coll::Alltoallv if c.matrix.is_null() => return Fallback::NotConfigured.code(),
        Coll::Alltoallv => Some(
            std::slice::from_raw_parts(c.matrix, p * p)
                .iter()
                .map(|&x| x as u64)
                .collect(),
        ),
        _ => None,
    };
    let key = Key {
        coll,
        ranks: p,
        root: c.root.max(0) as u32,
        count: c.count,
        type_size: c.type_size,
        counts,
    };
    let entry = match lib.decide(&key) {
        Decision::Run(e) => e,
        Decision::Native(why) => return why.code(),
    };
    let comb = Combiner {
        kind: Kind::from_code(c.kind),
        op: MpiOp::from_code(c.op),
    };
    let result = layout::lay_out(c, &entry.schedule, entry.unit).and_then(|mut l| {
        let mut t = Shim { ctx: c.ctx };
        entry.run(c.rank as usize, &mut l.bufs, comb, &mut t)?;
        l.finish();
        Ok(())
    });
    match result {
        Ok(()) => {
            let secs = start.elapsed().as_secs_f64();
            lib.report
                .lock()
                .unwrap()
                .add(coll, p, size_bytes(&key), &entry.label, None, secs);
            0
        }
        Err(e) => {
            eprintln!(
                "topocoll-mpi: rank {} of {}: {} {} failed: {e}",
                c.rank,
                p,
                coll.kind().name(),
                entry.label
            );
            -1
        }
    }
}

/// Records a call the library's own collective served.
#[no_mangle]
pub extern "C" fn topocoll_mpi_native(
    coll: c_int,
    comm_size: c_int,
    bytes: u64,
    reason: c_int,
    seconds: f64,
) {
    let (Some(lib), Some(coll)) = (LIBRARY.get(), Coll::from_code(coll)) else {
        return;
    };
    let ranks = comm_size.max(0) as usize;
    lib.report.lock().unwrap().add(
        coll,
        ranks,
        schedule_count(coll, ranks, bytes),
        &lib.native,
        Some(Fallback::from_shim(reason)),
        seconds,
    );
}

/// The gather `shim.c` provides for the report: each rank's text to rank 0.
pub type GatherTexts =
    unsafe extern "C" fn(*const c_char, c_int, *mut *mut c_char, *mut *mut c_int) -> c_int;

/// Writes the report (`TOPOCOLL_REPORT`) from every rank's counts, on rank 0.
///
/// # Safety
/// `gather` is `shim.c`'s, called by every rank of the world.
#[no_mangle]
pub unsafe extern "C" fn topocoll_mpi_finalize(rank: c_int, size: c_int, gather: GatherTexts) {
    let Some(lib) = LIBRARY.get() else {
        return;
    };
    let Some(path) = &lib.config.report else {
        return;
    };
    let mine = lib.report.lock().unwrap().to_json();
    let mut all: *mut c_char = std::ptr::null_mut();
    let mut lens: *mut c_int = std::ptr::null_mut();
    gather(
        mine.as_ptr().cast(),
        mine.len() as c_int,
        &mut all,
        &mut lens,
    );
    if rank != 0 {
        return;
    }
    let lens_s = std::slice::from_raw_parts(lens, size as usize);
    let mut at = 0usize;
    let mut merged = Report::default();
    for &l in lens_s {
        let bytes = std::slice::from_raw_parts(all.add(at) as *const u8, l as usize);
        at += l as usize;
        if let Ok(r) = Report::from_json(bytes) {
            merged.merge(&r);
        }
    }
    libc_free(all.cast());
    libc_free(lens.cast());
    if let Err(e) = std::fs::write(path, merged.render(size as usize)) {
        eprintln!(
            "topocoll-mpi: {}: cannot write the report '{}': {e}",
            config::REPORT_VAR,
            path.display()
        );
    }
}

extern "C" {
    #[link_name = "free"]
    fn libc_free(p: *mut c_void);
}
