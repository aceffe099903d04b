//! Collective algorithms. Each family lives in `src/<collective>/`, one
//! file per algorithm, and registers itself with one line in [`ALGORITHMS`].
//! That list is what `topocoll list`, the verifier's test sweeps, the simulator
//! and the runtime enumerate: nothing else names an algorithm.

pub mod error;
pub mod model;

pub mod allgather;
pub mod allgatherv;
pub mod allreduce;
pub mod alltoall;
pub mod alltoallv;
pub mod barrier;
pub mod bcast;
pub(crate) mod butterfly;
pub mod compose;
pub(crate) mod exchange;
pub mod exscan;
pub mod forest;
pub mod gather;
pub mod lanes;
pub mod nccl;
pub mod pipelined;
pub mod reduce;
pub mod reduce_scatter;
mod registry;
#[cfg(test)]
mod reverse_tests;

/// DESIGN.md, whose "Adding an algorithm" example is compiled and run as
/// this crate's doc test, so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../DESIGN.md")]
pub struct DesignDoc;
pub mod scan;
pub mod scatter;
pub mod trees;

use crate::error::fail;
pub use error::{AlgorithmKind, Error, Result};
pub use registry::{Applies, Counterparts, Ompi, OpCount, RankNeed, RootNeed, TopologyNeed};
use std::sync::Arc;
use topocoll_base::param;
use topocoll_schedule::lookahead::Lookahead;
use topocoll_schedule::{
    Collective, CollectiveKind, Dtype, Op, OpId, OpSource, ReduceOp, Schedule, Sizes, Transfer,
};
use topocoll_topology::Topology;

/// Everything an algorithm needs to build a schedule.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    pub collective: Collective,
    pub ranks: usize,
    /// Elements (see [`Schedule::count`]).
    pub count: u64,
    pub dtype: Dtype,
    pub op: ReduceOp,
    /// The network, for topology-aware algorithms (rank-based ones ignore it).
    pub topology: Option<&'a Topology>,
    /// Pipeline segment in bytes, for algorithms that pipeline.
    pub segment_bytes: Option<u64>,
    /// WAN lanes per remote site, for the multi-lane algorithms (`None`:
    /// the P that minimises the paper's cost model).
    pub lanes: Option<usize>,
    /// The tree's radix K ≥ 2, for the k-nomial algorithms (`None`: their
    /// default, [`DEFAULT_RADIX`]).
    pub radix: Option<usize>,
    /// The leaders' algorithm, for the node-aware compositions ([`Algorithm::inter`];
    /// `None`: each one's default): an entry of the leaders' collective
    /// that may lead ([`compose::inter_choices`], checked by
    /// [`Algorithm::check`]).
    pub inter: Option<&'static Algorithm>,
    /// A v-collective's counts ([`Request::with_sizes`]); `None` for the others.
    pub sizes: Option<Arc<Sizes>>,
    /// NCCL's channels, for the NCCL algorithms ([`Algorithm::channels`];
    /// `None`: [`nccl::channel_count`]'s default).
    pub channels: Option<usize>,
    /// NCCL's protocol, for the NCCL algorithms (`None`: Simple), which
    /// sets their chunk size.
    pub protocol: Option<nccl::Protocol>,
}

/// The k-nomial trees' radix when the request gives none (Open MPI's
/// default for its k-nomial broadcast).
pub const DEFAULT_RADIX: usize = 4;

pub use topocoll_schedule::MAX_BUFFER_BYTES;

