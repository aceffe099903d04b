//! The schedule IR and its verifier: broken schedules (a dropped send, a
//! duplicated contribution, a swapped tag, a deadlock, missing data, a
//! race, bad structure) are rejected with precise messages; a 1,024-rank
//! all-to-all is compact. (Every algorithm verified: the corpus.)

use topocoll::algorithms::{self, Request};
use topocoll::schedule::{self, verify, Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::topology::{parse_spec, Topology};

fn request(
    c: Collective,
    p: usize,
    bytes: u64,
    dtype: Dtype,
    topo: Option<&Topology>,
) -> Request<'_> {
    Request::new(c, p, bytes, dtype, ReduceOp::Sum, topo).unwrap()
}

pub(crate) fn ring4() -> Schedule {
    let req = request(Collective::Allreduce, 4, 4 * 8, Dtype::F64, None);
    algorithms::build("ring", &req).unwrap()
}

/// Rebuilds one rank's program with `f` applied to each (op, deps).
fn rewrite(s: &mut Schedule, rank: usize, f: impl Fn(usize, Op, Vec<u32>) -> Vec<(Op, Vec<u32>)>) {
    let old = std::mem::take(&mut s.programs[rank]);
    let mut prog = schedule::Program::default();
    prog.scratch = old.scratch;
    for (i, op) in old.ops.iter().enumerate() {
        for (o, d) in f(i, *op, old.deps(i).to_vec()) {
            prog.push(o, &d);
        }
    }
    s.programs[rank] = prog;
}

fn err(s: &Schedule) -> String {
    verify(s).unwrap_err().to_string()
}

#[test]
fn verifier_catches_a_dropped_send() {
    let mut s = ring4();
    // Rank 2's first send becomes a no-op: rank 3's first receive never gets its message.
    rewrite(&mut s, 2, |i, op, d| {
        if i == 0 {
            vec![(Op::Compute { seconds: 0.0 }, d)]
        } else {
            vec![(op, d)]
        }
    });
    let e = err(&s);
    assert!(e.contains("deadlock"), "{e}");
    assert!(
        e.contains("rank 3 op 1 waits for a message from rank 2 tag 0"),
        "{e}"
    );
}

#[test]
fn verifier_catches_a_duplicated_contribution() {
    let mut s = ring4();
    // Rank 0 combines its own chunk 0 once more into itself: its contribution counts twice.
    rewrite(&mut s, 0, |i, op, d| {
        if i == 0 {
            vec![
                (
                    Op::Copy {
                        src: Region::output(0, 1),
                        dst: Region::scratch(0, 1),
                    },
                    vec![],
                ),
                (op, d),
            ]
        } else {
            vec![(op, d)]
        }
    });
    // Shift deps by one, since an op was inserted at the front.
    let old = std::mem::take(&mut s.programs[0]);
    let mut prog = schedule::Program::default();
    prog.scratch = 1;
    for (i, op) in old.ops.iter().enumerate() {
        let deps: Vec<u32> = if i == 0 {
            vec![]
        } else {
            old.deps(i).iter().map(|d| d + 1).chain([0]).collect()
        };
        prog.push(*op, &deps);
    }
    let last = prog.len() as u32 - 1;
    prog.push(
        Op::Combine {
            src: Region::scratch(0, 1),
            dst: Region::output(0, 1),
        },
        &[last, last - 1],
    );
    s.programs[0] = prog;
    let e = err(&s);
    assert!(e.contains("rank 0 output element 0"), "{e}");
    assert!(e.contains("extra (duplicated) rank 0 element 0"), "{e}");
}

#[test]
fn verifier_catches_a_swapped_tag() {
    let mut s = ring4();
    rewrite(&mut s, 1, |i, op, d| match op {
        Op::Send {
            peer,
            region,
            route,
            ..
        } if i == 2 => vec![(
            Op::Send {
                peer,
                tag: 99,
                region,
                route,
            },
            d,
        )],
        _ => vec![(op, d)],
    });
    let e = err(&s);
    assert!(
        e.contains("rank 2 op 3 waits for a message from rank 1 tag 1"),
        "{e}"
    );
}

#[test]
fn verifier_catches_a_deadlock() {
    let req = request(Collective::Bcast { root: 0 }, 2, 8, Dtype::U8, None);
    let mut s = req.schedule("handmade");
    let all = Region::output(0, 8);
    // Each rank waits to receive before it sends: a cycle.
    let r0 = s.programs[0].push(
        Op::Recv {
            peer: 1,
            tag: 5,
            region: Region::output(0, 8),
            combine: false,
        },
        &[],
    );
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 6,
            region: all,
            route: 0,
        },
        &[r0],
    );
    let r1 = s.programs[1].push(
        Op::Recv {
            peer: 0,
            tag: 6,
            region: all,
            combine: false,
        },
        &[],
    );
    s.programs[1].push(
        Op::Send {
            peer: 0,
            tag: 5,
            region: all,
            route: 0,
        },
        &[r1],
    );
    let e = err(&s);
    assert!(
        e.contains("deadlock: 4 of 4 operations can never run"),
        "{e}"
    );
    assert!(
        e.contains("rank 0 op 0 waits for a message from rank 1 tag 5"),
        "{e}"
    );
}

