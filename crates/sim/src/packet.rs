//! The packet-level engine: a schedule run packet by packet on the Dragon
//! net (`topology::DragonNet`), the multistage network of 2×2 switch
//! elements that the Dragon routing paper built its all-to-all on.
//!
//! The model:
//! - A message is cut into packets of `buffer_bytes` (the last one shorter;
//!   an empty message is one empty packet, which still carries its phase).
//!   Each node's interface sends one message at a time, its ready sends in
//!   program order, packets back to back; a send completes when its last
//!   packet has left the node. A receive completes when the last packet of
//!   its message has arrived. Copies and combines take no time; `Compute`
//!   takes its seconds.
//! - A link carries one packet at a time, in bytes / rate, and the packet
//!   lands its latency later (store and forward). It starts only when the
//!   buffer at its far end has a free slot (credit).
//! - A switch element has a distributor at each input and a concentrator at
//!   each output, each with two packet buffers (double buffering: a link
//!   fills one while the other is copied on). Routing is by destination: at
//!   stage i a packet leaves at its destination's bit i. A distributor hands
//!   its oldest packet to its concentrator by a handshake when the
//!   concentrator has a free buffer and accepts it; the copy takes the
//!   element's processor `packet_time_s`, one copy at a time per element.
//! - Control decides what a concentrator accepts:
//!   - `distributed` (the paper's): each concentrator keeps a local phase and
//!     accepts only packets of that phase; the last packet of each message
//!     carries the phase-switch tag, and taking it in advances the
//!     concentrator to the next phase, as part of that packet's copy. Phases chain from distributor to concentrator to the next
//!     stage's distributor without any global step, and the next phase's
//!     packets fill the second buffer while the tag leaves on the link.
//!   - `centralised` (what the paper improves on): every switch is in one
//!     global phase; nodes inject only that phase's packets; when all of
//!     them have arrived, every switch changes phase together after a
//!     set-up time of `switch_time_s`.
//!   - `none`: packet switching without phases: a concentrator takes the
//!     oldest packet waiting for it. Any schedule runs this way.
//!
//!   The phase of a message is its send's tag; the two phase controls need
//!   XOR phases (each rank sends one message per phase s = 1..N−1, to rank
//!   XOR s, in phase order: `dragon`, `dragon_net`).
//!
//! Results: the completion time; efficiency, the payload the links carried
//! over what they could have carried at their rate while in use (each link
//! from the start of its first packet to the end of its last); the most
//! packets ever waiting for one link beyond the one it carries that belong
//! to another message of the carried packet's phase (link contention; XOR
//! phases have none); and whether every packet arrived, each pair's in order.

use crate::error::fail;
use crate::error::Result;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use topocoll_base::param;
use topocoll_schedule::{Op, Schedule};
use topocoll_topology::{DragonNet, Kind, Topology};

/// How the switch elements keep phases (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Distributed,
    Centralised,
    None,
}

impl Control {
    pub fn parse(s: &str) -> Result<Control> {
        match s {
            "distributed" => Ok(Control::Distributed),
            "centralised" | "centralized" => Ok(Control::Centralised),
            "none" => Ok(Control::None),
            other => Err(param!(
                "control",
                " '{other}' is not distributed, centralised or none"
            )),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Control::Distributed => "distributed",
            Control::Centralised => "centralised",
            Control::None => "none",
        }
    }
}

#[derive(Clone, Debug)]
pub struct PacketConfig {
    /// Payload bytes per packet (the switch element's buffer length).
    pub buffer_bytes: u64,
    /// A switch element's processor time to hand one packet from a
    /// distributor to a concentrator (s).
    pub packet_time_s: f64,
    /// Centralised: the set-up time of every switch-over (s). (Distributed
    /// control changes phase as part of the tagged packet's copy.)
    pub switch_time_s: f64,
    pub control: Control,
}

