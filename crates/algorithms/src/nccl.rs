//! What NCCL's algorithms share (the `nccl_*` entries): its channels, each
//! with its own ring order and NIC; its double binary tree; its chunking
//! by protocol; and the programs a channel's steps make.
//!
//! Read from NVIDIA/nccl (2.23 and later): the rings and trees of
//! `src/graph/connect.cc` (`ncclTopoPreset`, `connectRings`,
//! `connectTrees`), the trees of `src/graph/trees.cc` (`ncclGetBtree`,
//! `ncclGetDtree`), the chunk sizes of `src/enqueue.cc`
//! (`calcCollChunking`) and the buffer sizes of `src/init.cc`, and the
//! steps of `src/device/*.h`. docs/machines.md ("NCCL's algorithms") says
//! what topocoll leaves out.

use crate::error::Result;
use crate::Request;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::sync::Arc;
use topocoll_base::param;
use topocoll_schedule::{Op, OpId, Region, Schedule};
use topocoll_topology::nccl::GpuLayout;
use topocoll_topology::LinkId;

/// NCCL's `MAXCHANNELS`: the most channels a communicator has.
pub const MAX_CHANNELS: usize = 64;

/// NCCL's `NCCL_STEPS`: the slots of a connection's buffer.
pub const NCCL_STEPS: u64 = 8;

/// NCCL's protocols (`NCCL_PROTO_LL`, `NCCL_PROTO_LL128`,
/// `NCCL_PROTO_SIMPLE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// 8-byte stores of 4 data bytes and a 4-byte flag: half the bytes
    /// are flags.
    Ll,
    /// 128-byte lines of 120 data bytes and an 8-byte flag.
    Ll128,
    /// Whole buffers behind a fence and a flag per step.
    Simple,
}

impl Protocol {
    /// In NCCL's order (`ncclProtoStr`).
    pub const ALL: [Protocol; 3] = [Protocol::Ll, Protocol::Ll128, Protocol::Simple];

