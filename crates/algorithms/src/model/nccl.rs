//! NCCL's cost model (`ncclTopoTuneModel` and `ncclTopoGetAlgoTime`,
//! src/graph/tuning.cc, NVIDIA/nccl 2.23 and later) and the choice it
//! makes: for a collective and a size, the algorithm (ring, tree, PAT) and
//! protocol (LL, LL128, Simple) of least modelled time, on as many
//! channels as NCCL then keeps (src/enqueue.cc's channel tuning). The
//! model's constants are NCCL's own, named below; what it is fed (the
//! channels' bandwidths) comes from the network as [`Machine::of`] says.
//! NVLS and CollNet, which topocoll does not build, are left out.

use crate::error::Result;
use crate::nccl::{Channels, Protocol};
use crate::Request;
use topocoll_schedule::{Collective, CollectiveKind};

/// NCCL's algorithms as its model prices them (those topocoll builds).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NcclAlgo {
    Tree,
    Ring,
    Pat,
}

impl NcclAlgo {
    pub const ALL: [NcclAlgo; 3] = [NcclAlgo::Tree, NcclAlgo::Ring, NcclAlgo::Pat];

    /// NCCL's name (`ncclAlgoStr`).
    pub const fn name(self) -> &'static str {
        match self {
            NcclAlgo::Tree => "tree",
            NcclAlgo::Ring => "ring",
            NcclAlgo::Pat => "pat",
        }
    }

    /// The registry entry that builds it: `nccl_tree`, `nccl_ring`, `nccl_pat`.
    pub const fn entry(self) -> &'static str {
        match self {
            NcclAlgo::Tree => "nccl_tree",
            NcclAlgo::Ring => "nccl_ring",
            NcclAlgo::Pat => "nccl_pat",
        }
    }

    fn index(self) -> usize {
        match self {
            NcclAlgo::Tree => 0,
            NcclAlgo::Ring => 1,
            NcclAlgo::Pat => 2,
        }
    }
}

fn proto_index(p: Protocol) -> usize {
    match p {
        Protocol::Ll => 0,
        Protocol::Ll128 => 1,
        Protocol::Simple => 2,
    }
}

/// `baseLatencies` (µs) of tree, ring and PAT, by protocol (LL, LL128, Simple).
pub const BASE_LAT: [[f64; 3]; 3] = [[6.8, 14.0, 8.4], [6.6, 14.0, 8.4], [8.0, 8.0, 8.0]];

/// `hwLatencies` (µs) over NVLink, PCI and the network (`NCCL_HW_NVLINK`,
/// `NCCL_HW_PCI`, `NCCL_HW_NET`), of tree, ring and PAT, by protocol.
pub const HW_LAT: [[[f64; 3]; 3]; 3] = [
    [[0.6, 1.25, 4.0], [0.6, 1.9, 3.4], [0.0, 0.0, 4.0]],
    [[1.0, 1.9, 4.0], [1.0, 2.5, 5.7], [0.0, 0.0, 4.0]],
    [[5.0, 8.5, 14.0], [2.7, 4.0, 14.0], [0.0, 0.0, 14.0]],
];

/// `llMaxBws` (GB/s): by GPU generation on one server (Volta, Ampere,
/// Hopper, Blackwell), by CPU across servers (Intel, AMD), and by server
/// count (1, 2, more).
pub const LL_MAX_BW: [[f64; 3]; 4] = [
    [39.0, 39.0, 20.4],
    [87.7, 22.5, 19.0],
    [141.0, 45.0, 35.0],
    [282.0, 90.0, 70.0],
];

/// `perChMaxRingLL128Bws`, `perChMaxTreeLL128Bws`, `perChMaxTreeBws`
/// (GB/s a channel), by GPU generation and server count.
pub const RING_LL128_MAX_BW: [[f64; 3]; 4] = [
    [20.0, 20.0, 20.0],
    [20.0, 20.0, 20.0],
    [36.7, 36.7, 36.7],
    [40.0, 40.0, 40.0],
];
pub const TREE_LL128_MAX_BW: [[f64; 3]; 4] = [
    [20.0, 20.0, 20.0],
    [20.0, 20.0, 20.0],
    [36.7, 36.7, 29.0],
    [55.6, 31.67, 20.0],
];
pub const TREE_MAX_BW: [[f64; 3]; 4] = [
    [26.5, 18.5, 10.0],
    [24.0, 23.6, 17.8],
    [38.7, 41.4, 36.0],
    [70.0, 42.8, 24.0],
];

