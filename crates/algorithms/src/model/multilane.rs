//! The multi-lane scatter of the grid paper (section 3): which WAN lanes a
//! scatter from a root uses, the paper's cost model T_L(P), and a refined
//! model that follows the algorithm's own order of messages.
//!
//! The scatter (`algorithms::scatter::multilane`) crosses to each remote
//! site over P lanes. Lane j of a remote site carries a run of that site's
//! blocks (runs as even as they can be: ⌈n/P⌉ or ⌊n/P⌋ blocks); its sending
//! representative is a host of the root's site (the root for the first
//! lane), its receiving representative the first host of the run. Step 1:
//! the root hands each other sending representative its lane's blocks over
//! the LAN; step 2: each representative sends its lane's blocks across the
//! WAN as one message; step 3: each receiving representative passes on the
//! blocks of its run, and the root sends the rest of its own site theirs.
//! The gather is the same in reverse.

use crate::error::Result;
use topocoll_base::param;
use topocoll_topology::Sites;

/// One WAN lane: the blocks of ranks `first..first + count` (all in `site`)
/// go from `sender` (a host of the root's site) to `first` across the WAN.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lane {
    pub site: usize,
    pub sender: usize,
    pub first: usize,
    pub count: usize,
}

/// The lanes of a scatter (or gather) from `root` with P lanes to each
/// remote site, and the ranks of the root's site, the root first.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub local: Vec<usize>,
    pub lanes: Vec<Lane>,
}

impl Layout {
    /// Remote sites in order after the root's; lanes P' = min(P, n) to a
    /// site of n hosts (a lane needs a block to carry); the k-th lane over
    /// all sites leaves from the (k mod n_root)-th host of the root's site,
    /// counted from the root.
    pub fn new(sites: &Sites, root: usize, p: usize) -> Layout {
        let offsets = sites.offsets();
        let k = sites.sizes.len();
        let home = sites.site_of(root);
        let n0 = sites.sizes[home];
        let base = offsets[home];
        let local: Vec<usize> = (0..n0).map(|i| base + (root - base + i) % n0).collect();
        let mut lanes = Vec::new();
        for step in 1..k {
            let site = (home + step) % k;
            let n = sites.sizes[site];
            let lanes_here = p.clamp(1, n);
            let mut first = offsets[site];
            for j in 0..lanes_here {
                let count = n / lanes_here + usize::from(j < n % lanes_here);
                lanes.push(Lane {
                    site,
                    sender: local[lanes.len() % n0],
                    first,
                    count,
                });
                first += count;
            }
        }
        Layout { local, lanes }
    }
}

/// P_max = max(n0, n1) (the largest site, for more than two).
pub fn p_max(sites: &Sites) -> usize {
    sites.sizes.iter().copied().max().unwrap_or(1)
}

/// The lane counts the model covers: 1 ≤ P ≤ P_max, and no further than the
/// lane table.
pub fn lane_counts(sites: &Sites) -> std::ops::RangeInclusive<usize> {
    1..=p_max(sites).min(sites.lane_bandwidth.len())
}

/// Checks a lane count asked for against P_max and the lane table.
pub fn check_lanes(sites: &Sites, p: usize) -> Result<()> {
    if p == 0 {
        return Err(param!("lanes", " must be at least 1"));
    }
    let most = p_max(sites);
    if p > most {
        return Err(param!(
            "lanes",
            " {p} is more than P_max = {most}, the largest site's hosts"
        ));
    }
    let listed = sites.lane_bandwidth.len();
    if p > listed {
        return Err(param!(
            "lanes",
            " {p}: the topology's wan_lane_bandwidth lists b(P) only up to P = {listed}"
        ));
    }
    Ok(())
}

/// The paper's T_L(P) = L + x·M/b_L(P) + y·M/B + α, literally:
/// x = ⌊P_max/P⌋ + (P_max mod P), x + y = n0 + n1 − 1 (with more than two
/// sites, the number of hosts less one), M the block per rank in bytes.
pub fn paper(sites: &Sites, block_bytes: f64, alpha: f64, p: usize) -> f64 {
    let pmax = p_max(sites);
    let x = pmax / p + pmax % p;
    let hosts: usize = sites.sizes.iter().sum();
    let y = hosts as f64 - 1.0 - x as f64;
    sites.wan_latency
        + x as f64 * block_bytes / sites.lane_bandwidth(p)
        + y * block_bytes / sites.lan_bandwidth
        + alpha
}

/// The P in [`lane_counts`] that minimises [`paper`] (the smallest on a tie).
pub fn p_opt(sites: &Sites, block_bytes: f64, alpha: f64) -> usize {
    let mut best = (f64::INFINITY, 1);
    for p in lane_counts(sites) {
        let t = paper(sites, block_bytes, alpha, p);
        if t < best.0 {
            best = (t, p);
        }
    }
    best.1
}