impl<'a> Request<'a> {
    /// A request from a byte size as the command line gives it: for alltoall,
    /// allgather, scatter and gather `size_bytes` is the block per peer; for the
    /// others it is the whole buffer.
    pub fn new(
        collective: Collective,
        ranks: usize,
        size_bytes: u64,
        dtype: Dtype,
        op: ReduceOp,
        topology: Option<&'a Topology>,
    ) -> Result<Request<'a>> {
        if ranks == 0 {
            return Err(param!("ranks", " must be at least 1"));
        }
        if ranks > topocoll_schedule::MAX_RANKS {
            return Err(param!(
                "ranks",
                " {ranks} is more than the 16,777,216 supported"
            ));
        }
        collective.check(ranks)?;
        // A barrier moves no data: its size is ignored (zero elements).
        let size_bytes = if collective.is_sync() { 0 } else { size_bytes };
        let elem = dtype.size();
        if !size_bytes.is_multiple_of(elem) {
            return Err(param!(
                "size",
                " {size_bytes} bytes is not a whole number of {} elements ({elem} bytes each)",
                dtype.name()
            ));
        }
        let count = size_bytes / elem;
        let buffer = if collective.size_is_block() {
            size_bytes.checked_mul(ranks as u64)
        } else {
            Some(size_bytes)
        };
        if buffer.is_none_or(|b| b > MAX_BUFFER_BYTES) {
            return Err(param!(
                "size",
                " {size_bytes} on {ranks} ranks makes a buffer larger than 2^50 bytes"
            ));
        }
        // A v-collective without sizes of its own has every block --size.
        let sizes = match collective.sizes_shape() {
            None => None,
            Some(shape) => Some(Arc::new(Sizes::equal(shape, ranks, count)?)),
        };
        Ok(Request {
            collective,
            ranks,
            count,
            dtype,
            op,
            topology,
            segment_bytes: None,
            lanes: None,
            radix: None,
            inter: None,
            sizes,
            channels: None,
            protocol: None,
        })
    }

    /// The request with a v-collective's counts (alltoallv, allgatherv),
    /// checked against its shape, its rank count and the buffer limit;
    /// `count` becomes the largest block.
    pub fn with_sizes(mut self, sizes: Arc<Sizes>) -> Result<Request<'a>> {
        let Some(shape) = self.collective.sizes_shape() else {
            return Err(param!(
                "counts",
                ": {} takes none (alltoallv and allgatherv do)",
                self.collective.name()
            ));
        };
        sizes.check(shape, self.ranks, MAX_BUFFER_BYTES / self.dtype.size())?;
        self.count = sizes.max_block();
        self.sizes = Some(sizes);
        Ok(self)
    }

    /// A v-collective's counts, or the error of a request without them.
    pub fn sizes(&self) -> Result<&Sizes> {
        self.sizes.as_deref().ok_or_else(|| {
            param!(
                "counts",
                ": {} needs its counts (a CSV file or a generator)",
                self.collective.name()
            )
        })
    }

    /// An empty schedule of `alg` for this request.
    pub fn schedule(&self, alg: &Algorithm) -> Schedule {
        self.unregistered_schedule(alg.name)
    }

    /// An empty schedule for this request under `label`, which names no
    /// registry entry: a schedule made outside the registry (the
    /// synthesized ones, a test's hand-written one). An entry's own is
    /// [`Request::schedule`].
    pub fn unregistered_schedule(&self, label: &str) -> Schedule {
        let mut s = Schedule::new(
            self.collective,
            self.ranks,
            self.count,
            self.dtype,
            self.op,
            label,
        );
        s.sizes.clone_from(&self.sizes);
        s
    }

    /// The error `alg` returns for a shape it does not handle.
    pub fn unsupported(&self, alg: &Algorithm, reason: impl Into<String>) -> Error {
        Error::Unsupported {
            algorithm: alg.name.to_string(),
            reason: reason.into(),
        }
    }
}

/// A schedule generated op by op as the simulator reaches it (see
/// [`topocoll_schedule::OpSource`]): the algorithms whose programs are long and
/// regular enough to compute rather than write out. A new generator is one
/// variant here, one line in `each_stream!`, and its `impl OpSource` and
/// `impl Lookahead`.
// One per run, read at every decode: a box would be one more load each time.
#[allow(clippy::large_enum_variant)]
pub enum Stream {
    Pipeline(pipelined::PipelineStream),
    Ring(allreduce::ring::RingStream),
}

