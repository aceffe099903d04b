//! Swing and the Bine trees: the peers and message sizes the papers give,
//! their refusals, and the bytes they put on a dragonfly's global links.

use topocoll::algorithms::{self, Request};
use topocoll::schedule::{Collective, Dtype, Op, ReduceOp, Schedule};
use topocoll::sim::{bytes_by_class, simulate, SimConfig};
use topocoll::topology::{parse_spec, Topology};

fn build(c: Collective, p: usize, bytes: u64, name: &str, topo: Option<&Topology>) -> Schedule {
    let dtype = if c.is_reduction() {
        Dtype::F64
    } else {
        Dtype::U8
    };
    let req = Request::new(c, p, bytes, dtype, ReduceOp::Sum, topo).unwrap();
    topocoll::algorithms::build(
        topocoll::algorithms::find(req.collective.kind(), name).unwrap(),
        &req,
    )
    .unwrap()
}

/// A rank's sends: (peer, elements), in program order.
fn sends(s: &Schedule, r: usize) -> Vec<(u32, u64)> {
    let prog = &s.programs[r];
    (0..prog.len())
        .filter_map(|i| match prog.ops[i] {
            Op::Send { peer, region, .. } => Some((peer, region.count)),
            _ => None,
        })
        .collect()
}

/// Swing's peers are r ± ρ(s), ρ = 1, −1, 3, −5, 11, −21 (even ranks add,
/// odd ones subtract); the latency-optimal allreduce sends the whole buffer
/// each step, the bandwidth-optimal one halves it each step of its
/// reduce-scatter and doubles it back in its allgather.
#[test]
fn swing_sends_to_rank_plus_or_minus_rho() {
    let n = 64 * 8;
    let lat = build(Collective::Allreduce, 64, n, "swing_lat", None);
    let bw = build(Collective::Allreduce, 64, n, "swing_bw", None);
    for r in [0usize, 1, 6, 63] {
        let peers: Vec<u32> = [1i64, -1, 3, -5, 11, -21]
            .iter()
            .map(|&d| (r as i64 + if r % 2 == 0 { d } else { -d }).rem_euclid(64) as u32)
            .collect();
        let got = sends(&lat, r);
        assert_eq!(
            got.iter().map(|s| s.0).collect::<Vec<_>>(),
            peers,
            "rank {r}"
        );
        assert!(got.iter().all(|s| s.1 == 64));
        let got = sends(&bw, r);
        let rs: Vec<(u32, u64)> = peers
            .iter()
            .zip([32, 16, 8, 4, 2, 1])
            .map(|(&p, k)| (p, k))
            .collect();
        let ag: Vec<(u32, u64)> = rs.iter().rev().copied().collect();
        assert_eq!(got, [rs, ag].concat(), "rank {r}");
    }
}

/// The Bine broadcast's root sends to its farthest peer first, the
/// distances shrinking: ρ(5), ρ(4), …, ρ(0) on 64 ranks, from any root.
#[test]
fn the_bine_root_sends_farthest_first() {
    for root in [0usize, 5] {
        let s = build(Collective::Bcast { root: root as u32 }, 64, 8, "bine", None);
        let got: Vec<u32> = sends(&s, root).iter().map(|s| s.0).collect();
        let want: Vec<u32> = [-21i64, 11, -5, 3, -1, 1]
            .iter()
            .map(|&d| (root as i64 + d).rem_euclid(64) as u32)
            .collect();
        assert_eq!(got, want, "root {root}");
    }
}

/// Bine takes any rank count (the others fold: neighbours pair up) and
/// refuses an option that does not apply in one line; the torus Swings
/// take a grid of any shape (and refuse to run without one).
#[test]
fn bine_and_the_torus_swing_refuse_in_one_line() {
    use topocoll::algorithms::{allgather, alltoall, bcast, scatter};
    for (c, bine) in [
        (Collective::Alltoall, &alltoall::bine::ALGORITHM),
        (Collective::Bcast { root: 5 }, &bcast::bine::ALGORITHM),
        (Collective::Scatter { root: 11 }, &scatter::bine::ALGORITHM),
        (Collective::Allgather, &allgather::bine::ALGORITHM),
    ] {
        let req = Request::new(c, 12, 8, Dtype::U8, ReduceOp::Sum, None).unwrap();
        topocoll::schedule::verify(&topocoll::algorithms::build(bine, &req).unwrap()).unwrap();
    }
    let mut req = Request::new(
        Collective::Bcast { root: 0 },
        12,
        8,
        Dtype::U8,
        ReduceOp::Sum,
        None,
    )
    .unwrap();
    req.radix = Some(3);
    let e = topocoll::algorithms::build(&topocoll::algorithms::bcast::bine::ALGORITHM, &req)
        .unwrap_err()
        .to_string();
    assert!(e.contains("radix") && !e.contains('\n'), "{e}");
    let t = parse_spec("torus:3x4").unwrap();
    let req = |c| Request::new(c, 12, 8, Dtype::F64, ReduceOp::Sum, Some(&t)).unwrap();
    // Odd dimensions fold their last coordinate in.
    for (c, alg) in [
        (
            Collective::ReduceScatter,
            &topocoll::algorithms::reduce_scatter::swing::TORUS,
        ),
        (
            Collective::Allgather,
            &topocoll::algorithms::allgather::swing::TORUS,
        ),
    ] {
        let s = topocoll::algorithms::build(alg, &req(c)).unwrap();
        topocoll::schedule::verify(&s).unwrap();
    }
    // Without a grid the torus Swing says why in one line.
    let flat = Request::new(Collective::Allgather, 12, 8, Dtype::U8, ReduceOp::Sum, None).unwrap();
    let e = topocoll::algorithms::build(&topocoll::algorithms::allgather::swing::TORUS, &flat)
        .unwrap_err()
        .to_string();
    assert!(e.contains("swing_torus") && !e.contains('\n'), "{e}");
    assert!(topocoll::algorithms::build(
        &topocoll::algorithms::reduce_scatter::swing::ALGORITHM,
        &req(Collective::ReduceScatter)
    )
    .is_ok());
    assert!(topocoll::algorithms::build(
        &topocoll::algorithms::allreduce::swing_bw::TORUS,
        &req(Collective::Allreduce)
    )
    .is_ok());
    assert!(topocoll::algorithms::build(
        &topocoll::algorithms::allreduce::swing_lat::TORUS,
        &req(Collective::Allreduce)
    )
    .is_ok());
}

