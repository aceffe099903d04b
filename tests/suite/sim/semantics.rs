//! The simulator: the max-min solver against a brute-force reference, closed
//! forms, the node model, reservation sharing, determinism.

use proptest::prelude::*;
use topocoll::algorithms::Request;
use topocoll::schedule::{Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::sim::{
    reference_maxmin, simulate, Fairness, MaxMin, Reschedule, Sharing, SimConfig, Skew,
};
use topocoll::topology::{parse_spec, parse_toml, Topology};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-300)
}

/// A flow of a random instance: route, weight, cap.
type FlowSpec = (Vec<u32>, f64, f64);

/// A random instance: link capacities, then flows.
fn instance() -> impl Strategy<Value = (Vec<f64>, Vec<FlowSpec>)> {
    (1usize..7).prop_flat_map(|links| {
        let caps = proptest::collection::vec(0.5f64..4.0, links);
        let flow = (
            proptest::collection::btree_set(0u32..links as u32, 1..=links.min(4)),
            prop_oneof![Just(1.0f64), 0.25f64..3.0],
            prop_oneof![3 => Just(f64::INFINITY), 1 => 0.1f64..2.0],
        )
            .prop_map(|(r, w, c)| (r.into_iter().collect::<Vec<u32>>(), w, c));
        (caps, proptest::collection::vec(flow, 1..9))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// The incremental solver agrees with brute-force progressive filling after
    /// every step of a random sequence of flow arrivals and departures.
    #[test]
    fn incremental_maxmin_matches_reference((caps, flows) in instance(), removals in proptest::collection::vec(any::<prop::sample::Index>(), 0..5)) {
        let mut m = MaxMin::new(caps.clone());
        let mut active: Vec<usize> = Vec::new();
        let mut out: Vec<Reschedule> = Vec::new();
        let check = |m: &MaxMin, active: &[usize]| {
            let routes: Vec<Vec<u32>> = active.iter().map(|&f| flows[f].0.clone()).collect();
            let weights: Vec<f64> = active.iter().map(|&f| flows[f].1).collect();
            let fcaps: Vec<f64> = active.iter().map(|&f| flows[f].2).collect();
            let want = reference_maxmin(&caps, &routes, &weights, &fcaps);
            for (k, &f) in active.iter().enumerate() {
                let got = m.rate(f as u32);
                prop_assert!(close(got, want[k], 1e-9), "flow {f}: incremental {got} vs reference {}", want[k]);
            }
            Ok(())
        };
        for (i, (route, w, c)) in flows.iter().enumerate() {
            m.add(i as u32, 0.0, route, 1.0, *w, *c);
            active.push(i);
            if i % 2 == 1 {
                m.recompute(0.0, &mut out);
                check(&m, &active)?;
            }
        }
        m.recompute(0.0, &mut out);
        check(&m, &active)?;
        for idx in removals {
            if active.is_empty() { break; }
            let f = active.remove(idx.index(active.len()));
            m.remove(f as u32);
            m.recompute(0.0, &mut out);
            check(&m, &active)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// The simulator keeps a flow that is alone on its links out of the
    /// solver (`MaxMin::alone`) and enters it later (`MaxMin::admit`) when
    /// another flow must be solved. That must leave the solver exactly where
    /// adding and solving the flow at its start would have: the same rate
    /// and end, bit for bit, and the same rates and reschedules while other
    /// flows arrive and leave.
    #[test]
    fn a_flow_admitted_after_running_alone_is_where_the_solver_would_have_it(
        (caps, flows) in instance(),
        later in 0.0f64..3.0,
        removals in proptest::collection::vec(any::<prop::sample::Index>(), 0..5),
    ) {
        let (route0, _, cap0) = &flows[0];
        let t0 = 0.5;
        let mut solved = MaxMin::new(caps.clone());
        let mut out = Vec::new();
        solved.add(0, t0, route0, 7.0, 1.0, *cap0);
        solved.recompute(t0, &mut out);
        let mut kept = MaxMin::new(caps.clone());
        let (rate, _) = kept.alone(route0, *cap0);
        prop_assert_eq!(rate.to_bits(), solved.rate(0).to_bits());
        prop_assert_eq!(out[0].end.to_bits(), (t0 + 7.0 / rate).to_bits());
        kept.admit(0, t0, route0, 7.0, *cap0);
        let step = |solved: &mut MaxMin, kept: &mut MaxMin, now: f64, active: &[u32]| {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            solved.recompute(now, &mut a);
            kept.recompute(now, &mut b);
            let bits = |v: &[Reschedule]| v.iter().map(|r| (r.flow, r.end.to_bits())).collect::<Vec<_>>();
            prop_assert_eq!(bits(&a), bits(&b));
            for &f in active {
                prop_assert_eq!(solved.rate(f).to_bits(), kept.rate(f).to_bits(), "flow {}", f);
            }
            // And the same work: the same flows solved again (its bottleneck
            // decides whether flow 0 is), less the one solve of flow 0.
            prop_assert_eq!(solved.recomputed_flows, kept.recomputed_flows + 1);
            prop_assert_eq!(solved.rounds, kept.rounds + 1);
            Ok(())
        };
        // The others arrive one at a time (so that later solves are local
        // ones, which read flow 0's bottleneck), then some leave.
        let mut now = t0 + later;
        let mut active = vec![0u32];
        for (i, (route, w, c)) in flows.iter().enumerate().skip(1) {
            solved.add(i as u32, now, route, 1.0, *w, *c);
            kept.add(i as u32, now, route, 1.0, *w, *c);
            active.push(i as u32);
            step(&mut solved, &mut kept, now, &active)?;
            now += 0.125;
        }
        for idx in removals {
            if active.is_empty() { break; }
            let f = active.remove(idx.index(active.len()));
            solved.remove(f);
            kept.remove(f);
            step(&mut solved, &mut kept, now, &active)?;
            now += 0.125;
        }
    }
}

#[test]
fn flows_on_one_link_get_equal_shares() {
    for k in 1..=64u32 {
        let mut m = MaxMin::new(vec![1e9]);
        for f in 0..k {
            m.add(f, 0.0, &[0], 1.0, 1.0, f64::INFINITY);
        }
        let mut out = Vec::new();
        m.recompute(0.0, &mut out);
        for f in 0..k {
            assert!(close(m.rate(f), 1e9 / k as f64, 1e-9));
            // Every flow is rescheduled to end at 1/rate.
            let r = out.iter().find(|r| r.flow == f).unwrap();
            assert!(close(r.end, k as f64 / 1e9, 1e-9));
        }
    }
}

#[test]
fn a_parking_lot_gives_every_flow_half_a_link() {
    // One flow across n links, one single-link flow per link: all get C/2.
    for n in 1..=32u32 {
        let mut m = MaxMin::new(vec![2.5; n as usize]);
        m.add(0, 0.0, &(0..n).collect::<Vec<_>>(), 1.0, 1.0, f64::INFINITY);
        for l in 0..n {
            m.add(l + 1, 0.0, &[l], 1.0, 1.0, f64::INFINITY);
        }
        let mut out = Vec::new();
        m.recompute(0.0, &mut out);
        for f in 0..=n {
            assert!(
                close(m.rate(f), 1.25, 1e-9),
                "n={n} flow {f}: {}",
                m.rate(f)
            );
        }
    }
}

/// A route may list a link more than once (a folded run's routes do): the
/// flow then takes its rate from the link that many times. And removing such
/// a flow, whose list entries move into each other's places, leaves the
/// solver consistent.
#[test]
fn a_route_that_crosses_a_link_twice_takes_its_rate_twice() {
    let mut m = MaxMin::new(vec![1.0, 1.0]);
    let mut out = Vec::new();
    m.add(0, 0.0, &[0, 1, 0], 1.0, 1.0, f64::INFINITY);
    m.add(1, 0.0, &[0], 1.0, 1.0, f64::INFINITY);
    m.add(2, 0.0, &[1, 1, 1], 1.0, 1.0, f64::INFINITY);
    m.recompute(0.0, &mut out);
    // Link 0 carries 2·r0 + r1, link 1 carries r0 + 3·r2: link 1's level,
    // 1/4, is the lowest and fixes flows 0 and 2; link 0 then leaves
    // 1 − 2/4 to flow 1.
    assert!(close(m.rate(0), 0.25, 1e-12), "{}", m.rate(0));
    assert!(close(m.rate(1), 0.5, 1e-12), "{}", m.rate(1));
    assert!(close(m.rate(2), 0.25, 1e-12), "{}", m.rate(2));
    m.remove(0);
    m.recompute(0.0, &mut out);
    assert!(close(m.rate(1), 1.0, 1e-12));
    assert!(close(m.rate(2), 1.0 / 3.0, 1e-12));
    m.remove(2);
    m.add(3, 0.0, &[0, 0], 1.0, 1.0, f64::INFINITY);
    m.recompute(0.0, &mut out);
    assert!(close(m.rate(1), 1.0 / 3.0, 1e-12));
    assert!(close(m.rate(3), 1.0 / 3.0, 1e-12));
    m.remove(3);
    m.recompute(0.0, &mut out);
    assert!(close(m.rate(1), 1.0, 1e-12));
}

/// A hand-made schedule: (src, dst, bytes) messages, each with its own tag, all at once.
fn messages(p: usize, msgs: &[(u32, u32, u64)]) -> Schedule {
    let count = msgs.iter().map(|m| m.2).max().unwrap_or(0);
    let mut s = Schedule::new(
        Collective::Alltoall,
        p,
        count,
        Dtype::U8,
        ReduceOp::Sum,
        "handmade",
    );
    for (tag, &(src, dst, bytes)) in msgs.iter().enumerate() {
        let region = Region::input(0, bytes);
        s.programs[src as usize].push(
            Op::Send {
                peer: dst,
                tag: tag as u32,
                region,
                route: 0,
            },
            &[],
        );
        s.programs[dst as usize].push(
            Op::Recv {
                peer: src,
                tag: tag as u32,
                region: Region::output(0, bytes),
                combine: false,
            },
            &[],
        );
    }
    s
}

/// Hosts a, b, c on a chain c - a - b with 1 GB/s links of 1 ns.
fn chain() -> Topology {
    parse_toml(
        "chain.toml",
        "kind = \"tree\"\nbandwidth = 1e9\nlatency = 1e-9\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[node]]\nname = \"c\"\n\
         [[edge]]\na = \"a\"\nb = \"b\"\n[[edge]]\na = \"c\"\nb = \"a\"\n",
    )
    .unwrap()
}

#[test]
fn one_transfer_is_overhead_plus_latency_plus_bytes_over_bandwidth() {
    let t = parse_spec("mesh:4").unwrap();
    let s = messages(4, &[(0, 3, 1_000_000)]);
    let cfg = SimConfig {
        overhead_s: 2e-6,
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &cfg).unwrap();
    // 3 hops of 1 µs, 1 MB at 1 GB/s.
    assert!(close(r.time_s, 2e-6 + 3e-6 + 1e-3, 1e-12), "{}", r.time_s);
    assert_eq!(r.flows, 1);
    assert_eq!(r.links.iter().filter(|l| l.bytes > 0.0).count(), 3);
}

/// SimGrid's CM02 example: a 1-hop and a 2-hop flow of 1 MB on one 1 GB/s
/// link finish at 1.50 ms and 2.00 ms when shares follow 1/latency.
#[test]
fn rtt_fairness_reproduces_cm02() {
    let t = chain();
    // Ranks: a=0, b=1, c=2. a->b crosses a-b; c->b crosses c-a and a-b.
    let s = messages(3, &[(0, 1, 1_000_000), (2, 1, 1_000_000)]);
    let mut cfg = SimConfig {
        fairness: Fairness::Rtt,
        trace: true,
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &cfg).unwrap();
    let ends: Vec<f64> = r
        .spans
        .iter()
        .filter(|s| s.name.starts_with("send"))
        .map(|s| s.end_s)
        .collect();
    assert!(close(ends[0], 1.5e-3, 1e-5), "{ends:?}");
    assert!(close(ends[1], 2.0e-3, 1e-5), "{ends:?}");
    // Plain max-min: both get half until the first ends.
    cfg.fairness = Fairness::Equal;
    let r = simulate(&s, &t, &cfg).unwrap();
    assert!(close(r.time_s, 2.0e-3, 1e-5));
}

/// A flow runs alone for a while (kept out of the solver), then another
/// joins its link and both get half; the closed form of both ends.
#[test]
fn a_flow_that_ran_alone_shares_its_link_from_when_another_joins() {
    let t = chain();
    // Ranks: a=0, b=1, c=2. a sends 2 MB to b over a-b at once; c computes
    // for 0.5 ms, then sends 1 MB to b over c-a and a-b.
    let mut s = messages(3, &[(0, 1, 2_000_000), (2, 1, 1_000_000)]);
    let prog = &mut s.programs[2];
    let send = prog.ops[0];
    *prog = Default::default();
    prog.push(Op::Compute { seconds: 0.5e-3 }, &[]);
    prog.push(send, &[0]);
    let r = simulate(&s, &t, &SimConfig::default()).unwrap();
    // a's flow: alone at 1 GB/s from 1 ns (one hop of latency) until c's
    // starts at 0.5 ms + 2 ns, when 1.5 MB − 1 B is left; then 0.5 GB/s
    // each: c's 1 MB ends 2 ms later, at 2.5 ms + 2 ns, leaving a's
    // 0.5 MB − 1 B to go alone at 1 GB/s: it ends at 3 ms + 1 ns.
    let tc = 0.5e-3 + 2e-9;
    assert!(
        close(r.rank_finish_s[2], tc + 2e-3, 1e-12),
        "{:?}",
        r.rank_finish_s
    );
    assert!(
        close(r.rank_finish_s[0], 3e-3 + 1e-9, 1e-12),
        "{:?}",
        r.rank_finish_s
    );
    assert!(close(r.time_s, 3e-3 + 1e-9, 1e-12));
    assert_eq!(r.links.iter().map(|l| l.peak_flows).max(), Some(2));
}

#[test]
fn engines_take_sends_in_program_order() {
    // A star: rank 0 sends 1 MB to each of 1, 2, 3 over its own link.
    let star = "kind = \"tree\"\nbandwidth = 1e9\nlatency = 0.0\n[[node]]\nname = \"s\"\nkind = \"switch\"\n\
        [[node]]\nname = \"h0\"\n[[node]]\nname = \"h1\"\n[[node]]\nname = \"h2\"\n[[node]]\nname = \"h3\"\n\
        [[edge]]\na = \"h0\"\nb = \"s\"\nbandwidth = 3e9\n[[edge]]\na = \"h1\"\nb = \"s\"\n[[edge]]\na = \"h2\"\nb = \"s\"\n[[edge]]\na = \"h3\"\nb = \"s\"\n";
    let t = parse_toml("star.toml", star).unwrap();
    let s = messages(
        4,
        &[(0, 3, 1_000_000), (0, 1, 1_000_000), (0, 2, 1_000_000)],
    );
    let one = SimConfig {
        engines: 1,
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &one).unwrap();
    assert!(close(r.rank_finish_s[3], 1e-3, 1e-12));
    assert!(close(r.rank_finish_s[1], 2e-3, 1e-12));
    assert!(close(r.rank_finish_s[2], 3e-3, 1e-12));
    let three = SimConfig {
        engines: 3,
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &three).unwrap();
    for rank in 1..4 {
        assert!(close(r.rank_finish_s[rank], 1e-3, 1e-12));
    }
}

#[test]
fn combines_and_overheads_are_serialised_on_one_cpu() {
    // Ring allreduce on 2 ranks, 8 MB: one reduce-scatter step (4 MB, combined
    // at 1 GB/s) and one allgather step.
    let t = parse_spec("torus:2").unwrap();
    let req = Request::new(
        Collective::Allreduce,
        2,
        8_000_000,
        Dtype::F64,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = topocoll::algorithms::build(&topocoll::algorithms::allreduce::ring::ALGORITHM, &req)
        .unwrap();
    let cfg = SimConfig {
        compute_bandwidth: Some(1e9),
        overhead_s: 1e-6,
        engines: 2,
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &cfg).unwrap();
    let step = 1e-6 + 1e-6 + 4e-3; // overhead + one hop + 4 MB at 1 GB/s
    assert!(close(r.time_s, step + 4e-3 + step, 1e-12), "{}", r.time_s);
}

#[test]
fn reservation_serialises_flows_that_do_not_fit() {
    let t = chain();
    let s = messages(3, &[(0, 1, 1_000_000), (2, 1, 1_000_000)]);
    let cfg = SimConfig {
        sharing: Sharing::Reservation,
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &cfg).unwrap();
    // The second flow waits until the first (1 ns of latency, then 1 ms)
    // frees the whole link: they run back to back.
    assert!(close(r.time_s, 1e-9 + 1e-3 + 1e-3, 1e-12), "{}", r.time_s);
    assert_eq!(r.links_shared_fraction, 0.0);
}

#[test]
fn zero_bytes_cost_latency_and_self_sends_cost_nothing() {
    let t = parse_spec("mesh:3").unwrap();
    let s = messages(3, &[(0, 2, 0), (1, 1, 5)]);
    let r = simulate(&s, &t, &SimConfig::default()).unwrap();
    assert!(close(r.time_s, 2e-6, 1e-12));
    assert_eq!(r.rank_finish_s[1], 0.0);
}

#[test]
fn skew_delays_ranks_and_is_seeded() {
    let t = parse_spec("torus:4x4").unwrap();
    let req = Request::new(
        Collective::Alltoall,
        16,
        4096,
        Dtype::U8,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = topocoll::algorithms::build(&topocoll::algorithms::alltoall::linear::ALGORITHM, &req)
        .unwrap();
    let base = simulate(&s, &t, &SimConfig::default()).unwrap();
    let fixed = SimConfig {
        skew: Skew::Fixed(vec![1.0; 16]),
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &fixed).unwrap();
    assert!(close(r.time_s, base.time_s + 1.0, 1e-9));
    // A start at −0.0 is a start at 0.0: event times are ordered by their
    // bits, where −0.0 would come after every positive time.
    let mut offsets = vec![0.0; 16];
    offsets[5] = -0.0;
    let negzero = SimConfig {
        skew: Skew::Fixed(offsets),
        ..SimConfig::default()
    };
    assert!(negzero
        .start_offsets(16)
        .iter()
        .all(|x| x.to_bits() == 0.0f64.to_bits()));
    let a = SimConfig {
        skew: Skew::Random {
            max_s: 1e-5,
            seed: 7,
        },
        ..SimConfig::default()
    };
    let r1 = simulate(&s, &t, &a).unwrap();
    let r2 = simulate(&s, &t, &a).unwrap();
    assert_eq!(r1.time_s.to_bits(), r2.time_s.to_bits());
    let b = SimConfig {
        skew: Skew::Random {
            max_s: 1e-5,
            seed: 8,
        },
        ..SimConfig::default()
    };
    assert_ne!(simulate(&s, &t, &b).unwrap().time_s, r1.time_s);
}

#[test]
fn simulation_is_reproducible_bit_for_bit() {
    let t = parse_spec("torus:8x8").unwrap();
    let req = Request::new(
        Collective::Alltoall,
        64,
        1,
        Dtype::U8,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = topocoll::algorithms::build(&topocoll::algorithms::alltoall::linear::ALGORITHM, &req)
        .unwrap();
    let mut t1 = t.clone();
    t1.set_uniform_links(Some(1.0), Some(0.0)).unwrap();
    let cfg = SimConfig::default();
    let a = simulate(&s, &t1, &cfg).unwrap();
    let b = simulate(&s, &t1, &cfg).unwrap();
    assert_eq!(a.time_s.to_bits(), b.time_s.to_bits());
    assert_eq!(a.rank_finish_s, b.rank_finish_s);
    assert_eq!(a.links, b.links);
}

#[test]
fn link_statistics_add_up() {
    let t = parse_spec("torus:4x4").unwrap();
    let req = Request::new(
        Collective::Alltoall,
        16,
        1000,
        Dtype::U8,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = topocoll::algorithms::build(&topocoll::algorithms::alltoall::linear::ALGORITHM, &req)
        .unwrap();
    let r = simulate(
        &s,
        &t,
        &SimConfig {
            engines: 4,
            ..SimConfig::default()
        },
    )
    .unwrap();
    // Bytes over links = Σ over transfers of bytes × hops.
    let mut route = Vec::new();
    let mut want = 0.0;
    for a in 0..16 {
        for b in 0..16 {
            if a != b {
                route.clear();
                t.route(a, b, &mut route);
                want += 1000.0 * route.len() as f64;
            }
        }
    }
    let got: f64 = r.links.iter().map(|l| l.bytes).sum();
    assert!(close(got, want, 1e-12));
    for l in &r.links {
        assert!(l.busy_s <= r.time_s * (1.0 + 1e-12) && l.utilisation <= 1.0 + 1e-9);
        assert!(
            l.bytes <= l.busy_s * 1e9 * (1.0 + 1e-9),
            "a link never exceeds its bandwidth"
        );
    }
    assert!(r.links_shared_fraction > 0.0 && r.links_shared_fraction <= 1.0);
}

#[test]
fn bad_configurations_are_errors() {
    let t = parse_spec("torus:2x2").unwrap();
    let s = messages(4, &[(0, 1, 8)]);
    for cfg in [
        SimConfig {
            engines: 0,
            ..SimConfig::default()
        },
        SimConfig {
            overhead_s: -1.0,
            ..SimConfig::default()
        },
        SimConfig {
            compute_bandwidth: Some(0.0),
            ..SimConfig::default()
        },
        SimConfig {
            skew: Skew::Fixed(vec![0.0; 3]),
            ..SimConfig::default()
        },
    ] {
        assert!(simulate(&s, &t, &cfg).is_err());
    }
    let wrong = parse_spec("torus:3x3").unwrap();
    assert!(simulate(&s, &wrong, &SimConfig::default())
        .unwrap_err()
        .to_string()
        .contains("4 ranks"));
    // A receive that is never matched is an error, not a hang.
    let mut s = messages(4, &[(0, 1, 8)]);
    s.programs[2].push(
        Op::Recv {
            peer: 3,
            tag: 9,
            region: Region::output(0, 1),
            combine: false,
        },
        &[],
    );
    assert!(simulate(&s, &t, &SimConfig::default()).is_err());
}

#[test]
fn trace_is_chrome_json() {
    let t = parse_spec("torus:2x2").unwrap();
    let req = Request::new(
        Collective::Allreduce,
        4,
        64,
        Dtype::F64,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = topocoll::algorithms::build(&topocoll::algorithms::allreduce::ring::ALGORITHM, &req)
        .unwrap();
    let cfg = SimConfig {
        trace: true,
        compute_bandwidth: Some(1e9),
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &cfg).unwrap();
    let mut buf = Vec::new();
    let name = |l: u32| format!("#{l}");
    topocoll::sim::write_chrome_trace(&r.spans, 4, &r.link_samples, &name, &mut buf).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    assert!(events
        .iter()
        .any(|e| e["ph"] == "X" && e["name"] == "combine"));
    // Four rank tracks and the links' process.
    assert_eq!(events.iter().filter(|e| e["ph"] == "M").count(), 5);
    // Per-link counters: every link the ring uses goes to 1 flow and back
    // to 0, and never below.
    let counters: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "C").collect();
    assert!(!counters.is_empty());
    assert!(counters
        .iter()
        .all(|c| c["args"]["flows"].as_u64().is_some()));
    let mut last: std::collections::HashMap<String, u64> = Default::default();
    for c in &counters {
        last.insert(
            c["name"].as_str().unwrap().to_string(),
            c["args"]["flows"].as_u64().unwrap(),
        );
    }
    assert!(last.values().all(|&f| f == 0), "{last:?}");
}

/// Two nodes joined by 8 B/s links without latency, and an empty two-rank
/// schedule of one f64 element, for hand-made CPU scenarios.
fn two_nodes_one_element() -> (Topology, Schedule) {
    let mut t = parse_spec("mesh:2").unwrap();
    t.set_uniform_links(Some(8.0), Some(0.0)).unwrap();
    let s = Schedule::new(
        Collective::Allreduce,
        2,
        1,
        Dtype::F64,
        ReduceOp::Sum,
        "hand",
    );
    (t, s)
}

/// A send of the one element to `peer`.
fn send_one(peer: u32, tag: u32) -> Op {
    Op::Send {
        peer,
        tag,
        region: Region::output(0, 1),
        route: 0,
    }
}

/// A receive of the one element from `peer`.
fn recv_one(peer: u32, tag: u32, combine: bool) -> Op {
    Op::Recv {
        peer,
        tag,
        region: Region::output(0, 1),
        combine,
    }
}

/// A node's one CPU takes its waiting tasks in program order, like its
/// engines: a combine that becomes ready while a long compute runs goes
/// before a later compute that has waited longer (first come, first served
/// would run it last and delay the send that waits for it).
#[test]
fn cpu_takes_waiting_tasks_in_program_order() {
    let (t, mut s) = two_nodes_one_element();
    // Rank 1 sends its element at once (arrives at t = 1) and waits for the result.
    s.programs[1].push(send_one(0, 0), &[]);
    s.programs[1].push(recv_one(0, 1, false), &[]);
    // Rank 0: the combining receive (1 s of CPU once the data is in), two
    // computes ready at once (2 s and 3 s), and the reply after the combine.
    let recv = s.programs[0].push(recv_one(1, 0, true), &[]);
    s.programs[0].push(Op::Compute { seconds: 2.0 }, &[]);
    s.programs[0].push(Op::Compute { seconds: 3.0 }, &[]);
    s.programs[0].push(send_one(1, 1), &[recv]);
    let cfg = SimConfig {
        compute_bandwidth: Some(8.0),
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &cfg).unwrap();
    // CPU: compute 0..2, combine 2..3 (lower index than the 3 s compute),
    // compute 3..6; the reply travels 3..4. First come first served: 7.
    assert_eq!(r.rank_finish_s, vec![6.0, 4.0]);
    assert_eq!(r.time_s, 6.0);
}

/// A send's overhead goes before any other waiting task, whatever its place
/// in the program: a node posts its ready transfers before it computes.
#[test]
fn cpu_posts_ready_sends_before_computing() {
    let (t, mut s) = two_nodes_one_element();
    s.programs[0].push(Op::Compute { seconds: 2.0 }, &[]);
    s.programs[0].push(Op::Compute { seconds: 1.0 }, &[]);
    s.programs[0].push(send_one(1, 0), &[]);
    s.programs[1].push(recv_one(0, 0, false), &[]);
    let cfg = SimConfig {
        overhead_s: 0.5,
        ..SimConfig::default()
    };
    let r = simulate(&s, &t, &cfg).unwrap();
    // Overhead 0..0.5, transfer 0.5..1.5; computes 0.5..2.5 and 2.5..3.5.
    assert_eq!(r.rank_finish_s, vec![3.5, 1.5]);
}

/// The ring allreduce of 64 KiB of f64 on every rank of `topo`.
fn ring_allreduce_of_64kib(topo: &Topology) -> Schedule {
    let req = topocoll_testkit::request(Collective::Allreduce, topo.num_ranks())
        .bytes(64 * 1024)
        .on(topo)
        .build();
    topocoll::algorithms::build(&topocoll::algorithms::allreduce::ring::ALGORITHM, &req).unwrap()
}

/// `SimConfig::progress` is published while a run goes (here: a ring
/// allreduce of 256 ranks, 330 k events) in millionths of the ops done,
/// and does not change the result.
#[test]
fn progress_is_published_without_changing_the_result() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let topo = parse_spec("torus:16x16").unwrap();
    let s = ring_allreduce_of_64kib(&topo);
    let cfg = SimConfig {
        engines: 4,
        fold: false,
        ..Default::default()
    };
    let quiet = simulate(&s, &topo, &cfg).unwrap();
    let progress = std::sync::Arc::new(AtomicU64::new(0));
    let watched = simulate(
        &s,
        &topo,
        &SimConfig {
            progress: Some(progress.clone()),
            ..cfg
        },
    )
    .unwrap();
    assert!(quiet.run.events > 1 << 17, "{} events", quiet.run.events);
    assert_eq!(quiet.time_s.to_bits(), watched.time_s.to_bits());
    let last = progress.load(Ordering::Relaxed);
    assert!(last > 0 && last < 1_000_000, "{last}");
}

/// A run given `stop_past` below its time stops with `PastStop`, by every
/// driver (event by event, folded, rank by rank); one given its own time,
/// or more, ends with the same result to the bit.
#[test]
fn a_run_stops_once_its_clock_passes_stop_past_and_not_before() {
    use topocoll::sim::Error;
    let topo = parse_spec("torus:8x8").unwrap();
    let s = ring_allreduce_of_64kib(&topo);
    let mut drivers = std::collections::BTreeSet::new();
    for (fold, by_rank) in [(false, false), (true, false), (false, true)] {
        let cfg = SimConfig {
            engines: 2,
            fold,
            by_rank,
            ..Default::default()
        };
        let whole = simulate(&s, &topo, &cfg).unwrap();
        drivers.insert(whole.run.driver.clone());
        let t = whole.time_s;
        for stop in [t, 2.0 * t] {
            let r = simulate(
                &s,
                &topo,
                &SimConfig {
                    stop_past: Some(stop),
                    ..cfg.clone()
                },
            )
            .unwrap();
            assert_eq!(r.time_s.to_bits(), t.to_bits(), "{}", r.run.driver);
        }
        for stop in [0.0, 0.5 * t, t * (1.0 - 1e-9)] {
            let e = simulate(
                &s,
                &topo,
                &SimConfig {
                    stop_past: Some(stop),
                    ..cfg.clone()
                },
            )
            .unwrap_err();
            assert_eq!(e, Error::PastStop { past_s: stop }, "{}", whole.run.driver);
        }
    }
    assert_eq!(drivers.len(), 3, "{drivers:?}");
}

/// `--fail LINK@T1..T2`: the link is off in the window, and SimGrid's rule
/// holds for a transfer that meets it: one on the link when it turns off,
/// or starting on it while it is off, stops the run with an error naming
/// the link, the time and the send; one after the window, and a run that
/// ends before it, take their times without the outage.
#[test]
fn a_link_outage_stops_a_transfer_that_meets_it_and_no_other() {
    use topocoll::topology::{fail, Fail};
    let t = parse_spec("mesh:4").unwrap();
    // 1 MB from 0 to 3 over (0) -> (1) -> (2) -> (3): 2 µs of overhead,
    // then 3 µs of latency and 1 ms of bytes.
    let s = messages(4, &[(0, 3, 1_000_000)]);
    let cfg = SimConfig {
        overhead_s: 2e-6,
        ..SimConfig::default()
    };
    let alone = simulate(&s, &t, &cfg).unwrap().time_s;
    let mut route = Vec::new();
    t.route(0, 3, &mut route);
    let link = t.link_name(route[1]);
    let with = |window: &str| {
        let f = Fail::parse(&format!("{link}@{window}"), 0).unwrap();
        simulate(&s, &fail(&t, &f).unwrap(), &cfg)
    };
    for window in ["0.5..0.6", "0..1e-6"] {
        let r = with(window).unwrap_or_else(|e| panic!("{window}: {e}"));
        assert!(
            close(r.time_s, alone, 1e-12),
            "{window}: {} vs {alone}",
            r.time_s
        );
    }
    for (window, says) in [
        ("0.0005..0.6", format!("link '{link}' turns off at 0.0005 s under rank 0's send to rank 3")),
        ("1e-6..1", format!("rank 0's send to rank 3 (op 0) starts at 0.000002 s on link '{link}', which is off")),
    ] {
        let e = with(window).expect_err(window);
        assert_eq!(e.kind(), Some(topocoll::SimKind::Failure), "{e:?}");
        assert!(e.to_string().contains(&says), "{window}: {e}");
    }
}
