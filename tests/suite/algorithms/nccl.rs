//! NCCL's algorithms (`nccl_ring`, `nccl_tree`, `nccl_pat`): verified on
//! the committed NCCL topology files at several channel counts and
//! protocols, their channels' rings and NICs, the double binary tree as
//! NCCL's trees.cc draws it, and NCCL's chunk sizes.

use topocoll::algorithms::nccl::{self, btree, second_btree, tree_of, Channels, Pattern, Protocol};
use topocoll::algorithms::Error;
use topocoll::algorithms::{self, Request, ALGORITHMS};
use topocoll::schedule::{self, Collective, Dtype, Op, ReduceOp, Schedule};
use topocoll::topology::{self, Topology};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/nccl");

/// The committed servers and the two-server cluster.
fn machines() -> Vec<Topology> {
    [
        "dgx-a100-nvswitch.xml",
        "p4d-24xl-topo.xml",
        "azure-ndv4-topo.xml",
        "rccl-mi300x-8p-940.xml",
        "cluster-p4d-x2.toml",
    ]
    .iter()
    .map(|f| topology::parse_spec(&format!("{DATA}/{f}")).unwrap())
    .collect()
}

fn request<'t>(
    collective: Collective,
    topo: &'t Topology,
    bytes: u64,
    channels: usize,
    protocol: Protocol,
) -> Request<'t> {
    let dtype = if collective.is_reduction() {
        Dtype::F32
    } else {
        Dtype::U8
    };
    let mut req = Request::new(
        collective,
        topo.num_ranks(),
        bytes,
        dtype,
        ReduceOp::Sum,
        Some(topo),
    )
    .unwrap();
    req.channels = Some(channels);
    req.protocol = Some(protocol);
    req
}

fn nccl_entries() -> impl Iterator<Item = &'static algorithms::Algorithm> {
    ALGORITHMS.iter().filter(|a| a.channels)
}

#[test]
fn nccl_ring_tree_and_pat_verify_on_the_nccl_files_at_several_channel_counts() {
    let entries: Vec<String> = nccl_entries()
        .map(|a| format!("{}/{}", a.collective, a.name))
        .collect();
    assert_eq!(
        entries,
        [
            "allreduce/nccl_ring",
            "allreduce/nccl_tree",
            "bcast/nccl_ring",
            "reduce/nccl_ring",
            "allgather/nccl_ring",
            "allgather/nccl_pat",
            "reduce_scatter/nccl_ring",
            "reduce_scatter/nccl_pat"
        ]
    );
    let mut verified = 0;
    for topo in machines() {
        for a in nccl_entries() {
            let roots: &[u32] = if a.collective.with_root(0).root().is_some() {
                &[0, 5]
            } else {
                &[0]
            };
            for &root in roots {
                let collective = a.collective.with_root(root);
                for (channels, protocol, bytes) in [
                    (1, Protocol::Simple, 24),
                    (2, Protocol::Simple, 40_000),
                    (3, Protocol::Ll, 96 << 10),
                    (8, Protocol::Ll128, 40_000),
                    (16, Protocol::Simple, 4096),
                ] {
                    let req = request(collective, &topo, bytes, channels, protocol);
                    let what = format!(
                        "{} {} on {} ({channels} channels, {protocol}, {bytes} B)",
                        a.collective, a.name, topo.name
                    );
                    let s = algorithms::build(a, &req).unwrap_or_else(|e| panic!("{what}: {e}"));
                    schedule::verify(&s).unwrap_or_else(|e| panic!("{what}: {e}"));
                    topocoll::sim::check_routes(&s, &topo)
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    verified += 1;
                }
            }
        }
    }
    // 5 machines × (6 unrooted + 2 rooted at two roots) × 5 settings.
    assert_eq!(verified, 5 * 10 * 5);
}

/// The NIC ports a path crosses, in order.
fn ports_crossed(topo: &Topology, links: &[u32]) -> Vec<String> {
    let mut ports: Vec<String> = links
        .iter()
        .flat_map(|&l| {
            let link = &topo.links[l as usize];
            [topo.node_name(link.from), topo.node_name(link.to)]
        })
        .filter(|n| n.contains(".net"))
        .collect();
    ports.dedup();
    ports
}

