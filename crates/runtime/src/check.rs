//! What a run is held against (the sequential executor and the
//! collective's definition), and the figures a run reports.

use crate::error::{Error, Result, RunKind};
use crate::{initial_buffers, kernels, run_sequential, Elem, RankBuffers};
use rustc_hash::FxHashMap;
use topocoll_schedule::{Collective, Schedule};

/// What [`check`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Output elements compared.
    pub elements: u64,
    /// Largest relative difference from the order-free float reference.
    pub max_rel_error: f64,
    /// For allreduce: every rank's output has the same bits.
    pub ranks_identical: bool,
}

/// Compares `got` (every rank's buffers after one run from
/// [`initial_buffers`]) with the sequential executor's and with the
/// collective's definition.
pub fn check<T: Elem>(s: &Schedule, got: &[RankBuffers<T>]) -> Result<CheckReport> {
    let p = s.ranks;
    let mut seq: Vec<RankBuffers<T>> = (0..p).map(|r| initial_buffers(s, r)).collect();
    run_sequential(s, &mut seq)?;
    let mut rep = CheckReport {
        ranks_identical: true,
        ..Default::default()
    };
    let mut cache = FxHashMap::default();
    for (r, g) in got.iter().enumerate() {
        check_one(s, r, g, &seq[r], &mut rep, &mut cache)?;
    }
    if s.collective == Collective::Allreduce {
        rep.ranks_identical = got.iter().all(|g| output_hash(g) == output_hash(&got[0]));
    }
    Ok(rep)
}

/// [`check`] for one rank's buffers only (the MPI backend, where each
/// process holds one rank); `ranks_identical` is left to the caller.
pub fn check_rank<T: Elem>(s: &Schedule, rank: usize, got: &RankBuffers<T>) -> Result<CheckReport> {
    let mut seq: Vec<RankBuffers<T>> = (0..s.ranks).map(|r| initial_buffers(s, r)).collect();
    run_sequential(s, &mut seq)?;
    let mut rep = CheckReport {
        ranks_identical: true,
        ..Default::default()
    };
    check_one(
        s,
        rank,
        got,
        &seq[rank],
        &mut rep,
        &mut FxHashMap::default(),
    )?;
    Ok(rep)
}

/// A hash of the output buffer's bits (to compare ranks cheaply).
pub fn output_hash<T: Elem>(b: &RankBuffers<T>) -> u64 {
    b.output
        .iter()
        .fold(0x1234_5678u64, |h, x| kernels::mix(h as usize, x.bits()))
}

/// Rank-order references of reductions, by (terms, count): an allreduce's
/// is computed once, not once per rank.
type RefCache<T> = FxHashMap<(Vec<topocoll_schedule::Term>, u64), Vec<(T, f64)>>;

/// The obvious reference of element i of a run: fold the terms in rank
/// order; also the sum of their magnitudes (for the float error bound).
fn fold_terms<T: Elem>(s: &Schedule, terms: &[topocoll_schedule::Term], i: u64) -> (T, f64) {
    let mut it = terms
        .iter()
        .map(|t| T::pattern(t.rank as usize, t.offset + i, s.op));
    let first = it.next().expect("a term");
    it.fold((first, first.to_f64().abs()), |(acc, a), x| {
        (T::apply(s.op, acc, x), a + x.to_f64().abs())
    })
}

