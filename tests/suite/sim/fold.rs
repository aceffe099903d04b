//! Folding (sim::fold): a run that is the same on every translate of a torus
//! is simulated on one slice of ranks. The shared corpus (tests/drivers.rs)
//! holds folded runs to the full ones; here, the ring allreduce's fold and
//! the fold refused wherever it is not proven.

use topocoll::algorithms::{self, Algorithm, Request};
use topocoll::schedule::{Collective, Dtype, Op, ReduceOp, Schedule};
use topocoll::sim::{simulate, SimConfig, SimResult, Skew};
use topocoll::topology::{parse_spec, Topology, TorusTie};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-300)
}

fn normalised(spec: &str) -> Topology {
    let mut t = parse_spec(spec).unwrap();
    t.set_uniform_links(Some(1.0), Some(0.0)).unwrap();
    t
}

fn build(t: &Topology, c: Collective, alg: &Algorithm, count: u64) -> Option<Schedule> {
    let req = Request::new(c, t.num_ranks(), count, Dtype::U8, ReduceOp::Sum, Some(t)).unwrap();
    algorithms::build(alg, &req).ok()
}

fn unfolded(cfg: &SimConfig) -> SimConfig {
    SimConfig {
        fold: false,
        ..cfg.clone()
    }
}

/// Everything the simulator reports, folded against unfolded, to rounding.
fn assert_same(what: &str, f: &SimResult, u: &SimResult) {
    assert_eq!(u.run.folded, 1, "{what}");
    assert!(
        close(f.time_s, u.time_s, 1e-9),
        "{what}: {} vs {}",
        f.time_s,
        u.time_s
    );
    assert_eq!(f.rank_finish_s.len(), u.rank_finish_s.len(), "{what}");
    for (r, (a, b)) in f.rank_finish_s.iter().zip(&u.rank_finish_s).enumerate() {
        assert!(
            close(*a, *b, 1e-9),
            "{what}: rank {r} finishes at {a} vs {b}"
        );
    }
    assert_eq!(f.flows, u.flows, "{what}");
    assert!(close(f.network_bytes, u.network_bytes, 1e-12), "{what}");
    assert_eq!(f.links_shared_fraction, u.links_shared_fraction, "{what}");
    assert_eq!(f.links_used_fraction, u.links_used_fraction, "{what}");
    for (l, (a, b)) in f.links.iter().zip(&u.links).enumerate() {
        assert_eq!(
            (a.from, a.to, a.peak_flows),
            (b.from, b.to, b.peak_flows),
            "{what}: link {l}"
        );
        assert!(close(a.bytes, b.bytes, 1e-12), "{what}: link {l} bytes");
        assert!(
            (a.busy_s - b.busy_s).abs() <= 1e-9 * u.time_s,
            "{what}: link {l} busy"
        );
    }
}

/// The ring allreduce folds too (combining receives with dependencies take
/// the strict path of the check), and gives the same results.
#[test]
fn the_ring_allreduce_folds() {
    let t = normalised("torus:4x6");
    let s = build(
        &t,
        Collective::Allreduce,
        &algorithms::allreduce::ring::ALGORITHM,
        24 * 3,
    )
    .unwrap();
    let cfg = SimConfig {
        compute_bandwidth: Some(2.0),
        ..SimConfig::default()
    };
    let f = simulate(&s, &t, &cfg).unwrap();
    assert_eq!(f.run.folded, 6);
    assert_same(
        "ring allreduce",
        &f,
        &simulate(&s, &t, &unfolded(&cfg)).unwrap(),
    );
}

/// No fold where it is not proven: a mesh, skew, a trace, reservation
/// sharing, a rooted collective, routes that are not translates (SimGrid's
/// tie rule), a program that differs on one rank. Each still simulates.
#[test]
fn fold_is_refused_where_it_is_not_proven() {
    let folded =
        |s: &Schedule, t: &Topology, cfg: &SimConfig| simulate(s, t, cfg).unwrap().run.folded;
    let torus = normalised("torus:4x4");
    let linear = build(
        &torus,
        Collective::Alltoall,
        &algorithms::alltoall::linear::ALGORITHM,
        1,
    )
    .unwrap();
    let cfg = SimConfig::default();
    assert_eq!(folded(&linear, &torus, &cfg), 4, "the control case folds");

    let mesh = normalised("mesh:4x4");
    assert_eq!(
        folded(
            &build(
                &mesh,
                Collective::Alltoall,
                &algorithms::alltoall::linear::ALGORITHM,
                1
            )
            .unwrap(),
            &mesh,
            &cfg
        ),
        1
    );
    let skewed = SimConfig {
        skew: Skew::Random {
            max_s: 0.5,
            seed: 1,
        },
        ..cfg.clone()
    };
    assert_eq!(folded(&linear, &torus, &skewed), 1);
    let traced = SimConfig {
        trace: true,
        ..cfg.clone()
    };
    assert_eq!(folded(&linear, &torus, &traced), 1);
    let reserved = SimConfig {
        sharing: topocoll::sim::Sharing::Reservation,
        ..cfg.clone()
    };
    assert_eq!(folded(&linear, &torus, &reserved), 1);
    let bcast = build(
        &torus,
        Collective::Bcast { root: 0 },
        &algorithms::bcast::binomial::ALGORITHM,
        8,
    )
    .unwrap();
    assert_eq!(folded(&bcast, &torus, &cfg), 1);

    let mut simgrid_tie = torus.clone();
    simgrid_tie.set_torus_tie(TorusTie::SimGrid);
    assert_eq!(
        folded(&linear, &simgrid_tie, &cfg),
        1,
        "routes from y = 2 break ties the other way"
    );

    // Rank 9 sends its first two blocks in the other order: still a valid
    // all-to-all, but rank 9 is no longer rank 5 shifted.
    let mut odd = linear.clone();
    let ops = &mut odd.programs[9].ops;
    let sends: Vec<usize> = (0..ops.len())
        .filter(|&i| matches!(ops[i], Op::Send { .. }))
        .collect();
    ops.swap(sends[0], sends[1]);
    topocoll::schedule::verify(&odd).unwrap();
    let r = simulate(&odd, &torus, &cfg).unwrap();
    assert_eq!(r.run.folded, 1);
    let u = simulate(&odd, &torus, &unfolded(&cfg)).unwrap();
    assert_eq!(r.time_s.to_bits(), u.time_s.to_bits());
    assert_eq!((r.rank_finish_s, r.links), (u.rank_finish_s, u.links));
}