    /// NCCL's name (`ncclProtoStr`).
    pub const fn name(self) -> &'static str {
        match self {
            Protocol::Ll => "LL",
            Protocol::Ll128 => "LL128",
            Protocol::Simple => "Simple",
        }
    }

    /// The protocol named `text` (NCCL's names, any case).
    pub fn parse(text: &str) -> Result<Protocol> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                param!(
                    "protocol",
                    " '{text}' is none of NCCL's protocols (LL, LL128, Simple)"
                )
            })
    }

    /// A connection's buffer, bytes (`src/init.cc`: `DEFAULT_LL_BUFFSIZE`
    /// = `NCCL_LL_LINES_PER_THREAD` 8 × `NCCL_LL_MAX_NTHREADS` 512 ×
    /// `NCCL_STEPS` × 16-byte lines; `DEFAULT_LL128_BUFFSIZE` =
    /// `NCCL_LL128_ELEMS_PER_THREAD` 120 × `NCCL_LL128_MAX_NTHREADS` 640 ×
    /// `NCCL_STEPS` × 8; `DEFAULT_BUFFSIZE` 4 MiB).
    pub const fn buffer_bytes(self) -> u64 {
        match self {
            Protocol::Ll => 8 * 512 * NCCL_STEPS * 16,
            Protocol::Ll128 => 120 * 640 * NCCL_STEPS * 8,
            Protocol::Simple => 1 << 22,
        }
    }

    /// NCCL's `ncclProtoGrainSize`: what a chunk is a multiple of.
    pub const fn grain_bytes(self) -> u64 {
        match self {
            Protocol::Ll => 16,
            // WARP_SIZE × NCCL_LL128_SHMEM_ELEMS_PER_THREAD / 16 × 15 × 8.
            Protocol::Ll128 => 32 * 8 / 16 * 15 * 8,
            Protocol::Simple => 512,
        }
    }

    /// Data bytes per byte on the wire: LL's flags are half of it, LL128's
    /// one 8-byte flag a 128-byte line.
    pub const fn efficiency(self) -> f64 {
        match self {
            Protocol::Ll => 0.5,
            Protocol::Ll128 => 120.0 / 128.0,
            Protocol::Simple => 1.0,
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a collective's steps go round a channel: NCCL's `ncclPattern_t`
/// as `calcCollChunking` sizes its chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// allreduce, allgather, reduce_scatter on a ring
    /// (`ALLREDUCE_CHUNKSTEPS` = `NCCL_STEPS` / 2 steps a chunk).
    Ring,
    /// bcast and reduce on a ring (`BROADCAST_CHUNKSTEPS` 1).
    Pipeline,
    /// The tree allreduce (one step a chunk).
    Tree,
    /// PAT's allgather.
    PatAllgather,
    /// PAT's reduce_scatter.
    PatReduceScatter,
}

/// A chunk's bytes as NCCL's `calcCollChunking` works it out for one
/// channel carrying `bytes` (the collective's bytes over every rank, as
/// NCCL's `ncclFuncMaxSendRecvCount` counts them), on `nodes` servers of
/// `ranks` ranks.
pub fn chunk_bytes(
    proto: Protocol,
    pattern: Pattern,
    bytes: u64,
    nodes: usize,
    ranks: usize,
) -> u64 {
    let step = proto.buffer_bytes() / NCCL_STEPS;
    let steps = match (proto, pattern) {
        (Protocol::Simple, Pattern::Ring) => NCCL_STEPS / 2,
        _ => 1,
    };
    let mut chunk = step * steps;
    match proto {
        Protocol::Ll => chunk /= 2,
        Protocol::Ll128 => chunk = chunk / 16 * 15,
        Protocol::Simple => {}
    }
    match (proto, pattern) {
        (Protocol::Ll128, Pattern::Tree) => {
            let ppn = ranks as f64 / nodes as f64;
            let steps = 1.0 + log2i(nodes as u64) as f64 + 0.1 * ppn;
            while ((bytes / chunk) as f64) < steps * 64.0 / ppn && chunk > 131072 {
                chunk /= 2;
            }
            while ((bytes / chunk) as f64) < steps * 16.0 / ppn && chunk > 32768 {
                chunk /= 2;
            }
        }
        (_, Pattern::PatAllgather) => {
            while chunk * 32 > bytes && chunk > 65536 {
                chunk /= 2;
            }
        }
        (_, Pattern::PatReduceScatter) => {
            while chunk * 16 > bytes && chunk > 65536 {
                chunk /= 2;
            }
        }
        _ => {}
    }
    chunk / proto.grain_bytes() * proto.grain_bytes()
}

/// ⌊log2 n⌋, 0 for 0 (NCCL's `log2i`).
pub fn log2i(n: u64) -> u32 {
    if n == 0 {
        0
    } else {
        63 - n.leading_zeros()
    }
}

/// A channel's part of `n` elements of `elem` bytes among `channels`:
/// equal runs of whole 16-byte cells, in channel order (NCCL's `cbd`
/// split by cells), `(offset, len)`; a channel past the end gets none.
pub fn part(n: u64, elem: u64, channels: usize, c: usize) -> (u64, u64) {
    let cell = (16 / elem).max(1);
    let cells = n.div_ceil(cell);
    let per = cells.div_ceil(channels as u64) * cell;
    let start = (c as u64 * per).min(n);
    (start, per.min(n - start))
}

/// The channel count a request asks for, or NCCL's default for its
/// network: two channels per NIC port of a server (NCCL's search finds a
/// ring per NIC and duplicates its channels), two where there is none.
pub fn channel_count(req: &Request) -> Result<usize> {
    let c = match req.channels {
        Some(c) => c,
        None => 2 * gpu_layout(req).map_or(1, |l| l.ports.max(1)),
    };
    if !(1..=MAX_CHANNELS).contains(&c) {
        return Err(param!(
            "channels",
            " {c} is not 1 to {MAX_CHANNELS} (NCCL's MAXCHANNELS)"
        ));
    }
    Ok(c.min(MAX_CHANNELS))
}

/// The GPU servers' layout, where the request's network is one read from
/// NCCL's files with a rank on each GPU.
fn gpu_layout<'a>(req: &Request<'a>) -> Option<&'a Arc<GpuLayout>> {
    let t = req.topology?;
    let l = t.gpus.as_ref()?;
    (!t.ranks_placed() && l.gpus > 0 && l.servers * l.gpus == req.ranks).then_some(l)
}