/// Evaluates `$e` with `$g` bound to the generator inside the `Stream` `$s`.
macro_rules! each_stream {
    ($s:expr, $g:ident => $e:expr) => {
        match $s {
            Stream::Pipeline($g) => $e,
            Stream::Ring($g) => $e,
        }
    };
}

impl Stream {
    /// Total operations over all ranks.
    pub fn num_ops(&self) -> u64 {
        (0..self.header().ranks).map(|r| self.len(r)).sum()
    }

    /// The collective, ranks and routes, without the programs.
    pub fn into_header(self) -> Schedule {
        each_stream!(self, g => g.into_header())
    }
}

impl OpSource for Stream {
    fn header(&self) -> &Schedule {
        each_stream!(self, g => g.header())
    }
    fn len(&self, r: usize) -> u64 {
        each_stream!(self, g => g.len(r))
    }
    fn op(&self, r: usize, i: OpId) -> Op {
        each_stream!(self, g => g.op(r, i))
    }
    fn dep_count(&self, r: usize, i: OpId) -> u32 {
        each_stream!(self, g => g.dep_count(r, i))
    }
    fn dep_counts(&self, r: usize, ops: std::ops::Range<OpId>, f: impl FnMut(u32)) {
        each_stream!(self, g => g.dep_counts(r, ops, f))
    }
    fn successors(&self, r: usize, i: OpId, f: impl FnMut(OpId)) {
        each_stream!(self, g => g.successors(r, i, f))
    }
    fn partner(&self, r: usize, i: OpId) -> OpId {
        each_stream!(self, g => g.partner(r, i))
    }
    fn initial(&self, r: usize, out: &mut Vec<OpId>) {
        each_stream!(self, g => g.initial(r, out))
    }
    fn kind(&self, r: usize, i: OpId) -> topocoll_schedule::OpKind {
        each_stream!(self, g => g.kind(r, i))
    }
    fn combines(&self, r: usize, i: OpId) -> Option<u64> {
        each_stream!(self, g => g.combines(r, i))
    }
    fn transfer(&self, r: usize, i: OpId) -> Transfer {
        each_stream!(self, g => g.transfer(r, i))
    }
}

impl Lookahead for Stream {
    fn far_successor(&self, r: usize, i: OpId) -> Option<OpId> {
        each_stream!(self, g => g.far_successor(r, i))
    }
    fn gated_transfer(&self, r: usize, i: OpId) -> (Transfer, Option<OpId>) {
        each_stream!(self, g => g.gated_transfer(r, i))
    }
    fn min_send_count(&self) -> Option<u64> {
        each_stream!(self, g => g.min_send_count())
    }
    fn min_ungated_send_count(&self) -> Option<u64> {
        each_stream!(self, g => g.min_ungated_send_count())
    }
    fn farthest_peer(&self) -> Option<u64> {
        each_stream!(self, g => g.farthest_peer())
    }
}

