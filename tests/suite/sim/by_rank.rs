//! The by-rank driver (`sim::by_rank`): what it must do beyond agreeing with
//! the event driver on the shared corpus (tests/drivers.rs): thin windows,
//! gated sends, hand-backs, stuck schedules, kept routes, tiles.

use topocoll::algorithms::Request;
use topocoll::lookahead::Lookahead;
use topocoll::schedule::{Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::sim::{simulate, simulate_source, SimConfig, SimResult, Skew};
use topocoll::topology::{parse_spec, Topology};

use topocoll_testkit::assert_same_bits;

/// Every number of the two results within a relative 1e-9 (to rounding:
/// where two ranks' events fall within 1e-12 of each other the event
/// driver gives both the earlier time), counts equal.
fn assert_agree(a: &SimResult, b: &SimResult, what: &str) {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) + 1e-300;
    assert!(
        close(a.time_s, b.time_s),
        "{what}: time {} vs {}",
        a.time_s,
        b.time_s
    );
    for (r, (x, y)) in a.rank_finish_s.iter().zip(&b.rank_finish_s).enumerate() {
        assert!(close(*x, *y), "{what}: rank {r} finishes at {x} vs {y}");
    }
    assert_eq!(a.flows, b.flows, "{what}: flows");
    assert_eq!(a.run.events, b.run.events, "{what}: events");
    assert_eq!(a.network_bytes, b.network_bytes, "{what}: bytes");
    assert_eq!(a.links.len(), b.links.len());
    for (l, (x, y)) in a.links.iter().zip(&b.links).enumerate() {
        assert_eq!(x.bytes, y.bytes, "{what}: link {l} bytes");
        assert_eq!(x.peak_flows, y.peak_flows, "{what}: link {l} peak");
        assert!(
            close(x.busy_s, y.busy_s),
            "{what}: link {l} busy {} vs {}",
            x.busy_s,
            y.busy_s
        );
    }
    assert_eq!(a.links_shared_fraction, b.links_shared_fraction, "{what}");
}

/// `src` simulated as `cfg` says, but on `threads` threads.
fn on_threads<P: Lookahead + Sync>(
    src: &P,
    topo: &Topology,
    cfg: &SimConfig,
    threads: usize,
) -> SimResult {
    let cfg = SimConfig {
        threads,
        ..cfg.clone()
    };
    simulate_source(src, topo, &cfg).unwrap()
}

/// `src` simulated as `cfg` says, but event by event.
fn event_by_event<P: Lookahead + Sync>(src: &P, topo: &Topology, cfg: &SimConfig) -> SimResult {
    let cfg = SimConfig {
        by_rank: false,
        ..cfg.clone()
    };
    simulate_source(src, topo, &cfg).unwrap()
}

/// `s` simulated as `cfg` says (rank by rank where it can), and event by
/// event.
fn both_engines(s: &Schedule, topo: &Topology, cfg: &SimConfig) -> (SimResult, SimResult) {
    let events = SimConfig {
        by_rank: false,
        ..cfg.clone()
    };
    let a = simulate(s, topo, cfg).unwrap();
    let b = simulate(s, topo, &events).unwrap();
    assert_eq!(b.run.by_rank_threads, 0);
    (a, b)
}

/// Node models: bare; engines with overhead, combines, latency (so flows
/// wait out a latency phase), headers and a flow cap; and start skew.
fn configs() -> Vec<SimConfig> {
    vec![
        SimConfig::default(),
        SimConfig {
            engines: 4,
            overhead_s: 1e-6,
            compute_bandwidth: Some(2e9),
            header_bytes: 16,
            flow_cap: Some(8e9),
            ..SimConfig::default()
        },
        SimConfig {
            engines: 2,
            overhead_s: 3e-7,
            compute_bandwidth: Some(5e9),
            skew: Skew::Random {
                max_s: 2e-6,
                seed: 3,
            },
            ..SimConfig::default()
        },
        // Overheads with free combines: a free task found the CPU busy or
        // idle depending on the order of one instant's events, which the
        // two engines take differently (a whole overhead apart, before free
        // tasks were done at once).
        SimConfig {
            engines: 8,
            overhead_s: 1e-6,
            ..SimConfig::default()
        },
    ]
}

