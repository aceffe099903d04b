//! Pricing a request: its schedule built (or generated op by op), verified,
//! simulated under one or more node models, and held against the bounds.
//! The one sequence the command line and every reproduction run.

use crate::error::Result;
use topocoll_algorithms::{pipelined::MAX_MATERIALISED_OPS, Algorithm, Request};
use topocoll_schedule::{OpSource, Schedule};
use topocoll_sim::{simulate, simulate_source, SimConfig, SimResult};
use topocoll_topology::Topology;

/// Whether a written-out schedule is verified before it is priced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Verified before it is simulated.
    Verify,
    /// Simulated as built, unverified (the caller or the corpus has
    /// verified the algorithm on these shapes).
    Trust,
}

/// Whether the schedule is written out or generated as the simulator runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Build {
    /// Generated (an error for an algorithm without a generator).
    Stream,
    /// Generated when the algorithm has a generator.
    PreferStream,
    /// Generated only when written out it would be too large.
    StreamIfLarge,
}

/// A priced request.
pub struct Priced {
    /// The schedule (only its header when generated).
    pub schedule: Schedule,
    pub streamed: bool,
    /// One result per node model asked for, in order.
    pub runs: Vec<SimResult>,
    /// The collective's bound (`model::collective_bound`) under the first
    /// node model's injection and ejection bandwidth.
    pub lower_bound_s: Option<f64>,
    /// The schedule's own link-load bound.
    pub schedule_bound_s: Option<f64>,
}

/// Builds `algorithm` for `req`, verifies it when written out and `check` says so
/// (a generated schedule is checked op by op against its written-out form
/// by the test suite instead), and simulates it under each of `cfgs`.
pub fn price(
    req: &Request,
    algorithm: &'static Algorithm,
    topo: &Topology,
    cfgs: &[SimConfig],
    check: Check,
    build: Build,
) -> Result<Priced> {
    let stream = match build {
        Build::Stream => Some(topocoll_algorithms::build_stream(algorithm, req)?),
        Build::PreferStream => topocoll_algorithms::generator(algorithm, req)?,
        Build::StreamIfLarge => topocoll_algorithms::generator(algorithm, req)?
            .filter(|st| st.num_ops() > MAX_MATERIALISED_OPS),
    };
    match stream {
        Some(st) => {
            let runs = cfgs
                .iter()
                .map(|cfg| simulate_source(&st, topo, cfg))
                .collect::<Result<Vec<_>, topocoll_sim::Error>>()?;
            // The link-load bound from the bytes the simulation moved (the
            // schedule is not there to route again).
            let schedule_bound_s = runs.first().map(|r| {
                r.links
                    .iter()
                    .zip(&topo.links)
                    .map(|(l, link)| l.bytes / link.bandwidth)
                    .fold(0.0, f64::max)
            });
            let lower_bound_s = collective_bound(st.header(), topo, cfgs);
            Ok(Priced {
                schedule: st.into_header(),
                streamed: true,
                runs,
                lower_bound_s,
                schedule_bound_s,
            })
        }
        None => {
            if check == Check::Verify {
                topocoll_schedule::check_ranks_fit(req.ranks)?;
            }
            let s = topocoll_algorithms::build(algorithm, req)?;
            if check == Check::Verify {
                topocoll_schedule::verify(&s)?;
            }
            price_schedule(s, topo, cfgs)
        }
    }
}

/// The collective's bound under the first node model's injection and
/// ejection bandwidth.
fn collective_bound(s: &Schedule, topo: &Topology, cfgs: &[SimConfig]) -> Option<f64> {
    let first = cfgs.first();
    topocoll_algorithms::model::schedule_collective_bound(
        s,
        topo,
        first.and_then(|c| c.injection_bandwidth),
        first.and_then(|c| c.ejection_bandwidth),
    )
}

/// Simulates a written-out schedule (one read from a file, say) under each
/// of `cfgs`; the caller verifies it.
pub fn price_schedule(s: Schedule, topo: &Topology, cfgs: &[SimConfig]) -> Result<Priced> {
    let runs = cfgs
        .iter()
        .map(|cfg| simulate(&s, topo, cfg))
        .collect::<Result<Vec<_>, topocoll_sim::Error>>()?;
    let schedule_bound_s = topocoll_algorithms::model::link_load(&s, topo)
        .ok()
        .map(|l| l.seconds);
    let lower_bound_s = collective_bound(&s, topo, cfgs);
    Ok(Priced {
        schedule: s,
        streamed: false,
        runs,
        lower_bound_s,
        schedule_bound_s,
    })
}
