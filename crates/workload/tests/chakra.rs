//! Chakra execution traces: small traces written here with prost replayed
//! to times worked out by hand, ASTRA-sim's own example traces read and
//! replayed, and the one line each bad trace gets.

mod common;

use common::{close, config, network, BW, LAT};
use std::path::{Path, PathBuf};
use topocoll_algorithms::{self as algorithms, Request};
use topocoll_base::error::Error;
use topocoll_schedule::{CollectiveKind, Dtype, ReduceOp};
use topocoll_sim::simulate;
use topocoll_topology::Topology;
use topocoll_workload::chakra::et_def::{
    attribute_proto::Value, AttributeProto, CollectiveCommType, GlobalMetadata, Node, NodeType,
};
use topocoll_workload::chakra::CommGroups;
use topocoll_workload::{
    read, read_with, replay_trace, Choice, ReadOptions, Replayed, Semantics, Trace,
};

fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        value: Some(Value::Int64Val(v)),
        ..Default::default()
    }
}

fn node(id: u64, kind: NodeType, deps: &[u64], attr: Vec<AttributeProto>) -> Node {
    Node {
        id,
        name: format!("node{id}"),
        r#type: kind as i32,
        data_deps: deps.to_vec(),
        attr,
        ..Default::default()
    }
}

fn send(id: u64, deps: &[u64], to: i64, bytes: i64) -> Node {
    let attr = vec![
        int("comm_dst", to),
        int("comm_size", bytes),
        int("comm_tag", 0),
    ];
    node(id, NodeType::CommSendNode, deps, attr)
}

fn recv(id: u64, deps: &[u64], from: i64, bytes: i64) -> Node {
    let attr = vec![
        int("comm_src", from),
        int("comm_size", bytes),
        int("comm_tag", 0),
    ];
    node(id, NodeType::CommRecvNode, deps, attr)
}

fn comp(id: u64, deps: &[u64], micros: u64) -> Node {
    Node {
        duration_micros: micros,
        ..node(id, NodeType::CompNode, deps, Vec::new())
    }
}

fn coll(id: u64, deps: &[u64], t: CollectiveCommType, bytes: i64) -> Node {
    let attr = vec![int("comm_type", t as i64), int("comm_size", bytes)];
    node(id, NodeType::CommCollNode, deps, attr)
}

/// A folder of its own for each test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("topocoll-chakra-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One rank's file as Chakra writes it.
fn encode(nodes: &[Node]) -> Vec<u8> {
    let meta = GlobalMetadata {
        version: "0.0.4".into(),
        ..Default::default()
    };
    topocoll_workload::chakra::encode(&meta, nodes)
}

/// Writes `ranks` as `DIR/t.R.et` and returns the prefix `DIR/t`.
fn write(dir: &Path, ranks: &[Vec<Node>]) -> PathBuf {
    for (r, nodes) in ranks.iter().enumerate() {
        std::fs::write(dir.join(format!("t.{r}.et")), encode(nodes)).unwrap();
    }
    dir.join("t")
}

fn replayed(path: &Path, topo: &Topology, choice: &Choice, flops: Option<f64>) -> Replayed {
    let sem = Semantics {
        flops,
        ..Semantics::default()
    };
    replay_trace(&read(path).unwrap(), topo, choice, &sem, &config()).unwrap()
}

/// A blocking ping-pong of 1 MB each way: two message times.
#[test]
fn a_chakra_ping_pong_takes_two_message_times() {
    let dir = scratch("pingpong");
    let prefix = write(
        &dir,
        &[
            vec![send(0, &[], 1, 1_000_000), recv(1, &[0], 1, 1_000_000)],
            vec![recv(7, &[], 0, 1_000_000), send(8, &[7], 0, 1_000_000)],
        ],
    );
    let r = replayed(&prefix, &network("mesh:2"), &Choice::default(), None);
    close(r.result.time_s, 2.0 * (LAT + 1e6 / BW));
    assert_eq!((r.messages, r.message_bytes), (2, 2_000_000));
}