fn request<'t>(collective: &str, topo: &'t Topology, bytes: u64) -> Request<'t> {
    let p = topo.num_ranks();
    let c = Collective::parse(collective, (p / 3) as u32).unwrap();
    Request::new(c, p, bytes, Dtype::F64, ReduceOp::Sum, Some(topo)).unwrap()
}

#[test]
fn streamed_pipelines_give_the_same_bits_on_any_number_of_threads() {
    let topo = parse_spec("torus:6x4x4").unwrap();
    // (The ring's windows are thin, a chunk of 341 elements at a time:
    // threads that meet once a window hand it to one thread; the others
    // keep theirs.)
    for (collective, alg, segment, thin) in [
        ("allreduce", "trinaryx3", 4096, false),
        ("reduce", "trinaryx3", 8192, false),
        ("bcast", "trinaryx3", 2048, false),
        ("bcast", "pipeline", 4096, false),
        ("allreduce", "ring", 0, true),
    ] {
        let mut req = request(collective, &topo, 256 * 1024);
        if segment > 0 {
            req.segment_bytes = Some(segment);
        }
        let st = topocoll::algorithms::build_stream(
            topocoll::algorithms::find(req.collective.kind(), alg).unwrap(),
            &req,
        )
        .unwrap();
        let cfg = &configs()[1];
        let events = event_by_event(&st, &topo, cfg);
        let one = simulate_source(&st, &topo, cfg).unwrap();
        assert_eq!(one.run.by_rank_threads, 1, "{collective} {alg}");
        assert_agree(&one, &events, &format!("{collective} {alg}"));
        for threads in [2, 3, 7] {
            let many = on_threads(&st, &topo, cfg, threads);
            // Two threads take two planes each and relay bounds instead of
            // meeting (a thin window costs them no meeting): they keep it.
            let ran_on = if thin && threads != 2 { 1 } else { threads };
            assert_eq!(many.run.by_rank_threads, ran_on, "{collective} {alg}");
            assert_same_bits(
                &one,
                &many,
                &format!("{collective} {alg} on {threads} threads"),
            );
        }
    }
}

/// The sweeps, on one thread, of the Trinaryx3 allreduce on trees of 120
/// segments of 512 elements each, and of the same with a last segment of
/// 171 elements (each run checked against the event driver).
fn even_and_short_sweeps(topo: &Topology, cfg: &SimConfig) -> (u64, u64) {
    let sweeps = [3 * 120 * 512 * 8, 3 * (119 * 512 + 171) * 8].map(|bytes| {
        let mut req = request("allreduce", topo, bytes);
        req.segment_bytes = Some(512 * 8);
        let st = topocoll::algorithms::build_stream(
            &topocoll::algorithms::allreduce::trinaryx3::ALGORITHM,
            &req,
        )
        .unwrap();
        let a = on_threads(&st, topo, cfg, 1);
        assert_eq!(a.run.by_rank_threads, 1, "{bytes} B");
        assert_agree(&a, &event_by_event(&st, topo, cfg), &format!("{bytes} B"));
        a.run.by_rank_sweeps
    });
    (sweeps[0], sweeps[1])
}

#[test]
fn a_short_last_segment_holds_the_lookahead_down_only_near_it() {
    // Trees of 120 segments of 512 elements each, and the same with a last
    // segment of a third: before the gated sends (`Lookahead::gated_transfer`) every
    // sweep looked only that third ahead, nearly three times the sweeps;
    // now only the pipeline's tail does: 385 against 268 (without the
    // gates, 776). (The overhead and latency together, 0.5 µs, are shorter
    // than the short segment's phase, 1.4 µs: flows start after their
    // overhead, as the next test's do not.)
    let mut topo = parse_spec("torus:6x4x4").unwrap();
    topo.set_uniform_links(None, Some(2e-7)).unwrap();
    let cfg = &SimConfig {
        overhead_s: 3e-7,
        ..configs()[1].clone()
    };
    let (even, short) = even_and_short_sweeps(&topo, cfg);
    assert!(even > 200, "{even} sweeps");
    assert!(
        short * 2 < even * 3,
        "{short} sweeps with a short last segment, {even} without"
    );
}

