//! The Dragon net and its packet model: XOR phases without contention on
//! 2 to 1,024 nodes, every packet delivered in order, efficiency 1 with a
//! free switch, never falling as the buffer grows, distributed control
//! never slower than centralised, the flow model met where its assumptions
//! hold, any schedule running, and the refusals.

use crate::common::topocoll;
use topocoll::algorithms::alltoall::{bruck, dragon, linear, pairwise, ring};
use topocoll::algorithms::{self, Algorithm, Request};
use topocoll::schedule::{verify, Collective, Dtype, ReduceOp, Schedule};
use topocoll::sim::packet::{self, Control, PacketConfig, PacketResult};
use topocoll::sim::{simulate, SimConfig};
use topocoll::topology::{parse_spec, DragonNet, Topology};

fn net(nodes: usize, rate: f64) -> Topology {
    let mut t = parse_spec(&format!("dragonnet:{nodes}")).unwrap();
    t.set_uniform_links(Some(rate), Some(0.0)).unwrap();
    t
}

fn schedule(topo: &Topology, algorithm: &Algorithm, block: u64) -> Schedule {
    let req = Request::new(
        Collective::Alltoall,
        topo.num_ranks(),
        block,
        Dtype::U8,
        ReduceOp::Sum,
        Some(topo),
    )
    .unwrap();
    algorithms::build(algorithm, &req).unwrap()
}

fn run(
    topo: &Topology,
    s: &Schedule,
    buffer: u64,
    packet_time: f64,
    control: Control,
) -> PacketResult {
    let cfg = PacketConfig {
        buffer_bytes: buffer,
        packet_time_s: packet_time,
        switch_time_s: 1e-3,
        control,
    };
    packet::simulate(s, topo, &cfg).unwrap()
}

/// The network's shape and routes: n stages of N/2 elements, n + 1 links a
/// route, and in every XOR phase each link used by exactly one source.
#[test]
fn xor_phases_use_every_link_once_per_phase() {
    for n in 1..=8u32 {
        let nodes = 1usize << n;
        let t = parse_spec(&format!("dragonnet:{nodes}")).unwrap();
        assert_eq!(t.num_ranks(), nodes);
        assert_eq!(t.num_nodes, nodes + n as usize * nodes / 2);
        assert_eq!(t.links.len(), (n as usize + 1) * nodes);
        let mut route = Vec::new();
        for s in 1..nodes {
            let mut used = vec![false; t.links.len()];
            for v in 0..nodes {
                route.clear();
                t.route(v, v ^ s, &mut route);
                assert_eq!(route.len(), n as usize + 1);
                // The route leaves v and ends at v XOR s.
                assert_eq!(t.links[route[0] as usize].from as usize, v);
                assert_eq!(t.links[route[n as usize] as usize].to as usize, v ^ s);
                for w in route.windows(2) {
                    assert_eq!(t.links[w[0] as usize].to, t.links[w[1] as usize].from);
                }
                for &l in &route {
                    assert!(
                        !used[l as usize],
                        "dragonnet:{nodes} phase {s}: link {l} twice"
                    );
                    used[l as usize] = true;
                }
            }
            assert!(
                used.iter().all(|&u| u),
                "dragonnet:{nodes} phase {s}: a link unused"
            );
        }
        assert_eq!(DragonNet::position(5, 3, 0), 5);
    }
}

#[test]
fn no_contention_and_every_packet_in_order_on_2_to_1024_nodes() {
    for n in 1..=10u32 {
        let nodes = 1usize << n;
        let t = net(nodes, 1e9);
        // Two packets a message (one on the largest network, for time).
        let (block, buffer) = if n <= 8 { (100, 64) } else { (64, 64) };
        for alg in [&dragon::DRAGON_NET, &dragon::ALGORITHM] {
            if n > 8 && std::ptr::eq(alg, &dragon::ALGORITHM) {
                continue;
            }
            let s = schedule(&t, alg, block);
            for control in [Control::Distributed, Control::Centralised] {
                for packet_time in [0.0, 1e-7] {
                    let r = run(&t, &s, buffer, packet_time, control);
                    assert_eq!(r.max_link_contention, 0, "{nodes} {alg} {control:?}");
                    assert!(r.delivered_in_order, "{nodes} {alg} {control:?}");
                    let per = block.div_ceil(buffer);
                    assert_eq!(r.packets, (nodes * (nodes - 1)) as u64 * per);
                    if n > 8 {
                        break;
                    }
                }
            }
        }
    }
}