/// NCCL's channels for a request: each channel's ring and, on each server,
/// its order of the server's ranks (the tree's chain), and the NIC port
/// its messages between servers take.
pub struct Channels<'a> {
    /// Each server's ranks in rank order (NCCL's nodes).
    pub servers: Vec<Vec<usize>>,
    /// Per channel, per server, the channel's order of that server's ranks.
    pub intra: Vec<Vec<Vec<usize>>>,
    /// Per channel, the NIC port it leaves and enters a server by (`None`
    /// off GPU servers, where messages take the network's routes).
    pub port: Vec<Option<usize>>,
    layout: Option<&'a Arc<GpuLayout>>,
}

impl<'a> Channels<'a> {
    /// The channels of `req`: on GPU servers, channel c's port is c mod
    /// the ports, and its order of a server's GPUs starts at the GPU
    /// nearest that port (the (c / ports)-th of them) and goes on in GPU
    /// order round the server (NCCL's search tries a GPU's neighbours
    /// first). Elsewhere a server is the ranks of a node
    /// (`--ranks-per-node`) or each rank alone, in rank order in every
    /// channel.
    pub fn new(req: &Request<'a>) -> Result<Channels<'a>> {
        let count = channel_count(req)?;
        let layout = gpu_layout(req);
        let p = req.ranks;
        let servers: Vec<Vec<usize>> = match (layout, req.topology) {
            (Some(l), _) => (0..l.servers)
                .map(|s| (s * l.gpus..(s + 1) * l.gpus).collect())
                .collect(),
            (None, Some(t)) if t.ranks_placed() => {
                let mut by_node: FxHashMap<u32, usize> = FxHashMap::default();
                let mut servers: Vec<Vec<usize>> = Vec::new();
                for r in 0..p {
                    let k = *by_node.entry(t.rank_node[r]).or_insert(servers.len());
                    if k == servers.len() {
                        servers.push(Vec::new());
                    }
                    servers[k].push(r);
                }
                servers
            }
            _ => (0..p).map(|r| vec![r]).collect(),
        };
        let mut intra = Vec::with_capacity(count);
        let mut port = Vec::with_capacity(count);
        for c in 0..count {
            match layout.filter(|l| l.ports > 0) {
                Some(l) => {
                    let n = c % l.ports;
                    let near: Vec<usize> = (0..l.gpus).filter(|&g| l.gpu_port[g] == n).collect();
                    let first = if near.is_empty() {
                        n % l.gpus
                    } else {
                        near[(c / l.ports) % near.len()]
                    };
                    let order: Vec<usize> = (0..l.gpus).map(|i| (first + i) % l.gpus).collect();
                    intra.push(
                        servers
                            .iter()
                            .map(|srv| order.iter().map(|&g| srv[g]).collect())
                            .collect(),
                    );
                    port.push((l.servers > 1).then_some(n));
                }
                None => {
                    intra.push(servers.clone());
                    port.push(None);
                }
            }
        }
        Ok(Channels {
            servers,
            intra,
            port,
            layout,
        })
    }

    pub fn count(&self) -> usize {
        self.intra.len()
    }

    /// Channel c's ring: each server's order, server after server (NCCL's
    /// `connectRings`: a server's last rank sends to the next server's
    /// first).
    pub fn ring(&self, c: usize) -> Vec<usize> {
        self.intra[c].iter().flatten().copied().collect()
    }

    /// The route of channel c's message from `a` to `b`: 0 (the
    /// network's) within a server or off GPU servers, else a path out by
    /// the channel's port and in by the same port of `b`'s server
    /// (added to `s` once per pair and channel).
    pub fn route(&self, s: &mut Schedule, paths: &mut Paths, c: usize, a: usize, b: usize) -> u32 {
        let (Some(l), Some(n)) = (self.layout, self.port[c]) else {
            return 0;
        };
        if l.server(a) == l.server(b) {
            return 0;
        }
        *paths
            .entry((a, b, n))
            .or_insert_with(|| match l.path_via(a, b, n, n) {
                Some(links) => s.add_path(links),
                None => 0,
            })
    }

    /// The double binary tree of channel c over the ranks (NCCL's
    /// `connectTrees` with `ncclGetDtree`'s first tree on the first half
    /// of the channels and its second on the rest).
    pub fn tree(&self, c: usize) -> Tree {
        let second = c >= self.count().div_ceil(2);
        tree_of(&self.intra[c], second)
    }
}

/// Paths already added to a schedule, by (sender, receiver, port).
pub type Paths = FxHashMap<(usize, usize, usize), u32>;

/// One rank's place in a tree: its parent and its children in NCCL's
/// order (the chain's child first, then the servers' children).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeNode {
    pub up: Option<usize>,
    pub down: SmallVec<[usize; 3]>,
}

