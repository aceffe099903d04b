//! What a simulation is asked to model and how it is to run: `SimConfig`
//! (the node and network model's parameters, then the switches that choose
//! how the run is driven: trace, folding, the by-rank driver, threads,
//! tiles, progress), the sharing rules and the start skew.

use super::by_rank;
use super::fairshare::SolveStart;
use crate::error::fail;
use crate::error::Result;
use topocoll_base::limits::Deadline;
use topocoll_base::param;

/// How links are shared between flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Sharing {
    #[default]
    MaxMin,
    Reservation,
}

/// How a bottleneck is divided under max-min sharing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fairness {
    /// Every flow gets an equal share.
    #[default]
    Equal,
    /// Shares proportional to 1 / (route latency), as SimGrid's flow models.
    Rtt,
}

/// Per-rank start offsets.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Skew {
    #[default]
    None,
    /// Each rank starts at an offset drawn uniformly from [0, max_s), seeded.
    Random { max_s: f64, seed: u64 },
    /// Rank r starts at offsets[r].
    Fixed(Vec<f64>),
}

/// What a simulation is asked: first the node and network model (what the
/// results depend on), then, from `trace` on, how the run is driven and
/// what it reports besides (the drivers give the same results to rounding
/// whatever these say; `SimResult::run` reports what they did).
#[derive(Clone, Debug)]
pub struct SimConfig {
    // --- The node and network model.
    /// Transfers each node drives at once (NCT, RDMA engines). At least 1.
    pub engines: usize,
    /// Per-message software overhead on the sender's CPU (s).
    pub overhead_s: f64,
    /// Bytes per second a CPU combines; `None`: combines are free.
    pub compute_bandwidth: Option<f64>,
    /// Per-node injection / ejection bandwidth (bytes/s); `None`: unlimited.
    pub injection_bandwidth: Option<f64>,
    pub ejection_bandwidth: Option<f64>,
    pub sharing: Sharing,
    pub fairness: Fairness,
    /// Largest rate of any one flow (bytes/s).
    pub flow_cap: Option<f64>,
    /// TCP window (bytes): caps each flow at window / (2 × route latency).
    pub tcp_window: Option<f64>,
    /// Bytes added to every message on the wire (SimGrid's SMPI adds 16).
    pub header_bytes: u64,
    /// A transfer starts only once its receive is posted (SimGrid's mailbox
    /// matching, MPI rendezvous); otherwise messages are eager.
    pub rendezvous: bool,
    /// SimGrid's flow model over the RTT-weighted shares: its bandwidth and
    /// latency factors, weight-S and cross-traffic (`simgrid`); none: each
    /// flow at its max-min share, its latency its route's.
    pub simgrid: Option<std::sync::Arc<crate::simgrid::SimgridModel>>,
    pub skew: Skew,
    // --- How the run is driven, and what it reports besides.
    /// Record spans for a Chrome trace.
    pub trace: bool,
    /// Simulate one slice of ranks when the run is provably the same on every
    /// translate of a torus (`fold`); the results agree to rounding.
    pub fold: bool,
    /// Where to publish how far the run is, in millionths of its ops
    /// completed (updated about every 65,536 events), for a progress display.
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Run rank by rank (`by_rank`) where no flow shares a link; the results
    /// agree with the event-by-event run to rounding.
    pub by_rank: bool,
    /// Threads for a run rank by rank (each takes a block of ranks; the
    /// result does not depend on how many). At least 1.
    pub threads: usize,
    /// Run rank by rank in planes where the ranks allow it (`by_rank`'s
    /// tiles): the same result bit for bit, with fewer cache misses.
    pub tile: bool,
    /// When an event-by-event run gives up (checked every 65,536 events):
    /// a `time_limit` error naming how far the run came.
    pub deadline: Deadline,
    /// Where max-min solves start ([`SolveStart`]): pruned, or from every
    /// flow on the changed links (the same run to rounding).
    pub solve_start: SolveStart,
    /// A run whose clock passes this many simulated seconds with work left
    /// stops there, with [`Error::PastStop`](crate::error::Error::PastStop):
    /// it would end later. A run that ends at exactly this time ends.
    pub stop_past: Option<f64>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            engines: 1,
            overhead_s: 0.0,
            compute_bandwidth: None,
            injection_bandwidth: None,
            ejection_bandwidth: None,
            sharing: Sharing::MaxMin,
            fairness: Fairness::Equal,
            flow_cap: None,
            tcp_window: None,
            header_bytes: 0,
            rendezvous: false,
            simgrid: None,
            skew: Skew::None,
            trace: false,
            fold: true,
            progress: None,
            by_rank: true,
            threads: 1,
            tile: true,
            deadline: Deadline::NONE,
            solve_start: SolveStart::Pruned,
            stop_past: None,
        }
    }
}