/// Only Swing's latency-optimal allreduces are declared to differ between
/// ranks.
#[test]
fn only_the_latency_optimal_swing_differs_between_ranks() {
    let differ: Vec<&str> = algorithms::ALGORITHMS
        .iter()
        .filter(|a| !a.ranks_agree())
        .map(|a| a.name)
        .collect();
    assert_eq!(differ, ["swing_lat", "swing_lat_torus"]);
}

/// On the 64-host dragonfly (4 groups of 16 hosts), a binomial broadcast
/// from rank 0 crosses groups three times (0 → 32, 0 → 16, 32 → 48): 3
/// buffers on the blue links; the recursive-doubling allgather's last
/// three steps cross them with 8, 16 and 32 blocks a rank, Swing's far
/// less.
#[test]
fn bytes_by_class_counts_a_dragonflys_global_links() {
    let t = parse_spec(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/dragonfly-64.xml"
    ))
    .unwrap();
    let blue = |c: Collective, name: &str, bytes: u64| -> f64 {
        let s = build(c, 64, bytes, name, Some(&t));
        let r = simulate(&s, &t, &SimConfig::default()).unwrap();
        let classes = bytes_by_class(&t, &r.links);
        let names: Vec<&str> = classes.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["local", "green", "black", "blue"]);
        classes[3].1
    };
    assert_eq!(
        blue(Collective::Bcast { root: 0 }, "binomial", 1 << 20),
        3.0 * (1 << 20) as f64
    );
    let rd = blue(Collective::Allgather, "recursive_doubling", 1024);
    let swing = blue(Collective::Allgather, "swing", 1024);
    assert!(swing < rd / 4.0, "swing {swing}, recursive doubling {rd}");
    let ft = parse_spec(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/fat-tree-64.xml"
    ))
    .unwrap();
    let s = build(
        Collective::Bcast { root: 0 },
        64,
        1 << 20,
        "bine",
        Some(&ft),
    );
    let r = simulate(&s, &ft, &SimConfig::default()).unwrap();
    let names: Vec<String> = bytes_by_class(&ft, &r.links)
        .into_iter()
        .map(|c| c.0)
        .collect();
    assert_eq!(names, ["level 0-1", "level 1-2"]);
    assert!(bytes_by_class(&parse_spec("torus:4x4").unwrap(), &r.links[..0]).is_empty());
}

/// On every P from 1 to 64 and every root, the Bine broadcast reaches
/// every rank once in ⌈log2 P⌉ rounds (a rank's i-th send goes out in
/// the i-th round after the one it received in): where P is not a power
/// of two the odd one of each of the first 2e relative ranks gets the
/// buffer from its neighbour, in the last round.
#[test]
fn the_bine_broadcast_takes_ceil_log2_p_rounds_on_any_count() {
    for p in 1usize..=64 {
        let rounds = usize::BITS - (p - 1).leading_zeros();
        let e = p - (1 << p.ilog2());
        for root in 0..p {
            let s = build(Collective::Bcast { root: root as u32 }, p, 8, "bine", None);
            let mut from = vec![None; p];
            let mut round = vec![None; p];
            round[root] = Some(0u32);
            let (mut todo, mut sent) = (vec![root], 0);
            while let Some(r) = todo.pop() {
                let at = round[r].unwrap();
                for (i, (peer, _)) in sends(&s, r).into_iter().enumerate() {
                    let peer = peer as usize;
                    assert!(round[peer].is_none(), "P {p}, root {root}: {peer} twice");
                    round[peer] = Some(at + 1 + i as u32);
                    from[peer] = Some(r);
                    todo.push(peer);
                    sent += 1;
                }
            }
            assert_eq!(sent, p - 1, "P {p}, root {root}");
            let most = round.iter().map(|r| r.expect("every rank reached")).max();
            assert_eq!(most, Some(rounds), "P {p}, root {root}");
            for v in (1..2 * e).step_by(2) {
                let (r, left) = ((v + root) % p, (v - 1 + root) % p);
                assert_eq!(from[r], Some(left), "P {p}, root {root}, relative {v}");
                assert_eq!(round[r], Some(rounds), "P {p}, root {root}, relative {v}");
            }
        }
    }
}