/// A tree over the ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    pub nodes: Vec<TreeNode>,
}

/// A rank's links in a binary tree: parent, child 0, child 1, and whether
/// it is its parent's child 1 (NCCL's `parentChildType`).
pub type Links = (Option<usize>, Option<usize>, Option<usize>, bool);

/// NCCL's `ncclGetBtree` for rank `rank` of `n`: (parent, child 0,
/// child 1, whether it is its parent's child 1). The tree alternates
/// leaves and nodes by the lowest set bit: rank 0 at the top with the one
/// child half the largest power of two below n.
pub fn btree(n: usize, rank: usize) -> Links {
    let mut bit = 1;
    while bit < n && bit & rank == 0 {
        bit <<= 1;
    }
    if rank == 0 {
        return (None, None, (n > 1).then_some(bit >> 1), false);
    }
    let mut up = (rank ^ bit) | (bit << 1);
    if up >= n {
        up = rank ^ bit;
    }
    let low = bit >> 1;
    let down0 = (low > 0).then(|| rank - low);
    let mut down1 = None;
    let mut l = low;
    while l > 0 {
        if rank + l < n {
            down1 = Some(rank + l);
            break;
        }
        l >>= 1;
    }
    (Some(up), down0, down1, rank > up)
}

/// NCCL's `ncclGetDtree`'s second tree: the first mirrored (n − 1 − r)
/// when n is even, shifted by one rank when it is odd.
pub fn second_btree(n: usize, rank: usize) -> Links {
    if n % 2 == 1 {
        let (u, d0, d1, t) = btree(n, (rank + n - 1) % n);
        let f = |x: Option<usize>| x.map(|x| (x + 1) % n);
        (f(u), f(d0), f(d1), t)
    } else {
        let (u, d0, d1, t) = btree(n, n - 1 - rank);
        let f = |x: Option<usize>| x.map(|x| n - 1 - x);
        (f(u), f(d0), f(d1), t)
    }
}

/// The tree over the ranks of servers whose ranks, in the channel's order,
/// are `intra`: each server a chain from its first rank, and the servers
/// joined by NCCL's binary tree (the second tree if `second`) as its
/// balanced tree pattern joins them (`NCCL_TOPO_PATTERN_BALANCED_TREE`:
/// the parent and child 1 on a server's first rank, child 0 on its second;
/// with one rank a server, all on it).
pub fn tree_of(intra: &[Vec<usize>], second: bool) -> Tree {
    let nodes_n = intra.len();
    let p: usize = intra.iter().map(Vec::len).sum();
    let mut nodes = vec![TreeNode::default(); p];
    for chain in intra {
        for (i, &r) in chain.iter().enumerate() {
            if i > 0 {
                nodes[r].up = Some(chain[i - 1]);
            }
            if i + 1 < chain.len() {
                nodes[r].down.push(chain[i + 1]);
            }
        }
    }
    let child = |n: usize, which: usize| -> usize {
        let chain = &intra[n];
        if which == 0 && chain.len() > 1 {
            chain[1]
        } else {
            chain[0]
        }
    };
    for n in 0..nodes_n {
        let (up, d0, d1, second_child) = if second {
            second_btree(nodes_n, n)
        } else {
            btree(nodes_n, n)
        };
        if let Some(u) = up {
            nodes[intra[n][0]].up = Some(child(u, usize::from(second_child)));
        }
        for (which, d) in [(0, d0), (1, d1)] {
            if let Some(d) = d {
                nodes[child(n, which)].down.push(intra[d][0]);
            }
        }
    }
    Tree { nodes }
}

