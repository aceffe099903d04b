//! Generated schedules (the pipelines and the ring): the stream (ops computed
//! on demand) is the same schedule as the written-out one, op by op, and the
//! simulator gives the same result on both, bit for bit, under every node
//! model.

use topocoll::algorithms::{self, Request, ALGORITHMS};
use topocoll::error::Error;
use topocoll::lookahead::Lookahead;
use topocoll::schedule::{Collective, Dtype, Materialised, OpKind, OpSource, ReduceOp};
use topocoll::sim::{simulate, simulate_source, SimConfig, Skew};
use topocoll::topology::{parse_spec, Topology};

/// (topology, elements, segment elements): partial last rounds, parts
/// smaller than a segment, a single segment, trees with no part at all.
const CASES: &[(&str, u64, Option<u64>)] = &[
    ("torus:3x4x2", 100, Some(7)),
    ("torus:3x4x2", 2, Some(1)),
    ("torus:4x4", 33, Some(4)),
    ("torus:5x3x3", 90, Some(10)),
    ("mesh:4x3", 17, None),
    ("torus:2x2x2", 64, Some(64)),
    // Thousands of ops per rank: the simulator's op windows span chunks.
    ("torus:2x2x2", 6000, Some(1)),
];

fn streamed_algorithms() -> impl Iterator<Item = &'static algorithms::Algorithm> {
    ALGORITHMS.iter().filter(|a| a.stream.is_some())
}

fn request<'a>(
    coll: &str,
    t: &'a Topology,
    count: u64,
    seg: Option<u64>,
    root: u32,
) -> Request<'a> {
    let c = Collective::parse(coll, root).unwrap();
    let mut req = Request::new(
        c,
        t.num_ranks(),
        count * 8,
        Dtype::F64,
        ReduceOp::Sum,
        Some(t),
    )
    .unwrap();
    req.segment_bytes = seg.map(|e| e * 8);
    req
}

#[test]
fn every_generated_algorithm_streams() {
    let names: Vec<&str> = streamed_algorithms().map(|a| a.name).collect();
    assert_eq!(streamed_algorithms().count(), 7, "{names:?}");
    let t = parse_spec("torus:4x4").unwrap();
    let req = request("alltoall", &t, 4, None, 0);
    let err = algorithms::build_stream("linear", &req)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("has no generator"), "{err}");
}