impl SimConfig {
    pub(super) fn check(&self, ranks: usize) -> Result<()> {
        if self.engines == 0 {
            return Err(param!("engines", " must be at least 1"));
        }
        if !(1..=by_rank::MAX_THREADS).contains(&self.threads) {
            return Err(param!(
                "threads",
                " {} must be from 1 to {}",
                self.threads,
                by_rank::MAX_THREADS
            ));
        }
        if self.header_bytes > topocoll_schedule::MAX_BUFFER_BYTES {
            return Err(param!(
                "header_bytes",
                " {} is more than 2^50 bytes",
                self.header_bytes
            ));
        }
        let most = topocoll_topology::MAX_LATENCY;
        if !(self.overhead_s.is_finite() && (0.0..=most).contains(&self.overhead_s)) {
            return Err(param!(
                "overhead",
                " must be from 0 to {most:e} seconds, got {}",
                self.overhead_s
            ));
        }
        for (name, v) in [
            ("compute_bandwidth", self.compute_bandwidth),
            ("injection_bandwidth", self.injection_bandwidth),
            ("ejection_bandwidth", self.ejection_bandwidth),
            ("flow_cap", self.flow_cap),
        ] {
            if let Some(v) = v {
                topocoll_topology::check_bandwidth_param(name, v)?;
            }
        }
        if let Some(w) = self.tcp_window {
            if !(w.is_finite() && (1.0..=topocoll_schedule::MAX_BUFFER_BYTES as f64).contains(&w)) {
                return Err(param!(
                    "tcp_window",
                    " must be from 1 byte to 2^50 bytes, got {w}"
                ));
            }
        }
        if self.simgrid.is_some()
            && (self.fairness != Fairness::Rtt || self.sharing != Sharing::MaxMin)
        {
            return Err(fail!(Sim, Config,
                "SimGrid's flow model weights max-min shares by RTT: it needs --fairness rtt and --sharing maxmin"
            ));
        }
        match &self.skew {
            // Up to 10^9 s (32 years): beyond, the run's own times vanish
            // in the offsets' rounding.
            Skew::Random { max_s, .. } if !(max_s.is_finite() && (0.0..=1e9).contains(max_s)) => {
                Err(param!(
                    "skew",
                    " {max_s:e} must be a non-negative number of seconds, at most 1e9"
                ))
            }
            Skew::Fixed(v) if v.len() != ranks => Err(fail!(
                Sim,
                Config,
                "skew list has {} offsets for {ranks} ranks",
                v.len()
            )),
            Skew::Fixed(v) if v.iter().any(|x| !(x.is_finite() && *x >= 0.0)) => Err(fail!(
                Sim,
                Config,
                "skew offsets must be non-negative seconds"
            )),
            _ => Ok(()),
        }
    }

    /// Each rank's start time.
    pub fn start_offsets(&self, ranks: usize) -> Vec<f64> {
        match &self.skew {
            Skew::None => vec![0.0; ranks],
            // + 0.0 turns a −0.0 into 0.0: event times are ordered by their
            // bits (`queue::RadixQueue`), where −0.0 would come last.
            Skew::Fixed(v) => v.iter().map(|x| x + 0.0).collect(),
            Skew::Random { max_s, seed } => {
                let mut state = *seed;
                (0..ranks)
                    .map(|_| max_s * unit_random(&mut state))
                    .collect()
            }
        }
    }
}

/// SplitMix64 step mapped to [0, 1): deterministic on every platform.
fn unit_random(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}
