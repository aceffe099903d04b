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
//!   wait for (their buffers and offsets, `-1` as the generators write
//!   them, are not read, as MSCCL's and RCCL's runtimes do not);
//! - `s` is a send to the threadblock's `send` peer, `r` a receive from its
//!   `recv` peer; `rcs` receives and sends what it received on; `rrc`
//!   receives and reduces with the chunk at `src` into `dst` (`dst = src ∘
//!   received`, as the runtimes' kernels compute it); `rrcs` does so and
//!   sends the result on; `rrs` reduces what it receives with `src` and
//!   sends the result without keeping it (in a scratch region of its own);
//!   `cpy` copies `src` to `dst` (nothing when they are one region); `re`
//!   reduces `src` into `dst`. A step reads only the offsets its type uses;
//! - buffers, as the runtimes place them for `inplace="1"` (the default)
//!   and `inplace="0"`: an allreduce's `i` and `o` are its buffer in place,
//!   and out of place `o` is the output and `i` a scratch region the rank's
//!   data is copied to before any step; a reduce_scatter's `i` is the whole
//!   buffer (out of place: that copy) and its `o` the rank's part of the
//!   output; an allgather's `i` and `o` are the input and output, and in
//!   place (`i_chunks="0"` as MSCCLang writes it) `i` is the rank's block
//!   of the output, the input copied there first; an alltoall's likewise,
//!   in place both the output;
//! - one loop of `nchunksperloop` chunks covers the whole buffer (the `i`
//!   and `o` buffers have the loop's chunks, an allgather's `i` and a
//!   reduce_scatter's `o` a P-th of them; a GPU may name fewer, as
//!   MSCCLang counts only the chunks used): the chunk is the buffer's
//!   elements over the loop's chunks (one element by default).
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

mod read;
mod write;

pub(super) use read::collective_of;
pub use read::{from_msccl_xml, msccl_header, MscclHeader};
pub use write::{to_msccl_xml, to_msccl_xml_for};

use crate::{Collective, Dtype, ReduceOp};

/// The most channels a written file uses (MSCCL's `MSCCL_MAX_NUM_CHANNELS`).
pub const MAX_CHANNELS: u32 = 32;

/// The most channels a read file may use (RCCL's `MAXCHANNELS`, the larger
/// of the runtimes').
const READ_CHANNELS: u32 = 128;

/// The collectives the format names (`coll`), and topocoll's for them;
/// the first name of each is the one written (msccl-tools' and MSCCL's;
/// RCCL names the reduce_scatter `reducescatter`).
const COLLECTIVES: &[(&str, Collective)] = &[
    ("allreduce", Collective::Allreduce),
    ("allgather", Collective::Allgather),
    ("alltoall", Collective::Alltoall),
    ("reduce_scatter", Collective::ReduceScatter),
    ("reducescatter", Collective::ReduceScatter),
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
    /// Sends whose signed-offset route or path is dropped (MSCCL has no
    /// routes; the data each send moves is unchanged).
    pub lost_routes: u64,
    /// `Compute` ops written as `nop` (MSCCL has no compute steps).
    pub lost_compute: u64,
}

/// The message sizes a runtime may choose a written algorithm for: its
/// `minBytes` and `maxBytes`. MSCCL takes a size n when `minBytes <= n <
/// maxBytes`, RCCL and msccl-scheduler when `minBytes <= n <= maxBytes`
/// or `maxBytes` is 0, so [`MscclBytes::ALWAYS`] writes the largest
/// 64-bit number, which every one of them reads as no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MscclBytes {
    pub min: u64,
    /// `None`: no limit.
    pub max: Option<u64>,
}

impl MscclBytes {
    pub const ALWAYS: MscclBytes = MscclBytes { min: 0, max: None };

    /// The `maxBytes` written for no limit.
    pub const NO_LIMIT: u64 = i64::MAX as u64;
}
