//! A send's route on the network: the topology's (route 0), a signed
//! offset's, or an explicit path the schedule names (`Schedule::paths`).
//!
//! The schedule holds paths without knowing the network; here, where both
//! are known, [`check_routes`] proves each send's path is a path of the
//! topology from the sender's node to the receiver's before a run starts,
//! and `topocoll verify --topology` calls it too.

use crate::error::fail;
use crate::error::Result;
use rustc_hash::FxHashMap;
use topocoll_schedule::{Op, OpId, RouteKind, Schedule};
use topocoll_topology::{show_path, LinkId, NodeId, Topology};

/// Checks every send's route number against the schedule's routes, and
/// every path a send names against the topology: a simple path of its
/// links from the sender's node to the receiver's (a half-duplex link
/// crossed either way, a full-duplex one only from its `from` to its
/// `to`). The error is one line naming the rank, the op, the path and the
/// link that breaks it. Route 0 and offset routes are checked as they are
/// routed. A path is checked once for each pair of nodes it is named for.
pub fn check_routes(s: &Schedule, topo: &Topology) -> Result<()> {
    if s.paths.is_empty() {
        return Ok(());
    }
    if topo.num_ranks() != s.ranks {
        return Err(fail!(
            Sim,
            Schedule,
            "the schedule has {} ranks but topology {} has {}",
            s.ranks,
            topo.name,
            topo.num_ranks()
        ));
    }
    let mut seen: FxHashMap<(u32, NodeId, NodeId), ()> = FxHashMap::default();
    for (r, prog) in s.programs.iter().enumerate() {
        for (i, op) in prog.ops.iter().enumerate() {
            let Op::Send { peer, route, .. } = *op else {
                continue;
            };
            match s.route_kind(route) {
                Some(RouteKind::Path(links)) => {
                    if peer as usize >= s.ranks {
                        return Err(fail!(
                            Sim,
                            Schedule,
                            "rank {r} op {i}: peer {peer} is not a rank"
                        ));
                    }
                    let (a, b) = (topo.rank_node[r], topo.rank_node[peer as usize]);
                    if seen.contains_key(&(route, a, b)) {
                        continue;
                    }
                    path_check(topo, links, (r as u32, i as OpId), peer, route)?;
                    seen.insert((route, a, b), ());
                }
                Some(_) => {}
                None => return Err(out_of_range(s, r as u32, i as OpId, route)),
            }
        }
    }
    Ok(())
}

fn out_of_range(s: &Schedule, r: u32, i: OpId, route: u32) -> crate::error::Error {
    fail!(
        Sim,
        Route,
        "rank {r} op {i}: route {route} is not in the schedule's {} offset route(s) and {} path(s)",
        s.offsets.len(),
        s.paths.len()
    )
}

/// Path `links` (route `route`) as the route of op i of rank r to `peer`.
fn path_check(
    topo: &Topology,
    links: &[LinkId],
    (r, i): (u32, OpId),
    peer: u32,
    route: u32,
) -> Result<()> {
    let (a, b) = (topo.rank_node[r as usize], topo.rank_node[peer as usize]);
    match topo.path_fault(a, b, links) {
        None => Ok(()),
        Some(fault) => Err(fail!(
            Sim,
            Route,
            "rank {r} op {i}: route {route} (path {}) to rank {peer}: {fault}",
            show_path(links)
        )),
    }
}

/// Appends to `path` the links of send `i` of rank r to `peer`: the
/// topology's route (`route` 0), the schedule's offset route, which must
/// lead to the peer, or its path (proven by [`check_routes`] before the
/// run starts, so taken as it is here).
pub(crate) fn send_route(
    topo: &Topology,
    s: &Schedule,
    (r, i): (u32, OpId),
    peer: u32,
    route: u32,
    path: &mut Vec<LinkId>,
) -> Result<()> {
    match s.route_kind(route) {
        Some(RouteKind::Default) => {
            let start = path.len();
            topo.route(r as usize, peer as usize, path);
            if path.len() == start {
                // A platform that gives this pair no route (SimGrid stops too).
                if let Some(p) = topo.route_problem(r as usize, peer as usize) {
                    return Err(fail!(
                        Sim,
                        Route,
                        "rank {r} op {i}: no route to rank {peer}: {p}"
                    ));
                }
            }
            Ok(())
        }
        Some(RouteKind::Offset(offset)) => {
            let dest = topo.route_offset(r as usize, offset, path)?;
            if dest != peer as usize {
                return Err(fail!(Sim, Route,
                    "rank {r} op {i}: offset route {offset:?} leads to rank {dest}, not to its peer {peer}"
                ));
            }
            Ok(())
        }
        Some(RouteKind::Path(links)) => {
            path.extend_from_slice(links);
            Ok(())
        }
        None => Err(out_of_range(s, r, i, route)),
    }
}