/// A registered algorithm: everything the project knows of it.
pub struct Algorithm {
    /// The collective it implements.
    pub collective: CollectiveKind,
    pub name: &'static str,
    pub summary: &'static str,
    pub build: fn(&Request) -> Result<Schedule>,
    /// For generated pipelines: the schedule as a generator, which the
    /// simulator runs without writing out its operations.
    pub stream: Option<fn(&Request) -> Result<Stream>>,
    /// Whether it pipelines in `--segment`-byte segments (others ignore it).
    pub segmented: bool,
    /// Whether it crosses a grid's WAN in `--lanes` lanes (others ignore it).
    pub lanes: bool,
    /// Whether its tree takes a `--radix` (a k-nomial tree's K; others
    /// refuse one).
    pub radix: bool,
    /// Where it applies, checked before it is built ([`Algorithm::check`]).
    pub applies: Applies,
    /// How its written-out schedule's operations are counted before it is
    /// built ([`Algorithm::op_count`]).
    pub ops: OpCount,
    /// Its exact counterparts in Open MPI and MPICH (none where the
    /// library's nearest relative runs other messages).
    pub mpi: Counterparts,
    /// For a node-aware composition, the leaders' algorithm when `--inter`
    /// names none ([`Request::inter`]); `None` for every other algorithm.
    pub inter: Option<&'static Algorithm>,
    /// Whether this allreduce's ranks combine the contributions in
    /// different orders (each rank its own tree), so that float sums,
    /// exact to rounding on every rank, may differ in their last bits
    /// between ranks; every other allreduce gives every rank the same bits.
    pub ranks_differ: bool,
    /// Whether it runs over NCCL's channels and chunks by NCCL's
    /// protocols, taking `--channels` and `--protocol` (others refuse
    /// them).
    pub channels: bool,
}

/// An algorithm shows as its name (`ring`), as the command line names it
/// beside its collective.
impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// An entry states what differs from the defaults of [`Algorithm::new`]
/// (rank-based, written out, no segments, lanes or radix, ops not counted
/// ahead, no MPI counterpart), one builder each:
/// `Algorithm::new(CollectiveKind::Bcast, "pipeline", "...", build).stream(stream).segmented()`.
impl Algorithm {
    /// An algorithm of `collective` named `name`, built by `build`.
    pub const fn new(
        collective: CollectiveKind,
        name: &'static str,
        summary: &'static str,
        build: fn(&Request) -> Result<Schedule>,
    ) -> Algorithm {
        Algorithm {
            collective,
            name,
            summary,
            build,
            stream: None,
            segmented: false,
            lanes: false,
            radix: false,
            applies: Applies::ANYWHERE,
            ops: OpCount::Unbounded,
            mpi: Counterparts::NONE,
            inter: None,
            ranks_differ: false,
            channels: false,
        }
    }

    /// It runs over NCCL's channels, taking `--channels` and `--protocol`.
    pub const fn channels(mut self) -> Algorithm {
        self.channels = true;
        self
    }

    /// It is a node-aware composition whose leaders run `default` unless
    /// `--inter` names another.
    pub const fn composes(mut self, default: &'static Algorithm) -> Algorithm {
        self.inter = Some(default);
        self
    }

    /// Its ranks' float sums may differ in their last bits
    /// ([`Algorithm::ranks_differ`]).
    pub const fn ranks_differ(mut self) -> Algorithm {
        self.ranks_differ = true;
        self
    }

    /// It has a generator ([`Algorithm::stream`]).
    pub const fn stream(mut self, stream: fn(&Request) -> Result<Stream>) -> Algorithm {
        self.stream = Some(stream);
        self
    }

    /// It pipelines in `--segment`-byte segments.
    pub const fn segmented(mut self) -> Algorithm {
        self.segmented = true;
        self
    }

    /// It crosses a grid's WAN in `--lanes` lanes.
    pub const fn lanes(mut self) -> Algorithm {
        self.lanes = true;
        self
    }

    /// Its tree takes a `--radix`.
    pub const fn radix(mut self) -> Algorithm {
        self.radix = true;
        self
    }

    /// Where it applies.
    pub const fn applies(mut self, applies: Applies) -> Algorithm {
        self.applies = applies;
        self
    }

    /// How its ops are counted before it is built.
    pub const fn ops(mut self, ops: OpCount) -> Algorithm {
        self.ops = ops;
        self
    }

    /// Its exact counterpart in Open MPI 4.1's coll/tuned: the number in a
    /// dynamic rules file, the name in its parameters, the
    /// `ompi_coll_base_<collective>_intra_*` function that runs it.
    pub const fn ompi(mut self, id: u32, name: &'static str, function: &'static str) -> Algorithm {
        self.mpi.ompi = Some(Ompi { id, name, function });
        self
    }

