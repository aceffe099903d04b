//! What the multi-lane algorithms share: the grid of sites a request runs
//! on, and how many WAN lanes it crosses with (`--lanes`, or chosen).

use crate::error::Result;
use crate::model::multilane::{self, check_lanes, lane_counts, Layout};
use crate::{Algorithm, Request};
use topocoll_topology::Sites;

/// The grid of sites of the request, or why the algorithm does not apply.
pub fn sites<'a>(req: &Request<'a>, alg: &Algorithm) -> Result<&'a Sites> {
    match req.topology.and_then(|t| t.sites()) {
        Some(s) => Ok(s),
        None => Err(req.unsupported(
            alg,
            "it crosses a grid's WAN: give a topology of kind \"sites\"",
        )),
    }
}

/// Which P `--lanes auto` takes for an algorithm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Choice {
    /// The P that minimises the paper's T_L(P) (scatter and gather).
    CostModel,
    /// The P that carries the most across the WAN, max P·b(P) (bcast and
    /// allgather split the data over the lanes).
    Widest,
}

/// The lanes per remote site: `req.lanes` checked against P_max and the
/// lane table, or the choice of `--lanes auto`.
pub fn count(req: &Request, sites: &Sites, choice: Choice) -> Result<usize> {
    if let Some(p) = req.lanes {
        check_lanes(sites, p)?;
        return Ok(p);
    }
    Ok(match choice {
        Choice::CostModel => {
            let block = (req.count * req.dtype.size()) as f64;
            multilane::p_opt(sites, block, 0.0)
        }
        Choice::Widest => {
            let mut best = (0.0, 1);
            for p in lane_counts(sites) {
                let total = p as f64 * sites.lane_bandwidth(p);
                if total > best.0 {
                    best = (total, p);
                }
            }
            best.1
        }
    })
}

/// The lanes of a multi-lane scatter or gather from the request's root:
/// `--lanes`, or the cost model's P.
pub fn layout(req: &Request, alg: &Algorithm) -> Result<Layout> {
    let sites = sites(req, alg)?;
    let p = count(req, sites, Choice::CostModel)?;
    Ok(Layout::new(sites, root(req), p))
}

/// The one lane per remote site of a single-lane scatter or gather from
/// the request's root.
pub fn single_lane(req: &Request, alg: &Algorithm) -> Result<Layout> {
    Ok(Layout::new(sites(req, alg)?, root(req), 1))
}

fn root(req: &Request) -> usize {
    req.collective.root().unwrap_or(0) as usize
}
