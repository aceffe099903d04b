//! The best schedule for a network: spanning trees packed into its links
//! ([`pack`]), pipelined in chunks, priced by the simulator beside every
//! built-in algorithm, with the cut bound ([`crate::cut`]) as the
//! certificate of how far from the best any schedule can be.
//!
//! What is synthesised, per collective:
//! - bcast: out-trees from the root, the buffer split between them by
//!   their packed rates, each part pipelined in chunks down its tree;
//! - reduce: in-trees to the root, the same reversed;
//! - allreduce: trees that reduce up and broadcast down, both at once;
//! - allgather: out-trees from every rank, packed together (each rank's
//!   block split between its own trees);
//! - reduce_scatter: the allgather's schedule reversed
//!   (`schedule::reverse`).
//!
//! The chunk count is chosen per size by simulating each of a few and
//! keeping the fastest; `optimize` keeps a built-in algorithm where one is
//! faster, so it is never slower than the best of them.

pub mod pack;

use crate::cut::{cut_bound, CutBound};
use pack::{Arborescence, Edge, Packing};
use topocoll_core::algorithms::pipelined::Pipeline;
use topocoll_core::algorithms::trees::{Tree, NO_AXIS, NO_PARENT};
use topocoll_core::algorithms::{self, Request};
use topocoll_core::error::Result;
use topocoll_core::invalid;
use topocoll_core::schedule::{self, Buf, Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll_core::topology::Topology;
use topocoll_sim::{simulate, SimConfig};

/// Most trees a root's data is split between (more trees pay less than
/// their ops cost).
const MAX_TREES: usize = 8;
/// Equal shares a root's data is cut into, apportioned between its trees.
const UNITS: usize = 16;
/// Growth of a link's length per unit of load (the packing's ε): 0.1
/// reaches 96% of the optimum packing on tori and hypercubes in 100
/// rounds (docs/PERFORMANCE.md).
const EPS: f64 = 0.1;
/// Rounds of the packing (one tree per root per round), fewer on large
/// networks (each round costs a least arborescence per root).
fn rounds(roots: usize, edges: usize) -> usize {
    (2e8 / (roots as f64 * edges as f64 * 8.0)).clamp(8.0, 100.0) as usize
}
/// Most operations a synthesised schedule may hold.
const MAX_OPS: u64 = 1 << 23;

/// What `optimize` asks for.
#[derive(Clone, Debug)]
pub struct Problem<'a> {
    pub topo: &'a Topology,
    pub collective: Collective,
    /// As `simulate --size` reads it.
    pub size_bytes: u64,
    pub dtype: Dtype,
    pub op: ReduceOp,
    pub cfg: SimConfig,
}

/// A candidate's simulated time.
#[derive(Clone, Debug, PartialEq)]
pub struct Priced {
    /// `synthesized`, or a built-in algorithm's name.
    pub algorithm: String,
    pub time_s: f64,
    pub trees: usize,
    pub chunks: u64,
}

/// What `optimize` found.
#[derive(Clone, Debug)]
pub struct Optimized {
    /// The fastest schedule, ready to write out.
    pub schedule: Schedule,
    pub best: Priced,
    pub cut: CutBound,
    /// Every candidate priced, fastest first.
    pub candidates: Vec<Priced>,
    /// Wall time of the search alone ([`crate::timed`]: the cut bound,
    /// packing, building and pricing the candidates; not reading the
    /// network).
    pub solve_s: f64,
}

/// The fastest schedule of `p`'s collective on its network among the
/// synthesised ones and the built-in algorithms.
pub fn optimize(p: &Problem) -> Result<Optimized> {
    let (found, solve_s) = crate::timed(|| search(p));
    Ok(Optimized { solve_s, ..found? })
}