/// A free switch: every link busy from its first packet to its last.
#[test]
fn efficiency_is_one_with_a_free_switch() {
    for nodes in [2usize, 4, 16, 64] {
        let t = net(nodes, 1.3e6);
        for (block, buffer) in [(4096u64, 512u64), (5000, 512), (100, 4096), (1, 1)] {
            let s = schedule(&t, &dragon::DRAGON_NET, block);
            let r = run(&t, &s, buffer, 0.0, Control::Distributed);
            assert!(
                (r.efficiency - 1.0).abs() < 1e-9,
                "{nodes} {block} {buffer}: {}",
                r.efficiency
            );
            // The links never idle, so the time is the node's sends plus a
            // full packet's time on each of the n further links (a short
            // last packet waits behind the full one before it).
            let n = nodes.trailing_zeros() as f64;
            let packet = block.min(buffer) as f64;
            let want = ((nodes - 1) as f64 * block as f64 + n * packet) / 1.3e6;
            assert!(
                (r.time_s - want).abs() < 1e-9 * want,
                "{nodes} {block} {buffer}: {} {want}",
                r.time_s
            );
        }
    }
}

#[test]
fn efficiency_never_falls_as_the_buffer_grows_and_distributed_never_loses() {
    for nodes in [4usize, 16, 64] {
        let t = net(nodes, 1.3e6);
        let s = schedule(&t, &dragon::DRAGON_NET, 8192);
        let mut last = 0.0;
        for buffer in [16u64, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192] {
            let d = run(&t, &s, buffer, 190e-6, Control::Distributed);
            let c = run(&t, &s, buffer, 190e-6, Control::Centralised);
            assert!(
                d.efficiency >= last - 1e-12,
                "{nodes} {buffer}: {} after {last}",
                d.efficiency
            );
            last = d.efficiency;
            assert!(
                d.time_s <= c.time_s * (1.0 + 1e-12),
                "{nodes} {buffer}: {} > {}",
                d.time_s,
                c.time_s
            );
        }
        // The paper's knee: at least 98% from 494 bytes (2 x 190 us at 1.3 MB/s).
        assert!(last > 0.98);
    }
}

/// Large buffers, a free switch, n·b small beside the blocks: the packet
/// engine and the flow engine price the same schedule within 1%.
#[test]
fn packet_and_flow_models_agree_where_the_flow_model_holds() {
    let t = net(16, 1.3e6);
    for (alg, block, buffer) in [
        (&dragon::DRAGON_NET, 1 << 20, 4096u64),
        (&dragon::ALGORITHM, 1 << 20, 1024),
    ] {
        let s = schedule(&t, alg, block);
        let p = run(&t, &s, buffer, 0.0, Control::Distributed);
        let cfg = SimConfig {
            engines: 1,
            ..SimConfig::default()
        };
        let f = simulate(&s, &t, &cfg).unwrap();
        let ratio = p.time_s / f.time_s;
        assert!(
            (1.0..1.01).contains(&ratio),
            "{alg}: packet {} flow {}",
            p.time_s,
            f.time_s
        );
    }
}

#[test]
fn other_schedules_run_without_phase_control() {
    let t = net(16, 1.3e6);
    for alg in [
        &linear::ALGORITHM,
        &pairwise::ALGORITHM,
        &bruck::ALGORITHM,
        &ring::ALGORITHM,
        &dragon::ALGORITHM,
    ] {
        let s = schedule(&t, alg, 1000);
        verify(&s).unwrap();
        let r = run(&t, &s, 256, 1e-5, Control::None);
        assert!(r.delivered_in_order, "{alg}");
        assert!(
            r.time_s > 0.0 && r.efficiency > 0.0 && r.efficiency <= 1.0 + 1e-12,
            "{alg}"
        );
    }
    // Phase control needs XOR phases.
    let s = schedule(&t, &linear::ALGORITHM, 1000);
    let cfg = PacketConfig {
        buffer_bytes: 256,
        packet_time_s: 0.0,
        switch_time_s: 0.0,
        control: Control::Distributed,
    };
    let e = packet::simulate(&s, &t, &cfg).unwrap_err().to_string();
    assert!(e.contains("XOR phases"), "{e}");
}