/// Ops a rank's channels make, each in its chain (a channel's thread block
/// runs its steps in order), merged into the rank's program round-robin
/// over the chains so that the channels start together. In a chain a send
/// waits for the op before it and the send before it; a receive for the
/// receive before it and the send two sends back, so that it is posted
/// while the last send is still on its way (NCCL's connections have
/// `NCCL_STEPS` slots): no send waits for buffer room, and a region a
/// receive overwrites was sent two sends before at the latest; any other
/// op waits for the op before it.
pub struct Chains {
    /// Per rank, per chain, its ops.
    ops: Vec<Vec<Vec<ChainOp>>>,
    /// Per rank, per chain: (last op, last receive, last two sends).
    at: Vec<Vec<ChainAt>>,
}

/// An op of a chain and the ops it waits for: (chain, index) of the same
/// rank.
type ChainOp = (Op, SmallVec<[(u32, u32); 3]>);

/// Where a chain stands: its last op, last receive and last two sends.
#[derive(Clone, Copy, Default)]
struct ChainAt {
    last: Option<u32>,
    recv: Option<u32>,
    sends: [Option<u32>; 2],
}

impl Chains {
    pub fn new(ranks: usize, chains: usize) -> Chains {
        Chains {
            ops: vec![vec![Vec::new(); chains]; ranks],
            at: vec![vec![ChainAt::default(); chains]; ranks],
        }
    }

    /// Appends `op` to chain `chain` of `rank`, after what the chain's
    /// order asks and the ops `after`; its (chain, index).
    pub fn push(&mut self, rank: usize, chain: usize, op: Op, after: &[(u32, u32)]) -> (u32, u32) {
        let c = &mut self.ops[rank][chain];
        let at = &mut self.at[rank][chain];
        let me = c.len() as u32;
        let k = chain as u32;
        let mut deps: SmallVec<[(u32, u32); 3]> = SmallVec::new();
        match op {
            Op::Send { .. } => {
                deps.extend(at.last.map(|i| (k, i)));
                deps.extend(at.sends[1].filter(|&i| Some(i) != at.last).map(|i| (k, i)));
                at.sends = [at.sends[1], Some(me)];
            }
            Op::Recv { .. } => {
                deps.extend(at.recv.map(|i| (k, i)));
                deps.extend(at.sends[0].map(|i| (k, i)));
                // A receive after a copy or combine waits for it too.
                if let Some(i) = at
                    .last
                    .filter(|&i| !matches!(c[i as usize].0, Op::Send { .. } | Op::Recv { .. }))
                {
                    deps.push((k, i));
                }
                at.recv = Some(me);
            }
            _ => deps.extend(at.last.map(|i| (k, i))),
        }
        deps.extend(after.iter().copied());
        deps.sort_unstable();
        deps.dedup();
        at.last = Some(me);
        c.push((op, deps));
        (k, me)
    }

    /// Writes the chains into `s`'s programs.
    pub fn finish(self, s: &mut Schedule) {
        for (r, chains) in self.ops.into_iter().enumerate() {
            let prog = &mut s.programs[r];
            let mut id: Vec<Vec<OpId>> =
                chains.iter().map(|c| Vec::with_capacity(c.len())).collect();
            let mut left: usize = chains.iter().map(Vec::len).sum();
            while left > 0 {
                for (k, chain) in chains.iter().enumerate() {
                    let i = id[k].len();
                    let Some((op, after)) = chain.get(i) else {
                        continue;
                    };
                    // An op waits for ops of other chains placed before it.
                    if after
                        .iter()
                        .any(|&(c, j)| id[c as usize].len() <= j as usize)
                    {
                        continue;
                    }
                    let deps: SmallVec<[OpId; 3]> = after
                        .iter()
                        .map(|&(c, j)| id[c as usize][j as usize])
                        .collect();
                    id[k].push(prog.push(*op, &deps));
                    left -= 1;
                }
            }
        }
    }
}