/// [`optimize`], untimed.
fn search(p: &Problem) -> Result<Optimized> {
    let cut = cut_bound(p.topo, p.collective, p.size_bytes)?;
    let req = Request::new(
        p.collective,
        p.topo.num_ranks(),
        p.size_bytes,
        p.dtype,
        p.op,
        Some(p.topo),
    )?;
    let mut best: Option<(Priced, Schedule)> = None;
    let mut candidates = Vec::new();
    let mut consider = |priced: Priced, s: Schedule, best: &mut Option<(Priced, Schedule)>| {
        candidates.push(priced.clone());
        if best.as_ref().is_none_or(|(b, _)| priced.time_s < b.time_s) {
            *best = Some((priced, s));
        }
    };
    for alg in algorithms::of(p.collective.kind()) {
        if alg.check(&req).is_err() {
            continue;
        }
        let Ok(s) = (alg.build)(&req) else { continue };
        let time_s = simulate(&s, p.topo, &p.cfg)?.time_s;
        consider(
            Priced {
                algorithm: alg.name.to_string(),
                time_s,
                trees: 0,
                chunks: 0,
            },
            s,
            &mut best,
        );
    }
    if let Some(packing) = packing_for(p)? {
        for chunks in [1u64, 2, 4, 8, 16, 32, 64] {
            let Some(s) = synthesize(p, &req, &packing, chunks)? else {
                break;
            };
            let time_s = simulate(&s, p.topo, &p.cfg)?.time_s;
            consider(
                Priced {
                    algorithm: "synthesized".into(),
                    time_s,
                    trees: packing.1.trees.iter().map(Vec::len).max().unwrap_or(0),
                    chunks,
                },
                s,
                &mut best,
            );
        }
    }
    let Some((best, schedule)) = best else {
        return Err(invalid!(
            "no schedule of {} applies on {}",
            p.collective.name(),
            p.topo.describe()
        ));
    };
    candidates.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    Ok(Optimized {
        schedule,
        best,
        cut,
        candidates,
        solve_s: 0.0,
    })
}

/// How tree edges use routes.
#[derive(Clone, Copy, PartialEq)]
enum Use {
    /// Data flows down the tree (parent to child).
    Down,
    /// Data flows up (child to parent).
    Up,
    /// Both (allreduce: reduce up, broadcast down).
    Both,
}

/// The candidate edges with the links each uses, and the packing.
type Packed = (Vec<Edge>, Packing);

fn packing_for(p: &Problem) -> Result<Option<Packed>> {
    let n = p.topo.num_ranks();
    if n < 2 {
        return Ok(None);
    }
    let (roots, usage): (Vec<usize>, Use) = match p.collective {
        Collective::Bcast { root } => (vec![root as usize], Use::Down),
        Collective::Reduce { root } => (vec![root as usize], Use::Up),
        Collective::Allreduce => (vec![0], Use::Both),
        Collective::Allgather | Collective::ReduceScatter => ((0..n).collect(), Use::Down),
        _ => return Ok(None),
    };
    let mut edges = pack::edges(p.topo);
    if usage != Use::Down {
        let mut back = Vec::new();
        for e in edges.iter_mut() {
            back.clear();
            p.topo.route(e.to as usize, e.from as usize, &mut back);
            match usage {
                Use::Up => e.links.clone_from(&back),
                Use::Both => e.links.extend_from_slice(&back),
                Use::Down => {}
            }
        }
    }
    let mut packing = pack::pack(
        p.topo,
        &edges,
        &roots,
        rounds(roots.len(), edges.len()),
        EPS,
    )?;
    for trees in packing.trees.iter_mut() {
        trees.sort_by(|a, b| b.1.total_cmp(&a.1));
        trees.truncate(MAX_TREES);
    }
    Ok(Some((edges, packing)))
}