#[test]
fn each_channel_enters_a_server_at_its_nics_gpu_and_crosses_its_own_nic() {
    let topo = topology::parse_spec(&format!("{DATA}/cluster-p4d-x2.toml")).unwrap();
    let layout = topo.gpus.clone().unwrap();
    assert_eq!((layout.servers, layout.gpus, layout.ports), (2, 8, 4));
    let req = request(Collective::Allreduce, &topo, 1 << 16, 8, Protocol::Simple);
    let ch = Channels::new(&req).unwrap();
    let mut rings = Vec::new();
    for c in 0..8 {
        for server in &ch.intra[c] {
            // The ring enters each server at a GPU whose nearest NIC is the channel's.
            assert_eq!(
                layout.gpu_port[server[0] % 8],
                c % 4,
                "channel {c}: {server:?}"
            );
            assert_eq!(server.len(), 8);
        }
        rings.push(ch.ring(c));
    }
    // Eight channels, eight rings: each channel's own order.
    let mut distinct = rings.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 8);
    // Every message between the servers crosses the channel's NIC port on
    // both sides, and no other.
    for a in [
        "allreduce/nccl_ring",
        "allreduce/nccl_tree",
        "allgather/nccl_pat",
    ] {
        let (coll, name) = a.split_once('/').unwrap();
        let alg = algorithms::find_by_name(coll, name).unwrap();
        let req = request(
            alg.collective.with_root(0),
            &topo,
            1 << 16,
            8,
            Protocol::Simple,
        );
        let s = algorithms::build(alg, &req).unwrap();
        let mut crossings = 0;
        for (r, prog) in s.programs.iter().enumerate() {
            for op in &prog.ops {
                let Op::Send {
                    peer, tag, route, ..
                } = *op
                else {
                    continue;
                };
                if r / 8 == peer as usize / 8 {
                    assert_eq!(route, 0);
                    continue;
                }
                let links = nccl::path_links(&s, route).expect("a path between servers");
                // p4d's NICs in `dev` order; channel c takes NIC c mod 4.
                let nic = [
                    "0000:10:1b.0",
                    "0000:20:1b.0",
                    "0000:90:1b.0",
                    "0000:a0:1b.0",
                ][tag as usize % 4];
                let want: Vec<String> = [r / 8, peer as usize / 8]
                    .iter()
                    .map(|sv| format!("s{sv}.net@nic {nic}"))
                    .collect();
                assert_eq!(
                    ports_crossed(&topo, links),
                    want,
                    "{a} {r} -> {peer}, channel {tag}"
                );
                crossings += 1;
            }
        }
        assert!(crossings > 0, "{a}");
    }
}

/// (parent, children) of each rank of a binary tree function.
fn shape(n: usize, f: fn(usize, usize) -> nccl::Links) -> Vec<(Option<usize>, Vec<usize>)> {
    (0..n)
        .map(|r| {
            let (u, d0, d1, _) = f(n, r);
            (u, [d0, d1].into_iter().flatten().collect())
        })
        .collect()
}

#[test]
fn the_binary_tree_is_the_one_trees_cc_draws_for_14_ranks() {
    // src/graph/trees.cc: 0 - 8; 8: 4, 12; 4: 2, 6; 12: 10, 13; 2: 1, 3;
    // 6: 5, 7; 10: 9, 11; the odd ranks leaves.
    let want: [(Option<usize>, &[usize]); 14] = [
        (None, &[8]),
        (Some(2), &[]),
        (Some(4), &[1, 3]),
        (Some(2), &[]),
        (Some(8), &[2, 6]),
        (Some(6), &[]),
        (Some(4), &[5, 7]),
        (Some(6), &[]),
        (Some(0), &[4, 12]),
        (Some(10), &[]),
        (Some(12), &[9, 11]),
        (Some(10), &[]),
        (Some(8), &[10, 13]),
        (Some(12), &[]),
    ];
    let got = shape(14, btree);
    for (r, (u, d)) in want.iter().enumerate() {
        assert_eq!(got[r], (*u, d.to_vec()), "rank {r}");
    }
}

