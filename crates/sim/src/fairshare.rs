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

/// Which flows a solve starts from when flows start or end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SolveStart {
    /// On a link a flow left, only the flows held there (the fast start).
    #[default]
    Pruned,
    /// Every flow on the links whose flows changed: the same allocation up
    /// to rounding, for the tests that measure how far rounding moves a
    /// run.
    Full,
}

/// Adds to a work counter in builds with the `counters` feature; nothing otherwise.
macro_rules! count {
    // The counts borrowed apart from the solver.
    (@ $counts:ident . $field:ident += $n:expr) => {
        #[cfg(feature = "counters")]
        {
            $counts.$field += $n as u64;
        }
    };
    ($self:ident . $field:ident += $n:expr) => {
        #[cfg(feature = "counters")]
        {
            $self.counts.$field += $n as u64;
        }
    };
}

/// `v[i]` without a bounds check, for the solver's inner loops. Every flow
/// id they read (in a link's list, the affected set, the caps) indexes
/// `hot` and `flows`, which `insert` grows before it lists the flow; every
/// link they read is on a route `insert` listed the flow on (a checked
/// index of `on_link`), and `link`, `capacity` and `on_link` have one
/// entry per link.
#[inline(always)]
fn at<T>(v: &[T], i: u32) -> &T {
    debug_assert!((i as usize) < v.len());
    // SAFETY: `i < v.len()`, as above.
    unsafe { v.get_unchecked(i as usize) }
}

/// `&mut v[i]` without a bounds check (see [`at`]).
#[inline(always)]
fn at_mut<T>(v: &mut [T], i: u32) -> &mut T {
    debug_assert!((i as usize) < v.len());
    // SAFETY: `i < v.len()`, as for [`at`].
    unsafe { v.get_unchecked_mut(i as usize) }
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

/// The filling's min-heap of packed link shares, four children a node:
/// half a binary heap's depth, so a pop moves half as many entries, and
/// the smallest of four children is found without branches. Entries are
/// distinct, so the order they come out in is that of any heap.
#[derive(Default)]
struct LinkHeap {
    v: Vec<u128>,
}

impl LinkHeap {
    /// Holds `entries` and nothing else.
    fn build(&mut self, entries: &[u128]) {
        self.v.clear();
        self.v.extend_from_slice(entries);
        let n = self.v.len();
        if n > 1 {
            for i in (0..=(n - 2) / 4).rev() {
                let e = self.v[i];
                self.sift_down(i, e);
            }
        }
    }

    fn peek(&self) -> Option<u128> {
        self.v.first().copied()
    }

    fn push(&mut self, e: u128) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let p = (i - 1) / 4;
            let pe = self.v[p];
            if pe <= e {
                break;
            }
            self.v[i] = pe;
            i = p;
        }
        self.v[i] = e;
    }

    fn pop(&mut self) -> Option<u128> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = self.v[0];
        self.sift_down(0, last);
        Some(top)
    }

    /// Puts `e` in the hole at `i`, or below it where its children are smaller.
    fn sift_down(&mut self, mut i: usize, e: u128) {
        let v = &mut self.v[..];
        let n = v.len();
        loop {
            let c = 4 * i + 1;
            if c + 4 <= n {
                let q = &v[c..c + 4];
                let (m0, x0) = if q[1] < q[0] { (1, q[1]) } else { (0, q[0]) };
                let (m1, x1) = if q[3] < q[2] { (3, q[3]) } else { (2, q[2]) };
                let (m, x) = if x1 < x0 { (m1, x1) } else { (m0, x0) };
                if x >= e {
                    break;
                }
                v[i] = x;
                i = c + m;
            } else {
                if c < n {
                    let (mut m, mut x) = (c, v[c]);
                    for (j, &y) in v.iter().enumerate().take(n).skip(c + 1) {
                        if y < x {
                            (m, x) = (j, y);
                        }
                    }
                    if x < e {
                        v[i] = x;
                        i = m;
                    }
                }
                break;
            }
        }
        v[i] = e;
    }
}