#[test]
fn verifier_catches_missing_data_and_wrong_blocks() {
    // An alltoall that sends rank j the wrong block.
    let req = request(Collective::Alltoall, 3, 2, Dtype::U8, None);
    let mut s = algorithms::build("linear", &req).unwrap();
    rewrite(&mut s, 0, |_, op, d| match op {
        Op::Send {
            peer: 1,
            tag,
            route,
            ..
        } => vec![(
            Op::Send {
                peer: 1,
                tag,
                region: Region::input(4, 2),
                route,
            },
            d,
        )],
        _ => vec![(op, d)],
    });
    let e = err(&s);
    assert!(
        e.contains("rank 1 output element 0: expected rank 0 element 2, found rank 0 element 4"),
        "{e}"
    );
    // An allreduce in which rank 3 skips its last receive: element missing contributions.
    let mut s = ring4();
    let n = s.programs[3].len();
    rewrite(
        &mut s,
        3,
        |i, op, d| if i == n - 1 { vec![] } else { vec![(op, d)] },
    );
    let e = err(&s);
    assert!(
        e.contains("never receives") || e.contains("no data") || e.contains("missing"),
        "{e}"
    );
}

#[test]
fn verifier_catches_races_and_bad_structure() {
    let req = request(Collective::Allreduce, 2, 16, Dtype::F64, None);
    let mut s = req.schedule("racy");
    for r in 0..2u32 {
        let prog = &mut s.programs[r as usize];
        prog.scratch = 2;
        prog.push(
            Op::Send {
                peer: 1 - r,
                tag: 0,
                region: Region::output(0, 2),
                route: 0,
            },
            &[],
        );
        prog.push(
            Op::Recv {
                peer: 1 - r,
                tag: 0,
                region: Region::output(0, 2),
                combine: true,
            },
            &[],
        );
    }
    let e = err(&s);
    assert!(e.contains("race on output element 0"), "{e}");
    // A dependency on a later op.
    let mut s = req.schedule("forward");
    s.programs[0].push(Op::Compute { seconds: 0.0 }, &[1]);
    assert!(err(&s).contains("depends on op 1, which is not an earlier operation"));
    // A region past the buffer.
    let mut s = req.schedule("oob");
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 0,
            region: Region::output(1, 2),
            route: 0,
        },
        &[],
    );
    assert!(
        err(&s).contains("ends past the Output buffer's 2 elements"),
        "{}",
        err(&s)
    );
    // A peer that is not a rank.
    let mut s = req.schedule("peer");
    s.programs[0].push(
        Op::Send {
            peer: 7,
            tag: 0,
            region: Region::output(0, 1),
            route: 0,
        },
        &[],
    );
    assert!(err(&s).contains("peer 7 is not a rank"));
    // Two unordered receives with the same peer and tag.
    let mut s = req.schedule("keys");
    s.programs[0].scratch = 2;
    s.programs[0].push(
        Op::Recv {
            peer: 1,
            tag: 3,
            region: Region::scratch(0, 1),
            combine: false,
        },
        &[],
    );
    s.programs[0].push(
        Op::Recv {
            peer: 1,
            tag: 3,
            region: Region::scratch(1, 1),
            combine: false,
        },
        &[],
    );
    assert!(err(&s).contains("share peer and tag but are not ordered"));
    // Size mismatch between a send and its receive.
    let mut s = request(Collective::Bcast { root: 0 }, 2, 4, Dtype::U8, None).schedule("sizes");
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 0,
            region: Region::output(0, 4),
            route: 0,
        },
        &[],
    );
    s.programs[1].push(
        Op::Recv {
            peer: 0,
            tag: 0,
            region: Region::output(0, 3),
            combine: false,
        },
        &[],
    );
    assert!(
        err(&s).contains("expects 3 elements but rank 0 op 0 sends 4"),
        "{}",
        err(&s)
    );
}

/// The scale requirement: a 1,024-rank all-to-all (over a million transfers)
/// in well under 1 GiB, built and verified quickly.
#[test]
fn alltoall_1024_ranks_is_compact() {
    let t = parse_spec("torus:32x32").unwrap();
    let req = request(Collective::Alltoall, 1024, 1024, Dtype::U8, Some(&t));
    let t0 = std::time::Instant::now();
    let s = algorithms::build("linear", &req).unwrap();
    let built = t0.elapsed().as_secs_f64();
    assert_eq!(s.num_transfers(), 1024 * 1023);
    assert!(
        s.heap_bytes() < 256 << 20,
        "schedule takes {} bytes",
        s.heap_bytes()
    );
    let report = verify(&s).unwrap();
    assert_eq!(report.bytes_moved, 1024 * 1023 * 1024);
    // Generous bound: the machine is shared; docs/PERFORMANCE.md has the real figure.
    assert!(built < 5.0, "built in {built} s");
}

