//! The lane count of the multi-lane scatter, found by simulation: the
//! scatter simulated with every P the cost model covers, beside the paper's
//! T_L(P) and the refined model (`model::multilane`).

use crate::error::fail;
use crate::error::Result;
use topocoll_algorithms::model::multilane;
use topocoll_algorithms::Request;
use topocoll_schedule::{Collective, Dtype, ReduceOp};
use topocoll_sim::{SimConfig, SimResult};
use topocoll_topology::Topology;

/// One lane count: the paper's model, the refined model and the simulated
/// multi-lane scatter, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LanePoint {
    pub p: usize,
    pub paper_s: f64,
    pub refined_s: f64,
    pub simulated_s: f64,
}

/// What `topocoll model multilane` reports.
#[derive(Clone, Debug, PartialEq)]
pub struct LaneStudy {
    pub points: Vec<LanePoint>,
    /// The P minimising each: the paper's model, the refined one, the simulation.
    pub p_opt: usize,
    pub p_refined: usize,
    pub p_simulated: usize,
}

impl LaneStudy {
    /// The model's error at the simulation's best P: T_L(P) / simulated − 1.
    pub fn paper_error(&self) -> f64 {
        let at = self.points[self.p_simulated - 1];
        at.paper_s / at.simulated_s - 1.0
    }
}

/// The simulator's setting the models assume: one message at a time per
/// host (one engine), no per-message overhead.
pub fn model_config() -> SimConfig {
    SimConfig {
        engines: 1,
        ..SimConfig::default()
    }
}

/// Every P the model covers, for a scatter of `block_bytes` per rank from
/// `root` on a grid of sites.
pub fn study(
    topo: &Topology,
    root: usize,
    block_bytes: u64,
    alpha: f64,
    cfg: &SimConfig,
) -> Result<LaneStudy> {
    let sites = topo.sites().ok_or_else(|| {
        fail!(
            Optimize,
            Problem,
            "topology {}: the multi-lane model needs a grid of sites (kind = \"sites\")",
            topo.name
        )
    })?;
    let mut points = Vec::new();
    for p in multilane::lane_counts(sites) {
        let simulated_s = simulate_scatter(topo, root, block_bytes, p, cfg)?;
        let m = block_bytes as f64;
        points.push(LanePoint {
            p,
            paper_s: multilane::paper(sites, m, alpha, p),
            refined_s: multilane::refined(sites, root, m, alpha, p),
            simulated_s: simulated_s + alpha,
        });
    }
    let best = |f: fn(&LanePoint) -> f64| {
        points
            .iter()
            .min_by(|a, b| f(a).total_cmp(&f(b)))
            .map_or(1, |x| x.p)
    };
    Ok(LaneStudy {
        p_opt: best(|x| x.paper_s),
        p_refined: best(|x| x.refined_s),
        p_simulated: best(|x| x.simulated_s),
        points,
    })
}

/// The simulated time of `scatter multilane --lanes p` (the `single_lane`
/// scatter is P = 1).
pub fn simulate_scatter(
    topo: &Topology,
    root: usize,
    block_bytes: u64,
    p: usize,
    cfg: &SimConfig,
) -> Result<f64> {
    Ok(run_scatter(topo, root, block_bytes, p, cfg)?.time_s)
}

/// `scatter multilane --lanes p` of `block_bytes` per rank from `root`,
/// simulated (the result, for its links too).
pub fn run_scatter(
    topo: &Topology,
    root: usize,
    block_bytes: u64,
    p: usize,
    cfg: &SimConfig,
) -> Result<SimResult> {
    let mut req = Request::new(
        Collective::Scatter { root: root as u32 },
        topo.num_ranks(),
        block_bytes,
        Dtype::U8,
        ReduceOp::Sum,
        Some(topo),
    )?;
    req.lanes = Some(p);
    let mut priced = crate::price::price(
        &req,
        &topocoll_algorithms::scatter::multilane::ALGORITHM,
        topo,
        std::slice::from_ref(cfg),
        crate::price::Check::Trust,
        crate::price::Build::StreamIfLarge,
    )?;
    Ok(priced.runs.remove(0))
}