#[test]
fn flows_that_start_with_their_overhead_keep_the_gates() {
    // As above, on a torus without latencies and with an overhead (2 µs)
    // longer than the short last segment's phase (1.4 µs) but shorter than
    // a full one's (4.1 µs): that run's flows start with their overhead,
    // and until the tail it looks ahead the overhead plus a full segment's
    // phase (6.1 µs), not plus the short one's (3.4 µs). So it takes fewer
    // sweeps than the even pipeline, which looks 4.1 µs ahead: 417 against
    // 546 (without the gates, 626).
    let mut topo = parse_spec("torus:6x4x4").unwrap();
    topo.set_uniform_links(None, Some(0.0)).unwrap();
    let cfg = SimConfig {
        overhead_s: 2e-6,
        ..configs()[1].clone()
    };
    let (even, short) = even_and_short_sweeps(&topo, &cfg);
    assert!(even > 300, "{even} sweeps");
    assert!(
        short < even,
        "{short} sweeps with a short last segment, {even} without"
    );
}

#[test]
fn a_flow_that_would_share_a_link_hands_the_run_to_the_event_engine() {
    // The linear all-to-all shares links from its first instant; without
    // the fold it would run by rank if it could.
    let topo = parse_spec("torus:4x4").unwrap();
    let s = topocoll::algorithms::build(
        &topocoll::algorithms::alltoall::linear::ALGORITHM,
        &request("alltoall", &topo, 4096),
    )
    .unwrap();
    for threads in [1, 2] {
        let cfg = SimConfig {
            fold: false,
            threads,
            ..SimConfig::default()
        };
        let (a, b) = both_engines(&s, &topo, &cfg);
        assert_eq!(a.run.by_rank_threads, 0);
        assert!(a.links_shared_fraction > 0.0);
        assert_eq!(a.time_s.to_bits(), b.time_s.to_bits());
    }
}

#[test]
fn a_stuck_schedule_is_the_same_error_by_rank() {
    // Each rank sends only after receiving from the other: both engines
    // stop with every op but the two receives' posting never run.
    let mut s = Schedule::new(
        Collective::Alltoall,
        2,
        1,
        Dtype::F64,
        ReduceOp::Sum,
        "stuck",
    );
    for r in 0..2u32 {
        let recv = s.programs[r as usize].push(
            Op::Recv {
                peer: 1 - r,
                tag: 0,
                region: Region::output(0, 1),
                combine: false,
            },
            &[],
        );
        s.programs[r as usize].push(
            Op::Send {
                peer: 1 - r,
                tag: 0,
                region: Region::input(0, 1),
                route: 0,
            },
            &[recv],
        );
    }
    let topo = parse_spec("torus:2").unwrap();
    let errors: Vec<String> = [true, false]
        .into_iter()
        .map(|by_rank| {
            let cfg = SimConfig {
                by_rank,
                ..SimConfig::default()
            };
            let e = simulate(&s, &topo, &cfg).unwrap_err();
            // Both drivers find the same deadlock.
            let e = topocoll::Error::from(e);
            assert_eq!(e.verify_kind(), Some(topocoll::VerifyKind::Deadlock), "{e}");
            e.to_string()
        })
        .collect();
    assert!(
        errors[0].contains("4 of 4 operations never run"),
        "{}",
        errors[0]
    );
    assert_eq!(errors[0], errors[1]);
}

#[test]
fn generators_know_their_smallest_send() {
    // The lookahead rests on it: a generator's answer must be the smallest
    // send to another rank that its ops hold (or a smaller bound).
    use topocoll::schedule::{Op, OpSource};
    for (spec, collective, alg, bytes, segment) in [
        ("torus:6x4x4", "allreduce", "trinaryx3", 256 * 1024, 4096),
        ("torus:6x4x4", "reduce", "trinaryx3", 100_000, 8192),
        ("torus:5x3", "bcast", "trinaryx3", 77_776, 1000),
        ("torus:6x4x4", "allreduce", "reduce_bcast", 256 * 1024, 4096),
        ("torus:4x4", "allreduce", "ring", 1000, 0),
        ("torus:4x4", "allreduce", "ring", 8, 0),
    ] {
        let topo = parse_spec(spec).unwrap();
        let mut req = request(collective, &topo, bytes);
        if segment > 0 {
            req.segment_bytes = Some(segment);
        }
        let st = topocoll::algorithms::build_stream(
            topocoll::algorithms::find(req.collective.kind(), alg).unwrap(),
            &req,
        )
        .unwrap();
        let scanned = (0..topo.num_ranks())
            .flat_map(|r| (0..st.len(r)).map(move |i| (r, i as u32)))
            .filter_map(|(r, i)| match st.op(r, i) {
                Op::Send { peer, region, .. } if peer as usize != r => Some(region.count),
                _ => None,
            })
            .min();
        let told = st.min_send_count();
        assert!(
            told.unwrap_or(u64::MAX) <= scanned.unwrap_or(u64::MAX),
            "{collective} {alg} on {spec}: told {told:?}, smallest {scanned:?}"
        );
        assert_eq!(told, scanned, "{collective} {alg} on {spec}");
    }
}

