//! Bandwidth sharing between flows.
//!
//! [`MaxMin`] is weighted max-min fairness over directed links, solved by
//! progressive filling and kept up to date incrementally: when flows start or
//! end, only the flows whose rate can change are solved again (see its doc).
//! Levels within a relative
//! 1e-12 of each other are merged while filling, so flows that are symmetric in
//! exact arithmetic get bit-identical rates and finish at the same instant —
//! which lets the simulator batch their events.
//!
//! The tree-broadcast paper's reservation rule is `calendar::Calendar`.

use smallvec::SmallVec;
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

thread_local! {
    /// Solvers made on this thread start every solve from all the flows on
    /// the changed links (see [`with_full_start`]).
    static FULL_START: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with the solvers it makes on this thread starting every solve
/// from all the flows on the links whose flows changed, not the pruned set:
/// the same allocation up to rounding, for the tests that measure how far
/// rounding moves a run.
pub fn with_full_start<T>(f: impl FnOnce() -> T) -> T {
    let old = FULL_START.with(|c| c.replace(true));
    let out = f();
    FULL_START.with(|c| c.set(old));
    out
}

/// Adds to a work counter in builds with the `counters` feature; nothing otherwise.
macro_rules! count {
    ($self:ident . $field:ident += $n:expr) => {
        #[cfg(feature = "counters")]
        {
            $self.counts.$field += $n as u64;
        }
    };
}

/// The solver's work, counted with the `counters` feature and printed per
/// solve when the solver is dropped.
#[derive(Clone, Debug, Default)]
#[cfg_attr(not(feature = "counters"), allow(dead_code))]
struct Counts {
    /// Fillings (passes), and the flows they filled.
    passes: u64,
    filled: u64,
    /// Entries of links' flow lists read: outside loads, the filling's
    /// freezes, the checks; and link updates as flows freeze.
    touch_setup: u64,
    touch_freeze: u64,
    touch_check: u64,
    touch_route: u64,
    pushes: u64,
    pops: u64,
    /// Flows of the final sets, and those whose rate came out unchanged.
    final_flows: u64,
    unchanged: u64,
}

/// Relative tolerance under which two fair-share levels are the same level.
pub const LEVEL_TOLERANCE: f64 = 1e-12;

/// Orders non-negative floats through their bit patterns (monotone for x ≥ 0).
fn key(x: f64) -> u64 {
    x.max(0.0).to_bits()
}

/// A heap entry: a share's key and its link, ordered by key then link.
fn pack(key: u64, link: u32) -> u128 {
    (key as u128) << 32 | link as u128
}

/// A flow's cold state: what only starting, ending and rescheduling read.
#[derive(Clone, Debug, Default)]
struct Flow {
    /// The route, inline so that a pass over flows reads memory in order.
    links: SmallVec<[u32; 24]>,
    /// Position of this flow in each of its links' flow lists (inline for
    /// short routes, which are the ones where a pointer chase shows).
    pos: SmallVec<[u32; 4]>,
    /// Largest rate the flow may take (bytes/s), `f64::INFINITY` when uncapped.
    cap: f64,
    /// Bytes left as of `since`.
    remaining: f64,
    since: f64,
    active: bool,
}

/// A flow's hot state: everything a scan of a link's flow list reads,
/// in one record (one cache line per flow touched, not six).
#[derive(Clone, Copy, Debug)]
struct Hot {
    rate: f64,
    weight: f64,
    /// The rate the current solve gives the flow.
    new_rate: f64,
    /// The solve (`MaxMin::generation`) whose affected set holds the flow.
    mark: u32,
    /// The link whose saturation fixes the rate (or `CAP_BOTTLENECK`).
    bottleneck: u32,
    new_bottleneck: u32,
    frozen: bool,
}

impl Default for Hot {
    fn default() -> Hot {
        Hot {
            rate: 0.0,
            weight: 0.0,
            new_rate: 0.0,
            mark: 0,
            bottleneck: NO_BOTTLENECK,
            new_bottleneck: NO_BOTTLENECK,
            frozen: false,
        }
    }
}

/// A link's state during a solve.
#[derive(Clone, Copy, Debug, Default)]
struct LinkState {
    /// Capacity left and weight of the unfrozen affected flows, while filling.
    rem: f64,
    wsum: f64,
    /// What the filling starts from for the current affected set: the
    /// capacity the outside flows leave, and the affected flows' weight
    /// (summed in the set's order, so extending it as the set grows gives
    /// the bits a sum from scratch gives).
    rem0: f64,
    wsum0: f64,
    unfrozen: u32,
    /// Hops of affected flows on the link: when it is the length of the
    /// link's flow list, no outside flow crosses the link.
    inset: u32,
    /// The filling (`MaxMin::link_generation`) that took the link up.
    mark: u32,
    /// The link's index in `comp_links`.
    at: u32,
    /// The setup (`MaxMin::touch_generation`) that set the link up last.
    touch: u32,
}

/// A flow whose rate, and so its completion time, changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reschedule {
    pub flow: u32,
    pub end: f64,
}