/// `treeCorrectionFactor`, by protocol, for sizes 64 B · 2^k.
pub const TREE_CORRECTION: [[f64; 24]; 3] = [
    [
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.0, 1.0, 1.0, 1.0,
    ],
    [
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9,
        0.9, 0.9, 0.9, 1.0, 1.0, 1.0,
    ],
    [
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8,
        0.7, 0.7, 0.8, 0.9, 0.9, 0.9,
    ],
];

/// `PCI_BW` (GB/s), below which a ring's Simple kernel takes 256 threads.
const PCI_BW: f64 = 12.0;

/// What NCCL's model knows of a machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    pub nodes: usize,
    pub ranks: usize,
    /// Channels (`comm->nChannels`).
    pub channels: usize,
    /// A channel's bandwidth inside a server and between servers (GB/s:
    /// the graphs' `bwIntra`, `bwInter`).
    pub bw_intra: f64,
    pub bw_inter: f64,
    /// Whether the GPUs of a server are joined by NVLink (`typeIntra`).
    pub nvlink: bool,
    /// `minCompCap` (SM version).
    pub sm: u32,
    /// Whether the CPUs are AMD's (`cpuVendor`).
    pub amd_cpu: bool,
}

impl Machine {
    /// The machine of a request: its servers as NCCL's channels see them
    /// (`Channels`), a channel's share of the narrowest link a ring crosses
    /// inside a server (`bwIntra`) and of a server's NIC ports between
    /// servers (`bwInter`), in NCCL's GB/s; on a network not read from
    /// NCCL's files, SM 8.0 (Ampere) and Intel CPUs.
    pub fn of(req: &Request) -> Result<Machine> {
        let ch = Channels::new(req)?;
        let channels = ch.count();
        let topo = req.topology;
        let layout = topo.and_then(|t| t.gpus.as_deref());
        // The narrowest link of the ring's hops inside a server.
        let mut intra = f64::INFINITY;
        let mut inter = f64::INFINITY;
        if let Some(t) = topo.filter(|t| t.num_ranks() == req.ranks) {
            let ring = ch.ring(0);
            let server_of = |r: usize| ch.servers.iter().position(|s| s.contains(&r));
            let mut route = Vec::new();
            for (k, &a) in ring.iter().enumerate() {
                let b = ring[(k + 1) % ring.len()];
                if a == b {
                    continue;
                }
                route.clear();
                t.route(a, b, &mut route);
                let bw = route
                    .iter()
                    .map(|&l| t.links[l as usize].bandwidth)
                    .fold(f64::INFINITY, f64::min);
                if server_of(a) == server_of(b) {
                    intra = intra.min(bw);
                } else {
                    inter = inter.min(bw);
                }
            }
            if let Some(l) = layout.filter(|l| l.ports > 0) {
                inter = l.port_bandwidth.iter().sum::<f64>().min(inter);
            }
        }
        let gb = |bw: f64| if bw.is_finite() { bw / 1e9 } else { 0.0 };
        let (bw_intra, bw_inter) = (gb(intra), gb(inter));
        // One server: the intra figure is the only one.
        let bw_inter = if bw_inter == 0.0 { bw_intra } else { bw_inter };
        let bw_intra = if bw_intra == 0.0 { bw_inter } else { bw_intra };
        Ok(Machine {
            nodes: ch.servers.len(),
            ranks: req.ranks,
            channels,
            bw_intra: bw_intra / channels as f64,
            bw_inter: bw_inter / channels as f64,
            nvlink: layout.is_some_and(|l| l.nvlink),
            sm: layout.and_then(|l| l.sm).unwrap_or(80),
            amd_cpu: layout.is_some_and(|l| l.amd_cpu),
        })
    }

    fn generation(&self) -> usize {
        match self.sm {
            100.. => 3,
            90.. => 2,
            80.. => 1,
            _ => 0,
        }
    }