/// Each rank computes (1 and 2 ms), then a recursive-doubling allreduce of
/// 8,000 bytes on two ranks: one exchange that the later rank starts. The
/// compute may be given as operations (`num_ops`) over the host's speed.
#[test]
fn chakra_compute_then_allreduce_waits_for_the_slower_rank() {
    let dir = scratch("compute");
    let ar = CollectiveCommType::AllReduce;
    let prefix = write(
        &dir,
        &[
            vec![comp(0, &[], 1000), coll(1, &[0], ar, 8000)],
            vec![comp(0, &[], 2000), coll(1, &[0], ar, 8000)],
        ],
    );
    let choice = Choice::parse("allreduce=recursive_doubling").unwrap();
    let r = replayed(&prefix, &network("mesh:2"), &choice, None);
    close(r.result.time_s, 2e-3 + LAT + 8000.0 / BW);
    close(r.rank_compute_s[0], 1e-3);
    close(r.rank_compute_s[1], 2e-3);
    assert_eq!(r.calls.len(), 1);
    assert_eq!(
        (r.calls[0].bytes, r.calls[0].algorithm),
        (8000, "recursive_doubling")
    );

    let ops = |id, n: i64| {
        let mut c = node(id, NodeType::CompNode, &[], vec![int("num_ops", n)]);
        c.name = "gemm".into();
        c
    };
    let dir = scratch("num_ops");
    let prefix = write(
        &dir,
        &[
            vec![ops(0, 1_000_000), coll(1, &[0], ar, 8000)],
            vec![ops(0, 2_000_000), coll(1, &[0], ar, 8000)],
        ],
    );
    let r = replayed(&prefix, &network("mesh:2"), &choice, Some(1e9));
    close(r.result.time_s, 2e-3 + LAT + 8000.0 / BW);
}

/// Two sends of rank 0 that depend on nothing go at once; a control
/// dependency puts the second after the first has arrived.
#[test]
fn chakra_dependencies_order_nodes_and_independent_nodes_overlap() {
    let time = |ctrl: bool| {
        let dir = scratch(if ctrl { "ctrl" } else { "free" });
        let mut second = send(1, &[], 2, 1_000_000);
        if ctrl {
            second.ctrl_deps = vec![0];
        }
        let prefix = write(
            &dir,
            &[
                vec![send(0, &[], 1, 1_000_000), second],
                vec![recv(0, &[], 0, 1_000_000)],
                vec![recv(0, &[], 0, 1_000_000)],
            ],
        );
        replayed(&prefix, &network("torus:3"), &Choice::default(), None)
            .result
            .time_s
    };
    close(time(false), LAT + 1e6 / BW);
    close(time(true), 2.0 * (LAT + 1e6 / BW));
}

/// The nodes of a file need not be in dependency order: a node is taken
/// after those it depends on.
#[test]
fn chakra_nodes_out_of_file_order_run_after_their_dependencies() {
    let dir = scratch("order");
    let prefix = write(
        &dir,
        &[
            vec![send(5, &[3], 1, 1_000_000), comp(3, &[], 1000)],
            vec![recv(0, &[], 0, 1_000_000)],
        ],
    );
    let r = replayed(&prefix, &network("mesh:2"), &Choice::default(), None);
    close(r.result.time_s, 1e-3 + LAT + 1e6 / BW);
}

fn data(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/chakra")
        .join(dir)
}

/// ASTRA-sim's microbenchmarks (one collective node per rank) price as the
/// collective alone: the same algorithm's schedule simulated by itself
/// (topocoll's algorithms, named, run as their schedules say; the default
/// allreduce sends as SMPI's does).
#[test]
fn astra_sims_microbenchmarks_price_as_their_collective_alone() {
    let topo = network("torus:4");
    let choice =
        Choice::parse("allreduce=ring,allgather=ring,alltoall=linear,reduce_scatter=ring").unwrap();
    for (trace, kind, bytes) in [
        (
            "all_reduce_4npus_1MB/all_reduce",
            CollectiveKind::Allreduce,
            1 << 20,
        ),
        (
            "all_gather_4npus_1MB/all_gather.0.et",
            CollectiveKind::Allgather,
            1 << 20,
        ),
        (
            "all_to_all_4npus_1MB/all_to_all.3.et",
            CollectiveKind::Alltoall,
            1 << 18,
        ),
        (
            "reduce_scatter_4npus_1MB/reduce_scatter",
            CollectiveKind::ReduceScatter,
            1 << 20,
        ),
    ] {
        let r = replayed(&data(trace), &topo, &choice, None);
        assert_eq!(r.calls.len(), 1, "{trace}");
        let call = &r.calls[0];
        assert_eq!(
            (call.collective.kind(), call.bytes),
            (kind, bytes),
            "{trace}"
        );
        let alg = algorithms::find(kind, call.algorithm).unwrap();
        let c = kind.with_root(0);
        let req = Request::new(c, 4, bytes, Dtype::U8, ReduceOp::Sum, Some(&topo)).unwrap();
        let alone = simulate(&algorithms::build(alg, &req).unwrap(), &topo, &config()).unwrap();
        close(r.result.time_s, alone.time_s);
    }
}