/// Weighted max-min fair sharing with incremental recomputation.
///
/// After flows start or end, only the *affected* flows are solved again:
/// first the flows that share a link with a changed flow, by progressive
/// filling on the capacity the other flows leave. The result is then checked
/// against the conditions that characterise the max-min allocation uniquely
/// (every link within capacity; every flow at its cap or on a saturated link
/// where its normalised rate is the largest), on every link the affected flows
/// cross. Flows that break a condition join the affected set and the solve is
/// repeated. Flows are coupled only through saturated links, so the affected
/// set stays small unless the network really is coupled; when it grows past
/// half the active flows, all active flows are solved at once.
///
/// A repeated solve sets up again only the links the new flows cross (the
/// others keep the outside load, weight sum and heap entry they had), and
/// skips the outside-load scans and the checks on links no outside flow
/// crosses: the same arithmetic, in the same order, as a solve from scratch.
pub struct MaxMin {
    capacity: Vec<f64>,
    /// Active flows on each link: (flow, index of the link in the flow's
    /// route). Inline up to two, so adding a flow to a quiet link touches one
    /// cache line, not two.
    on_link: Vec<SmallVec<[(u32, u32); 2]>>,
    flows: Vec<Flow>,
    hot: Vec<Hot>,
    /// Links whose flows changed since the last solve, in order: a link a
    /// flow joined (or whose flow's cap changed), or, marked `LEFT`, one a
    /// flow left.
    dirty: Vec<u32>,
    /// Whether a solve starts from the pruned set (see `recompute`).
    pruned: bool,
    /// Active flows (and each one's index in this list).
    active: Vec<u32>,
    active_pos: Vec<u32>,
    // Scratch for recomputation, reused across calls.
    link: Vec<LinkState>,
    link_generation: u32,
    touch_generation: u32,
    generation: u32,
    comp_links: Vec<u32>,
    comp_flows: Vec<u32>,
    /// Each of `comp_links`' first heap entry, in its order.
    entries: Vec<Reverse<u128>>,
    /// Links whose setup the flows that joined the set change.
    touched: Vec<u32>,
    /// The filling's link shares, packed as `key << 32 | link`.
    heap: BinaryHeap<Reverse<u128>>,
    /// The finite caps of the affected flows, `(key(cap / weight), flow)`:
    /// kept out of the heap (they rarely bind), as a lazy minimum.
    caps: Vec<(u64, u32)>,
    #[cfg_attr(not(feature = "counters"), allow(dead_code))]
    counts: Counts,
    /// Statistics: recomputations, flows solved, and solve rounds.
    pub recomputed_flows: u64,
    pub recomputes: u64,
    pub rounds: u64,
    pub full_solves: u64,
    /// Flows whose rate, and so whose end, a recomputation changed.
    pub rescheduled_flows: u64,
}