#[test]
fn the_command_line_prices_with_the_packet_model() {
    let (code, out, err) = topocoll(&[
        "simulate",
        "--model",
        "packet",
        "--topology",
        "dragonnet:16",
        "--collective",
        "alltoall",
        "--algorithm",
        "dragon_net",
        "--size",
        "4KiB",
        "--buffer",
        "512",
        "--link-rate",
        "1.3e6",
        "--latency",
        "0",
        "--packet-time",
        "1e-4",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for k in [
        "time_s",
        "efficiency",
        "max_link_contention",
        "delivered_in_order",
        "packets",
    ] {
        assert!(v.get(k).is_some(), "{k} missing: {out}");
    }
    assert_eq!(v["control"], "distributed");
    assert_eq!(v["max_link_contention"], 0);
    assert_eq!(v["delivered_in_order"], true);
    assert_eq!(v["packets"], 16 * 15 * 8);
    let bad: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "simulate",
                "--model",
                "packet",
                "-t",
                "torus:4x4",
                "-c",
                "alltoall",
                "-a",
                "linear",
                "--buffer",
                "64",
            ],
            "Dragon net",
        ),
        (
            vec![
                "simulate",
                "--model",
                "packet",
                "-t",
                "dragonnet:16",
                "-c",
                "alltoall",
                "-a",
                "linear",
                "--buffer",
                "64",
                "--control",
                "distributed",
            ],
            "XOR phases",
        ),
        (
            vec![
                "simulate",
                "--model",
                "packet",
                "-t",
                "dragonnet:16",
                "-c",
                "alltoall",
                "-a",
                "dragon_net",
            ],
            "--buffer",
        ),
        (
            vec![
                "simulate",
                "--model",
                "packet",
                "-t",
                "dragonnet:16",
                "-c",
                "alltoall",
                "-a",
                "dragon_net",
                "--buffer",
                "0",
            ],
            "--buffer",
        ),
        (
            vec![
                "simulate",
                "--model",
                "packet",
                "-t",
                "dragonnet:16",
                "-c",
                "alltoall",
                "-a",
                "dragon_net",
                "--buffer",
                "64",
                "--engines",
                "2",
            ],
            "--engines",
        ),
        (
            vec![
                "simulate",
                "--model",
                "packet",
                "-t",
                "dragonnet:16",
                "-c",
                "alltoall",
                "-a",
                "dragon_net",
                "--buffer",
                "64",
                "--control",
                "global",
            ],
            "--control",
        ),
        (
            vec![
                "simulate",
                "--model",
                "packet",
                "-t",
                "dragonnet:16",
                "-c",
                "alltoall",
                "-a",
                "dragon_net",
                "--buffer",
                "64",
                "--packet-time",
                "-1",
            ],
            "--packet-time",
        ),
        (
            vec![
                "simulate",
                "--model",
                "packet",
                "-t",
                "dragonnet:16",
                "-c",
                "alltoall",
                "-a",
                "dragon_net",
                "--buffer",
                "64",
                "--link-rate",
                "0",
            ],
            "--link-rate",
        ),
        (
            vec![
                "simulate",
                "-t",
                "dragonnet:16",
                "-c",
                "alltoall",
                "-a",
                "dragon_net",
                "--buffer",
                "64",
            ],
            "packet model",
        ),
        (
            vec![
                "simulate",
                "--model",
                "fluid",
                "-t",
                "dragonnet:16",
                "-c",
                "alltoall",
                "-a",
                "dragon_net",
            ],
            "--model",
        ),
        (
            vec![
                "simulate",
                "-t",
                "dragonnet:12",
                "-c",
                "alltoall",
                "-a",
                "linear",
            ],
            "2^n",
        ),
        (
            vec![
                "simulate",
                "-t",
                "dragonnet:1",
                "-c",
                "alltoall",
                "-a",
                "linear",
            ],
            "2^n",
        ),
    ];
    for (args, want) in bad {
        let (code, out, err) = topocoll(&args);
        assert_eq!(code, 2, "{args:?}: {out} {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// A message's packets are counted in 64 bits, and a run's packets are
/// counted and bounded before it starts: 2^32 + 1 bytes in 4 KiB packets
/// runs to the right count and time; in 1-byte packets it is refused (it
/// would move 2^33 of them), not run to a wrong answer or for hours.
#[test]
fn packet_counts_are_64_bit_and_bounded_before_the_run() {
    let run = |buffer: &str| {
        crate::common::topocoll(&[
            "simulate",
            "--model",
            "packet",
            "-t",
            "dragonnet:2",
            "-c",
            "alltoall",
            "-a",
            "dragon_net",
            "--size",
            "4294967297",
            "--buffer",
            buffer,
            "--format",
            "json",
        ])
    };
    let (code, out, err) = run("4096");
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["packets"], 2 * 1_048_577);
    // 2^32 + 1 bytes at 1 GB/s, both ways at once, and a few hops.
    let t = v["time_s"].as_f64().unwrap();
    assert!((4.29..4.31).contains(&t), "{t}");
    for size in ["4294967297", "4294967296"] {
        let (code, _, err) = crate::common::topocoll(&[
            "simulate",
            "--model",
            "packet",
            "-t",
            "dragonnet:2",
            "-c",
            "alltoall",
            "-a",
            "dragon_net",
            "--size",
            size,
            "--buffer",
            "1",
        ]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("--buffer 1") && err.contains("packets"),
            "{err}"
        );
    }
}