#[test]
fn stream_is_the_written_out_schedule() {
    let mut compared = 0;
    for &(spec, count, seg) in CASES {
        let t = parse_spec(spec).unwrap();
        for alg in streamed_algorithms() {
            for root in [0, t.num_ranks() as u32 - 1] {
                let req = request(alg.collective.name(), &t, count, seg, root);
                let s = match algorithms::build(alg.name, &req) {
                    Ok(s) => s,
                    Err(Error::Unsupported { .. }) => continue,
                    Err(e) => panic!("{} {}: {e}", alg.collective, alg.name),
                };
                let what = format!(
                    "{} {} on {spec}, {count} elements, segment {seg:?}, root {root}",
                    alg.collective, alg.name
                );
                let st = algorithms::build_stream(alg.name, &req).unwrap();
                let m = Materialised::new(&s).unwrap();
                compared += 1;
                assert_eq!(st.num_ops(), s.num_ops() as u64, "{what}");
                assert_eq!(st.farthest_peer(), m.farthest_peer(), "{what}");
                for r in 0..s.ranks {
                    assert_eq!(st.len(r), m.len(r), "{what}: rank {r}");
                    assert_eq!(
                        st.header().programs[r].scratch,
                        s.programs[r].scratch,
                        "{what}: rank {r}"
                    );
                    let ungated = st.min_ungated_send_count().unwrap_or(u64::MAX);
                    assert!(ungated >= st.min_send_count().unwrap_or(u64::MAX), "{what}");
                    let mut named = Vec::new();
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    st.initial(r, &mut a);
                    m.initial(r, &mut b);
                    assert_eq!(a, b, "{what}: rank {r} initial ops");
                    // In runs from every start, long enough to cross
                    // rounds and reach the last, partial one.
                    let n = m.len(r) as u32;
                    let deps: Vec<u32> = (0..n).map(|i| m.dep_count(r, i)).collect();
                    for from in 0..n {
                        let to = if from % 16 == 0 { n } else { n.min(from + 50) };
                        let mut got = Vec::new();
                        st.dep_counts(r, from..to, |d| got.push(d));
                        assert_eq!(
                            got,
                            deps[from as usize..to as usize],
                            "{what}: rank {r} deps of ops {from}..{to}"
                        );
                    }
                    for i in 0..n {
                        assert_eq!(st.op(r, i), m.op(r, i), "{what}: rank {r} op {i}");
                        assert_eq!(
                            st.dep_count(r, i),
                            m.dep_count(r, i),
                            "{what}: rank {r} op {i}"
                        );
                        let (mut a, mut b) = (Vec::new(), Vec::new());
                        st.successors(r, i, |j| a.push(j));
                        m.successors(r, i, |j| b.push(j));
                        assert_eq!(a, b, "{what}: rank {r} op {i} successors");
                        let send = matches!(m.op(r, i), topocoll::schedule::Op::Send { .. });
                        if let Some(j) = st.far_successor(r, i).filter(|_| send) {
                            assert!(a.contains(&j), "{what}: rank {r} op {i} far successor {j}");
                        }
                        assert_eq!(st.kind(r, i), m.kind(r, i), "{what}: rank {r} op {i} kind");
                        assert_eq!(
                            st.combines(r, i),
                            m.combines(r, i),
                            "{what}: rank {r} op {i} combines"
                        );
                        if send {
                            assert_eq!(
                                st.partner(r, i),
                                m.partner(r, i),
                                "{what}: rank {r} op {i} partner"
                            );
                            // The written-out schedule names no gated sends.
                            let (t, gates) = st.gated_transfer(r, i);
                            assert_eq!(t, st.transfer(r, i), "{what}: rank {r} op {i}");
                            assert_eq!(t, m.transfer(r, i), "{what}: rank {r} op {i} transfer");
                            assert_eq!(m.gated_transfer(r, i).1, None, "{what}");
                            if let Some(j) = gates {
                                // A send that waits for this one, shorter
                                // than every send not gated, where this one
                                // is not.
                                let (gated, gates_next) = st.gated_transfer(r, j);
                                assert!(a.contains(&j), "{what}: rank {r} op {i} gates {j}");
                                assert!(gated.count < ungated && t.count >= ungated, "{what}");
                                assert!(gates_next.is_none(), "{what}: rank {r} op {j}");
                                named.push(j);
                            }
                        }
                    }
                    // Every shorter send is gated by one.
                    for i in 0..n {
                        if st.kind(r, i) == OpKind::Send {
                            let t = st.transfer(r, i);
                            if t.peer as usize != r && t.count < ungated {
                                assert!(named.contains(&i), "{what}: rank {r} op {i} not gated");
                            }
                        }
                    }
                }
            }
        }
    }
    // 6 torus cases × 7 algorithms × 2 roots, and the 4 rank-based ones on the mesh.
    assert_eq!(compared, 92);
}