/// ASTRA-sim's custom ring allreduce (MSCCL's, as Chakra send, receive and
/// compute nodes) on a ring: 14 steps of a 128 KiB message, each send
/// waited for, and 7 reductions of 7 us.
#[test]
fn astra_sims_custom_ring_allreduce_replays_its_sends_and_receives() {
    let trace = data("custom_ring_allreduce_8npus_1MB/custom_allreduce");
    let r = replayed(&trace, &network("torus:8"), &Choice::default(), None);
    assert_eq!((r.messages, r.message_bytes), (112, 112 * 131_072));
    assert!(r.calls.is_empty());
    close(r.result.time_s, 14.0 * (LAT + 131_072.0 / BW) + 7.0 * 7e-6);
}

/// Each bad trace is refused in one error naming its file and the
/// message's place in it, or the file that is missing.
#[test]
fn bad_chakra_traces_are_refused_naming_the_file_and_message() {
    let dir = scratch("bad");
    let topo = network("mesh:2");
    let fails = |ranks: &[Vec<Node>], says: &str, at: &str| {
        for f in std::fs::read_dir(&dir).unwrap() {
            std::fs::remove_file(f.unwrap().path()).unwrap();
        }
        let prefix = write(&dir, ranks);
        let e = read(&prefix)
            .and_then(|t| {
                replay_trace(
                    &t,
                    &topo,
                    &Choice::default(),
                    &Semantics::default(),
                    &config(),
                )
            })
            .err()
            .unwrap_or_else(|| panic!("{says}: replayed"));
        let msg = e.to_string();
        assert!(
            matches!(e.base(), Some(Error::Parse { .. })),
            "{says}: {e:?}"
        );
        assert!(msg.contains(says), "expected '{says}' in: {msg}");
        let file = dir.join(at.split(':').next().unwrap());
        assert!(
            msg.starts_with(&format!(
                "{}:{}",
                file.display(),
                &at[at.find(':').unwrap() + 1..]
            )),
            "{at}: {msg}"
        );
        assert_eq!(msg.lines().count(), 1, "{msg}");
    };
    let pp = || {
        vec![
            vec![send(0, &[], 1, 8), recv(1, &[0], 1, 8)],
            vec![recv(0, &[], 0, 8), send(1, &[0], 0, 8)],
        ]
    };
    let mut r = pp();
    r[1][0].r#type = 42;
    fails(&r, "unknown node type 42", "t.1.et:2");
    let mut r = pp();
    r[0][1].data_deps = vec![9];
    fails(
        &r,
        "node 1 depends on node 9, which the file does not hold",
        "t.0.et:3",
    );
    let mut r = pp();
    r[1].pop();
    fails(
        &r,
        "rank 0 receives from rank 1 with tag 0, but rank 1 sends it no such message",
        "t.0.et:3",
    );
    let mut r = pp();
    r[1].remove(0);
    r[1][0].data_deps.clear();
    fails(
        &r,
        "rank 0 sends to rank 1 with tag 0, but rank 1 never receives it",
        "t.0.et:2",
    );
    let mut r = pp();
    r[0][0].data_deps = vec![1];
    fails(&r, "dependencies form a cycle", "t.0.et:2");
    let mut r = pp();
    r[0][0].id = 1;
    fails(&r, "node 1 is defined twice", "t.0.et:3");
    let mut r = pp();
    r[0][0].attr.retain(|a| a.name != "comm_dst");
    fails(&r, "node 0: a send without comm_dst", "t.0.et:2");
    let mut r = pp();
    r[0][0].attr[0] = int("comm_dst", 5);
    fails(&r, "comm_dst 5 is not a rank of the trace's 2", "t.0.et:2");
    let gather = |id| coll(id, &[], CollectiveCommType::Gather, 8);
    fails(
        &[vec![gather(0)], vec![gather(0)]],
        "comm_type 3 (Gather) is not replayed",
        "t.0.et:2",
    );
    let ar = |bytes| coll(0, &[], CollectiveCommType::AllReduce, bytes);
    fails(
        &[vec![ar(8)], vec![ar(16)]],
        "collective call 1: rank 1 calls allreduce of 16 bytes",
        "t.1.et:2",
    );

    // A truncated file, a gzip-compressed one, a message that is no node.
    let prefix = write(&dir, &pp());
    let file = dir.join("t.1.et");
    let whole = std::fs::read(&file).unwrap();
    let cases: [(Vec<u8>, &str); 3] = [
        (whole[..whole.len() - 3].to_vec(), ":3: message 3 is"),
        (vec![0x1f, 0x8b, 8, 0], ":1: the file is gzip-compressed"),
        (
            [&whole[..], &[3, 0x0a, 0xff, 0xff]].concat(),
            ":4: message 4 is not a Chakra Node",
        ),
    ];
    for (bytes, says) in cases {
        std::fs::write(&file, bytes).unwrap();
        let msg = read(&prefix).err().unwrap().to_string();
        assert!(
            msg.starts_with(&file.display().to_string()) && msg.contains(says),
            "{says}: {msg}"
        );
    }
    // A rank's file missing between others.
    std::fs::write(dir.join("t.3.et"), encode(&[])).unwrap();
    std::fs::write(&file, &whole).unwrap();
    let msg = read(&prefix).err().unwrap().to_string();
    assert!(msg.contains("rank 2's file"), "{msg}");
}