#[test]
fn the_second_tree_mirrors_12_ranks_and_shifts_13_as_trees_cc_draws() {
    // Mirrored (12): 11 - 3; 3: 7, 1; 7: 9, 5; 1: 2, 0; 9: 10, 8; 5: 6, 4.
    let got = shape(12, second_btree);
    assert_eq!(got[11], (None, vec![3]));
    assert_eq!(got[3], (Some(11), vec![7, 1]));
    assert_eq!(got[7], (Some(3), vec![9, 5]));
    assert_eq!(got[1], (Some(3), vec![2, 0]));
    assert_eq!(got[9], (Some(7), vec![10, 8]));
    assert_eq!(got[5], (Some(7), vec![6, 4]));
    // Shifted (13): 1 - 9; 9: 5, 0; 5: 3, 7; 0: 11; 3: 2, 4; 7: 6, 8; 11: 10, 12.
    let got = shape(13, second_btree);
    assert_eq!(got[1], (None, vec![9]));
    assert_eq!(got[9], (Some(1), vec![5, 0]));
    assert_eq!(got[5], (Some(9), vec![3, 7]));
    assert_eq!(got[0], (Some(9), vec![11]));
    assert_eq!(got[3], (Some(5), vec![2, 4]));
    assert_eq!(got[11], (Some(0), vec![10, 12]));
}

#[test]
fn both_trees_span_every_rank_with_at_most_three_children_a_rank() {
    for servers in 1..=33 {
        for ppn in 1..=4 {
            let intra: Vec<Vec<usize>> = (0..servers)
                .map(|s| (0..ppn).map(|g| s * ppn + (g + s) % ppn).collect())
                .collect();
            for second in [false, true] {
                let t = tree_of(&intra, second);
                let p = servers * ppn;
                let roots: Vec<usize> = (0..p).filter(|&r| t.nodes[r].up.is_none()).collect();
                assert_eq!(roots.len(), 1, "{servers}x{ppn} {second}");
                for r in 0..p {
                    assert!(t.nodes[r].down.len() <= 3);
                    for &d in &t.nodes[r].down {
                        assert_eq!(t.nodes[d].up, Some(r), "{servers}x{ppn}: {r} -> {d}");
                    }
                    // Up from every rank reaches the root.
                    let (mut at, mut hops) = (r, 0);
                    while let Some(u) = t.nodes[at].up {
                        at = u;
                        hops += 1;
                        assert!(hops <= p);
                    }
                    assert_eq!(at, roots[0]);
                }
            }
        }
    }
}

#[test]
fn with_an_even_server_count_no_server_is_inner_in_both_trees() {
    for n in (2..=64).step_by(2) {
        let inner = |f: fn(usize, usize) -> nccl::Links, r| {
            let (_, d0, d1, _) = f(n, r);
            d0.is_some() || d1.is_some()
        };
        for r in 0..n {
            assert!(!(inner(btree, r) && inner(second_btree, r)), "{n}: {r}");
        }
    }
}

#[test]
fn chunk_sizes_are_nccls_by_protocol_and_pattern() {
    // calcCollChunking: Simple's step is 4 MiB / 8; a ring chunk of
    // allreduce, allgather and reduce_scatter is 4 steps, bcast's and
    // reduce's one; LL's step (64 KiB of lines) is half flags; LL128's
    // (600 KiB) loses 1 line word in 16; PAT halves its chunk to 64 KiB
    // while 32 (allgather) or 16 (reduce_scatter) chunks exceed the bytes.
    let big = 1 << 30;
    assert_eq!(
        nccl::chunk_bytes(Protocol::Simple, Pattern::Ring, big, 2, 16),
        2 << 20
    );
    assert_eq!(
        nccl::chunk_bytes(Protocol::Simple, Pattern::Pipeline, big, 2, 16),
        512 << 10
    );
    assert_eq!(
        nccl::chunk_bytes(Protocol::Simple, Pattern::Tree, big, 2, 16),
        512 << 10
    );
    assert_eq!(
        nccl::chunk_bytes(Protocol::Ll, Pattern::Ring, big, 2, 16),
        32 << 10
    );
    assert_eq!(
        nccl::chunk_bytes(Protocol::Ll128, Pattern::Ring, big, 2, 16),
        576_000
    );
    assert_eq!(
        nccl::chunk_bytes(Protocol::Simple, Pattern::PatAllgather, 8 << 20, 8, 8),
        256 << 10
    );
    assert_eq!(
        nccl::chunk_bytes(Protocol::Simple, Pattern::PatReduceScatter, 8 << 20, 8, 8),
        512 << 10
    );
    assert_eq!(
        nccl::chunk_bytes(Protocol::Simple, Pattern::PatAllgather, 1 << 10, 8, 8),
        64 << 10
    );
    // Tree LL128 halves while a channel has too few chunks for its depth.
    assert_eq!(
        nccl::chunk_bytes(Protocol::Ll128, Pattern::Tree, 1 << 20, 4, 32),
        71_040
    );
    for p in Protocol::ALL {
        assert_eq!(
            nccl::chunk_bytes(p, Pattern::Ring, big, 1, 1) % p.grain_bytes(),
            0
        );
    }
}