#[derive(Clone, Debug, Serialize)]
pub struct PacketResult {
    pub time_s: f64,
    pub efficiency: f64,
    pub max_link_contention: u32,
    pub delivered_in_order: bool,
    pub packets: u64,
    /// Payload bytes the links carried (every hop counted).
    pub link_payload_bytes: f64,
    pub rank_finish_s: Vec<f64>,
    pub events: u64,
}

/// Whether a schedule is made of XOR phases on its `ranks` (see the module
/// doc); the first offending send when not.
pub fn xor_phases(s: &Schedule) -> std::result::Result<(), String> {
    let p = s.ranks;
    for (r, prog) in s.programs.iter().enumerate() {
        let mut next = 1usize;
        for op in &prog.ops {
            if let Op::Send { peer, tag, .. } = op {
                if *tag as usize != next || *peer as usize != r ^ next {
                    return Err(format!(
                        "rank {r} sends to rank {peer} with tag {tag} where phase {next} would send to rank {}",
                        r ^ next
                    ));
                }
                next += 1;
            }
        }
        if next != p {
            return Err(format!(
                "rank {r} sends in {} phases, not the {} of XOR phases 1..{}",
                next - 1,
                p - 1,
                p - 1
            ));
        }
    }
    Ok(())
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Packet {
    msg: u32,
    bytes: u32,
    /// Its place in its message: a message of 2^32 bytes or more in
    /// packets of a few bytes has more than 2^32 of them.
    seq: u64,
    last: bool,
}

#[derive(Clone, Copy, Debug)]
struct Msg {
    src: u32,
    dst: u32,
    phase: u32,
    recv: u32,
    packets: u64,
    arrived: u64,
    /// Its place among the messages from `src` to `dst`.
    order: u32,
}

/// A distributor's or a concentrator's two buffers: packets in order, the
/// number of slots promised to packets on their way in, and whether the
/// head is leaving (being copied on, or on the link).
#[derive(Clone, Debug, Default)]
struct Buffers {
    q: VecDeque<u32>,
    reserved: u8,
    head_busy: bool,
    /// When the head packet became the head (the oldest waits first).
    head_since: f64,
}

impl Buffers {
    fn free(&self) -> bool {
        self.q.len() + (self.reserved as usize) < 2
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A link finished sending its packet.
    LinkEnd,
    /// A packet landed at the far end of a link.
    Arrive,
    /// A switch element finished a copy from the distributor at link `a`.
    CopyEnd,
    /// A `Compute` op of rank `a` finished (op `b`).
    Computed,
    /// Every switch changes phase (centralised).
    Switch,
}

/// (time as ordered bits, order of scheduling, kind, a, b).
type Event = (u64, u64, Ev, u32, u32);

struct Nic {
    /// Ready sends, in program order.
    ready: BinaryHeap<Reverse<u32>>,
    /// The message being sent: its id, send op, and packets left to start.
    msg: u32,
    op: u32,
    left: u64,
    bytes_left: u64,
}

struct PacketRun<'a> {
    s: &'a Schedule,
    net: &'a DragonNet,
    cfg: &'a PacketConfig,
    nodes: usize,
    stages: u32,
    rate: f64,
    latency: f64,
    elem: u64,
    now: f64,
    seq: u64,
    events: BinaryHeap<Reverse<Event>>,
    handled: u64,
    packets: Vec<Packet>,
    free_packets: Vec<u32>,
    msgs: Vec<Msg>,
    /// Each send op's receive at its peer.
    recv_of: Vec<Vec<u32>>,
    pending: Vec<Vec<u32>>,
    succ_start: Vec<Vec<u32>>,
    succ: Vec<Vec<u32>>,
    recv_msg_done: Vec<Vec<bool>>,
    recv_posted: Vec<Vec<bool>>,
    done_ops: Vec<usize>,
    finish: Vec<f64>,
    nic: Vec<Nic>,
    /// Distributor buffers, by the id of the link that feeds them (levels
    /// 0..n−1); concentrator buffers, by the id of the link they feed
    /// (levels 1..n).
    dist: Vec<Buffers>,
    conc: Vec<Buffers>,
    conc_phase: Vec<u32>,
    element_busy: Vec<bool>,
    link_busy: Vec<bool>,
    link_packet: Vec<u32>,
    link_first: Vec<f64>,
    link_last: Vec<f64>,
    link_bytes: Vec<f64>,
    /// Centralised: the global phase and the messages of each phase still
    /// to arrive.
    phase: u32,
    phase_left: Vec<u32>,
    /// Per (src, dst): the messages started and the next one to arrive.
    pair_started: FxHashMap<u64, u32>,
    pair_next: FxHashMap<u64, (u32, u64)>,
    in_order: bool,
    contention: u32,
    packets_made: u64,
}

/// Runs schedule `s` on the Dragon net `topo`.
pub fn simulate(s: &Schedule, topo: &Topology, cfg: &PacketConfig) -> Result<PacketResult> {
    let Kind::DragonNet(net) = &topo.kind else {
        return Err(fail!(
            Sim,
            Config,
            "--model packet runs on the Dragon net (--topology dragonnet:N), not on {}",
            topo.name
        ));
    };
    if topo.ranks_placed() {
        return Err(fail!(
            Sim,
            Config,
            "--model packet runs one rank per Dragon net node (no --ranks-per-node or --map)"
        ));
    }
    if topo.profiles.is_some() {
        return Err(fail!(Sim, Config,
            "--model packet prices a network that does not change: its links' outages (--fail LINK@T1..T2) are not read (simulate it with --model flow)"
        ));
    }
    // The packet model routes every message through the switch elements
    // by its destination's bits, as the Dragon net does.
    if !s.paths.is_empty() {
        return Err(fail!(Sim, Config,
            "--model packet routes each message by its destination: the schedule's per-send paths cannot be taken (simulate it with --model flow)"
        ));
    }
    if s.ranks != net.nodes() {
        return Err(fail!(
            Sim,
            Config,
            "the schedule has {} ranks but {} has {} nodes",
            s.ranks,
            topo.name,
            net.nodes()
        ));
    }
    if cfg.buffer_bytes == 0 || cfg.buffer_bytes > u32::MAX as u64 {
        return Err(param!(
            "buffer",
            " must be from 1 byte to 4 GiB, got {}",
            cfg.buffer_bytes
        ));
    }
    for (name, v) in [
        ("--packet-time", cfg.packet_time_s),
        ("--switch-time", cfg.switch_time_s),
    ] {
        if !(v.is_finite() && (0.0..=1e6).contains(&v)) {
            return Err(fail!(
                Sim,
                Config,
                "{name} must be from 0 to 1e6 seconds, got {v}"
            ));
        }
    }
    if cfg.control != Control::None {
        xor_phases(s).map_err(|why| -> crate::error::Error {
            param!(
                "control", " {}: the switches hold XOR phases (each rank sends one message per phase s = 1..N-1 to rank XOR s, in phase order, as dragon and dragon_net do), but {why}; use --control none",
                cfg.control.name()
            )
        })?;
    }
    let rate = topo.links[0].bandwidth;
    let latency = topo.links[0].latency;
    if topo
        .links
        .iter()
        .any(|l| l.bandwidth != rate || l.latency != latency)
    {
        return Err(fail!(
            Sim,
            Config,
            "--model packet needs every link of the Dragon net at one rate and latency"
        ));
    }
    check_work(s, net, cfg)?;
    let mut e = PacketRun::new(s, net, cfg, rate, latency)?;
    e.run()?;
    Ok(e.result())
}

/// Most packets one run moves: each is several events (about 3 M packets
/// a second, docs/PERFORMANCE.md), so a run of this many takes about a
/// minute and a half; more is refused before it starts rather than left
/// to run for hours.
pub const MAX_PACKETS: u64 = 1 << 28;

/// Bytes the run's own tables take per op of the schedule (its receive,
/// dependency counts, successors, flags, the matching of sends to
/// receives) and per directed link (two double buffers, the link's state
/// and statistics), with room to spare.
const BYTES_PER_OP: u64 = 96;
const BYTES_PER_LINK: u64 = 192;

/// The packets the run would move and the memory its tables would take,
/// counted before anything is allocated: refused past [`MAX_PACKETS`] or
/// the memory available, naming the figure.
fn check_work(s: &Schedule, net: &DragonNet, cfg: &PacketConfig) -> Result<()> {
    let elem = s.elem_bytes();
    let mut packets: u64 = 0;
    let mut ops: u64 = 0;
    for prog in &s.programs {
        ops = ops.saturating_add(prog.len() as u64);
        for op in &prog.ops {
            if let Op::Send { region, .. } = op {
                let bytes = region.count.checked_mul(elem).ok_or_else(|| {
                    fail!(
                        Sim,
                        Config,
                        "a message of {} elements of {elem} bytes overflows 64 bits",
                        region.count
                    )
                })?;
                packets = packets.saturating_add(bytes.div_ceil(cfg.buffer_bytes).max(1));
            }
        }
    }
    if packets > MAX_PACKETS {
        return Err(param!(
            "buffer",
            " {}: the run would move {packets} packets, more than the packet model's limit of {MAX_PACKETS}; use a larger --buffer or a smaller size",
            cfg.buffer_bytes
        ));
    }
    let links = (net.stages as u64 + 1).saturating_mul(net.nodes() as u64);
    let bytes = ops
        .saturating_mul(BYTES_PER_OP)
        .saturating_add(links.saturating_mul(BYTES_PER_LINK));
    Ok(topocoll_base::memory::check(
        bytes,
        "the packet model's tables",
    )?)
}

fn key(t: f64) -> u64 {
    t.max(0.0).to_bits()
}

impl<'a> PacketRun<'a> {
    fn new(
        s: &'a Schedule,
        net: &'a DragonNet,
        cfg: &'a PacketConfig,
        rate: f64,
        latency: f64,
    ) -> Result<PacketRun<'a>> {
        let nodes = net.nodes();
        let stages = net.stages;
        let links = (stages as usize + 1) * nodes;
        // Sends meet receives as MPI matches them: the k-th of a (source,
        // destination, tag) meets the k-th receive of it.
        let mut recvs: FxHashMap<(u32, u32, u32), VecDeque<u32>> = FxHashMap::default();
        for (r, prog) in s.programs.iter().enumerate() {
            for (i, op) in prog.ops.iter().enumerate() {
                if let Op::Recv { peer, tag, .. } = op {
                    recvs
                        .entry((*peer, r as u32, *tag))
                        .or_default()
                        .push_back(i as u32);
                }
            }
        }
        let mut recv_of = Vec::with_capacity(s.ranks);
        let mut phase_left = vec![0u32; nodes + 1];
        for (r, prog) in s.programs.iter().enumerate() {
            let mut of = vec![NONE; prog.len()];
            for (i, op) in prog.ops.iter().enumerate() {
                if let Op::Send { peer, tag, .. } = op {
                    let j = recvs
                        .get_mut(&(r as u32, *peer, *tag))
                        .and_then(|q| q.pop_front())
                        .ok_or_else(|| {
                            fail!(
                                Sim,
                                Config,
                                "rank {r}'s send {i} to rank {peer} (tag {tag}) has no receive"
                            )
                        })?;
                    of[i] = j;
                    if (*tag as usize) < phase_left.len() {
                        phase_left[*tag as usize] += 1;
                    }
                }
            }
            recv_of.push(of);
        }
        let mut pending = Vec::with_capacity(s.ranks);
        let mut succ_start = Vec::with_capacity(s.ranks);
        let mut succ = Vec::with_capacity(s.ranks);
        for prog in &s.programs {
            let n = prog.len();
            let count: Vec<u32> = (0..n).map(|i| prog.deps(i).len() as u32).collect();
            let mut outs = vec![0u32; n + 1];
            for i in 0..n {
                for &d in prog.deps(i) {
                    outs[d as usize + 1] += 1;
                }
            }
            for i in 0..n {
                outs[i + 1] += outs[i];
            }
            let mut fill = outs.clone();
            let mut list = vec![0u32; outs[n] as usize];
            for i in 0..n {
                for &d in prog.deps(i) {
                    list[fill[d as usize] as usize] = i as u32;
                    fill[d as usize] += 1;
                }
            }
            pending.push(count);
            succ_start.push(outs);
            succ.push(list);
        }
        Ok(PacketRun {
            s,
            net,
            cfg,
            nodes,
            stages,
            rate,
            latency,
            elem: s.elem_bytes(),
            now: 0.0,
            seq: 0,
            events: BinaryHeap::new(),
            handled: 0,
            packets: Vec::new(),
            free_packets: Vec::new(),
            msgs: Vec::new(),
            recv_of,
            recv_msg_done: s.programs.iter().map(|p| vec![false; p.len()]).collect(),
            recv_posted: s.programs.iter().map(|p| vec![false; p.len()]).collect(),
            pending,
            succ_start,
            succ,
            done_ops: vec![0; s.ranks],
            finish: vec![0.0; s.ranks],
            nic: (0..s.ranks)
                .map(|_| Nic {
                    ready: BinaryHeap::new(),
                    msg: NONE,
                    op: NONE,
                    left: 0,
                    bytes_left: 0,
                })
                .collect(),
            dist: vec![Buffers::default(); links],
            conc: vec![Buffers::default(); links],
            conc_phase: vec![1; links],
            element_busy: vec![false; stages as usize * nodes / 2],
            link_busy: vec![false; links],
            link_packet: vec![NONE; links],
            link_first: vec![f64::INFINITY; links],
            link_last: vec![0.0; links],
            link_bytes: vec![0.0; links],
            phase: 1,
            phase_left,
            pair_started: FxHashMap::default(),
            pair_next: FxHashMap::default(),
            in_order: true,
            contention: 0,
            packets_made: 0,
        })
    }

    fn push(&mut self, t: f64, ev: Ev, a: u32, b: u32) {
        self.seq += 1;
        self.events.push(Reverse((key(t), self.seq, ev, a, b)));
    }

    fn run(&mut self) -> Result<()> {
        if self.cfg.control == Control::Centralised {
            self.phase = self.next_phase(0);
        }
        // The ops ready at the start, listed before any completes (a
        // completion makes later ops ready, which must not run twice).
        let initial: Vec<Vec<u32>> = self
            .pending
            .iter()
            .map(|p| {
                (0..p.len() as u32)
                    .filter(|&i| p[i as usize] == 0)
                    .collect()
            })
            .collect();
        for (r, ops) in initial.into_iter().enumerate() {
            for i in ops {
                self.ready(r, i);
            }
        }
        for v in 0..self.nodes {
            self.try_link(v);
        }
        while let Some(Reverse((t, _, ev, a, b))) = self.events.pop() {
            self.now = f64::from_bits(t);
            self.handled += 1;
            match ev {
                Ev::LinkEnd => self.link_end(a as usize),
                Ev::Arrive => self.arrive(a as usize, b),
                Ev::CopyEnd => self.copy_end(a as usize),
                Ev::Computed => self.complete(a as usize, b),
                Ev::Switch => {
                    self.phase = self.next_phase(self.phase);
                    for v in 0..self.nodes {
                        self.try_link(v);
                    }
                }
            }
        }
        for (r, prog) in self.s.programs.iter().enumerate() {
            if self.done_ops[r] != prog.len() {
                return Err(fail!(Sim, Config,
                    "the packet run stopped with rank {r} at {} of its {} ops (a deadlock: check the schedule with topocoll verify)",
                    self.done_ops[r],
                    prog.len()
                ));
            }
        }
        Ok(())
    }

    /// The first phase after `after` that has messages.
    fn next_phase(&self, after: u32) -> u32 {
        let mut p = after as usize + 1;
        while p < self.phase_left.len() && self.phase_left[p] == 0 {
            p += 1;
        }
        p as u32
    }

    // ---- ranks: the schedule's ops ---------------------------------

    fn ready(&mut self, r: usize, i: u32) {
        match self.s.programs[r].ops[i as usize] {
            Op::Send { .. } => {
                self.nic[r].ready.push(Reverse(i));
                self.start_message(r);
            }
            Op::Recv { .. } => {
                self.recv_posted[r][i as usize] = true;
                if self.recv_msg_done[r][i as usize] {
                    self.complete(r, i);
                }
            }
            Op::Compute { seconds } => self.push(self.now + seconds, Ev::Computed, r as u32, i),
            Op::Copy { .. } | Op::Combine { .. } => self.complete(r, i),
        }
    }

    fn complete(&mut self, r: usize, i: u32) {
        self.done_ops[r] += 1;
        self.finish[r] = self.finish[r].max(self.now);
        let (a, b) = (
            self.succ_start[r][i as usize] as usize,
            self.succ_start[r][i as usize + 1] as usize,
        );
        for k in a..b {
            let j = self.succ[r][k];
            self.pending[r][j as usize] -= 1;
            if self.pending[r][j as usize] == 0 {
                self.ready(r, j);
            }
        }
    }

    /// The node's interface takes its next ready send, if it is free.
    fn start_message(&mut self, r: usize) {
        if self.nic[r].msg != NONE {
            return;
        }
        let Some(Reverse(i)) = self.nic[r].ready.pop() else {
            return;
        };
        let Op::Send {
            peer, tag, region, ..
        } = self.s.programs[r].ops[i as usize]
        else {
            unreachable!("only sends are queued");
        };
        let bytes = region.count * self.elem;
        let packets = bytes.div_ceil(self.cfg.buffer_bytes).max(1);
        let pair = (r as u64) << 32 | peer as u64;
        let order = {
            let c = self.pair_started.entry(pair).or_insert(0);
            *c += 1;
            *c - 1
        };
        self.msgs.push(Msg {
            src: r as u32,
            dst: peer,
            phase: tag,
            recv: self.recv_of[r][i as usize],
            packets,
            arrived: 0,
            order,
        });
        let nic = &mut self.nic[r];
        nic.msg = self.msgs.len() as u32 - 1;
        nic.op = i;
        nic.left = packets;
        nic.bytes_left = bytes;
        self.try_link(r);
    }

    // ---- links -------------------------------------------------------

    /// Starts the next packet on link `l` if it has one and room ahead.
    fn try_link(&mut self, l: usize) {
        if self.link_busy[l] {
            return;
        }
        let level = l / self.nodes;
        let last_level = self.stages as usize;
        if level < last_level && !self.dist[l].free() {
            return;
        }
        let packet = if level == 0 {
            let nic = &self.nic[l];
            if nic.msg == NONE || nic.left == 0 {
                return;
            }
            if self.cfg.control == Control::Centralised
                && self.msgs[nic.msg as usize].phase != self.phase
            {
                return;
            }
            self.new_packet(l)
        } else {
            let c = &mut self.conc[l];
            if c.head_busy || c.q.is_empty() {
                return;
            }
            c.head_busy = true;
            c.q[0]
        };
        if level < last_level {
            self.dist[l].reserved += 1;
        }
        let bytes = self.packets[packet as usize].bytes as f64;
        self.link_busy[l] = true;
        self.link_packet[l] = packet;
        self.link_first[l] = self.link_first[l].min(self.now);
        self.link_bytes[l] += bytes;
        let end = self.now + bytes / self.rate;
        self.link_last[l] = self.link_last[l].max(end);
        self.push(end, Ev::LinkEnd, l as u32, 0);
    }

    /// The next packet of node `v`'s message.
    fn new_packet(&mut self, v: usize) -> u32 {
        let buffer = self.cfg.buffer_bytes;
        let nic = &mut self.nic[v];
        let bytes = nic.bytes_left.min(buffer);
        nic.bytes_left -= bytes;
        nic.left -= 1;
        let msg = &self.msgs[nic.msg as usize];
        let p = Packet {
            msg: nic.msg,
            bytes: bytes as u32,
            seq: msg.packets - nic.left - 1,
            last: nic.left == 0,
        };
        self.packets_made += 1;
        match self.free_packets.pop() {
            Some(id) => {
                self.packets[id as usize] = p;
                id
            }
            None => {
                self.packets.push(p);
                self.packets.len() as u32 - 1
            }
        }
    }

    fn link_end(&mut self, l: usize) {
        let packet = self.link_packet[l];
        self.link_busy[l] = false;
        self.link_packet[l] = NONE;
        let level = l / self.nodes;
        if level == 0 {
            // The node's interface: the send is done with its last packet.
            if self.packets[packet as usize].last {
                let (v, op) = (l, self.nic[l].op);
                self.nic[v].msg = NONE;
                self.nic[v].op = NONE;
                self.complete(v, op);
                self.start_message(v);
            }
        } else {
            let c = &mut self.conc[l];
            c.q.pop_front();
            c.head_busy = false;
            c.head_since = self.now;
            let stage = level as u32 - 1;
            self.try_element(stage, self.net.element_of(stage, l % self.nodes));
        }
        if self.latency > 0.0 {
            self.push(self.now + self.latency, Ev::Arrive, l as u32, packet);
        } else {
            self.arrive(l, packet);
        }
        self.try_link(l);
    }

    fn arrive(&mut self, l: usize, packet: u32) {
        let level = l / self.nodes;
        if level == self.stages as usize {
            self.deliver(l % self.nodes, packet);
            return;
        }
        let d = &mut self.dist[l];
        d.reserved -= 1;
        if d.q.is_empty() {
            d.head_since = self.now;
        }
        d.q.push_back(packet);
        self.try_element(
            level as u32,
            self.net.element_of(level as u32, l % self.nodes),
        );
    }

    fn deliver(&mut self, v: usize, packet: u32) {
        let p = self.packets[packet as usize];
        self.free_packets.push(packet);
        let m = &mut self.msgs[p.msg as usize];
        debug_assert_eq!(m.dst as usize, v);
        let pair = (m.src as u64) << 32 | m.dst as u64;
        let next = self.pair_next.entry(pair).or_insert((0, 0));
        if (m.order, p.seq) != *next {
            self.in_order = false;
        }
        m.arrived += 1;
        *next = if m.arrived == m.packets {
            (m.order + 1, 0)
        } else {
            (m.order, p.seq + 1)
        };
        if m.arrived < m.packets {
            return;
        }
        let (recv, phase) = (m.recv, m.phase);
        if self.cfg.control == Control::Centralised {
            let left = &mut self.phase_left[phase as usize];
            *left -= 1;
            if *left == 0 {
                self.push(self.now + self.cfg.switch_time_s, Ev::Switch, 0, 0);
            }
        }
        self.recv_msg_done[v][recv as usize] = true;
        if self.recv_posted[v][recv as usize] {
            self.complete(v, recv);
        }
    }

    // ---- switch elements ----------------------------------------------

    /// The concentrator (by the id of the link it feeds) a distributor's
    /// packet goes to.
    fn target(&self, stage: u32, packet: u32) -> usize {
        let m = &self.msgs[self.packets[packet as usize].msg as usize];
        let p = DragonNet::position(m.src as usize, m.dst as usize, stage + 1);
        (stage as usize + 1) * self.nodes + p
    }

    fn accepts(&self, c: usize, packet: u32) -> bool {
        if !self.conc[c].free() {
            return false;
        }
        match self.cfg.control {
            Control::Distributed => {
                self.msgs[self.packets[packet as usize].msg as usize].phase == self.conc_phase[c]
            }
            Control::Centralised | Control::None => true,
        }
    }

    /// Starts a copy in element `j` of `stage` if one can go: the
    /// distributor whose head has waited longest first.
    fn try_element(&mut self, stage: u32, j: usize) {
        let low = j & ((1 << stage) - 1);
        let p0 = ((j >> stage) << (stage + 1)) | low;
        let inputs = [
            stage as usize * self.nodes + p0,
            stage as usize * self.nodes + (p0 | 1 << stage),
        ];
        let element = stage as usize * self.nodes / 2 + j;
        if !self.element_busy[element] {
            let mut best: Option<(f64, usize, usize)> = None;
            for &d in &inputs {
                let buf = &self.dist[d];
                if buf.head_busy || buf.q.is_empty() {
                    continue;
                }
                let c = self.target(stage, buf.q[0]);
                if self.accepts(c, buf.q[0]) && best.is_none_or(|b| buf.head_since < b.0) {
                    best = Some((buf.head_since, d, c));
                }
            }
            if let Some((_, d, c)) = best {
                self.dist[d].head_busy = true;
                self.conc[c].reserved += 1;
                self.element_busy[element] = true;
                self.push(self.now + self.cfg.packet_time_s, Ev::CopyEnd, d as u32, 0);
            }
        }
        self.measure(stage, inputs);
    }

    fn copy_end(&mut self, d: usize) {
        let level = d / self.nodes;
        let stage = level as u32;
        let packet = self.dist[d].q.pop_front().expect("a copy has its packet");
        let buf = &mut self.dist[d];
        buf.head_busy = false;
        buf.head_since = self.now;
        let c = self.target(stage, packet);
        let cb = &mut self.conc[c];
        cb.reserved -= 1;
        if cb.q.is_empty() {
            cb.head_since = self.now;
        }
        cb.q.push_back(packet);
        if self.cfg.control == Control::Distributed && self.packets[packet as usize].last {
            self.conc_phase[c] += 1;
        }
        let j = self.net.element_of(stage, d % self.nodes);
        self.element_busy[stage as usize * self.nodes / 2 + j] = false;
        // The freed distributor slot lets its link go on; the element may copy again.
        self.try_link(d);
        self.try_link(c);
        self.try_element(stage, j);
    }

    /// Link contention at the element's two outputs: packets waiting for an
    /// output beyond the one it carries, of the carried packet's phase and
    /// another message.
    fn measure(&mut self, stage: u32, inputs: [usize; 2]) {
        let mut heads = [(NONE, usize::MAX); 2];
        for (k, &d) in inputs.iter().enumerate() {
            if let Some(&p) = self.dist[d].q.front() {
                heads[k] = (p, self.target(stage, p));
            }
        }
        for k in 0..2 {
            let c = heads[k].1;
            if c == usize::MAX || (k == 1 && heads[0].1 == c) {
                continue;
            }
            // The packets waiting for link c: its concentrator's, then the
            // distributors' heads bound for it.
            let q = &self.conc[c].q;
            let mut waiting = [NONE; 4];
            let mut n = 0;
            for &p in q.iter() {
                waiting[n] = p;
                n += 1;
            }
            for h in heads.iter().filter(|h| h.1 == c) {
                waiting[n] = h.0;
                n += 1;
            }
            let first = &self.packets[waiting[0] as usize];
            let phase = self.msgs[first.msg as usize].phase;
            let others = waiting[1..n]
                .iter()
                .filter(|&&p| {
                    let m = self.packets[p as usize].msg;
                    m != first.msg && self.msgs[m as usize].phase == phase
                })
                .count() as u32;
            self.contention = self.contention.max(others);
        }
    }

    fn result(&self) -> PacketResult {
        let mut payload = 0.0;
        let mut span = 0.0;
        for l in 0..self.link_busy.len() {
            if self.link_first[l].is_finite() {
                payload += self.link_bytes[l];
                span += self.link_last[l] - self.link_first[l];
            }
        }
        let efficiency = if span > 0.0 {
            payload / (self.rate * span)
        } else if payload == 0.0 {
            0.0
        } else {
            1.0
        };
        PacketResult {
            time_s: self.finish.iter().copied().fold(0.0, f64::max),
            efficiency,
            max_link_contention: self.contention,
            delivered_in_order: self.in_order && self.msgs.iter().all(|m| m.arrived == m.packets),
            packets: self.packets_made,
            link_payload_bytes: payload,
            rank_finish_s: self.finish.clone(),
            events: self.handled,
        }
    }
}