/// A flow's cold state: what only starting, ending and rescheduling read.
#[derive(Clone, Debug, Default)]
struct Flow {
    /// The route, inline so that a pass over flows reads memory in order.
    links: SmallVec<[u32; 24]>,
    /// Position of this flow in each of its links' flow lists (inline for
    /// short routes, which are the ones where a pointer chase shows).
    pos: SmallVec<[u32; 4]>,
    /// What the flow takes of each link per unit of its rate, hop by hop;
    /// empty: 1 on every hop (all but SimGrid's cross-traffic, whose route
    /// back takes 5% of the rate).
    coef: SmallVec<[f64; 4]>,
    /// Largest rate the flow may take (bytes/s), `f64::INFINITY` when uncapped.
    cap: f64,
    /// Bytes left as of `since`.
    remaining: f64,
    since: f64,
    /// The caller's id of the flow in this slot.
    id: u32,
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
    /// The pass (`MaxMin::touch_generation`) in which the link's affected
    /// flows last changed: one joined them, or one took another rate or
    /// bottleneck than the pass before gave it. A link not stirred in a
    /// pass is not checked again: its check would find what it found in
    /// the pass before, which added no flow (a flow added there would have
    /// joined the link's affected flows).
    stirred: u32,
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
    /// Flows by slot: an ended flow's slot is taken by the next flow to
    /// start, so the records of the flows in flight stay few and close
    /// together however many flows a run makes (the caller's ids, its
    /// transfers, index `slot`).
    flows: Vec<Flow>,
    hot: Vec<Hot>,
    /// Each caller's id's slot (`NO_SLOT` when the flow is not active), and
    /// the slots free.
    slot: Vec<u32>,
    free: Vec<u32>,
    /// Links whose flows changed since the last solve, in order: a link a
    /// flow joined (or whose flow's cap changed), or, marked `LEFT`, one a
    /// flow left.
    dirty: Vec<u32>,
    /// The solve's generation at which each `dirty` entry (link, and
    /// whether a flow left it: index 2·link + left) was last walked: a
    /// link many flows joined at once is walked once, not once per flow
    /// (a walk that repeats one adds nothing, so skipping it keeps the
    /// affected set and its order).
    dirty_seen: Vec<u32>,
    /// Whether a solve starts from the pruned set (see `recompute`).
    pruned: bool,
    /// Active flows' slots (and each one's index in this list, by slot).
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
    entries: Vec<u128>,
    /// Links whose setup the flows that joined the set change.
    touched: Vec<u32>,
    /// The filling's link shares, packed as `key << 32 | link`.
    heap: LinkHeap,
    /// The finite caps of the affected flows, `(key(cap / weight), id, slot)`:
    /// kept out of the heap (they rarely bind), as a lazy minimum.
    caps: Vec<(u64, u32, u32)>,
    /// Whether any flow has coefficients (`Flow::coef`): the loops read
    /// them only then.
    scaled: bool,
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
/// The slot of a flow not active.
const NO_SLOT: u32 = u32::MAX;
/// Marks a link in `dirty` as one a flow left.
const LEFT: u32 = 1 << 31;
const CAP_BOTTLENECK: u32 = u32::MAX - 1;
/// Relative slack in the optimality checks.
const CHECK_TOLERANCE: f64 = 1e-11;

impl MaxMin {
    /// A solver over links of `capacity`, starting its solves pruned.
    pub fn new(capacity: Vec<f64>) -> MaxMin {
        MaxMin::with_start(capacity, SolveStart::Pruned)
    }