/// The distances of a rank's sends, in program order, and its peers.
fn sends(s: &Schedule, r: usize) -> Vec<usize> {
    let p = s.ranks;
    s.programs[r]
        .ops
        .iter()
        .filter_map(|op| match *op {
            Op::Send { peer, .. } => Some(peer as usize),
            _ => None,
        })
        .map(|peer| (peer + p - r) % p)
        .collect()
}

#[test]
fn pat_sends_one_message_a_step_at_power_of_two_distances() {
    let one = |name: &str, c: Collective| {
        let alg = algorithms::find(c.kind(), name).unwrap();
        let mut req = Request::new(c, 8, 64, Dtype::F32, ReduceOp::Sum, None).unwrap();
        req.channels = Some(1);
        algorithms::build(alg, &req).unwrap()
    };
    // allgather: step t sends to r − 2^b, b the lowest bit of t, near first.
    let ag = one("nccl_pat", Collective::Allgather);
    for r in 0..8 {
        assert_eq!(sends(&ag, r), [7, 6, 7, 4, 7, 6, 7]);
    }
    // reduce_scatter: to r + 2^b, from the farthest block down: at odd t
    // the own contribution at distance t, then the partial at t − 1.
    let rs = one("nccl_pat", Collective::ReduceScatter);
    for r in 0..8 {
        assert_eq!(sends(&rs, r), [1, 2, 1, 4, 1, 2, 1]);
    }
}

#[test]
fn the_ring_allreduce_starts_each_rank_at_the_chunk_before_its_own() {
    // all_reduce.h: step 0 sends chunk ringIx − 1; on one channel of four
    // ranks, rank r (ring index r) sends chunk r − 1 of four first.
    let alg = algorithms::find_by_name("allreduce", "nccl_ring").unwrap();
    let mut req = Request::new(
        Collective::Allreduce,
        4,
        4 * 1024,
        Dtype::F32,
        ReduceOp::Sum,
        None,
    )
    .unwrap();
    req.channels = Some(1);
    let s = algorithms::build(alg, &req).unwrap();
    for r in 0..4 {
        let Op::Send { region, peer, .. } = s.programs[r].ops[0] else {
            panic!("rank {r} starts with a send");
        };
        assert_eq!(peer as usize, (r + 1) % 4);
        assert_eq!(region.offset, ((r + 3) % 4) as u64 * 256);
        assert_eq!(region.count, 256);
    }
}

#[test]
fn bad_channel_counts_and_channels_for_other_algorithms_are_refused() {
    let alg = algorithms::find_by_name("allreduce", "nccl_tree").unwrap();
    for c in [0, 65] {
        let mut req = Request::new(
            Collective::Allreduce,
            4,
            64,
            Dtype::F32,
            ReduceOp::Sum,
            None,
        )
        .unwrap();
        req.channels = Some(c);
        match algorithms::build(alg, &req) {
            Err(Error::Base(topocoll_base::Error::Param { param, .. })) => {
                assert_eq!(param, "channels")
            }
            other => panic!("{c} channels: {other:?}"),
        }
    }
    let ring = algorithms::find_by_name("allreduce", "ring").unwrap();
    let mut req = Request::new(
        Collective::Allreduce,
        4,
        64,
        Dtype::F32,
        ReduceOp::Sum,
        None,
    )
    .unwrap();
    req.protocol = Some(Protocol::Ll);
    assert!(matches!(
        algorithms::build(ring, &req),
        Err(Error::Unsupported { .. })
    ));
    assert!(Protocol::parse("ll128").is_ok());
    assert!(matches!(
        Protocol::parse("LL64"),
        Err(Error::Base(topocoll_base::Error::Param { .. }))
    ));
}
