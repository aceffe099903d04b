//! Analytical models: closed-form lower bounds and the papers' cost models,
//! held against the simulator.
//!
//! [`lower_bound`] is the entry point: the best bound known for a schedule on
//! a network, in seconds. Two kinds of bound go into it:
//! - bounds on the collective, whatever the algorithm (the all-to-all
//!   bisection and injection bounds of [`alltoall`]);
//! - the link-load bound of the schedule itself ([`link_load`]): with the
//!   routes fixed, a directed link that must carry B bytes at b bytes/s is
//!   busy for at least B/b seconds.
//!
//! All bounds ignore latency and software overhead: they are bandwidth bounds,
//! reached only by large messages.

pub mod alltoall;
pub mod multilane;
pub mod nccl;
pub mod trinaryx3;

use crate::error::fail;
use crate::error::Result;
use topocoll_schedule::{Collective, Op, RouteKind, Schedule};
use topocoll_topology::{show_path, Kind, LinkId, Topology};

/// Bytes a schedule routes across each directed link, and the bound they give.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkLoad {
    /// Bytes per directed link, indexed by link id.
    pub bytes: Vec<u64>,
    /// max over links of bytes / bandwidth, in seconds (0 with no transfer).
    pub seconds: f64,
    /// The link that attains `seconds`, if any byte moves.
    pub busiest: Option<LinkId>,
}

/// Routes every send of `s` on `t` (the default route, or the signed-offset
/// route or path its `route` names) and adds its bytes to every link it
/// crosses. Errors when the schedule and topology disagree on the rank
/// count, or a signed-offset route or path does not exist or does not lead
/// to the send's peer.
pub fn link_load(s: &Schedule, t: &Topology) -> Result<LinkLoad> {
    if s.ranks != t.num_ranks() {
        return Err(fail!(
            Algorithm,
            Model,
            "schedule has {} ranks but topology {} has {}",
            s.ranks,
            t.name,
            t.num_ranks()
        ));
    }
    let mut bytes = vec![0u64; t.links.len()];
    let mut route: Vec<LinkId> = Vec::new();
    let elem = s.elem_bytes();
    for (rank, prog) in s.programs.iter().enumerate() {
        for op in &prog.ops {
            let Op::Send {
                peer,
                region,
                route: id,
                ..
            } = op
            else {
                continue;
            };
            route.clear();
            match s.route_kind(*id) {
                Some(RouteKind::Default) => t.route(rank, *peer as usize, &mut route),
                Some(RouteKind::Offset(off)) => {
                    let to = t.route_offset(rank, off, &mut route)?;
                    if to != *peer as usize {
                        return Err(fail!(Algorithm, Model,
                            "rank {rank}: offset {off:?} leads to rank {to}, but the send goes to rank {peer}"
                        ));
                    }
                }
                Some(RouteKind::Path(links)) => {
                    let (a, b) = (t.rank_node[rank], t.rank_node[*peer as usize]);
                    if let Some(fault) = t.path_fault(a, b, links) {
                        return Err(fail!(
                            Algorithm,
                            Model,
                            "rank {rank}: route {id} (path {}) to rank {peer}: {fault}",
                            show_path(links)
                        ));
                    }
                    route.extend_from_slice(links);
                }
                None => {
                    return Err(fail!(
                        Algorithm,
                        Model,
                        "rank {rank}: route {id} is not in the schedule's offsets and paths"
                    ))
                }
            }
            let n = region.count * elem;
            for &l in &route {
                bytes[l as usize] += n;
            }
        }
    }
    let mut seconds = 0.0;
    let mut busiest = None;
    for (l, &b) in bytes.iter().enumerate() {
        if b == 0 {
            continue;
        }
        let time = b as f64 / t.links[l].bandwidth;
        if time > seconds {
            seconds = time;
            busiest = Some(l as LinkId);
        }
    }
    Ok(LinkLoad {
        bytes,
        seconds,
        busiest,
    })
}

/// The common bandwidth of every link between nodes (bytes/s), when they
/// all have one (links inside nodes, `Topology::place_ranks`, aside).
pub fn uniform_bandwidth(t: &Topology) -> Option<f64> {
    let mut network = t.links.iter().filter(|l| l.from != l.to);
    let first = network.next()?.bandwidth;
    network.all(|l| l.bandwidth == first).then_some(first)
}

