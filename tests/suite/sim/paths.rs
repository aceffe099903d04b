//! Per-send paths (`Schedule::paths`): the simulator takes a send's path
//! as it takes a default route's links, checks it against the topology
//! first, and keeps it through the JSON format; the fold and the packet
//! model refuse it. Bad paths through the command line: cli::refusals.

use topocoll::algorithms::Request;
use topocoll::schedule::{
    from_json, to_json, to_msccl_xml, verify, Collective, Dtype, Op, ReduceOp, Region, Schedule,
};
use topocoll::sim::{check_routes, packet, simulate, SimConfig};
use topocoll::topology::{parse_spec, parse_toml, LinkId, Topology};
use topocoll_testkit::assert_same_bits;

/// tests/data/networks/detour.toml: h0 h1 behind s0, h2 h3 behind s1, one
/// cable s0-s1 and a detour s0-s2-s1.
pub(crate) const DETOUR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/networks/detour.toml"
);

pub(crate) fn detour() -> Topology {
    parse_toml("detour", &std::fs::read_to_string(DETOUR).unwrap()).unwrap()
}

/// The detour network with the detour's two cables half duplex.
pub(crate) fn detour_half_text() -> String {
    std::fs::read_to_string(DETOUR).unwrap().replace(
        "[[edge]]\na = \"s0\"\nb = \"s2\"\n[[edge]]\na = \"s2\"\nb = \"s1\"\n",
        "[[edge]]\na = \"s0\"\nb = \"s2\"\nduplex = \"half\"\n[[edge]]\na = \"s2\"\nb = \"s1\"\nduplex = \"half\"\n",
    )
}

/// The link from node `a` to node `b` (named), either way round for a
/// half-duplex one.
pub(crate) fn link(t: &Topology, a: &str, b: &str) -> LinkId {
    let named = |n: u32| t.node_name(n);
    let ahead = t
        .links
        .iter()
        .position(|l| named(l.from) == a && named(l.to) == b);
    let back = || {
        (0..t.links.len()).find(|&i| {
            let l = &t.links[i];
            named(l.from) == b && named(l.to) == a && t.both_ways(i as LinkId)
        })
    };
    ahead
        .or_else(back)
        .unwrap_or_else(|| panic!("no link {a} -> {b}")) as LinkId
}

/// The links of a walk through named nodes.
pub(crate) fn walk(t: &Topology, nodes: &[&str]) -> Vec<LinkId> {
    nodes.windows(2).map(|w| link(t, w[0], w[1])).collect()
}

/// Allreduce on the detour's four ranks by pairs: each rank swaps its
/// buffer with rank r+2 (across s0-s1) and combines, then with r^1 (on its
/// own side). Each rank's first send is op 0.
pub(crate) fn pairs_allreduce(count: u64) -> Schedule {
    let mut s = Schedule::new(
        Collective::Allreduce,
        4,
        count,
        Dtype::F64,
        ReduceOp::Sum,
        "pairs",
    );
    let all = Region::output(0, count);
    for r in 0..4u32 {
        let prog = &mut s.programs[r as usize];
        let a = prog.push(Op::send((r + 2) % 4, 0, all), &[]);
        let b = prog.push(Op::recv_combine((r + 2) % 4, 0, all), &[a]);
        let c = prog.push(Op::send(r ^ 1, 1, all), &[b]);
        prog.push(Op::recv_combine(r ^ 1, 1, all), &[c]);
    }
    s
}

/// Sets op 0 of rank `r` (its send across) to route `route`.
pub(crate) fn set_route(s: &mut Schedule, r: usize, route: u32) {
    let Op::Send { route: k, .. } = &mut s.programs[r].ops[0] else {
        panic!("op 0 is a send");
    };
    *k = route;
}

/// The pairs allreduce with ranks 0 and 2 sending across by the detour.
pub(crate) fn pairs_by_detour(t: &Topology, count: u64) -> Schedule {
    let mut s = pairs_allreduce(count);
    let there = s.add_path(walk(t, &["h0", "s0", "s2", "s1", "h2"]));
    let back = s.add_path(walk(t, &["h2", "s1", "s2", "s0", "h0"]));
    set_route(&mut s, 0, there);
    set_route(&mut s, 2, back);
    s
}

#[test]
fn a_path_round_the_detour_frees_the_shared_cable() {
    let t = detour();
    let count = 1 << 17;
    let bytes = (count * 8) as f64;
    for by_rank in [true, false] {
        let cfg = SimConfig {
            by_rank,
            ..SimConfig::default()
        };
        let plain = pairs_allreduce(count);
        verify(&plain).unwrap();
        let routed = pairs_by_detour(&t, count);
        verify(&routed).unwrap();
        check_routes(&routed, &t).unwrap();
        let a = simulate(&plain, &t, &cfg).unwrap();
        let b = simulate(&routed, &t, &cfg).unwrap();
        // Across: two flows share s0 -> s1 (and two s1 -> s0) at half the
        // rate on default routes, each has its own cable with the detour;
        // the swap on each side takes as long in both.
        let saved = a.time_s - b.time_s;
        assert!(
            (saved - bytes / 1e9).abs() <= 1e-9 * a.time_s,
            "by rank {by_rank}: {} vs {}: saved {saved}",
            a.time_s,
            b.time_s
        );
        let (s0s1, s0s2) = (link(&t, "s0", "s1"), link(&t, "s0", "s2"));
        assert_eq!(a.links[s0s1 as usize].peak_flows, 2);
        assert_eq!(a.links[s0s2 as usize].bytes, 0.0);
        assert_eq!(b.links[s0s1 as usize].peak_flows, 1);
        assert_eq!(b.links[s0s2 as usize].bytes, bytes);
    }
}