/// Parent pointers of an arborescence.
fn tree_of(root: usize, a: &Arborescence, edges: &[Edge]) -> Result<Tree> {
    let parent: Vec<u32> = a
        .iter()
        .map(|&e| {
            if e == usize::MAX {
                NO_PARENT
            } else {
                edges[e].from
            }
        })
        .collect();
    let axis = vec![NO_AXIS; parent.len()];
    Tree::from_parents(root as u32, parent, axis)
}

/// `units` equal shares apportioned between trees by their weights
/// (largest remainders): the trees' share counts, zero for trees left out.
/// Each share then runs as a tree of its own, so that where shares of two
/// trees cross one link, max-min sharing (equal per flow) gives each tree
/// the rate the packing planned for it.
fn apportion(weights: &[f64], units: usize) -> Vec<usize> {
    let total: f64 = weights.iter().sum();
    let exact: Vec<f64> = weights.iter().map(|w| units as f64 * w / total).collect();
    let mut shares: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let given: usize = shares.iter().sum();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().take(units - given) {
        shares[i] += 1;
    }
    shares
}

/// The rooted pipeline of one root's trees over `count` elements.
fn pipeline(
    root: usize,
    trees: &[(Arborescence, f64)],
    edges: &[Edge],
    count: u64,
    chunks: u64,
    reduce: bool,
    bcast: bool,
) -> Result<Pipeline> {
    let weights: Vec<f64> = trees.iter().map(|t| t.1).collect();
    let mut ts = Vec::new();
    for (i, &k) in apportion(&weights, UNITS).iter().enumerate() {
        for _ in 0..k {
            ts.push(tree_of(root, &trees[i].0, edges)?);
        }
    }
    let ps = Pipeline::split(count, ts.len());
    let largest = ps.iter().map(|x| x.1).max().unwrap_or(0);
    let seg = largest.div_ceil(chunks).max(1);
    Pipeline::new(ts, ps, seg, reduce, bcast)
}

/// The synthesised schedule with `chunks` chunks a tree part, or `None`
/// when it would be too large.
fn synthesize(
    p: &Problem,
    req: &Request,
    packed: &Packed,
    chunks: u64,
) -> Result<Option<Schedule>> {
    let (edges, packing) = packed;
    let n = p.topo.num_ranks();
    let mut s = req.schedule("synthesized");
    let rooted = |root: usize, reduce: bool, bcast: bool, s: &mut Schedule| -> Result<bool> {
        let pl = pipeline(
            root,
            &packing.trees[0],
            edges,
            s.count,
            chunks,
            reduce,
            bcast,
        )?;
        if pl.total_ops() > MAX_OPS {
            return Ok(false);
        }
        pl.materialise(s)?;
        Ok(true)
    };
    match p.collective {
        Collective::Bcast { root } => {
            if !rooted(root as usize, false, true, &mut s)? {
                return Ok(None);
            }
        }
        Collective::Reduce { root } => {
            if !rooted(root as usize, true, false, &mut s)? {
                return Ok(None);
            }
        }
        Collective::Allreduce => {
            if !rooted(0, true, true, &mut s)? {
                return Ok(None);
            }
        }
        Collective::Allgather => {
            if !allgather(&mut s, n, packed, chunks)? {
                return Ok(None);
            }
        }
        Collective::ReduceScatter => {
            // An allgather of one chunk a rank, reversed; the reversal maps
            // whole blocks onto chunks, so the chunks must be equal (the
            // built-in algorithms serve the other counts).
            if !s.count.is_multiple_of(n as u64) {
                return Ok(None);
            }
            let block = s.count / n as u64;
            let mut ag = Schedule::new(
                Collective::Allgather,
                n,
                block,
                s.dtype,
                s.op,
                "synthesized",
            );
            if !allgather(&mut ag, n, packed, chunks)? {
                return Ok(None);
            }
            s = schedule::reverse(&ag, s)?;
        }
        _ => return Ok(None),
    }
    Ok(Some(s))
}