/// A file that is not text is read as Chakra's whatever its name; each
/// rank file of a prefix names the whole trace.
#[test]
fn chakra_traces_are_told_apart_by_name_and_content() {
    let dir = scratch("detect");
    write(&dir, &[vec![comp(0, &[], 5)], vec![comp(0, &[], 5)]]);
    let other = dir.join("rank0.bin");
    std::fs::copy(dir.join("t.0.et"), &other).unwrap();
    for (path, ranks) in [(dir.join("t"), 2), (dir.join("t.1.et"), 2), (other, 1)] {
        match read(&path).unwrap() {
            Trace::Actions(w) => assert_eq!(w.ranks(), ranks, "{}", path.display()),
            Trace::Goal(_) => panic!("{} read as GOAL", path.display()),
        }
    }
}

/// A collective node on the communicator group its `pg_name` names.
fn coll_on(id: u64, t: CollectiveCommType, bytes: i64, pg: &str) -> Node {
    let mut n = coll(id, &[], t, bytes);
    n.attr.push(AttributeProto {
        name: "pg_name".into(),
        value: Some(Value::StringVal(pg.into())),
        ..Default::default()
    });
    n
}

fn groups(text: &str) -> CommGroups {
    CommGroups::parse("groups.json", text).unwrap()
}

fn read_grouped(prefix: &Path, g: &CommGroups) -> topocoll_workload::Result<Trace> {
    let opts = ReadOptions {
        comm_groups: Some(g.clone()),
    };
    read_with(prefix, &opts)
}