#[test]
fn paths_round_trip_through_json_to_the_bit() {
    let t = detour();
    let s = pairs_by_detour(&t, 1000);
    let mut text = Vec::new();
    to_json(&s, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("\"paths\":[["), "{text}");
    let back = from_json(&text).unwrap();
    assert_eq!(back, s);
    let cfg = SimConfig::default();
    assert_same_bits(
        &simulate(&s, &t, &cfg).unwrap(),
        &simulate(&back, &t, &cfg).unwrap(),
        "json round trip",
    );
    // No paths, no field.
    let mut plain = Vec::new();
    to_json(&pairs_allreduce(1000), &mut plain).unwrap();
    assert!(!String::from_utf8(plain).unwrap().contains("paths"));
}

#[test]
fn add_path_numbers_after_the_offsets_and_deduplicates() {
    let mut s = pairs_allreduce(4);
    s.offset_route(&[1]);
    s.offset_route(&[-1]);
    assert_eq!(s.add_path(vec![0, 8, 5]), 3);
    assert_eq!(s.add_path(vec![4, 9, 1]), 4);
    assert_eq!(s.add_path(vec![0, 8, 5]), 3);
    assert_eq!(s.paths.len(), 2);
    assert_eq!(s.route_count(), 4);
}

/// Every send on its default route's links, named as a path.
fn default_routes_as_paths(s: &Schedule, t: &Topology) -> Schedule {
    let mut out = s.clone();
    for r in 0..s.ranks {
        for i in 0..s.programs[r].ops.len() {
            let Op::Send { peer, .. } = s.programs[r].ops[i] else {
                continue;
            };
            let mut links = Vec::new();
            t.route(r, peer as usize, &mut links);
            let k = out.add_path(links);
            let Op::Send { route, .. } = &mut out.programs[r].ops[i] else {
                unreachable!()
            };
            *route = k;
        }
    }
    out
}

#[test]
fn a_path_equal_to_the_default_route_simulates_to_the_same_bits_unfolded() {
    let t = parse_spec("torus:8x4").unwrap();
    let req = Request::new(
        Collective::Allreduce,
        t.num_ranks(),
        1 << 12,
        Dtype::F64,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = topocoll::algorithms::build(&topocoll::algorithms::allreduce::ring::ALGORITHM, &req)
        .unwrap();
    let routed = default_routes_as_paths(&s, &t);
    assert!(!routed.paths.is_empty());
    verify(&routed).unwrap();
    let folds = simulate(&s, &t, &SimConfig::default()).unwrap();
    assert!(folds.run.folded > 1, "the ring folds on a torus");
    for by_rank in [true, false] {
        let cfg = SimConfig {
            by_rank,
            ..SimConfig::default()
        };
        let with_paths = simulate(&routed, &t, &cfg).unwrap();
        // The fold does not take paths: the run is the full one.
        assert_eq!(with_paths.run.folded, 1);
        let full = simulate(
            &s,
            &t,
            &SimConfig {
                fold: false,
                ..cfg.clone()
            },
        )
        .unwrap();
        assert_same_bits(&with_paths, &full, "paths equal to the default routes");
    }
}

#[test]
fn the_packet_model_refuses_paths() {
    let t = parse_spec("dragonnet:4").unwrap();
    let req = Request::new(
        Collective::Allgather,
        4,
        16,
        Dtype::U8,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    let s = topocoll::algorithms::build(&topocoll::algorithms::allgather::ring::ALGORITHM, &req)
        .unwrap();
    let routed = default_routes_as_paths(&s, &t);
    let cfg = packet::PacketConfig {
        buffer_bytes: 64,
        packet_time_s: 0.0,
        switch_time_s: 0.0,
        control: packet::Control::None,
    };
    assert!(packet::simulate(&s, &t, &cfg).is_ok());
    let e = packet::simulate(&routed, &t, &cfg).unwrap_err().to_string();
    assert!(e.contains("per-send paths") && !e.contains('\n'), "{e}");
}

#[test]
fn msccl_export_drops_paths_and_counts_them() {
    let t = detour();
    let s = pairs_by_detour(&t, 8);
    let mut xml = Vec::new();
    let lost = to_msccl_xml(&s, &mut xml).unwrap();
    assert_eq!(lost.lost_routes, 2);
    let mut plain = Vec::new();
    to_msccl_xml(&pairs_allreduce(8), &mut plain).unwrap();
    assert_eq!(xml, plain, "the XML is the schedule's without its routes");
}