/// Every rank's block broadcast down its own trees, into its place in
/// every rank's output: one rooted pipeline per rank, their ops laid side
/// by side (tags and regions moved apart).
fn allgather(s: &mut Schedule, n: usize, packed: &Packed, chunks: u64) -> Result<bool> {
    let (edges, packing) = packed;
    let m = s.count;
    let mut tag_base: u64 = 0;
    let mut total_ops: u64 = 0;
    for root in 0..n {
        let pl = pipeline(root, &packing.trees[root], edges, m, chunks, false, true)?;
        total_ops += pl.total_ops();
        if total_ops > MAX_OPS {
            return Ok(false);
        }
        let mut b = Schedule::new(
            Collective::Bcast { root: root as u32 },
            n,
            m,
            s.dtype,
            s.op,
            "",
        );
        pl.materialise(&mut b)?;
        let mut span = 0u64;
        for r in 0..n {
            let prog = &b.programs[r];
            let base = s.programs[r].len() as u32;
            let own = if r == root {
                Some(s.programs[r].push(
                    Op::copy(Region::input(0, m), Region::output(root as u64 * m, m)),
                    &[],
                ))
            } else {
                None
            };
            let shift = base + u32::from(own.is_some());
            for i in 0..prog.len() {
                let moved = |reg: Region| match reg.buf {
                    Buf::Output => {
                        Region::new(Buf::Output, root as u64 * m + reg.offset, reg.count)
                    }
                    _ => reg,
                };
                let retag = |t: u32, span: &mut u64| {
                    *span = (*span).max(t as u64 + 1);
                    tag_base + t as u64
                };
                let op = match prog.ops[i] {
                    Op::Send {
                        peer,
                        tag,
                        region,
                        route,
                    } => Op::send_routed(
                        peer,
                        checked_tag(retag(tag, &mut span))?,
                        moved(region),
                        route,
                    ),
                    Op::Recv {
                        peer,
                        tag,
                        region,
                        combine,
                    } => Op::Recv {
                        peer,
                        tag: checked_tag(retag(tag, &mut span))?,
                        region: moved(region),
                        combine,
                    },
                    other => other,
                };
                let mut deps: Vec<u32> = prog.deps(i).iter().map(|&d| d + shift).collect();
                if deps.is_empty() {
                    deps.extend(own);
                }
                s.programs[r].push(op, &deps);
            }
        }
        tag_base += span;
    }
    Ok(true)
}

fn checked_tag(t: u64) -> Result<u32> {
    u32::try_from(t).map_err(|_| invalid!("the synthesised allgather needs more than 2^32 tags"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use topocoll_core::topology::parse_spec;

    fn problem(t: &Topology, c: Collective, size: u64) -> Problem<'_> {
        Problem {
            topo: t,
            collective: c,
            size_bytes: size,
            dtype: if c.is_reduction() {
                Dtype::F64
            } else {
                Dtype::U8
            },
            op: ReduceOp::Sum,
            cfg: SimConfig {
                engines: 8,
                ..SimConfig::default()
            },
        }
    }

    #[test]
    fn synthesized_schedules_verify() {
        for spec in ["torus:3x3", "mesh:2x3", "hypercube:3"] {
            let t = parse_spec(spec).unwrap();
            for c in [
                Collective::Bcast { root: 1 },
                Collective::Reduce { root: 2 },
                Collective::Allreduce,
                Collective::Allgather,
                Collective::ReduceScatter,
            ] {
                let p = problem(&t, c, 8 * 360);
                let req =
                    Request::new(c, t.num_ranks(), p.size_bytes, p.dtype, p.op, Some(&t)).unwrap();
                let packed = packing_for(&p).unwrap().unwrap();
                for chunks in [1, 3] {
                    let s = synthesize(&p, &req, &packed, chunks).unwrap().unwrap();
                    schedule::verify(&s)
                        .unwrap_or_else(|e| panic!("{spec} {} chunks {chunks}: {e}", c.name()));
                }
            }
        }
    }
}