    /// A solver over links of `capacity` whose solves start as `start` says.
    pub fn with_start(capacity: Vec<f64>, start: SolveStart) -> MaxMin {
        let n = capacity.len();
        MaxMin {
            capacity,
            on_link: vec![SmallVec::new(); n],
            flows: Vec::new(),
            hot: Vec::new(),
            dirty: Vec::new(),
            dirty_seen: vec![u32::MAX; 2 * n],
            pruned: start == SolveStart::Pruned,
            active: Vec::new(),
            active_pos: Vec::new(),
            slot: Vec::new(),
            free: Vec::new(),
            link: vec![LinkState::default(); n],
            link_generation: 0,
            touch_generation: 0,
            generation: 0,
            comp_links: Vec::new(),
            comp_flows: Vec::new(),
            entries: Vec::new(),
            touched: Vec::new(),
            heap: LinkHeap::default(),
            caps: Vec::new(),
            scaled: false,
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

    /// Starts flow `id` as [`MaxMin::add`] does, taking `coef[k]` of link
    /// `links[k]` per unit of its rate (a link may be listed twice, as a
    /// route and the route back through it are).
    #[allow(clippy::too_many_arguments)]
    pub fn add_scaled(
        &mut self,
        id: u32,
        now: f64,
        links: &[u32],
        coef: &[f64],
        bytes: f64,
        weight: f64,
        cap: f64,
    ) {
        debug_assert_eq!(links.len(), coef.len());
        self.add(id, now, links, bytes, weight, cap);
        let s = self.slot[id as usize] as usize;
        self.flows[s].coef.extend_from_slice(coef);
        self.scaled = true;
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
        if id as usize >= self.slot.len() {
            self.slot.resize(id as usize + 1, NO_SLOT);
        }
        debug_assert!(
            self.slot[id as usize] == NO_SLOT,
            "flow {id} is already active"
        );
        let s = match self.free.pop() {
            Some(s) => s,
            None => {
                self.flows.push(Flow::default());
                self.hot.push(Hot::default());
                self.active_pos.push(0);
                (self.flows.len() - 1) as u32
            }
        };
        self.slot[id as usize] = s;
        let i = s as usize;
        self.active_pos[i] = self.active.len() as u32;
        self.active.push(s);
        let f = &mut self.flows[i];
        f.id = id;
        f.coef.clear();
        f.links.clear();
        f.links.extend_from_slice(links);
        f.pos.clear();
        for (hop, &l) in links.iter().enumerate() {
            f.pos.push(self.on_link[l as usize].len() as u32);
            self.on_link[l as usize].push((s, hop as u32));
        }
        f.cap = cap;
        f.remaining = bytes;
        f.since = now;
        let h = &mut self.hot[i];
        h.weight = weight;
        h.rate = rate;
        h.bottleneck = bottleneck;
    }

    /// Ends flow `id`.
    pub fn remove(&mut self, id: u32) {
        let s = std::mem::replace(&mut self.slot[id as usize], NO_SLOT);
        debug_assert!(s != NO_SLOT, "flow {id} is not active");
        self.free.push(s);
        let p = self.active_pos[s as usize] as usize;
        self.active.swap_remove(p);
        if let Some(&moved) = self.active.get(p) {
            self.active_pos[moved as usize] = p as u32;
        }
        // A route may cross a link more than once (a folded run's routes do,
        // see `sim::fold`), so the entry moved into a freed place can be this
        // flow's own: positions are read from the flow as they change.
        for hop in 0..self.flows[s as usize].links.len() {
            let (l, p) = {
                let f = &self.flows[s as usize];
                (f.links[hop], f.pos[hop])
            };
            let list = &mut self.on_link[l as usize];
            list.swap_remove(p as usize);
            if let Some(&(moved, moved_hop)) = list.get(p as usize) {
                self.flows[moved as usize].pos[moved_hop as usize] = p;
            }
        }
        let f = &mut self.flows[s as usize];
        self.dirty.extend(f.links.iter().map(|&l| l | LEFT));
        f.links.clear();
        f.pos.clear();
        f.coef.clear();
    }

    /// The active flows on `link`.
    pub fn flows_on(&self, link: u32) -> impl Iterator<Item = u32> + '_ {
        self.on_link[link as usize]
            .iter()
            .map(|&(s, _)| self.flows[s as usize].id)
    }

    /// Changes the cap of active flow `id` (a WAN stream's, as streams join
    /// and leave its link); it and the flows it shares links with are solved
    /// again at the next `recompute`.
    pub fn set_cap(&mut self, id: u32, cap: f64) {
        let f = &mut self.flows[self.slot[id as usize] as usize];
        if f.cap.to_bits() != cap.to_bits() {
            f.cap = cap;
            self.dirty.extend_from_slice(&f.links);
        }
    }

    /// Changes the weight of active flow `id` (its penalty changed with a
    /// link's latency or bandwidth); solved again at the next `recompute`.
    pub fn set_weight(&mut self, id: u32, weight: f64) {
        let s = self.slot[id as usize] as usize;
        if self.hot[s].weight.to_bits() != weight.to_bits() {
            self.hot[s].weight = weight;
            self.dirty.extend_from_slice(&self.flows[s].links);
        }
    }

    /// Changes link `link`'s capacity (a profile's new bandwidth); its
    /// flows are solved again at the next `recompute`.
    pub fn set_capacity(&mut self, link: u32, capacity: f64) {
        if self.capacity[link as usize].to_bits() != capacity.to_bits() {
            self.capacity[link as usize] = capacity;
            self.dirty.push(link);
        }
    }

    /// Current rate of a flow (bytes/s); 0 for a flow not active.
    pub fn rate(&self, id: u32) -> f64 {
        match self.slot.get(id as usize) {
            Some(&s) if s != NO_SLOT => self.hot[s as usize].rate,
            _ => 0.0,
        }
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
            let seen = &mut self.dirty_seen[2 * l as usize + usize::from(d & LEFT != 0)];
            if *seen == generation {
                continue;
            }
            *seen = generation;
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
            out.push(Reschedule { flow: f.id, end });
        }
        self.rescheduled_flows += (out.len() - before) as u64;
        count!(self.unchanged += self.comp_flows.len() - (out.len() - before));
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
        let generation = self.generation;
        // Borrowed apart (see `expand`).
        let MaxMin {
            ref capacity,
            ref on_link,
            ref flows,
            ref hot,
            ref mut link,
            ref mut comp_links,
            ref comp_flows,
            ref mut entries,
            ref mut touched,
            ref mut caps,
            ref mut counts,
            scaled,
            ..
        } = *self;
        let _ = &counts;
        for &f in &comp_flows[from..] {
            let w = at(hot, f).weight;
            let fl = at(flows, f);
            if fl.cap.is_finite() {
                // Equal caps are taken in the order of the caller's ids.
                caps.push((key(fl.cap / w), fl.id, f));
            }
            for (hop, &l) in fl.links.iter().enumerate() {
                let ls = at_mut(link, l);
                if ls.mark != lg {
                    ls.mark = lg;
                    ls.at = comp_links.len() as u32;
                    ls.wsum0 = 0.0;
                    ls.inset = 0;
                    comp_links.push(l);
                    entries.push(0);
                }
                if ls.touch != tg {
                    ls.touch = tg;
                    ls.stirred = tg;
                    touched.push(l);
                }
                ls.wsum0 += if scaled { w * coef(fl, hop) } else { w };
                ls.inset += 1;
            }
        }
        for &l in touched.iter() {
            let cap = *at(capacity, l);
            let list: &[(u32, u32)] = at(on_link, l).as_slice();
            let rem0 = if all {
                cap
            } else if at(link, l).inset as usize == list.len() {
                (cap - 0.0).max(0.0)
            } else {
                count!(@counts.touch_setup += list.len());
                let mut fixed = 0.0;
                for &(f, hop) in list {
                    let h = at(hot, f);
                    if h.mark != generation {
                        fixed += if scaled {
                            h.rate * coef(at(flows, f), hop as usize)
                        } else {
                            h.rate
                        };
                    }
                }
                (cap - fixed).max(0.0)
            };
            let ls = at_mut(link, l);
            ls.rem0 = rem0;
            *at_mut(entries, ls.at) = pack(key(rem0 / ls.wsum0), l);
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
            let ls = at_mut(&mut self.link, l);
            ls.rem = ls.rem0;
            ls.wsum = ls.wsum0;
            ls.unfrozen = ls.inset;
        }
        for &f in &self.comp_flows {
            at_mut(&mut self.hot, f).frozen = false;
        }
        // Built in one go (entries are distinct, so the pop order is the
        // same however the heap is built).
        self.heap.build(&self.entries);
        count!(self.passes += 1);
        count!(self.filled += self.comp_flows.len());
        count!(self.pushes += self.entries.len());
        let generation = self.generation;
        let pass = self.touch_generation;
        // Borrowed apart (see `expand`).
        let MaxMin {
            ref on_link,
            ref flows,
            ref mut hot,
            ref mut link,
            ref mut heap,
            ref mut caps,
            ref comp_flows,
            ref mut counts,
            ..
        } = *self;
        let _ = &counts;
        // The smallest cap of an unfrozen flow is `caps[cap_at]` once the
        // caps are sorted; before, `cap_min` is the smallest of them all, a
        // lower bound that is exact until its flow freezes. Caps and links
        // are taken in the order of one heap holding both, a link first on
        // equal keys.
        let mut cap_min = caps.iter().copied().min();
        let mut sorted = false;
        let mut cap_at = 0;
        let mut level = 0.0f64;
        // Once every affected flow is frozen, what is left in the heap
        // (caps not reached, links whose flows are all frozen) changes
        // nothing.
        let mut left = comp_flows.len();
        while left > 0 {
            if let Some((ck, _, cf)) = cap_min {
                if heap.peek().is_none_or(|e| ck < (e >> 32) as u64) {
                    if at(hot, cf).frozen {
                        if !sorted {
                            caps.sort_unstable();
                            sorted = true;
                        }
                        while cap_at < caps.len() && at(hot, caps[cap_at].2).frozen {
                            cap_at += 1;
                        }
                        cap_min = caps.get(cap_at).copied();
                        continue;
                    }
                    let share = f64::from_bits(ck);
                    level = if share <= level * (1.0 + LEVEL_TOLERANCE) {
                        level
                    } else {
                        share
                    };
                    let cap = at(flows, cf).cap;
                    freeze(hot, link, flows, cf, cap, CAP_BOTTLENECK, pass);
                    count!(@counts.touch_route += at(flows, cf).links.len());
                    left -= 1;
                    continue;
                }
            }
            let Some(entry) = heap.pop() else {
                break;
            };
            count!(@counts.pops += 1);
            let k = (entry >> 32) as u64;
            let l = entry as u32;
            let ls = at(link, l);
            if ls.unfrozen == 0 {
                continue;
            }
            let share = (ls.rem / ls.wsum).max(0.0);
            if share > f64::from_bits(k) * (1.0 + LEVEL_TOLERANCE) {
                heap.push(pack(key(share), l));
                count!(@counts.pushes += 1);
                continue;
            }
            let lambda = if share <= level * (1.0 + LEVEL_TOLERANCE) {
                level
            } else {
                share
            };
            level = lambda;
            // Freeze every unfrozen affected flow of this bottleneck at the level.
            let list: &[(u32, u32)] = at(on_link, l).as_slice();
            count!(@counts.touch_freeze += list.len());
            for &(f, _) in list {
                let h = at(hot, f);
                if (all || h.mark == generation) && !h.frozen {
                    let rate = lambda * h.weight;
                    freeze(hot, link, flows, f, rate, l, pass);
                    count!(@counts.touch_route += at(flows, f).links.len());
                    left -= 1;
                }
            }
        }
    }