fn check_one<T: Elem>(
    s: &Schedule,
    r: usize,
    g: &RankBuffers<T>,
    seq: &RankBuffers<T>,
    rep: &mut CheckReport,
    cache: &mut RefCache<T>,
) -> Result<()> {
    use topocoll_schedule::{Dtype, ReduceOp};
    let float = T::DTYPE.is_float();
    let order_free = !matches!(s.op, ReduceOp::Sum | ReduceOp::Prod);
    for e in s.expected(r) {
        let refs = (e.terms.len() > 1).then(|| {
            cache
                .entry((e.terms.clone(), e.count))
                .or_insert_with(|| {
                    (0..e.count)
                        .map(|i| fold_terms::<T>(s, &e.terms, i))
                        .collect()
                })
                .clone()
        });
        for i in 0..e.count {
            let at = (e.offset + i) as usize;
            let v = g.output[at];
            let w = seq.output[at];
            if v.bits() != w.bits() {
                return Err(Error::runtime(RunKind::Check, format!(
                    "check: rank {r} output element {at} is {v:?}, but executing the schedule in order gives {w:?}"
                )));
            }
            let (want, abs) = match &refs {
                Some(v) => v[i as usize],
                None => fold_terms::<T>(s, &e.terms, i),
            };
            if e.terms.len() == 1 || !float || order_free {
                if v.bits() != want.bits() {
                    return Err(Error::runtime(
                        RunKind::Check,
                        format!("check: rank {r} output element {at} is {v:?}, expected {want:?}"),
                    ));
                }
            } else {
                // |error| <= (n-1)·u·Σ|x| for a sum in any order, and
                // (n-1)·u·|result| (to first order) for a product; doubled.
                let n = e.terms.len() as f64;
                let u = if T::DTYPE == Dtype::F32 {
                    f32::EPSILON as f64 / 2.0
                } else {
                    f64::EPSILON / 2.0
                };
                let scale = if s.op == ReduceOp::Sum {
                    abs
                } else {
                    want.to_f64().abs()
                };
                let bound = 2.0 * n * u * scale;
                let diff = (v.to_f64() - want.to_f64()).abs();
                if diff.is_nan() || diff > bound {
                    return Err(Error::runtime(RunKind::Check, format!(
                        "check: rank {r} output element {at} is {v:?}, expected {want:?} within {bound:e}"
                    )));
                }
                if scale > 0.0 {
                    rep.max_rel_error = rep.max_rel_error.max(diff / scale);
                }
            }
            rep.elements += 1;
        }
    }
    Ok(())
}

/// Bytes a collective "moves" for bandwidth figures, as the OSU and NCCL
/// tests count them: the buffer for allreduce, reduce, bcast and
/// reduce_scatter; P blocks for alltoall, allgather, scatter and gather;
/// the largest rank's output for alltoallv and allgatherv (P mean blocks
/// of it).
pub fn data_bytes(s: &Schedule) -> u64 {
    if let Some(v) = s.sizes() {
        let most = (0..s.ranks).map(|r| v.output_len(r)).max().unwrap_or(0);
        return most * s.elem_bytes();
    }
    let whole = s.count * s.elem_bytes();
    if s.collective.size_is_block() {
        whole * s.ranks as u64
    } else {
        whole
    }
}

/// Bus bandwidth factor (NCCL tests): algorithm bandwidth times this is the
/// rate each rank's link must sustain, comparable across P.
pub fn bus_factor(c: Collective, p: usize) -> f64 {
    let p = p as f64;
    match c {
        Collective::Allreduce => 2.0 * (p - 1.0) / p,
        Collective::Bcast { .. } | Collective::Reduce { .. } => 1.0,
        _ => (p - 1.0) / p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use topocoll_algorithms::{build, Request};
    use topocoll_schedule::{Dtype, ReduceOp};

    #[test]
    fn sequential_ring_allreduce_checks() {
        let req = Request::new(
            Collective::Allreduce,
            5,
            8 * 13,
            Dtype::F64,
            ReduceOp::Sum,
            None,
        )
        .unwrap();
        let s = build(&topocoll_algorithms::allreduce::ring::ALGORITHM, &req).unwrap();
        let mut b: Vec<RankBuffers<f64>> = (0..5).map(|r| initial_buffers(&s, r)).collect();
        run_sequential(&s, &mut b).unwrap();
        let rep = check(&s, &b).unwrap();
        assert_eq!(rep.elements, 5 * 13);
        assert!(rep.ranks_identical);
    }
}