/// A barrier moves nothing: `--size` is ignored (zero elements).
#[test]
fn barrier_ignores_the_size() {
    let req = request(Collective::Barrier, 5, 1000, Dtype::U8, None);
    assert_eq!(req.count, 0);
    let s = algorithms::build("dissemination", &req).unwrap();
    assert_eq!(s.count, 0);
    assert!(verify(&s).is_ok());
}

/// The verifier proves a barrier's meaning: a fan-in without its release
/// lets every rank but the root leave before the others enter; a rank
/// without ops waits for no one; the tree without its release fails too.
#[test]
fn verifier_catches_a_barrier_that_does_not_wait() {
    let nothing = Region::output(0, 0);
    let mut s = Schedule::new(
        Collective::Barrier,
        3,
        0,
        Dtype::U8,
        ReduceOp::Sum,
        "fan-in",
    );
    for r in 1..3u32 {
        s.programs[r as usize].push(Op::send(0, 0, nothing), &[]);
        s.programs[0].push(Op::recv(r, 0, nothing), &[]);
    }
    let e = err(&s);
    assert!(
        e.contains("barrier: rank 1 can leave before rank 0 has entered"),
        "{e}"
    );
    let mut s = Schedule::new(Collective::Barrier, 2, 0, Dtype::U8, ReduceOp::Sum, "none");
    s.programs[0].push(Op::Compute { seconds: 0.0 }, &[]);
    let e = err(&s);
    assert!(e.contains("barrier: rank 1 has no operations"), "{e}");
    // The tree barrier with its release (tag 1) taken out.
    let req = request(Collective::Barrier, 6, 0, Dtype::U8, None);
    let mut s = algorithms::build("tree", &req).unwrap();
    assert!(verify(&s).is_ok());
    for r in 0..6 {
        rewrite(&mut s, r, |_, op, deps| match op {
            Op::Send { tag: 1, .. } | Op::Recv { tag: 1, .. } => Vec::new(),
            _ => vec![(op, deps.into_iter().filter(|&d| d == 0).collect())],
        });
    }
    let e = err(&s);
    assert!(e.contains("can leave before rank"), "{e}");
}

/// A scan that combines rank 0's data into rank 2's before rank 1's holds
/// the right terms but not in rank order: refused at the combine.
#[test]
fn verifier_catches_a_scan_out_of_rank_order() {
    let (inp, out) = (Region::input(0, 4), Region::output(0, 4));
    let mut s = Schedule::new(Collective::Scan, 3, 4, Dtype::F64, ReduceOp::Sum, "mixed");
    let p0 = &mut s.programs[0];
    p0.push(Op::copy(inp, out), &[]);
    p0.push(Op::send(1, 0, inp), &[]);
    p0.push(Op::send(2, 0, inp), &[]);
    let p1 = &mut s.programs[1];
    let a = p1.push(Op::copy(inp, out), &[]);
    p1.push(Op::recv_combine(0, 0, out), &[a]);
    p1.push(Op::send(2, 1, inp), &[]);
    let p2 = &mut s.programs[2];
    let a = p2.push(Op::copy(inp, out), &[]);
    let b = p2.push(Op::recv_combine(0, 0, out), &[a]);
    p2.push(Op::recv_combine(1, 1, out), &[b]);
    let e = err(&s);
    assert!(
        e.contains("rank 2 op 1") && e.contains("not a run of consecutive ranks"),
        "{e}"
    );
    // In rank order (rank 1's data first, then rank 0's) it verifies.
    let p2 = &mut s.programs[2];
    *p2 = schedule::Program::default();
    let a = p2.push(Op::copy(inp, out), &[]);
    let b = p2.push(Op::recv_combine(1, 1, out), &[a]);
    p2.push(Op::recv_combine(0, 0, out), &[b]);
    assert!(verify(&s).is_ok(), "{}", err(&s));
}

/// MSCCL XML names no barrier, scan or exscan: one line says so.
#[test]
fn msccl_refuses_barrier_and_scans() {
    for (c, alg) in [
        (Collective::Barrier, "dissemination"),
        (Collective::Scan, "recursive_doubling"),
        (Collective::Exscan, "linear"),
    ] {
        let req = request(c, 4, 64, Dtype::F64, None);
        let s = algorithms::build(alg, &req).unwrap();
        let e = schedule::to_msccl_xml(&s, &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("MSCCL XML has no {}", c.name())), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}