    /// Checks the max-min conditions on every link the affected flows cross,
    /// against the flows outside the set; adds the flows that break one.
    /// Returns whether the set grew.
    fn expand(&mut self) -> bool {
        let generation = self.generation;
        let pass = self.touch_generation;
        let before = self.comp_flows.len();
        // Borrowed apart, so that a push to the set does not make the
        // compiler read the lists and records again.
        let MaxMin {
            ref capacity,
            ref on_link,
            ref mut hot,
            ref link,
            ref comp_links,
            ref mut comp_flows,
            ref flows,
            ref mut counts,
            scaled,
            ..
        } = *self;
        let _ = &counts;
        for &l in comp_links {
            let ls = at(link, l);
            // Nothing changed on the link since its last check, which
            // added no flow (see `LinkState::stirred`).
            if ls.stirred != pass {
                continue;
            }
            let list: &[(u32, u32)] = at(on_link, l).as_slice();
            // No outside flow crosses the link (flows that join the set
            // below only make more of them affected).
            if ls.inset as usize == list.len() {
                continue;
            }
            count!(@counts.touch_check += list.len());
            let mut load = 0.0;
            let mut outside = false;
            // Largest normalised rate among affected flows on the link, and
            // among those whose bottleneck it is.
            let mut max_in = 0.0f64;
            let mut max_in_bottlenecked = 0.0f64;
            for &(f, hop) in list {
                let h = at(hot, f);
                let c = if scaled {
                    coef(at(flows, f), hop as usize)
                } else {
                    1.0
                };
                if h.mark == generation {
                    let r = h.new_rate;
                    load += r * c;
                    let rho = r / h.weight;
                    max_in = max_in.max(rho);
                    if h.new_bottleneck == l {
                        max_in_bottlenecked = max_in_bottlenecked.max(rho);
                    }
                } else {
                    load += h.rate * c;
                    outside = true;
                }
            }
            if !outside {
                continue;
            }
            count!(@counts.touch_check += list.len());
            let cap = *at(capacity, l);
            let over = load > cap * (1.0 + CHECK_TOLERANCE);
            let tight = load >= cap * (1.0 - CHECK_TOLERANCE);
            let bound = max_in_bottlenecked * (1.0 + CHECK_TOLERANCE);
            let some_held = tight & (max_in_bottlenecked > 0.0);
            for &(hf, _) in list {
                let h = at_mut(hot, hf);
                if h.mark == generation {
                    continue;
                }
                let rho = h.rate / h.weight;
                // Every condition evaluated, joined without branches: the
                // flows that break one are few.
                let here = h.bottleneck == l;
                let violated = over
                    // An affected flow bottlenecked here gets less than h.
                    | (some_held & (rho > bound))
                    // h's bottleneck is here but it is no longer saturated, or h is no longer the largest.
                    | (here & (!tight | (max_in > rho * (1.0 + CHECK_TOLERANCE))))
                    | (h.bottleneck == NO_BOTTLENECK);
                if violated {
                    h.mark = generation;
                    comp_flows.push(hf);
                }
            }
        }
        self.comp_flows.len() > before
    }
}

/// Freezes flow `f` at `rate`, held by `bottleneck`: its links lose its
/// rate and weight, and are stirred in `pass` if the pass before gave the
/// flow another rate or bottleneck.
#[inline(always)]
fn freeze(
    hot: &mut [Hot],
    link: &mut [LinkState],
    flows: &[Flow],
    f: u32,
    rate: f64,
    bottleneck: u32,
    pass: u32,
) {
    let h = at_mut(hot, f);
    h.frozen = true;
    let moved = h.new_rate.to_bits() != rate.to_bits() || h.new_bottleneck != bottleneck;
    h.new_rate = rate;
    h.new_bottleneck = bottleneck;
    let w = h.weight;
    let fl = at(flows, f);
    for (hop, &l) in fl.links.iter().enumerate() {
        let c = coef(fl, hop);
        let ls = at_mut(link, l);
        ls.rem -= rate * c;
        ls.wsum -= w * c;
        ls.unfrozen -= 1;
        if moved {
            ls.stirred = pass;
        }
    }
}

/// What flow `f` takes of its hop `hop`'s link per unit of its rate.
#[inline(always)]
fn coef(f: &Flow, hop: usize) -> f64 {
    f.coef.get(hop).copied().unwrap_or(1.0)
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

    /// The heap gives back what it was built with and what was pushed, in
    /// order, when pushes come at or above the last entry taken (as the
    /// filling's do), for every size up to a few levels.
    #[test]
    fn the_link_heap_gives_its_entries_in_order() {
        let mut x: u64 = 7;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 44
        };
        for n in 0..90u32 {
            let entries: Vec<u128> = (0..n).map(|l| pack(next(), l)).collect();
            let mut h = LinkHeap::default();
            h.build(&entries);
            let mut all = entries.clone();
            let mut got = Vec::new();
            while let Some(e) = h.pop() {
                if got.len() % 3 == 1 && all.len() < 2 * n as usize {
                    let again = pack((e >> 32) as u64 + 1 + next() % 5, e as u32);
                    h.push(again);
                    all.push(again);
                }
                got.push(e);
            }
            all.sort_unstable();
            assert_eq!(got, all, "{n} entries");
        }
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

    /// A flow that takes 5% of its rate on a link (a route back under
    /// cross-traffic) is counted at 5% there: with one flow of the link's
    /// own, the two fill it at one level, 1 / 1.05; held elsewhere at 0.5,
    /// it leaves the other 1 − 0.025. Solved at once or one flow after the
    /// other, the same rates.
    #[test]
    fn a_flows_coefficient_is_what_it_takes_of_a_link() {
        for (b_link, want_a, want_b) in [(1.0, 1.0 / 1.05, 1.0 / 1.05), (0.5, 0.975, 0.5)] {
            for together in [true, false] {
                let mut m = MaxMin::new(vec![1.0, b_link]);
                let mut out = Vec::new();
                m.add(0, 0.0, &[0], 1.0, 1.0, f64::INFINITY);
                if !together {
                    m.recompute(0.0, &mut out);
                    assert_eq!(m.rate(0), 1.0);
                }
                m.add_scaled(1, 0.0, &[1, 0], &[1.0, 0.05], 1.0, 1.0, f64::INFINITY);
                m.recompute(0.0, &mut out);
                let (a, b) = (m.rate(0), m.rate(1));
                assert!(
                    (a - want_a).abs() < 1e-12 && (b - want_b).abs() < 1e-12,
                    "{a} {b}"
                );
                m.remove(1);
                m.recompute(0.0, &mut out);
                assert_eq!(m.rate(0), 1.0);
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