    /// Whether NCCL enables a protocol (LL128 by default only where the
    /// GPUs of a server are joined by NVLink, SM 7.0 and up) and an
    /// algorithm (PAT only with one GPU a server, SM 6.0 and up) for a
    /// collective (`ncclTopoTuneModel`'s loops).
    pub fn enabled(&self, coll: CollectiveKind, a: NcclAlgo, p: Protocol) -> bool {
        let served = match coll {
            CollectiveKind::Allreduce => a != NcclAlgo::Pat,
            CollectiveKind::Bcast | CollectiveKind::Reduce => a == NcclAlgo::Ring,
            CollectiveKind::Allgather | CollectiveKind::ReduceScatter => a != NcclAlgo::Tree,
            _ => false,
        };
        let pat = a != NcclAlgo::Pat
            || (p == Protocol::Simple && self.nodes == self.ranks && self.sm >= 60);
        let ll128 = p != Protocol::Ll128 || (self.nvlink && self.sm >= 70);
        served && pat && ll128 && self.ranks > 1
    }

    /// NCCL's bus bandwidth turned algorithm bandwidth (GB/s) and latency
    /// (µs) for a collective, algorithm and protocol
    /// (`comm->bandwidths`, `comm->latencies`).
    pub fn bandwidth_latency(&self, coll: CollectiveKind, a: NcclAlgo, p: Protocol) -> (f64, f64) {
        let (nodes, ranks) = (self.nodes, self.ranks);
        let gen = self.generation();
        let index2 = if nodes <= 2 { nodes - 1 } else { 2 };
        let index1 = if nodes == 1 {
            gen
        } else {
            usize::from(self.amd_cpu)
        };
        let ll_max = LL_MAX_BW[index1][index2];
        let nsteps = match coll {
            CollectiveKind::Allreduce => 2 * (ranks - 1),
            CollectiveKind::ReduceScatter | CollectiveKind::Allgather => ranks - 1,
            _ => ranks,
        } as f64;
        let bw = if nodes <= 2 {
            self.bw_intra
        } else {
            self.bw_inter
        };
        let nc = self.channels as f64;
        let mut bus = nc * bw;
        let tree_pattern_plain = ranks == nodes;
        match (a, p) {
            (NcclAlgo::Ring, Protocol::Ll) => bus = ll_max.min(bus * 0.5),
            (NcclAlgo::Ring, Protocol::Ll128) => {
                bus = (bus * 0.92).min(nc * RING_LL128_MAX_BW[gen][index2])
            }
            _ => {}
        }
        if a == NcclAlgo::Tree && coll == CollectiveKind::Allreduce {
            bus = (bus * 0.92).min(nc * TREE_MAX_BW[gen][index2]);
        }
        if a == NcclAlgo::Tree && p == Protocol::Ll {
            bus = (bus / 3.8).min(ll_max);
        }
        if a == NcclAlgo::Tree && p == Protocol::Ll128 {
            let f = if nodes == 1 { 7.0 / 9.0 } else { 120.0 / 128.0 };
            bus = (bus * f).min(nc * TREE_LL128_MAX_BW[gen][index2]);
        }
        if a == NcclAlgo::Tree && tree_pattern_plain {
            bus *= 0.85;
        }
        if a == NcclAlgo::Pat {
            bus *= 0.75;
        }
        let gathers = matches!(
            coll,
            CollectiveKind::Allgather | CollectiveKind::ReduceScatter
        );
        if !(a != NcclAlgo::Ring && gathers) {
            bus *= if a == NcclAlgo::Ring {
                ranks as f64 / nsteps
            } else {
                0.5
            };
        }
        let (ai, pi) = (a.index(), proto_index(p));
        let mut lat = BASE_LAT[ai][pi];
        let intra_hw = if self.nvlink { 0 } else { 1 };
        let hw = if nodes == 1 { intra_hw } else { 2 };
        let mut intra_lat = HW_LAT[intra_hw][ai][pi];
        let inter_lat = if ranks == nodes {
            HW_LAT[2][0][pi]
        } else {
            HW_LAT[2][ai][pi]
        };
        match a {
            NcclAlgo::Ring if matches!(coll, CollectiveKind::Bcast | CollectiveKind::Reduce) => {
                if nodes == 1 {
                    // Every channel the same ring (`sameChannels`).
                    lat += HW_LAT[hw][ai][pi];
                } else {
                    // Each channel its own ring.
                    let l = if p == Protocol::Simple {
                        HW_LAT[hw][0][pi]
                    } else {
                        HW_LAT[hw][ai][pi]
                    };
                    lat += nsteps * l;
                }
            }
            NcclAlgo::Ring => {
                // getNetOverhead: 1 µs (Intel), 2 (AMD); 3× with Simple.
                let mut net = 0.0;
                if nodes > 1 {
                    net = if self.amd_cpu { 2.0 } else { 1.0 };
                    if p == Protocol::Simple {
                        net *= 3.0;
                    }
                }
                intra_lat = intra_lat.max(net);
                let inter_steps = match (nodes, coll) {
                    (1, _) => 0.0,
                    (_, CollectiveKind::Allreduce) => 2.0 * (nodes - 1) as f64,
                    _ => (nodes - 1) as f64,
                };
                lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
            }
            NcclAlgo::Tree => {
                if coll == CollectiveKind::Allreduce {
                    let log = crate::nccl::log2i(nodes as u64) as f64;
                    lat += 2.0 * ((ranks / nodes - 1) as f64 * intra_lat + log * inter_lat);
                }
            }
            NcclAlgo::Pat => {
                let log = crate::nccl::log2i(nodes as u64) as f64;
                lat += log * (inter_lat / 3.5) + ranks as f64 * 2.8;
            }
        }
        (bus, lat)
    }