/// The collective's own lower bound, in seconds, on `t`: the same for every
/// algorithm, so that times compare by their ratio to it. Bandwidth bounds
/// (latency and overhead aside), each a count of the bytes some node must
/// move over its links (and its injection or ejection bandwidth, when the
/// node model has one), with P ranks, B the block per rank, M the buffer:
/// - alltoall: the bisection bound of the network (grids, Tofu's 6D grid,
///   hypercubes with uniform links) and the injection bound (a node sends
///   and receives B to and from every other rank);
/// - allgather: every rank receives (P−1)·B; gather: the root receives
///   (P−1)·B; scatter: the root sends (P−1)·B;
/// - bcast: the root sends M and every other rank receives M; reduce: the
///   root receives M and every other rank sends M;
/// - allreduce: every rank sends and receives (P−1)/P·M (its contribution to
///   the other ranks' shares of the result, and theirs to its own);
/// - reduce_scatter: every rank sends (P−1)/P·M (its contribution to the
///   other ranks' blocks);
/// - scan and exscan: every rank but the last sends M (rank r+1 needs its
///   data) and every rank but 0 receives M; a barrier moves nothing (0).
///
/// `None` when the network's bandwidth per node cannot bound it (a rank on
/// a node without links).
pub fn collective_bound(
    collective: Collective,
    count: u64,
    elem_bytes: u64,
    t: &Topology,
    injection: Option<f64>,
    ejection: Option<f64>,
) -> Option<f64> {
    sized_bound(collective, count, elem_bytes, None, t, injection, ejection)
}

/// [`collective_bound`] of a schedule's collective, with a v-collective's
/// sizes: every rank must send what its row holds for other ranks and
/// receive what its column holds from them (alltoallv), or send its block
/// and receive every other (allgatherv).
pub fn schedule_collective_bound(
    s: &Schedule,
    t: &Topology,
    injection: Option<f64>,
    ejection: Option<f64>,
) -> Option<f64> {
    sized_bound(
        s.collective,
        s.count,
        s.elem_bytes(),
        s.sizes(),
        t,
        injection,
        ejection,
    )
}

fn sized_bound(
    collective: Collective,
    count: u64,
    elem_bytes: u64,
    sizes: Option<&topocoll_schedule::Sizes>,
    t: &Topology,
    injection: Option<f64>,
    ejection: Option<f64>,
) -> Option<f64> {
    let p = t.num_ranks();
    if p <= 1 {
        return Some(0.0);
    }
    let mut out_bw = vec![0.0f64; t.num_nodes];
    let mut in_bw = vec![0.0f64; t.num_nodes];
    // A link without its reverse is a half-duplex one, carrying both ways.
    let pairs: std::collections::HashSet<(u32, u32)> =
        t.links.iter().map(|l| (l.from, l.to)).collect();
    for l in &t.links {
        out_bw[l.from as usize] += l.bandwidth;
        in_bw[l.to as usize] += l.bandwidth;
        if !pairs.contains(&(l.to, l.from)) {
            out_bw[l.to as usize] += l.bandwidth;
            in_bw[l.from as usize] += l.bandwidth;
        }
    }
    let cap = |bw: f64, node: Option<f64>| node.map_or(bw, |n| bw.min(n));
    let out_of = |r: usize| cap(out_bw[t.rank_node[r] as usize], injection);
    let into = |r: usize| cap(in_bw[t.rank_node[r] as usize], ejection);
    if (0..p).any(|r| out_of(r) <= 0.0 || into(r) <= 0.0) {
        return None;
    }
    let bytes = (count * elem_bytes) as f64;
    let pf = p as f64;
    // The most time any rank needs to send `out(r)` and receive `inn(r)`.
    let worst = |out: &dyn Fn(usize) -> f64, inn: &dyn Fn(usize) -> f64| {
        (0..p)
            .map(|r| (out(r) / out_of(r)).max(inn(r) / into(r)))
            .fold(0.0, f64::max)
    };
    let root = collective.root().unwrap_or(0) as usize;
    let is_root = |r: usize| if r == root { 1.0 } else { 0.0 };
    Some(match collective {
        Collective::Alltoall => {
            let mut best = alltoall::injection(t, bytes);
            // With k ranks on every node, each pair of nodes exchanges k²
            // blocks: the cut bounds of one rank per node, with k² the bytes.
            let mut on = vec![0u64; t.num_nodes];
            for &n in &t.rank_node {
                on[n as usize] += 1;
            }
            let k = on.iter().copied().filter(|&c| c > 0).max().unwrap_or(1);
            let even = t.ranks_placed() && on.iter().all(|&c| c == k);
            if let (Some(bw), true) = (uniform_bandwidth(t), !t.ranks_placed() || even) {
                let b = bytes * (k * k) as f64;
                let cut = match &t.kind {
                    Kind::Grid(g) => alltoall::grid(&g.dims, &g.wrap, b, bw),
                    Kind::Tofu(tofu) => alltoall::grid(&tofu.grid.dims, &tofu.grid.wrap, b, bw),
                    Kind::Hypercube(h) => alltoall::hypercube(h.dim, b, bw),
                    _ => 0.0,
                };
                best = best.max(cut);
            }
            let each = (pf - 1.0) * bytes;
            best.max(worst(&|_| each, &|_| each))
        }
        Collective::Allgather => worst(&|_| 0.0, &|_| (pf - 1.0) * bytes),
        Collective::Gather { .. } => worst(&|_| 0.0, &|r| is_root(r) * (pf - 1.0) * bytes),
        Collective::Scatter { .. } => worst(&|r| is_root(r) * (pf - 1.0) * bytes, &|_| 0.0),
        Collective::Bcast { .. } => worst(&|r| is_root(r) * bytes, &|r| (1.0 - is_root(r)) * bytes),
        Collective::Reduce { .. } => {
            worst(&|r| (1.0 - is_root(r)) * bytes, &|r| is_root(r) * bytes)
        }
        Collective::Allreduce => {
            let share = (pf - 1.0) / pf * bytes;
            worst(&|_| share, &|_| share)
        }
        Collective::ReduceScatter => {
            let share = (pf - 1.0) / pf * bytes;
            worst(&|_| share, &|_| 0.0)
        }
        Collective::Barrier => 0.0,
        // Without its sizes nothing is known of what a v-collective moves.
        Collective::Alltoallv | Collective::Allgatherv => match sizes {
            Some(v) if v.ranks() == p => {
                let e = elem_bytes as f64;
                worst(&|r| v.moved(r).0 as f64 * e, &|r| v.moved(r).1 as f64 * e)
            }
            _ => 0.0,
        },
        // Rank r's own data is needed by rank r+1 (and only ranks below the
        // last hold data another needs); every rank but 0 needs data it
        // does not hold.
        Collective::Scan | Collective::Exscan => {
            worst(&|r| if r + 1 < p { bytes } else { 0.0 }, &|r| {
                if r > 0 {
                    bytes
                } else {
                    0.0
                }
            })
        }
    })
}