    /// Its exact counterpart in MPICH 4.0 (its function name).
    pub const fn mpich(mut self, function: &'static str) -> Algorithm {
        self.mpi.mpich = Some(function);
        self
    }
}

/// An entry shows as what names it: `allreduce/ring`.
impl std::fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.collective, self.name)
    }
}

/// Every algorithm, one line each.
pub const ALGORITHMS: &[Algorithm] = &[
    alltoall::linear::ALGORITHM,
    alltoall::a2and::ALGORITHM,
    alltoall::a2at::ALGORITHM,
    alltoall::a2at::SYNCED,
    alltoall::dragon::ALGORITHM,
    alltoall::dragon::DRAGON_NET,
    alltoall::bruck::ALGORITHM,
    alltoall::pairwise::ALGORITHM,
    alltoall::ring::ALGORITHM,
    bcast::binomial::ALGORITHM,
    bcast::binary::ALGORITHM,
    allreduce::ring::ALGORITHM,
    bcast::trinaryx3::ALGORITHM,
    bcast::pipeline::ALGORITHM,
    bcast::scatter_allgather::ALGORITHM,
    bcast::multilane::ALGORITHM,
    reduce::trinaryx3::ALGORITHM,
    reduce::binomial::ALGORITHM,
    reduce::linear::ALGORITHM,
    allreduce::trinaryx3::ALGORITHM,
    allreduce::recursive_doubling::ALGORITHM,
    allreduce::rabenseifner::ALGORITHM,
    allreduce::reduce_bcast::ALGORITHM,
    allreduce::linear_reduce_bcast::ALGORITHM,
    scatter::linear::ALGORITHM,
    scatter::binomial::ALGORITHM,
    scatter::multilane::ALGORITHM,
    scatter::multilane::SINGLE_LANE,
    scatter::hierarchical::ALGORITHM,
    gather::linear::ALGORITHM,
    gather::binomial::ALGORITHM,
    gather::multilane::ALGORITHM,
    gather::multilane::SINGLE_LANE,
    gather::hierarchical::ALGORITHM,
    allgather::ring::ALGORITHM,
    allgather::linear::ALGORITHM,
    allgather::recursive_doubling::ALGORITHM,
    allgather::bruck::ALGORITHM,
    allgather::multilane::ALGORITHM,
    reduce_scatter::ring::ALGORITHM,
    reduce_scatter::recursive_halving::ALGORITHM,
    reduce_scatter::reduce_scatterv::ALGORITHM,
    // Swing (NSDI 2024) and the Bine trees (SC 2025).
    allreduce::swing_lat::ALGORITHM,
    allreduce::swing_lat::TORUS,
    allreduce::swing_bw::ALGORITHM,
    allreduce::swing_bw::TORUS,
    reduce_scatter::swing::ALGORITHM,
    reduce_scatter::swing::TORUS,
    allgather::swing::ALGORITHM,
    allgather::swing::TORUS,
    bcast::bine::ALGORITHM,
    reduce::bine::ALGORITHM,
    scatter::bine::ALGORITHM,
    gather::bine::ALGORITHM,
    allgather::bine::ALGORITHM,
    reduce_scatter::bine::ALGORITHM,
    allreduce::bine::ALGORITHM,
    alltoall::bine::ALGORITHM,
    bcast::knomial::ALGORITHM,
    reduce::knomial::ALGORITHM,
    scatter::knomial::ALGORITHM,
    gather::knomial::ALGORITHM,
    bcast::two_tree::ALGORITHM,
    reduce::two_tree::ALGORITHM,
    allreduce::two_tree::ALGORITHM,
    allreduce::segmented_ring::ALGORITHM,
    allgather::neighbor::ALGORITHM,
    allgather::bucket::ALGORITHM,
    reduce_scatter::bucket::ALGORITHM,
    allreduce::bucket::ALGORITHM,
    barrier::dissemination::ALGORITHM,
    barrier::tree::ALGORITHM,
    barrier::linear::ALGORITHM,
    barrier::node_aware::ALGORITHM,
    scan::linear::ALGORITHM,
    scan::recursive_doubling::ALGORITHM,
    scan::direct::ALGORITHM,
    exscan::linear::ALGORITHM,
    exscan::recursive_doubling::ALGORITHM,
    exscan::direct::ALGORITHM,
    alltoallv::linear::ALGORITHM,
    alltoallv::pairwise::ALGORITHM,
    alltoallv::bruck::ALGORITHM,
    allgatherv::ring::ALGORITHM,
    allgatherv::linear::ALGORITHM,
    allgatherv::bruck::ALGORITHM,
    // Node-aware composition (algorithms::compose).
    bcast::node_aware::ALGORITHM,
    bcast::node_aware::MULTI,
    reduce::node_aware::ALGORITHM,
    reduce::node_aware::MULTI,
    allreduce::node_aware::ALGORITHM,
    allreduce::node_aware::MULTI,
    allgather::node_aware::ALGORITHM,
    allgather::node_aware::MULTI,
    reduce_scatter::node_aware::ALGORITHM,
    reduce_scatter::node_aware::MULTI,
    gather::node_aware::ALGORITHM,
    gather::node_aware::MULTI,
    scatter::node_aware::ALGORITHM,
    scatter::node_aware::MULTI,
    alltoall::node_aware::ALGORITHM,
    alltoall::node_aware::MULTI,
    scan::node_aware::ALGORITHM,
    exscan::node_aware::ALGORITHM,
    alltoallv::node_aware::ALGORITHM,
    alltoallv::node_aware::MULTI,
    allgatherv::node_aware::ALGORITHM,
    allgatherv::node_aware::MULTI,
    // NCCL's algorithms (algorithms::nccl).
    allreduce::nccl_ring::ALGORITHM,
    allreduce::nccl_tree::ALGORITHM,
    bcast::nccl_ring::ALGORITHM,
    reduce::nccl_ring::ALGORITHM,
    allgather::nccl_ring::ALGORITHM,
    allgather::nccl_pat::ALGORITHM,
    reduce_scatter::nccl_ring::ALGORITHM,
    reduce_scatter::nccl_pat::ALGORITHM,
];