/// The refined model: the scatter's critical path in the algorithm's own
/// order, one message at a time per host (as one engine sends them), no
/// LAN link shared, each lane's runs even (⌈n/P⌉), every WAN message at
/// b(P') for the P' lanes into its site (and within the WAN capacity).
/// Counts what overlaps: the other lanes cross while the root still sends,
/// and a receiving representative passes on blocks after its lane lands.
pub fn refined(sites: &Sites, root: usize, block_bytes: f64, alpha: f64, p: usize) -> f64 {
    let layout = Layout::new(sites, root, p);
    let lan_msg =
        |blocks: usize| 2.0 * sites.lan_latency + blocks as f64 * block_bytes / sites.lan_bandwidth;
    let wan_rate = |site: usize| {
        let lanes = p.clamp(1, sites.sizes[site]);
        sites
            .lane_bandwidth(lanes)
            .min(sites.wan_capacity / lanes as f64)
            .min(sites.lan_bandwidth)
    };
    let wan_msg = |lane: &Lane| {
        2.0 * sites.lan_latency
            + sites.wan_latency
            + lane.count as f64 * block_bytes / wan_rate(lane.site)
    };
    let root = layout.local[0];
    let mut end = 0.0f64;
    // Step 1: the root's LAN messages to the other senders, in lane order.
    let mut clock = 0.0;
    let mut ready = vec![0.0; layout.lanes.len()];
    for (i, lane) in layout.lanes.iter().enumerate() {
        if lane.sender != root {
            clock += lan_msg(lane.count);
            ready[i] = clock;
        }
    }
    // Step 2: each sender's lanes, one after another, from when it has them.
    let mut free: std::collections::HashMap<usize, f64> = std::collections::HashMap::new();
    free.insert(root, clock);
    for (i, lane) in layout.lanes.iter().enumerate() {
        let at = free.entry(lane.sender).or_insert(0.0);
        let landed = at.max(ready[i]) + wan_msg(lane);
        *at = landed;
        // Step 3 at the receiving representative.
        end = end.max(landed + (lane.count - 1) as f64 * lan_msg(1));
    }
    // Step 3 at the root: the rest of its own site.
    let root_done = free[&root] + (layout.local.len() - 1) as f64 * lan_msg(1);
    end.max(root_done) + alpha
}

#[cfg(test)]
mod tests {
    use super::*;
    use topocoll_topology::Wan;

    fn grid(sizes: Vec<usize>, table: Vec<f64>) -> Sites {
        Sites::new(
            sizes,
            1e8,
            0.0,
            8e-3,
            Wan::Lanes {
                lane_bandwidth: table,
                capacity: None,
            },
        )
        .unwrap()
    }

    #[test]
    fn layout_spreads_runs_evenly_and_starts_lanes_at_the_root() {
        let s = grid(vec![3, 7], vec![1e6; 7]);
        let l = Layout::new(&s, 1, 3);
        assert_eq!(l.local, vec![1, 2, 0]);
        let runs: Vec<(usize, usize, usize)> = l
            .lanes
            .iter()
            .map(|x| (x.sender, x.first, x.count))
            .collect();
        assert_eq!(runs, vec![(1, 3, 3), (2, 6, 2), (0, 8, 2)]);
        // More lanes than the remote site has hosts: one per host.
        let s = grid(vec![7, 2], vec![1e6; 7]);
        assert_eq!(Layout::new(&s, 0, 5).lanes.len(), 2);
    }

    #[test]
    fn paper_model_follows_the_printed_formula() {
        // 16 + 16 hosts, P = 5: x = 3 + 1 = 4, y = 31 − 4 = 27.
        let s = grid(vec![16, 16], (1..=16).map(|p| 1e6 / p as f64).collect());
        let m = 1000.0;
        let t = paper(&s, m, 0.5, 5);
        let want = 8e-3 + 4.0 * m / (1e6 / 5.0) + 27.0 * m / 1e8 + 0.5;
        assert!((t - want).abs() < 1e-15, "{t} {want}");
        // A flat table favours the most lanes; a table that falls as 1/P, one.
        let flat = grid(vec![16, 16], vec![1e6; 16]);
        assert_eq!(p_opt(&flat, m, 0.0), 16);
        assert_eq!(p_opt(&s, m, 0.0), 1);
    }

    #[test]
    fn lane_checks_name_the_limit() {
        let s = grid(vec![4, 6], vec![1e6; 3]);
        assert!(check_lanes(&s, 3).is_ok());
        let e = check_lanes(&s, 7).unwrap_err().to_string();
        assert!(e.contains("P_max = 6"), "{e}");
        let e = check_lanes(&s, 4).unwrap_err().to_string();
        assert!(e.contains("only up to P = 3"), "{e}");
        assert!(check_lanes(&s, 0).is_err());
        assert_eq!(lane_counts(&s), 1..=3);
    }
}
