//! `fattree:K` and `fattree:K:R`: the three-level fat tree of K-port
//! switches (Al-Fares, Loukissas and Vahdat, SIGCOMM 2008). K pods, each
//! of K/2 edge and K/2 aggregation switches joined all to all; (K/2)²
//! core switches, each joined to one aggregation switch of every pod;
//! K/2 hosts on each edge switch, K³/4 hosts in all. `R` oversubscribes
//! the edge switches R:1: each carries R·K/2 hosts on its K/2 uplinks
//! (R·K³/4 hosts; the switches above are as in `fattree:K`).
//!
//! It is SimGrid's FAT_TREE `3; R·K/2,K/2,K; 1,K/2,K/2; 1,1,1` (the
//! extended generalised fat tree XGFT(3; R·K/2,K/2,K; 1,K/2,K/2), which
//! is the k-ary fat tree), built and routed by `simgrid::fat_tree`, so
//! its routes are SimGrid's d-mod-k ones: up towards the parent that the
//! destination's index picks (at level l, parent (d / ∏ w below l) mod
//! w_l), and down the one way there is.

use super::super::Graph;
use crate::error::fail;
use crate::error::Result;

/// The fat tree `fattree:SHAPE` names (`shape` is `K` or `K:R`).
pub(crate) fn fattree(spec: &str, shape: &str) -> Result<Graph> {
    let names: &[&str] = if shape.contains(':') {
        &["K (ports per switch)", "R (oversubscription)"]
    } else {
        &["K (ports per switch)"]
    };
    let v = super::numbers(spec, shape, ':', names)?;
    let (k, r) = (v[0], v.get(1).copied().unwrap_or(1));
    if k % 2 != 0 {
        return Err(fail!(
            Topology,
            Shape,
            "topology '{spec}': K = {k} ports per switch must be even (half go down, half up)"
        ));
    }
    let half = k / 2;
    let per_edge = r.checked_mul(half).ok_or_else(|| {
        fail!(
            Topology,
            Shape,
            "topology '{spec}': R·K/2 hosts per edge switch is too many"
        )
    })?;
    let hosts = per_edge
        .checked_mul(half)
        .and_then(|x| x.checked_mul(k))
        .ok_or_else(|| {
            fail!(
                Topology,
                Shape,
                "topology '{spec}': R·K³/4 hosts is too many"
            )
        })?;
    let what = format!("topology '{spec}'");
    let params = format!("3;{per_edge},{half},{k};1,{half},{half};1,1,1");
    super::super::simgrid::fat_tree::build(
        &what,
        &params,
        &|i| format!("host-{i}"),
        hosts,
        super::super::DEFAULT_BANDWIDTH,
        super::super::DEFAULT_LATENCY,
        true,
    )
}