impl Algorithm {
    /// Whether every rank of this allreduce gets the same bits (see
    /// [`Algorithm::ranks_differ`]).
    pub fn ranks_agree(&self) -> bool {
        !self.ranks_differ
    }

    /// Whether it is a node-aware composition, which takes `--inter` (see
    /// [`Algorithm::inter`]).
    pub fn takes_inter(&self) -> bool {
        self.inter.is_some()
    }

    /// The node-aware compositions, in registry order.
    pub fn composed() -> impl Iterator<Item = &'static Algorithm> {
        ALGORITHMS.iter().filter(|a| a.takes_inter())
    }
}

/// The algorithm `name` for `collective`, or an error listing what exists.
pub fn find(collective: CollectiveKind, name: &str) -> Result<&'static Algorithm> {
    ALGORITHMS
        .iter()
        .find(|a| a.collective == collective && a.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = of(collective).map(|a| a.name).collect();
            fail!(
                Algorithm,
                Request,
                "unknown {collective} algorithm '{name}'{} (one of: {})",
                topocoll_base::error::did_you_mean(name, known.iter().copied()),
                known.join(", ")
            )
        })
}

/// The algorithm `name` for the collective named `collective`, as the
/// command line gives both.
pub fn find_by_name(collective: &str, name: &str) -> Result<&'static Algorithm> {
    find(CollectiveKind::parse(collective)?, name)
}

/// The algorithms of `collective`, in registry order.
pub fn of(collective: CollectiveKind) -> impl Iterator<Item = &'static Algorithm> {
    ALGORITHMS
        .iter()
        .filter(move |a| a.collective == collective)
}