const NO_BOTTLENECK: u32 = u32::MAX;
/// Marks a link in `dirty` as one a flow left.
const LEFT: u32 = 1 << 31;
const CAP_BOTTLENECK: u32 = u32::MAX - 1;
/// Relative slack in the optimality checks.
const CHECK_TOLERANCE: f64 = 1e-11;

impl MaxMin {
    pub fn new(capacity: Vec<f64>) -> MaxMin {
        let n = capacity.len();
        MaxMin {
            capacity,
            on_link: vec![SmallVec::new(); n],
            flows: Vec::new(),
            hot: Vec::new(),
            dirty: Vec::new(),
            pruned: !FULL_START.with(Cell::get),
            active: Vec::new(),
            active_pos: Vec::new(),
            link: vec![LinkState::default(); n],
            link_generation: 0,
            touch_generation: 0,
            generation: 0,
            comp_links: Vec::new(),
            comp_flows: Vec::new(),
            entries: Vec::new(),
            touched: Vec::new(),
            heap: BinaryHeap::new(),
            caps: Vec::new(),
            counts: Counts::default(),
            recomputed_flows: 0,
            recomputes: 0,
            rounds: 0,
            full_solves: 0,
            rescheduled_flows: 0,
        }
    }

    /// Starts flow `id` (an id the caller manages; ids may be reused once a
    /// flow has ended) at time `now` over `links`.
    pub fn add(&mut self, id: u32, now: f64, links: &[u32], bytes: f64, weight: f64, cap: f64) {
        self.insert(id, now, links, bytes, weight, cap, (0.0, NO_BOTTLENECK));
        self.dirty.extend_from_slice(links);
    }

    /// Whether no flow is active.
    pub fn is_idle(&self) -> bool {
        self.active.is_empty()
    }

    /// The rate and bottleneck that a solve gives a flow of weight 1 and
    /// `cap` that shares none of `links` (each crossed once): the smallest
    /// capacity, the lowest such link being the bottleneck, unless the cap
    /// is lower (the order in which `fill` takes links and caps).
    pub fn alone(&self, links: &[u32], cap: f64) -> (f64, u32) {
        let mut best = (f64::INFINITY, NO_BOTTLENECK);
        for &l in links {
            let c = self.capacity[l as usize];
            if c < best.0 || (c == best.0 && l < best.1) {
                best = (c, l);
            }
        }
        if cap < best.0 {
            (cap, CAP_BOTTLENECK)
        } else {
            best
        }
    }

    /// Enters flow `id`, of weight 1, as a solve left it: started at `since`
    /// with `bytes`, alone on its links since then at the rate and with the
    /// bottleneck of [`MaxMin::alone`]. Its links are not marked changed, so
    /// it is solved again only when a flow joins one of them: the state
    /// `add` and the solves would have left, had the flow been added when it
    /// started.
    pub fn admit(&mut self, id: u32, since: f64, links: &[u32], bytes: f64, cap: f64) {
        let solved = self.alone(links, cap);
        self.insert(id, since, links, bytes, 1.0, cap, solved);
    }

    /// Makes flow `id` active with its (rate, bottleneck) as given.
    #[allow(clippy::too_many_arguments)]
    fn insert(
        &mut self,
        id: u32,
        now: f64,
        links: &[u32],
        bytes: f64,
        weight: f64,
        cap: f64,
        (rate, bottleneck): (f64, u32),
    ) {
        let i = id as usize;
        if i >= self.flows.len() {
            self.flows.resize_with(i + 1, Flow::default);
            self.hot.resize(i + 1, Hot::default());
            self.active_pos.resize(i + 1, 0);
        }
        self.active_pos[i] = self.active.len() as u32;
        self.active.push(id);
        let f = &mut self.flows[i];
        debug_assert!(!f.active, "flow {id} is already active");
        f.links.clear();
        f.links.extend_from_slice(links);
        f.pos.clear();
        for (hop, &l) in links.iter().enumerate() {
            f.pos.push(self.on_link[l as usize].len() as u32);
            self.on_link[l as usize].push((id, hop as u32));
        }
        f.cap = cap;
        f.remaining = bytes;
        f.since = now;
        f.active = true;
        let h = &mut self.hot[i];
        h.weight = weight;
        h.rate = rate;
        h.bottleneck = bottleneck;
    }