/// Refuses a schedule of `ops` operations (counted before it is built)
/// past [`crate::pipelined::MAX_MATERIALISED_OPS`], as `build` refuses a
/// counted one.
pub fn check_ops(req: &Request, alg: &crate::Algorithm, ops: u128) -> Result<()> {
    let max = crate::pipelined::MAX_MATERIALISED_OPS;
    if ops > max as u128 {
        return Err(crate::error::Error::too_large(format!(
            "{} {} on {} ranks: {ops} operations are too many to write out (at most {max}); \
             use more --channels, a larger chunk (--protocol Simple) or a smaller size",
            req.collective.name(),
            alg.name,
            req.ranks
        )));
    }
    Ok(())
}

/// The chunks of `len` elements `chunk` at a time, over `ch`'s channels'
/// parts of `n` elements (each channel's part at its own chunk size).
pub fn chunks(req: &Request, ch: &Channels, n: u64, each: impl Fn(u64) -> u64) -> u128 {
    (0..ch.count())
        .map(|c| {
            let (_, len) = part(n, req.dtype.size(), ch.count(), c);
            let k = each(len).max(1);
            len.div_ceil(k) as u128
        })
        .sum()
}

/// A schedule being written over NCCL's channels: the channels, the
/// schedule, every rank's chains and the paths the channels' sends take.
/// Each NCCL algorithm starts from one and ends with [`Writer::finish`].
pub struct Writer<'a> {
    pub ch: Channels<'a>,
    s: Schedule,
    chains: Chains,
    paths: Paths,
}

impl<'a> Writer<'a> {
    /// `alg`'s empty schedule for `req` over its channels, with
    /// `per_channel` chains a channel on every rank.
    pub fn new(
        req: &Request<'a>,
        alg: &crate::Algorithm,
        per_channel: usize,
    ) -> Result<Writer<'a>> {
        let ch = Channels::new(req)?;
        let chains = Chains::new(req.ranks, per_channel * ch.count());
        Ok(Writer {
            ch,
            s: req.schedule(alg),
            chains,
            paths: Paths::default(),
        })
    }

    /// Appends `op` to chain `chain` of `rank` ([`Chains::push`]).
    pub fn push(&mut self, rank: usize, chain: usize, op: Op, after: &[(u32, u32)]) -> (u32, u32) {
        self.chains.push(rank, chain, op, after)
    }

    /// A send from `from` to `to` on channel `c`, in chain `chain`, routed
    /// through the channel's NIC.
    pub fn send(
        &mut self,
        (c, chain): (usize, usize),
        (from, to): (usize, usize),
        region: Region,
        after: &[(u32, u32)],
    ) -> (u32, u32) {
        let route = self.ch.route(&mut self.s, &mut self.paths, c, from, to);
        self.chains.push(
            from,
            chain,
            Op::send_routed(to as u32, c as u32, region, route),
            after,
        )
    }

    /// The schedule, with the chains written into its programs.
    pub fn finish(self) -> Schedule {
        let mut s = self.s;
        self.chains.finish(&mut s);
        s
    }
}

/// The links of a path, for tests that follow a channel's NIC.
pub fn path_links(s: &Schedule, route: u32) -> Option<&[LinkId]> {
    match s.route_kind(route)? {
        topocoll_schedule::RouteKind::Path(p) => Some(p),
        _ => None,
    }
}

/// The protocol a request asks for, Simple by default.
pub fn protocol(req: &Request) -> Protocol {
    req.protocol.unwrap_or(Protocol::Simple)
}

/// A chunk's elements for a request's channel part of `part_elems`
/// elements, the collective moving `per_elem` elements over every rank
/// for each of them (NCCL's `ncclFuncMaxSendRecvCount`): at least one
/// element.
pub fn chunk_elems(
    req: &Request,
    ch: &Channels,
    pattern: Pattern,
    part_elems: u64,
    per_elem: u64,
) -> u64 {
    let elem = req.dtype.size();
    let bytes = part_elems.saturating_mul(per_elem).saturating_mul(elem);
    let b = chunk_bytes(protocol(req), pattern, bytes, ch.servers.len(), req.ranks);
    (b / elem).max(1)
}