    /// NCCL's modelled time (µs) of `bytes` (`ncclTopoGetAlgoTime`, one
    /// operation), `None` where NCCL would not run it.
    pub fn time(&self, coll: CollectiveKind, a: NcclAlgo, p: Protocol, bytes: u64) -> Option<f64> {
        if !self.enabled(coll, a, p) {
            return None;
        }
        let (mut bw, mut lat) = self.bandwidth_latency(coll, a, p);
        if bw <= 0.0 {
            return None;
        }
        let log = crate::nccl::log2i(bytes >> 6) as usize;
        if a == NcclAlgo::Tree && coll == CollectiveKind::Allreduce && bytes >> 6 > 0 && log < 23 {
            bw *= TREE_CORRECTION[proto_index(p)][log];
        }
        if a == NcclAlgo::Ring
            && p == Protocol::Simple
            && self.nodes > 1
            && coll == CollectiveKind::Allreduce
            && bytes / (self.channels * self.ranks) as u64 >= 64
        {
            lat *= if self.sm < 80 { 1.9 } else { 1.4 };
        }
        Some(lat + bytes as f64 / (1000.0 * bw))
    }

    /// The channels NCCL keeps for `bytes` (src/enqueue.cc: one fewer while
    /// the bytes are under channels × threads × the protocol's per-thread
    /// threshold, `NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD` 8, 8, 64, LL's on
    /// a ring times the ranks).
    pub fn channels_for(&self, a: NcclAlgo, p: Protocol, bytes: u64) -> usize {
        let threads = match p {
            Protocol::Ll => 512,
            Protocol::Ll128 => 640,
            Protocol::Simple
                if a == NcclAlgo::Ring && self.bw_intra * self.channels as f64 <= PCI_BW =>
            {
                256
            }
            Protocol::Simple => 512,
        };
        let mut threshold: u64 = match p {
            Protocol::Ll | Protocol::Ll128 => 8,
            Protocol::Simple => 64,
        };
        if a == NcclAlgo::Ring && p == Protocol::Ll {
            threshold *= self.ranks as u64;
        }
        let mut nc = self.channels;
        while nc >= 2 && bytes < (nc as u64) * threads * threshold {
            nc -= 1;
        }
        nc
    }
}

/// NCCL's choice for a collective of `bytes` (its whole buffer):
/// algorithm, protocol, channels and modelled time (µs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    pub algo: NcclAlgo,
    pub protocol: Protocol,
    pub channels: usize,
    pub micros: f64,
}

impl Choice {
    /// `nccl:ring/LL128/8ch`.
    pub fn label(&self) -> String {
        format!(
            "nccl:{}/{}/{}ch",
            self.algo.name(),
            self.protocol.name(),
            self.channels
        )
    }
}