#[test]
fn a_free_task_is_done_at_once_whatever_the_order_of_an_instant() {
    // Rank 0 computes for 2 µs; a message of no bytes from rank 1 lands at
    // 2 µs too (1 µs overhead, 1 µs latency), and its free combine must not
    // wait behind the overhead of the send the compute made ready.
    let mut s = Schedule::new(
        Collective::Bcast { root: 0 },
        3,
        1000,
        Dtype::F64,
        ReduceOp::Sum,
        "tie",
    );
    let compute = s.programs[0].push(Op::Compute { seconds: 2e-6 }, &[]);
    let combine = s.programs[0].push(
        Op::Recv {
            peer: 1,
            tag: 0,
            region: Region::output(0, 0),
            combine: true,
        },
        &[],
    );
    let send = |peer, tag, count| Op::Send {
        peer,
        tag,
        region: Region::output(0, count),
        route: 0,
    };
    s.programs[0].push(send(1, 1, 1000), &[combine]);
    s.programs[0].push(send(2, 2, 1), &[compute]);
    s.programs[1].push(send(0, 0, 0), &[]);
    s.programs[1].push(
        Op::Recv {
            peer: 0,
            tag: 1,
            region: Region::output(0, 1000),
            combine: false,
        },
        &[],
    );
    s.programs[2].push(
        Op::Recv {
            peer: 0,
            tag: 2,
            region: Region::output(0, 1),
            combine: false,
        },
        &[],
    );
    let mut topo = parse_spec("torus:3").unwrap();
    topo.set_uniform_links(Some(1e9), Some(1e-6)).unwrap();
    for by_rank in [true, false] {
        let cfg = SimConfig {
            engines: 4,
            overhead_s: 1e-6,
            by_rank,
            ..SimConfig::default()
        };
        let r = simulate(&s, &topo, &cfg).unwrap();
        assert_eq!(r.run.by_rank_threads > 0, by_rank);
        // 2 µs compute, then the combine at once, then two sends' overheads
        // (1 µs each, the combine's send first in program order) and its
        // 8,000-byte transfer: 1 µs latency plus 8 µs.
        assert!(
            (r.time_s - 12e-6).abs() < 1e-15,
            "by rank {by_rank}: {}",
            r.time_s
        );
    }
}

#[test]
fn threads_hand_thin_windows_to_one_thread() {
    // One element left for each tree's last segment sets L at 8 ns (no
    // overhead or latency to count), where a window holds a few events:
    // threads that meet once a window give the run to one thread (a
    // barrier per window made two threads 50 times slower than one).
    let mut topo = parse_spec("torus:6x4x4").unwrap();
    topo.set_uniform_links(None, Some(0.0)).unwrap();
    let mut req = request("allreduce", &topo, 3_145_752);
    req.segment_bytes = Some(4096);
    let st = topocoll::algorithms::build_stream(
        &topocoll::algorithms::allreduce::trinaryx3::ALGORITHM,
        &req,
    )
    .unwrap();
    let cfg = SimConfig {
        engines: 4,
        compute_bandwidth: Some(1e10),
        ..SimConfig::default()
    };
    let one = simulate_source(&st, &topo, &cfg).unwrap();
    // Untiled, two threads meet once a window.
    let two = simulate_source(
        &st,
        &topo,
        &SimConfig {
            threads: 2,
            tile: false,
            ..cfg.clone()
        },
    )
    .unwrap();
    assert_eq!(one.run.by_rank_threads, 1);
    assert_eq!(two.run.by_rank_threads, 1);
    assert_eq!(one.time_s.to_bits(), two.time_s.to_bits());
    // Tiled (two planes each), they relay bounds and never meet: they keep
    // the run.
    let relayed = on_threads(&st, &topo, &cfg, 2);
    assert_eq!(relayed.run.by_rank_threads, 2);
    assert_eq!(relayed.run.by_rank_planes, 4);
    assert_same_bits(&one, &relayed, "relayed");
}