/// Four ranks on a line (0-1-2-3) in groups {0, 1} and {2, 3}, each
/// broadcasting 1 MB from its group's rank 0: the messages 0 -> 1 and
/// 2 -> 3 cross links of their own, one message time in all (on the world
/// the binomial bcast of four ranks takes two). `pg_name` "0" is the world.
#[test]
fn chakra_collectives_run_on_the_group_their_pg_name_names() {
    let dir = scratch("groups");
    let b = CollectiveCommType::Broadcast;
    let ranks: Vec<Vec<Node>> = (0..4)
        .map(|r| vec![coll_on(0, b, 1_000_000, if r < 2 { "1" } else { "2" })])
        .collect();
    let prefix = write(&dir, &ranks);
    let g = groups(r#"{"1": [0, 1], "2": [2, 3]}"#);
    let t = read_grouped(&prefix, &g).unwrap();
    let sem = Semantics::default();
    let r = replay_trace(&t, &network("mesh:4"), &Choice::default(), &sem, &config()).unwrap();
    close(r.result.time_s, LAT + 1e6 / BW);
    // The same nodes on the world (`pg_name` "0"): longer.
    let world: Vec<Vec<Node>> = (0..4)
        .map(|_| vec![coll_on(0, b, 1_000_000, "0")])
        .collect();
    let prefix = write(&dir, &world);
    let t = read_grouped(&prefix, &g).unwrap();
    let w = replay_trace(&t, &network("mesh:4"), &Choice::default(), &sem, &config()).unwrap();
    assert!(
        w.result.time_s > 1.5 * r.result.time_s,
        "{} s on the world",
        w.result.time_s
    );
}

/// An all-to-all's comm_size is split over its group's ranks, not the
/// world's: two groups of two each move comm_size / 2 to the other rank.
#[test]
fn a_groups_all_to_all_splits_its_buffer_over_the_groups_ranks() {
    let dir = scratch("groups-a2a");
    let a2a = CollectiveCommType::AllToAll;
    let ranks: Vec<Vec<Node>> = (0..4)
        .map(|r| {
            vec![coll_on(
                0,
                a2a,
                2_000_000,
                if r % 2 == 0 { "1" } else { "2" },
            )]
        })
        .collect();
    let prefix = write(&dir, &ranks);
    let t = read_grouped(&prefix, &groups(r#"{"1": [0, 2], "2": [1, 3]}"#)).unwrap();
    let r = replay_trace(
        &t,
        &network("mesh:4"),
        &Choice::default(),
        &Semantics::default(),
        &config(),
    )
    .unwrap();
    // 0 <-> 2 and 1 <-> 3 both cross 1 -> 2 (and 2 -> 1): two 1 MB
    // messages share each direction of it, two hops.
    close(r.result.time_s, 2.0 * LAT + 2e6 / BW);
}

/// Groups that cannot be read, and nodes that name a group wrongly, are
/// refused in one line naming the file.
#[test]
fn bad_communicator_groups_are_refused_naming_the_file() {
    for (text, says) in [
        ("[0, 1]", "not a JSON object of communicator groups"),
        (r#"{"0": [0, 1]}"#, "0 is the world"),
        (r#"{"one": [0, 1]}"#, "a group's id is a whole number"),
        (r#"{"1": [0, 0]}"#, "rank 0 is listed twice"),
        (r#"{"1": []}"#, "it holds no rank"),
        (r#"{"1": [0, -1]}"#, "-1 is not a rank"),
        (r#"{"1": 3}"#, "its ranks are a list"),
    ] {
        let e = CommGroups::parse("groups.json", text).unwrap_err();
        assert!(
            matches!(e.base(), Some(Error::Parse { .. })),
            "{text}: {e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with("groups.json:") && msg.contains(says),
            "{text}: {msg}"
        );
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
    let dir = scratch("groups-bad");
    let b = CollectiveCommType::Broadcast;
    let two = |pg: &str| {
        write(
            &dir,
            &[vec![coll_on(0, b, 8, pg)], vec![coll_on(0, b, 8, pg)]],
        )
    };
    let g = groups(r#"{"1": [0, 1], "2": [1]}"#);
    for (pg, g, says) in [
        (
            "1",
            groups(r#"{"1": [0, 5]}"#),
            "rank 5 is not a rank of the trace's 2",
        ),
        ("3", g.clone(), "pg_name \"3\" is not a group"),
        (
            "2",
            g.clone(),
            "rank 0 calls a collective on group 2, which does not hold it",
        ),
        (
            "1",
            CommGroups::default(),
            "none was given (--comm-groups FILE)",
        ),
    ] {
        let prefix = two(pg);
        let e = read_grouped(&prefix, &g).err().unwrap();
        assert!(
            matches!(e.base(), Some(Error::Parse { .. })),
            "{says}: {e:?}"
        );
        let msg = e.to_string();
        assert!(msg.contains(says), "expected '{says}' in: {msg}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
    // A trace of another format takes no groups.
    let ti = dir.join("ti.txt");
    std::fs::write(&ti, "0 init\n0 finalize\n").unwrap();
    let e = read_grouped(&ti, &g).err().unwrap();
    assert!(
        matches!(
            e.base(),
            Some(Error::Param {
                param: "comm_groups",
                ..
            })
        ),
        "{e:?}"
    );
}