/// The least modelled time over NCCL's algorithms and protocols, in NCCL's
/// order (a later one wins only if faster), or `None` where it runs none
/// of them for `collective`.
pub fn choose(m: &Machine, collective: Collective, bytes: u64) -> Option<Choice> {
    let coll = collective.kind();
    let mut best: Option<Choice> = None;
    for a in NcclAlgo::ALL {
        for p in Protocol::ALL {
            let Some(t) = m.time(coll, a, p, bytes) else {
                continue;
            };
            if best.is_none_or(|b| t < b.micros) {
                best = Some(Choice {
                    algo: a,
                    protocol: p,
                    channels: m.channels_for(a, p, bytes),
                    micros: t,
                });
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One 8-GPU NVLink server (SM 8.0), 16 channels of 15 GB/s.
    fn dgx() -> Machine {
        Machine {
            nodes: 1,
            ranks: 8,
            channels: 16,
            bw_intra: 15.0,
            bw_inter: 15.0,
            nvlink: true,
            sm: 80,
            amd_cpu: false,
        }
    }

    /// tuning.cc by hand: a ring allreduce over NVLink, Simple: latency
    /// baseLat 8.4 + 2(P−1) × hwLat 3.4 µs, bus bandwidth C × bw × P /
    /// 2(P−1); LL: 6.6 + 14 × 0.6 µs and half the bandwidth up to
    /// llMaxBw 87.7; LL128: 0.92 of it, capped at 20 GB/s a channel.
    #[test]
    fn ring_allreduce_costs_are_tuning_ccs_by_hand() {
        let m = dgx();
        let (bw, lat) =
            m.bandwidth_latency(CollectiveKind::Allreduce, NcclAlgo::Ring, Protocol::Simple);
        assert!((lat - (8.4 + 14.0 * 3.4)).abs() < 1e-9, "{lat}");
        assert!((bw - 240.0 * 8.0 / 14.0).abs() < 1e-9, "{bw}");
        let (bw, lat) =
            m.bandwidth_latency(CollectiveKind::Allreduce, NcclAlgo::Ring, Protocol::Ll);
        assert!((lat - (6.6 + 14.0 * 0.6)).abs() < 1e-9, "{lat}");
        assert!((bw - 87.7 * 8.0 / 14.0).abs() < 1e-9, "{bw}");
        let (bw, _) =
            m.bandwidth_latency(CollectiveKind::Allreduce, NcclAlgo::Ring, Protocol::Ll128);
        assert!(
            (bw - (240.0 * 0.92f64).min(16.0 * 20.0) * 8.0 / 14.0).abs() < 1e-9,
            "{bw}"
        );
        // Time = latency + bytes / (1000 × GB/s) µs.
        let t = m
            .time(
                CollectiveKind::Allreduce,
                NcclAlgo::Ring,
                Protocol::Simple,
                1 << 30,
            )
            .unwrap();
        assert!(
            (t - (8.4 + 14.0 * 3.4 + (1u64 << 30) as f64 / (1000.0 * 240.0 * 8.0 / 14.0))).abs()
                < 1e-6
        );
    }

    /// NCCL's choice moves from LL at small sizes to Simple at large ones;
    /// PAT is priced only with one GPU a server, and the tree serves
    /// allreduce alone.
    #[test]
    fn the_choice_moves_from_latency_protocols_to_simple_with_size() {
        let m = dgx();
        let small = choose(&m, Collective::Allreduce, 1024).unwrap();
        assert_eq!(small.protocol, Protocol::Ll);
        let big = choose(&m, Collective::Allreduce, 1 << 30).unwrap();
        assert_eq!(big.protocol, Protocol::Simple);
        assert_eq!(big.channels, 16);
        assert!(small.channels < 16);
        assert!(!m.enabled(CollectiveKind::Allgather, NcclAlgo::Pat, Protocol::Simple));
        assert!(!m.enabled(CollectiveKind::Allgather, NcclAlgo::Tree, Protocol::Simple));
        let one_gpu = Machine { nodes: 8, ..dgx() };
        assert!(one_gpu.enabled(CollectiveKind::Allgather, NcclAlgo::Pat, Protocol::Simple));
        assert!(!one_gpu.enabled(CollectiveKind::Allgather, NcclAlgo::Pat, Protocol::Ll));
        assert!(choose(&m, Collective::Alltoall, 1024).is_none());
    }
}