#[test]
fn flows_start_with_their_overhead_where_messages_are_tiny_or_empty() {
    // A ring allreduce of fewer elements than ranks sends empty chunks, and
    // one of a few more sends chunks whose bandwidth phase is far shorter
    // than the send overhead: the lookahead was 0 (event by event) or that
    // phase. Flows now start when their overhead does, and the overhead
    // counts (`sim::by_rank::Horizon`); with latencies, their bandwidth
    // phase is set as the latency starts, and the latency counts too.
    let mut flat = parse_spec("torus:4x3x6").unwrap();
    flat.set_uniform_links(Some(2e9), Some(0.0)).unwrap();
    let mut with_latency = flat.clone();
    with_latency.set_uniform_links(None, Some(3e-7)).unwrap();
    let cfg = SimConfig {
        engines: 4,
        overhead_s: 1e-6,
        compute_bandwidth: Some(5e9),
        header_bytes: 16,
        ..SimConfig::default()
    };
    let no_overhead = SimConfig {
        overhead_s: 0.0,
        header_bytes: 0,
        ..cfg.clone()
    };
    for (topo, latency) in [(&flat, false), (&with_latency, true)] {
        for (collective, alg, bytes, segment) in [
            ("allreduce", "ring", 40 * 8, None),
            ("allreduce", "ring", 700 * 8, None),
            ("allreduce", "trinaryx3", 20 * 8, Some(8)),
            ("bcast", "pipeline", 64 * 8, Some(16)),
        ] {
            let mut req = request(collective, topo, bytes);
            req.segment_bytes = segment;
            let st = topocoll::algorithms::build_stream(
                topocoll::algorithms::find(req.collective.kind(), alg).unwrap(),
                &req,
            )
            .unwrap();
            let what = format!("{collective} {alg} ({bytes} B, latency {latency})");
            let events = event_by_event(&st, topo, &cfg);
            let one = on_threads(&st, topo, &cfg, 1);
            assert_eq!(one.run.by_rank_threads, 1, "{what}");
            assert_agree(&one, &events, &what);
            for threads in [2, 3] {
                let many = on_threads(&st, topo, &cfg, threads);
                assert!(many.run.by_rank_threads >= 1, "{what}");
                assert_same_bits(&one, &many, &format!("{what} on {threads} threads"));
            }
            // With neither an overhead, a header nor a latency, nothing
            // bounds how soon an empty message lands: the ring of 40
            // elements runs event by event. A latency alone bounds it.
            let bare = on_threads(&st, topo, &no_overhead, 1);
            if bytes == 40 * 8 {
                assert_eq!(
                    bare.run.by_rank_threads,
                    usize::from(latency),
                    "{what} bare"
                );
            }
            assert_agree(&bare, &event_by_event(&st, topo, &no_overhead), &what);
        }
    }
}

#[test]
fn routes_kept_per_rank_give_each_link_its_own_statistics() {
    // Rank 0 of a ring of 8 sends to every other rank in turn, each send
    // after the last has landed, then to 2, 1, 3 and 7 again: seven routes
    // (one more than a rank keeps, so kept routes are given up), several
    // sharing their first link (0 -> 1 carries the messages to 1, 2, 3 and
    // 4). A kept route of one link holds that link's statistics; each link
    // must still count every flow once, as the event driver counts it.
    let mut s = Schedule::new(
        Collective::Bcast { root: 0 },
        8,
        1000,
        Dtype::F64,
        ReduceOp::Sum,
        "kept routes",
    );
    let peers = [1u32, 2, 3, 4, 5, 6, 7, 2, 1, 3, 7];
    let mut last = None;
    for (tag, &peer) in peers.iter().enumerate() {
        let count = 100 + 50 * tag as u64;
        let send = Op::Send {
            peer,
            tag: tag as u32,
            region: Region::output(0, count),
            route: 0,
        };
        let deps: Vec<_> = last.into_iter().collect();
        last = Some(s.programs[0].push(send, &deps));
        s.programs[peer as usize].push(
            Op::Recv {
                peer: 0,
                tag: tag as u32,
                region: Region::output(0, count),
                combine: false,
            },
            &[],
        );
    }
    let mut topo = parse_spec("torus:8").unwrap();
    topo.set_uniform_links(Some(1e9), Some(1e-7)).unwrap();
    for overhead_s in [0.0, 1e-6] {
        let cfg = SimConfig {
            engines: 2,
            overhead_s,
            ..SimConfig::default()
        };
        let (local, event) = both_engines(&s, &topo, &cfg);
        assert_eq!(local.run.by_rank_threads, 1, "the by-rank driver ran");
        assert_agree(&local, &event, &format!("overhead {overhead_s}"));
        // Link 0 -> 1 counts every message to 1, 2 and 3 (and to 4 if the
        // tie between the ring's two ways takes it this way).
        let first = topo
            .links
            .iter()
            .position(|l| l.from == 0 && l.to == 1)
            .unwrap();
        let bytes = |tags: &[u64]| {
            tags.iter()
                .map(|t| 8.0 * (100 + 50 * t) as f64)
                .sum::<f64>()
        };
        let crossing = bytes(&[0, 1, 2, 7, 8, 9]);
        let carried = local.links[first].bytes;
        assert!(
            carried == crossing || carried == crossing + bytes(&[3]),
            "link 0 -> 1 carried {carried} bytes"
        );
    }
}