    /// Ends flow `id`.
    pub fn remove(&mut self, id: u32) {
        let p = self.active_pos[id as usize] as usize;
        self.active.swap_remove(p);
        if let Some(&moved) = self.active.get(p) {
            self.active_pos[moved as usize] = p as u32;
        }
        self.flows[id as usize].active = false;
        // A route may cross a link more than once (a folded run's routes do,
        // see `sim::fold`), so the entry moved into a freed place can be this
        // flow's own: positions are read from the flow as they change.
        for hop in 0..self.flows[id as usize].links.len() {
            let (l, p) = {
                let f = &self.flows[id as usize];
                (f.links[hop], f.pos[hop])
            };
            let list = &mut self.on_link[l as usize];
            list.swap_remove(p as usize);
            if let Some(&(moved, moved_hop)) = list.get(p as usize) {
                self.flows[moved as usize].pos[moved_hop as usize] = p;
            }
        }
        let f = &mut self.flows[id as usize];
        self.dirty.extend(f.links.iter().map(|&l| l | LEFT));
        f.links.clear();
        f.pos.clear();
    }

    /// The active flows on `link`.
    pub fn flows_on(&self, link: u32) -> impl Iterator<Item = u32> + '_ {
        self.on_link[link as usize].iter().map(|&(f, _)| f)
    }

    /// Changes the cap of active flow `id` (a WAN stream's, as streams join
    /// and leave its link); it and the flows it shares links with are solved
    /// again at the next `recompute`.
    pub fn set_cap(&mut self, id: u32, cap: f64) {
        let f = &mut self.flows[id as usize];
        if f.cap.to_bits() != cap.to_bits() {
            f.cap = cap;
            self.dirty.extend_from_slice(&f.links);
        }
    }

    /// Current rate of a flow (bytes/s).
    pub fn rate(&self, id: u32) -> f64 {
        self.hot[id as usize].rate
    }

    /// Recomputes the rates affected by the flows started or ended since the
    /// last call, and appends to `out` the flows whose completion time changed.
    pub fn recompute(&mut self, now: f64, out: &mut Vec<Reschedule>) {
        if self.dirty.is_empty() {
            return;
        }
        self.generation = self.generation.wrapping_add(1);
        let generation = self.generation;
        // The initial affected set: every flow on a link a flow joined; on a
        // link a flow left, only the flows bottlenecked there (the others
        // are held by another link, which nothing changed). The checks add
        // any other flow whose rate can move.
        self.comp_flows.clear();
        let pruned = self.pruned;
        for &d in &self.dirty {
            let l = d & !LEFT;
            let held_only = pruned && d & LEFT != 0;
            for &(f, _) in &self.on_link[l as usize] {
                let h = &mut self.hot[f as usize];
                if h.mark != generation && (!held_only || h.bottleneck == l) {
                    h.mark = generation;
                    self.comp_flows.push(f);
                }
            }
        }
        self.dirty.clear();
        if self.comp_flows.is_empty() {
            // Flows only left links where no flow was held: every flow keeps
            // its rate, exactly.
            return;
        }
        self.recomputes += 1;
        // Flows of the set whose links are set up for the filling.
        let mut set_up = 0;
        loop {
            self.rounds += 1;
            if self.comp_flows.len() * 2 > self.active.len() {
                // Most flows are affected: solve them all (nothing is left to check).
                self.full_solves += 1;
                self.comp_flows.clear();
                self.comp_flows.extend_from_slice(&self.active);
                for &f in &self.active {
                    self.hot[f as usize].mark = generation;
                }
                self.set_up(true, 0);
                self.fill(true);
                break;
            }
            self.set_up(false, set_up);
            set_up = self.comp_flows.len();
            self.fill(false);
            if !self.expand() {
                break;
            }
        }
        self.recomputed_flows += self.comp_flows.len() as u64;
        count!(self.final_flows += self.comp_flows.len());
        let before = out.len();
        for idx in 0..self.comp_flows.len() {
            let id = self.comp_flows[idx];
            let h = &mut self.hot[id as usize];
            h.bottleneck = h.new_bottleneck;
            let rate = h.new_rate;
            if rate.to_bits() == h.rate.to_bits() {
                continue;
            }
            let old = h.rate;
            h.rate = rate;
            let f = &mut self.flows[id as usize];
            f.remaining = (f.remaining - old * (now - f.since)).max(0.0);
            f.since = now;
            let end = if rate > 0.0 {
                now + f.remaining / rate
            } else {
                f64::INFINITY
            };
            out.push(Reschedule { flow: id, end });
        }
        self.rescheduled_flows += (out.len() - before) as u64;
        count!(self.unchanged += self.comp_flows.len() - (out.len() - before));
    }

    fn in_set(&self, f: u32) -> bool {
        self.hot[f as usize].mark == self.generation
    }

    /// Sets up the links of the affected flows for the filling: on each,
    /// the capacity the other flows (at their current rates) leave, the
    /// affected flows' weight, and its first heap entry. `from`: the flows
    /// of the set (its first ones) whose links are set up already; only the
    /// links the flows after them cross are set up again, as nothing
    /// changed on the others.
    ///
    /// `all`: the affected flows are all the active flows, so no other flow
    /// leaves anything to subtract.
    fn set_up(&mut self, all: bool, from: usize) {
        if from == 0 {
            self.link_generation = self.link_generation.wrapping_add(1);
            self.comp_links.clear();
            self.entries.clear();
            self.caps.clear();
        }
        let lg = self.link_generation;
        self.touch_generation = self.touch_generation.wrapping_add(1);
        let tg = self.touch_generation;
        self.touched.clear();
        for idx in from..self.comp_flows.len() {
            let f = self.comp_flows[idx];
            let w = self.hot[f as usize].weight;
            let fl = &self.flows[f as usize];
            if fl.cap.is_finite() {
                self.caps.push((key(fl.cap / w), f));
            }
            for &l in &fl.links {
                let li = l as usize;
                let ls = &mut self.link[li];
                if ls.mark != lg {
                    ls.mark = lg;
                    ls.at = self.comp_links.len() as u32;
                    ls.wsum0 = 0.0;
                    ls.inset = 0;
                    self.comp_links.push(l);
                    self.entries.push(Reverse(0));
                }
                if ls.touch != tg {
                    ls.touch = tg;
                    self.touched.push(l);
                }
                ls.wsum0 += w;
                ls.inset += 1;
            }
        }
        for k in 0..self.touched.len() {
            let li = self.touched[k] as usize;
            let cap = self.capacity[li];
            let rem0 = if all {
                cap
            } else if self.link[li].inset as usize == self.on_link[li].len() {
                (cap - 0.0).max(0.0)
            } else {
                count!(self.touch_setup += self.on_link[li].len());
                let mut fixed = 0.0;
                for &(h, _) in &self.on_link[li] {
                    if !self.in_set(h) {
                        fixed += self.hot[h as usize].rate;
                    }
                }
                (cap - fixed).max(0.0)
            };
            let ls = &mut self.link[li];
            ls.rem0 = rem0;
            self.entries[ls.at as usize] = Reverse(pack(key(rem0 / ls.wsum0), li as u32));
        }
    }

    /// Progressive filling of the affected flows from their links' setup.
    ///
    /// Freezing flows at the current level never lowers a link's share (each
    /// frozen flow takes at most the share it leaves), so link keys only grow:
    /// a popped key that is stale is pushed back with its current share.
    ///
    /// `all`: the affected flows are all the active flows, so every flow on
    /// their links is affected and nothing needs checking flow by flow.
    fn fill(&mut self, all: bool) {
        for &l in &self.comp_links {
            let ls = &mut self.link[l as usize];
            ls.rem = ls.rem0;
            ls.wsum = ls.wsum0;
            ls.unfrozen = ls.inset;
        }
        for &f in &self.comp_flows {
            self.hot[f as usize].frozen = false;
        }
        // Built in one go (entries are distinct, so the pop order is the
        // same however the heap is built).
        let mut heap = std::mem::take(&mut self.heap).into_vec();
        heap.clear();
        heap.extend_from_slice(&self.entries);
        self.heap = BinaryHeap::from(heap);
        count!(self.passes += 1);
        count!(self.filled += self.comp_flows.len());
        count!(self.pushes += self.entries.len());
        // The smallest cap of an unfrozen flow is `caps[cap_at]` once the
        // caps are sorted; before, `cap_min` is the smallest of them all, a
        // lower bound that is exact until its flow freezes. Caps and links
        // are taken in the order of one heap holding both, a link first on
        // equal keys.
        let mut cap_min = self.caps.iter().copied().min();
        let mut sorted = false;
        let mut cap_at = 0;
        let mut level = 0.0f64;
        // Once every affected flow is frozen, what is left in the heap
        // (caps not reached, links whose flows are all frozen) changes
        // nothing.
        let mut left = self.comp_flows.len();
        while left > 0 {
            if let Some((ck, cf)) = cap_min {
                if self.heap.peek().is_none_or(|e| ck < (e.0 >> 32) as u64) {
                    if self.hot[cf as usize].frozen {
                        if !sorted {
                            self.caps.sort_unstable();
                            sorted = true;
                        }
                        while cap_at < self.caps.len()
                            && self.hot[self.caps[cap_at].1 as usize].frozen
                        {
                            cap_at += 1;
                        }
                        cap_min = self.caps.get(cap_at).copied();
                        continue;
                    }
                    let share = f64::from_bits(ck);
                    level = if share <= level * (1.0 + LEVEL_TOLERANCE) {
                        level
                    } else {
                        share
                    };
                    let cap = self.flows[cf as usize].cap;
                    self.freeze(cf, cap, CAP_BOTTLENECK);
                    left -= 1;
                    continue;
                }
            }
            let Some(Reverse(entry)) = self.heap.pop() else {
                break;
            };
            count!(self.pops += 1);
            let k = (entry >> 32) as u64;
            let li = entry as u32 as usize;
            let ls = &self.link[li];
            if ls.unfrozen == 0 {
                continue;
            }
            let share = (ls.rem / ls.wsum).max(0.0);
            if share > f64::from_bits(k) * (1.0 + LEVEL_TOLERANCE) {
                self.heap.push(Reverse(pack(key(share), li as u32)));
                count!(self.pushes += 1);
                continue;
            }
            let lambda = if share <= level * (1.0 + LEVEL_TOLERANCE) {
                level
            } else {
                share
            };
            level = lambda;
            // Freeze every unfrozen affected flow of this bottleneck at the level.
            count!(self.touch_freeze += self.on_link[li].len());
            for k in 0..self.on_link[li].len() {
                let f = self.on_link[li][k].0;
                let h = &self.hot[f as usize];
                if (all || h.mark == self.generation) && !h.frozen {
                    let rate = lambda * h.weight;
                    self.freeze(f, rate, li as u32);
                    left -= 1;
                }
            }
        }
    }

    fn freeze(&mut self, f: u32, rate: f64, bottleneck: u32) {
        let h = &mut self.hot[f as usize];
        h.frozen = true;
        h.new_rate = rate;
        h.new_bottleneck = bottleneck;
        let w = h.weight;
        count!(self.touch_route += self.flows[f as usize].links.len());
        for &l in &self.flows[f as usize].links {
            let ls = &mut self.link[l as usize];
            ls.rem -= rate;
            ls.wsum -= w;
            ls.unfrozen -= 1;
        }
    }

    /// Checks the max-min conditions on every link the affected flows cross,
    /// against the flows outside the set; adds the flows that break one.
    /// Returns whether the set grew.
    fn expand(&mut self) -> bool {
        let generation = self.generation;
        let before = self.comp_flows.len();
        for k in 0..self.comp_links.len() {
            let l = self.comp_links[k];
            let li = l as usize;
            // No outside flow crosses the link (flows that join the set
            // below only make more of them affected).
            if self.link[li].inset as usize == self.on_link[li].len() {
                continue;
            }
            count!(self.touch_check += self.on_link[li].len());
            let mut load = 0.0;
            let mut outside = false;
            // Largest normalised rate among affected flows on the link, and
            // among those whose bottleneck it is.
            let mut max_in = 0.0f64;
            let mut max_in_bottlenecked = 0.0f64;
            for &(f, _) in &self.on_link[li] {
                let h = &self.hot[f as usize];
                if h.mark == generation {
                    let r = h.new_rate;
                    load += r;
                    let rho = r / h.weight;
                    max_in = max_in.max(rho);
                    if h.new_bottleneck == l {
                        max_in_bottlenecked = max_in_bottlenecked.max(rho);
                    }
                } else {
                    load += h.rate;
                    outside = true;
                }
            }
            if !outside {
                continue;
            }
            count!(self.touch_check += self.on_link[li].len());
            let cap = self.capacity[li];
            let over = load > cap * (1.0 + CHECK_TOLERANCE);
            let tight = load >= cap * (1.0 - CHECK_TOLERANCE);
            for idx in 0..self.on_link[li].len() {
                let hf = self.on_link[li][idx].0;
                let h = &mut self.hot[hf as usize];
                if h.mark == generation {
                    continue;
                }
                let rho = h.rate / h.weight;
                let violated = over
                    // An affected flow bottlenecked here gets less than h.
                    || (tight && max_in_bottlenecked > 0.0 && rho > max_in_bottlenecked * (1.0 + CHECK_TOLERANCE))
                    // h's bottleneck is here but it is no longer saturated, or h is no longer the largest.
                    || (h.bottleneck == l && (!tight || max_in > rho * (1.0 + CHECK_TOLERANCE)))
                    || h.bottleneck == NO_BOTTLENECK;
                if violated {
                    h.mark = generation;
                    self.comp_flows.push(hf);
                }
            }
        }
        self.comp_flows.len() > before
    }
}