#[test]
fn streamed_and_written_out_simulate_alike() {
    let mut compared = 0;
    let configs = [
        SimConfig::default(),
        SimConfig {
            engines: 4,
            overhead_s: 0.3,
            compute_bandwidth: Some(2.0),
            ..SimConfig::default()
        },
        SimConfig {
            engines: 2,
            overhead_s: 0.1,
            compute_bandwidth: Some(5.0),
            rendezvous: true,
            skew: Skew::Random {
                max_s: 20.0,
                seed: 3,
            },
            ..SimConfig::default()
        },
        SimConfig {
            engines: 1,
            injection_bandwidth: Some(0.5),
            skew: Skew::Random {
                max_s: 5.0,
                seed: 1,
            },
            ..SimConfig::default()
        },
    ];
    for &(spec, count, seg) in CASES {
        let mut t = parse_spec(spec).unwrap();
        t.set_uniform_links(Some(1.0), Some(0.01)).unwrap();
        for alg in streamed_algorithms() {
            let req = request(alg.collective.name(), &t, count, seg, 1);
            let Ok(s) = algorithms::build(alg.name, &req) else {
                continue;
            };
            let st = algorithms::build_stream(alg.name, &req).unwrap();
            for (k, cfg) in configs.iter().enumerate() {
                let a = simulate(&s, &t, cfg).unwrap();
                let b = simulate_source(&st, &t, cfg).unwrap();
                let what = format!(
                    "{} {} on {spec}, {count} elements, config {k}",
                    alg.collective, alg.name
                );
                assert_eq!(
                    a.time_s.to_bits(),
                    b.time_s.to_bits(),
                    "{what}: {} vs {}",
                    a.time_s,
                    b.time_s
                );
                assert_eq!(a.rank_finish_s, b.rank_finish_s, "{what}");
                assert_eq!(a.flows, b.flows, "{what}");
                assert_eq!(a.run.events, b.run.events, "{what}");
                assert_eq!(a.links_shared_fraction, b.links_shared_fraction, "{what}");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 46 * 4);
}

/// A schedule source whose successors and dependency counts disagree, as a
/// generator's bug would make them (`Fault`).
struct Inconsistent<'a> {
    inner: Materialised<'a>,
    fault: Fault,
}

#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Every op with dependencies counts one fewer: the last one to finish
    /// counts it down past zero.
    DepsOneShort,
    /// Rank 0's first op names a successor past the end of its program.
    SuccessorPastTheEnd,
}

impl OpSource for Inconsistent<'_> {
    fn header(&self) -> &topocoll::schedule::Schedule {
        self.inner.header()
    }
    fn len(&self, r: usize) -> u64 {
        self.inner.len(r)
    }
    fn op(&self, r: usize, i: u32) -> topocoll::schedule::Op {
        self.inner.op(r, i)
    }
    fn dep_count(&self, r: usize, i: u32) -> u32 {
        let n = self.inner.dep_count(r, i);
        match self.fault {
            Fault::DepsOneShort if n > 1 => n - 1,
            _ => n,
        }
    }
    fn successors(&self, r: usize, i: u32, mut f: impl FnMut(u32)) {
        self.inner.successors(r, i, &mut f);
        if let Fault::SuccessorPastTheEnd = self.fault {
            if r == 0 && i == 0 {
                f(self.inner.len(0) as u32 + 1_000_000);
            }
        }
    }
    fn partner(&self, r: usize, i: u32) -> u32 {
        self.inner.partner(r, i)
    }
    fn initial(&self, r: usize, out: &mut Vec<u32>) {
        self.inner.initial(r, out)
    }
}

impl Lookahead for Inconsistent<'_> {}

/// A source whose counts and successors disagree stops the simulation
/// with an internal error (a panic in the event driver, an error from the
/// rank-by-rank one, whose threads catch it), under every driver: a
/// successor before the window's front must not make it grow its window
/// (to 16 GiB) instead.
#[test]
fn an_inconsistent_source_stops_the_simulation() {
    let mut t = parse_spec("torus:3x4x2").unwrap();
    t.set_uniform_links(Some(1.0), Some(0.01)).unwrap();
    let req = request("allreduce", &t, 100, Some(7), 0);
    let s = algorithms::build("trinaryx3", &req).unwrap();
    let configs = [
        // Rank by rank, on one thread and on two.
        SimConfig::default(),
        SimConfig {
            threads: 2,
            ..SimConfig::default()
        },
        // Event by event (a node model the by-rank driver leaves).
        SimConfig {
            rendezvous: true,
            ..SimConfig::default()
        },
    ];
    for fault in [Fault::DepsOneShort, Fault::SuccessorPastTheEnd] {
        for (k, cfg) in configs.iter().enumerate() {
            let src = Inconsistent {
                inner: Materialised::new(&s).unwrap(),
                fault,
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                simulate_source(&src, &t, cfg)
            }));
            let message = match outcome {
                Ok(Ok(_)) => panic!("{fault:?}, config {k}: the simulation ran to its end"),
                Ok(Err(e)) => e.to_string(),
                Err(payload) => payload
                    .downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_default(),
            };
            assert!(
                message.contains("internal error"),
                "{fault:?}, config {k}: {message}"
            );
        }
    }
}