/// Builds the schedule of `alg` for a request, once its declaration says
/// it applies ([`Algorithm::check`]).
///
/// A schedule too large to hold in memory is refused before it is built, by
/// the count its entry declares ([`Algorithm::ops`]).
pub fn build(alg: &Algorithm, req: &Request) -> Result<Schedule> {
    of_request(alg, req)?;
    alg.check(req)?;
    let ops = alg.op_count(req)?;
    if ops > pipelined::MAX_MATERIALISED_OPS {
        return Err(Error::too_large(format!(
            "{} {} on {} ranks: {ops} operations are too many to write out (at most {}); \
             simulate it with --stream if it has a generator (topocoll list), \
             or use fewer ranks or a smaller size",
            req.collective.name(),
            alg.name,
            req.ranks,
            pipelined::MAX_MATERIALISED_OPS
        )));
    }
    (alg.build)(req)
}

/// An entry asked for a request of another collective: a caller's mistake
/// the request's collective would have caught by name.
fn of_request(alg: &Algorithm, req: &Request) -> Result<()> {
    if alg.collective == req.collective.kind() {
        return Ok(());
    }
    Err(fail!(
        Algorithm,
        Request,
        "{} {} builds no {} schedule",
        alg.collective,
        alg.name,
        req.collective.name()
    ))
}

/// The schedule of `alg` as a generator of its operations, or `None` when
/// the algorithm only writes its schedule out.
pub fn generator(alg: &Algorithm, req: &Request) -> Result<Option<Stream>> {
    of_request(alg, req)?;
    let Some(stream) = alg.stream else {
        return Ok(None);
    };
    alg.check(req)?;
    stream(req).map(Some)
}

/// The schedule of `alg` as a generator of its operations; an error naming
/// the algorithms that have one when it does not.
pub fn build_stream(alg: &Algorithm, req: &Request) -> Result<Stream> {
    generator(alg, req)?.ok_or_else(|| {
        let generated: Vec<String> = ALGORITHMS
            .iter()
            .filter(|a| a.stream.is_some())
            .map(|a| format!("{} {}", a.collective, a.name))
            .collect();
        fail!(Algorithm, Request,
            "{} {} has no generator, so it cannot be streamed; simulate it written out (generated: {})",
            req.collective.name(),
            alg.name,
            generated.join(", ")
        )
    })
}

#[cfg(test)]
mod segmented_tests {
    use super::*;
    use topocoll_topology::parse_spec;

    /// `Algorithm::segmented` is what the command line checks `--segment`
    /// against: an algorithm claims it exactly when its schedule changes
    /// with the segment size.
    #[test]
    fn segmented_is_true_exactly_when_the_segment_changes_the_schedule() {
        let grid2 = parse_spec("torus:8x8").unwrap();
        let grid3 = parse_spec("torus:4x4x4").unwrap();
        for a in ALGORITHMS {
            let collective = a.collective.with_root(0);
            let (topo, size) = match collective {
                Collective::Alltoall => (&grid2, 64),
                _ => (&grid3, 1 << 20),
            };
            let dtype = if collective.is_reduction() {
                Dtype::F64
            } else {
                Dtype::U8
            };
            let build_with = |segment: u64| {
                let mut req =
                    Request::new(collective, 64, size, dtype, ReduceOp::Sum, Some(topo)).unwrap();
                req.segment_bytes = Some(segment);
                (a.build)(&req)
            };
            // The grid algorithms do not build on a torus (and do not pipeline).
            if let Err(Error::Unsupported { .. }) = build_with(8 << 10) {
                assert!(!a.segmented, "{} {}", a.collective, a.name);
                continue;
            }
            let changes = build_with(8 << 10).unwrap() != build_with(64 << 10).unwrap();
            assert_eq!(changes, a.segmented, "{} {}", a.collective, a.name);
        }
    }
}