#[test]
fn tiled_runs_give_the_same_bits_as_whole_sweeps() {
    // torus:4x3x16: 16 planes of 12 ranks along z, where every rank sends
    // only to its neighbours. Every thread runs its planes one by one;
    // `tile: false` never tiles.
    let topo = parse_spec("torus:4x3x16").unwrap();
    for (collective, alg, bytes, segment) in [
        ("allreduce", "trinaryx3", 96 * 1024, 1024),
        ("reduce", "trinaryx3", 96 * 1024, 2048),
        ("bcast", "trinaryx3", 64 * 1024, 1024),
        ("bcast", "pipeline", 32 * 1024, 2048),
    ] {
        let mut req = request(collective, &topo, bytes);
        req.segment_bytes = Some(segment);
        let st = topocoll::algorithms::build_stream(
            topocoll::algorithms::find(req.collective.kind(), alg).unwrap(),
            &req,
        )
        .unwrap();
        for (k, cfg) in configs().iter().enumerate() {
            let what = format!("{collective} {alg}, node model {k}");
            let events = event_by_event(&st, &topo, cfg);
            let whole = simulate_source(
                &st,
                &topo,
                &SimConfig {
                    tile: false,
                    ..cfg.clone()
                },
            )
            .unwrap();
            assert_eq!(whole.run.by_rank_planes, 0, "{what}");
            assert_eq!(whole.run.by_rank_threads, 1, "{what}");
            assert_agree(&whole, &events, &what);
            for threads in [1, 2, 4] {
                let run = on_threads(&st, &topo, cfg, threads);
                // Two and four threads take eight and four planes each,
                // and relay bounds instead of meeting.
                assert_eq!(run.run.by_rank_threads, threads, "{what}");
                assert_eq!(run.run.by_rank_planes, 16, "{what} on {threads} threads");
                assert_same_bits(&whole, &run, &format!("{what} on {threads} threads"));
            }
        }
    }
}

#[test]
fn a_rank_that_sends_past_the_next_plane_is_not_tiled() {
    // On torus:4x3x16 (planes of 12 ranks), rank 0 sends to rank 12, in the
    // next plane, or to rank 48, four planes on: only the first is tiled.
    let topo = parse_spec("torus:4x3x16").unwrap();
    for (to, planes) in [(12u32, 16), (48, 0)] {
        let mut s = Schedule::new(
            Collective::Alltoall,
            topo.num_ranks(),
            1,
            Dtype::F64,
            ReduceOp::Sum,
            "one message",
        );
        s.programs[0].push(
            Op::Send {
                peer: to,
                tag: 0,
                region: Region::input(0, 1),
                route: 0,
            },
            &[],
        );
        s.programs[to as usize].push(
            Op::Recv {
                peer: 0,
                tag: 0,
                region: Region::output(0, 1),
                combine: false,
            },
            &[],
        );
        let (a, b) = both_engines(&s, &topo, &SimConfig::default());
        assert_eq!(a.run.by_rank_threads, 1, "to {to}");
        assert_eq!(a.run.by_rank_planes, planes, "to {to}");
        assert_agree(&a, &b, &format!("to {to}"));
    }
}