/// The best known lower bound, in seconds, on the time `s` takes on `t`: the
/// largest of the schedule's link-load bound and, for an all-to-all, the
/// bisection bound of the network (grids, Tofu's 6D grid, hypercubes, when
/// links are uniform) and the injection bound. `None` when the bound cannot be
/// computed (rank counts differ, or a route is not valid on this topology).
pub fn lower_bound(s: &Schedule, t: &Topology) -> Option<f64> {
    let mut best = link_load(s, t).ok()?.seconds;
    if s.collective == Collective::Alltoall {
        let block = (s.count * s.elem_bytes()) as f64;
        if let Some(bw) = uniform_bandwidth(t) {
            let cut = match &t.kind {
                Kind::Grid(g) => Some(alltoall::grid(&g.dims, &g.wrap, block, bw)),
                Kind::Tofu(tofu) => {
                    Some(alltoall::grid(&tofu.grid.dims, &tofu.grid.wrap, block, bw))
                }
                Kind::Hypercube(h) => Some(alltoall::hypercube(h.dim, block, bw)),
                _ => None,
            };
            best = best.max(cut.unwrap_or(0.0));
        }
        best = best.max(alltoall::injection(t, block));
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{build, Request};
    use topocoll_schedule::{Dtype, ReduceOp};
    use topocoll_topology::parse_spec;

    fn linear(spec: &str, block: u64) -> (Schedule, Topology) {
        let t = parse_spec(spec).unwrap();
        let req = Request::new(
            Collective::Alltoall,
            t.num_ranks(),
            block,
            Dtype::U8,
            ReduceOp::Sum,
            Some(&t),
        )
        .unwrap();
        (build(&crate::alltoall::linear::ALGORITHM, &req).unwrap(), t)
    }

    #[test]
    fn lower_bound_is_at_least_every_part() {
        let (s, t) = linear("torus:4x4", 1000);
        let lb = lower_bound(&s, &t).unwrap();
        // The torus tie rule sends all half-ring blocks +, so the schedule's
        // links carry more than the bisection bound.
        let ll = link_load(&s, &t).unwrap().seconds;
        assert_eq!(lb, ll);
        assert!(ll > alltoall::torus_2d(4, 4, 1000.0, 1e9));
    }

    #[test]
    fn lower_bound_rejects_mismatch() {
        let (s, _) = linear("mesh:3x3", 8);
        let t = parse_spec("mesh:4x4").unwrap();
        assert_eq!(lower_bound(&s, &t), None);
    }
}