#[cfg(feature = "counters")]
impl Drop for MaxMin {
    fn drop(&mut self) {
        let c = &self.counts;
        let n = self.recomputes.max(1) as f64;
        let per = |x: u64| x as f64 / n;
        eprintln!(
            "maxmin counters: {} solves; per solve: {:.2} passes, {:.1} flows filled, \
             {:.1} in the final set ({:.1}% unchanged), link-flow touches {:.0} \
             (outside loads {:.0}, freezes {:.0}, checks {:.0}, route updates {:.0}), \
             heap pushes {:.1}, pops {:.1}",
            self.recomputes,
            per(c.passes),
            per(c.filled),
            per(c.final_flows),
            100.0 * c.unchanged as f64 / c.final_flows.max(1) as f64,
            per(c.touch_setup + c.touch_freeze + c.touch_check + c.touch_route),
            per(c.touch_setup),
            per(c.touch_freeze),
            per(c.touch_check),
            per(c.touch_route),
            per(c.pushes),
            per(c.pops),
        );
    }
}

/// Brute-force weighted max-min by progressive filling over every flow at
/// once, kept deliberately simple: the reference the incremental solver is
/// tested against. `routes[f]` are link indices; returns each flow's rate.
pub fn reference_maxmin(
    capacity: &[f64],
    routes: &[Vec<u32>],
    weights: &[f64],
    caps: &[f64],
) -> Vec<f64> {
    let n = routes.len();
    let mut rate = vec![0.0; n];
    let mut frozen = vec![false; n];
    let mut rem = capacity.to_vec();
    loop {
        // The smallest level any unfrozen flow can reach: a link's fair share or a flow's cap.
        let mut best = f64::INFINITY;
        for (l, &c) in rem.iter().enumerate() {
            let w: f64 = (0..n)
                .filter(|&f| !frozen[f] && routes[f].contains(&(l as u32)))
                .map(|f| weights[f])
                .sum();
            if w > 0.0 {
                best = best.min(c / w);
            }
        }
        for f in 0..n {
            if !frozen[f] {
                best = best.min(caps[f] / weights[f]);
            }
        }
        if !best.is_finite() {
            break;
        }
        // Freeze the flows limited at that level.
        let mut to_freeze = Vec::new();
        for f in 0..n {
            if frozen[f] {
                continue;
            }
            let capped = caps[f] / weights[f] <= best * (1.0 + 1e-12);
            let on_bottleneck = routes[f].iter().any(|&l| {
                let w: f64 = (0..n)
                    .filter(|&g| !frozen[g] && routes[g].contains(&l))
                    .map(|g| weights[g])
                    .sum();
                rem[l as usize] / w <= best * (1.0 + 1e-12)
            });
            if capped || on_bottleneck {
                to_freeze.push(f);
            }
        }
        for f in to_freeze {
            frozen[f] = true;
            rate[f] = (best * weights[f]).min(caps[f]);
            for &l in &routes[f] {
                rem[l as usize] -= rate[f];
            }
        }
        if frozen.iter().all(|&x| x) {
            break;
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(capacity: Vec<f64>, routes: &[Vec<u32>], weights: &[f64], caps: &[f64]) -> Vec<f64> {
        let mut m = MaxMin::new(capacity);
        for (i, r) in routes.iter().enumerate() {
            m.add(i as u32, 0.0, r, 1.0, weights[i], caps[i]);
        }
        let mut out = Vec::new();
        m.recompute(0.0, &mut out);
        (0..routes.len() as u32).map(|f| m.rate(f)).collect()
    }

    #[test]
    fn one_flow_gets_its_bottleneck() {
        let r = solve(
            vec![10.0, 4.0, 7.0],
            &[vec![0, 1, 2]],
            &[1.0],
            &[f64::INFINITY],
        );
        assert_eq!(r, vec![4.0]);
    }

    #[test]
    fn k_equal_flows_share_a_link_equally() {
        for k in 1..20 {
            let routes = vec![vec![0u32]; k];
            let r = solve(vec![3.0], &routes, &vec![1.0; k], &vec![f64::INFINITY; k]);
            for x in r {
                assert!((x - 3.0 / k as f64).abs() <= 1e-9 * 3.0 / k as f64);
            }
        }
    }

    /// The parking lot: one long flow over n links, one short flow on each
    /// link. Max-min gives every flow C/2.
    #[test]
    fn parking_lot() {
        for n in 1..10u32 {
            let mut routes = vec![(0..n).collect::<Vec<u32>>()];
            routes.extend((0..n).map(|l| vec![l]));
            let k = routes.len();
            let r = solve(
                vec![1.0; n as usize],
                &routes,
                &vec![1.0; k],
                &vec![f64::INFINITY; k],
            );
            for x in r {
                assert!((x - 0.5).abs() <= 1e-9 * 0.5, "{x}");
            }
        }
    }

    #[test]
    fn caps_and_weights() {
        // Two flows on one link of 1.0; one capped at 0.2: the other gets 0.8.
        let r = solve(
            vec![1.0],
            &[vec![0], vec![0]],
            &[1.0, 1.0],
            &[0.2, f64::INFINITY],
        );
        assert!((r[0] - 0.2).abs() < 1e-12 && (r[1] - 0.8).abs() < 1e-12);
        // Weights 1 and 2 (a 2-hop and a 1-hop flow under RTT fairness): 1/3 and 2/3.
        let r = solve(
            vec![1.0, 10.0],
            &[vec![0, 1], vec![0]],
            &[1.0, 2.0],
            &[f64::INFINITY; 2],
        );
        assert!((r[0] - 1.0 / 3.0).abs() < 1e-12 && (r[1] - 2.0 / 3.0).abs() < 1e-12);
    }
}
