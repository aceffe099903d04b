//! `schedule::reverse` on the algorithms' schedules: each rank-based
//! scatter, allgather and bcast reversed into its dual verifies, and what
//! cannot be reversed is refused. (Here, not beside `reverse`, because the
//! schedule crate knows nothing of the algorithms that make schedules.)

use crate::{allgather, allreduce, bcast, build, gather, reduce_scatter, Request};
use topocoll_schedule::*;

fn request(collective: Collective, ranks: usize, size: u64, dtype: Dtype) -> Request<'static> {
    Request::new(collective, ranks, size, dtype, ReduceOp::Sum, None).unwrap()
}

/// Every rank-based gather is its scatter reversed, and verifies for P = 1..64 from root 0 and from every root up to 12 ranks.
#[test]
fn gathers_reverse_from_every_root() {
    let pairs = [
        (
            &gather::linear::ALGORITHM,
            &crate::scatter::linear::ALGORITHM,
        ),
        (
            &gather::binomial::ALGORITHM,
            &crate::scatter::binomial::ALGORITHM,
        ),
    ];
    for (alg, dual) in pairs {
        for p in 1..=64usize {
            let roots = if p <= 12 { 0..p } else { 0..1 };
            for root in roots {
                let root = root as u32;
                let req = request(Collective::Gather { root }, p, 3, Dtype::U8);
                let g = build(alg, &req).unwrap();
                assert_eq!(g.collective, Collective::Gather { root });
                verify(&g).unwrap();
                // And back: the gather reversed is a scatter again.
                let back = request(Collective::Scatter { root }, p, 3, Dtype::U8);
                reverse_checked(&g, back.schedule(dual)).unwrap();
            }
        }
    }
}

/// The reduce_scatters are allgathers reversed onto any count, the
/// chunks uneven or empty too.
#[test]
fn reduce_scatters_reverse_onto_any_count() {
    for alg in [
        &reduce_scatter::ring::ALGORITHM,
        &reduce_scatter::recursive_halving::ALGORITHM,
    ] {
        for p in 1..=64usize {
            for n in [0, 1, p as u64 - 1, p as u64, 3 * p as u64 + 2] {
                let req = request(Collective::ReduceScatter, p, n * 8, Dtype::F64);
                verify(&build(alg, &req).unwrap()).unwrap();
            }
        }
    }
}

/// A broadcast reversed is a reduce (it falls out: the in-place buffer
/// is the same on both sides).
#[test]
fn bcasts_reverse_into_reduces() {
    for alg in [&bcast::binomial::ALGORITHM, &bcast::binary::ALGORITHM] {
        for p in 1..=20usize {
            for root in [0, p as u32 / 2] {
                let req = request(Collective::Bcast { root }, p, 40, Dtype::F64);
                let b = build(alg, &req).unwrap();
                let into = request(Collective::Reduce { root }, p, 40, Dtype::F64);
                // A reduce no entry builds: the broadcast's, reversed.
                let r = reverse_checked(&b, into.unregistered_schedule(alg.name)).unwrap();
                assert_eq!(r.num_transfers(), b.num_transfers());
            }
        }
    }
}

/// A scatter whose reversal is wrong (the root also sends rank 1 a block
/// it never uses, so the gather receives into the root's output while its copy writes there) is
/// refused with the verifier's reason, not returned.
#[test]
fn an_unverifiable_reversal_is_an_error() {
    let req = request(Collective::Scatter { root: 0 }, 2, 4, Dtype::U8);
    let mut s = req.unregistered_schedule("broken");
    s.programs[0].push(Op::copy(Region::input(0, 4), Region::output(0, 4)), &[]);
    s.programs[0].push(Op::send(1, 0, Region::input(4, 4)), &[]);
    s.programs[0].push(Op::send(1, 1, Region::input(0, 4)), &[]);
    s.programs[1].push(Op::recv(0, 0, Region::output(0, 4)), &[]);
    s.programs[1].scratch = 4;
    s.programs[1].push(Op::recv(0, 1, Region::scratch(0, 4)), &[]);
    verify(&s).unwrap();
    let into = request(Collective::Gather { root: 0 }, 2, 4, Dtype::U8);
    match reverse_checked(&s, into.unregistered_schedule("broken")) {
        Err(topocoll_schedule::Error::Verify(why)) => {
            assert_eq!(why.kind, topocoll_schedule::VerifyKind::Race, "{why}");
            assert!(why.message.contains("reversal"), "{why}");
        }
        other => panic!("expected a verification error, got {other:?}"),
    }
}

/// Reversal refuses what has no dual, and schedules that reduce.
#[test]
fn refuses_what_it_cannot_reverse() {
    let ar = request(Collective::Allreduce, 4, 64, Dtype::F64);
    let ring = &allreduce::ring::ALGORITHM;
    let s = build(ring, &ar).unwrap();
    assert!(reverse(&s, ar.schedule(ring)).is_err());
    let rs = request(Collective::ReduceScatter, 4, 64, Dtype::F64);
    let s = build(&reduce_scatter::ring::ALGORITHM, &rs).unwrap();
    let ag = request(Collective::Allgather, 4, 64, Dtype::F64);
    assert!(reverse(&s, ag.schedule(&allgather::ring::ALGORITHM)).is_err());
}
