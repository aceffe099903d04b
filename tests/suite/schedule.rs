//! The schedule IR and its verifier: broken schedules (a dropped send, a
//! duplicated contribution, a swapped tag, a deadlock, missing data, a
//! race, bad structure) are rejected with precise messages; a 1,024-rank
//! all-to-all is compact. (Every algorithm verified: the corpus.)

use topocoll::algorithms::Request;
use topocoll::schedule::Error;
use topocoll::schedule::{self, verify, Collective, Dtype, Op, ReduceOp, Region, Schedule};
use topocoll::topology::{parse_spec, Topology};
use topocoll::{VerifyError, VerifyKind};

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
    topocoll::algorithms::build(&topocoll::algorithms::allreduce::ring::ALGORITHM, &req).unwrap()
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

/// The verifier's finding on `s`: which check it broke, where.
fn broken(s: &Schedule) -> VerifyError {
    match verify(s) {
        Err(Error::Verify(v)) => v,
        other => panic!("expected a verification failure, got {other:?}"),
    }
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
    let e = broken(&s);
    assert_eq!(e.kind, VerifyKind::Deadlock, "{e}");
    // The message names the receive left waiting, and for whom.
    assert!(
        e.message
            .contains("rank 3 op 1 waits for a message from rank 2 tag 0"),
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
    let e = broken(&s);
    assert_eq!((e.kind, e.rank), (VerifyKind::Output, Some(0)), "{e}");
    assert!(
        e.message.contains("extra (duplicated) rank 0 element 0"),
        "{e}"
    );
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
    let e = broken(&s);
    assert_eq!(e.kind, VerifyKind::Deadlock, "{e}");
    assert!(
        e.message
            .contains("rank 2 op 3 waits for a message from rank 1 tag 1"),
        "{e}"
    );
}

#[test]
fn verifier_catches_a_deadlock() {
    let req = request(Collective::Bcast { root: 0 }, 2, 8, Dtype::U8, None);
    let mut s = req.unregistered_schedule("handmade");
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
    let e = broken(&s);
    assert_eq!(e.kind, VerifyKind::Deadlock, "{e}");
    assert!(
        e.message
            .contains("deadlock: 4 of 4 operations can never run"),
        "{e}"
    );
    assert!(
        e.message
            .contains("rank 0 op 0 waits for a message from rank 1 tag 5"),
        "{e}"
    );
}

#[test]
fn verifier_catches_missing_data_and_wrong_blocks() {
    // An alltoall that sends rank j the wrong block.
    let req = request(Collective::Alltoall, 3, 2, Dtype::U8, None);
    let mut s =
        topocoll::algorithms::build(&topocoll::algorithms::alltoall::linear::ALGORITHM, &req)
            .unwrap();
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
    let e = broken(&s);
    assert_eq!((e.kind, e.rank), (VerifyKind::Output, Some(1)), "{e}");
    assert!(
        e.message
            .contains("rank 1 output element 0: expected rank 0 element 2, found rank 0 element 4"),
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
    // Rank 2's message to rank 3 is never received.
    let e = broken(&s);
    assert_eq!((e.kind, e.rank), (VerifyKind::Unreceived, Some(2)), "{e}");
}

#[test]
fn verifier_catches_races_and_bad_structure() {
    let req = request(Collective::Allreduce, 2, 16, Dtype::F64, None);
    let mut s = req.unregistered_schedule("racy");
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
    let e = broken(&s);
    assert_eq!(e.kind, VerifyKind::Race, "{e}");
    assert!(e.message.contains("race on output element 0"), "{e}");
    // A dependency on a later op.
    let mut s = req.unregistered_schedule("forward");
    s.programs[0].push(Op::Compute { seconds: 0.0 }, &[1]);
    let e = broken(&s);
    assert_eq!(
        (e.kind, e.rank, e.op),
        (VerifyKind::Structure, Some(0), Some(0)),
        "{e}"
    );
    assert!(e
        .message
        .contains("depends on op 1, which is not an earlier operation"));
    // A region past the buffer.
    let mut s = req.unregistered_schedule("oob");
    s.programs[0].push(
        Op::Send {
            peer: 1,
            tag: 0,
            region: Region::output(1, 2),
            route: 0,
        },
        &[],
    );
    let e = broken(&s);
    assert_eq!(e.kind, VerifyKind::Structure, "{e}");
    assert!(
        e.message
            .contains("ends past the Output buffer's 2 elements"),
        "{e}"
    );
    // A peer that is not a rank.
    let mut s = req.unregistered_schedule("peer");
    s.programs[0].push(
        Op::Send {
            peer: 7,
            tag: 0,
            region: Region::output(0, 1),
            route: 0,
        },
        &[],
    );
    let e = broken(&s);
    assert_eq!(e.kind, VerifyKind::Structure, "{e}");
    assert!(e.message.contains("peer 7 is not a rank"), "{e}");
    // Two unordered receives with the same peer and tag.
    let mut s = req.unregistered_schedule("keys");
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
    let e = broken(&s);
    assert_eq!(
        (e.kind, e.rank, e.op),
        (VerifyKind::Race, Some(0), Some(1)),
        "{e}"
    );
    // Size mismatch between a send and its receive.
    let mut s = request(Collective::Bcast { root: 0 }, 2, 4, Dtype::U8, None)
        .unregistered_schedule("sizes");
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
    let e = broken(&s);
    assert_eq!(
        (e.kind, e.rank, e.op),
        (VerifyKind::Mismatch, Some(1), Some(0)),
        "{e}"
    );
    assert!(
        e.message
            .contains("expects 3 elements but rank 0 op 0 sends 4"),
        "{e}"
    );
}

/// The scale requirement: a 1,024-rank all-to-all (over a million transfers)
/// in well under 1 GiB, built and verified quickly.
#[test]
fn alltoall_1024_ranks_is_compact() {
    let t = parse_spec("torus:32x32").unwrap();
    let req = request(Collective::Alltoall, 1024, 1024, Dtype::U8, Some(&t));
    let t0 = std::time::Instant::now();
    let s = topocoll::algorithms::build(&topocoll::algorithms::alltoall::linear::ALGORITHM, &req)
        .unwrap();
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
    let s = topocoll::algorithms::build(
        &topocoll::algorithms::barrier::dissemination::ALGORITHM,
        &req,
    )
    .unwrap();
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
    let e = broken(&s);
    assert_eq!((e.kind, e.rank), (VerifyKind::Barrier, Some(1)), "{e}");
    assert!(
        e.message
            .contains("barrier: rank 1 can leave before rank 0 has entered"),
        "{e}"
    );
    let mut s = Schedule::new(Collective::Barrier, 2, 0, Dtype::U8, ReduceOp::Sum, "none");
    s.programs[0].push(Op::Compute { seconds: 0.0 }, &[]);
    let e = broken(&s);
    assert_eq!((e.kind, e.rank), (VerifyKind::Barrier, Some(1)), "{e}");
    // The tree barrier with its release (tag 1) taken out.
    let req = request(Collective::Barrier, 6, 0, Dtype::U8, None);
    let mut s =
        topocoll::algorithms::build(&topocoll::algorithms::barrier::tree::ALGORITHM, &req).unwrap();
    assert!(verify(&s).is_ok());
    for r in 0..6 {
        rewrite(&mut s, r, |_, op, deps| match op {
            Op::Send { tag: 1, .. } | Op::Recv { tag: 1, .. } => Vec::new(),
            _ => vec![(op, deps.into_iter().filter(|&d| d == 0).collect())],
        });
    }
    assert_eq!(broken(&s).kind, VerifyKind::Barrier);
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
    let e = broken(&s);
    assert_eq!(
        (e.kind, e.rank, e.op),
        (VerifyKind::ScanOrder, Some(2), Some(1)),
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
        let s = topocoll::algorithms::build(
            topocoll::algorithms::find(req.collective.kind(), alg).unwrap(),
            &req,
        )
        .unwrap();
        let e = schedule::to_msccl_xml(&s, &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("MSCCL XML has no {}", c.name())), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

mod vcollectives {
    //! alltoallv and allgatherv: the verifier proves exactly the given
    //! blocks, the counts' CSV and generators, and their JSON form.

    use std::sync::Arc;
    use topocoll::algorithms::Request;
    use topocoll::schedule::{
        self, verify, Collective, Dtype, Generator, Op, ReduceOp, Schedule, Sizes, SizesShape,
    };

    fn build(c: Collective, alg: &str, sizes: Sizes) -> Schedule {
        let p = sizes.ranks();
        let req = Request::new(c, p, 0, Dtype::I32, ReduceOp::Sum, None)
            .unwrap()
            .with_sizes(Arc::new(sizes))
            .unwrap();
        topocoll::algorithms::build(
            topocoll::algorithms::find(req.collective.kind(), alg).unwrap(),
            &req,
        )
        .unwrap()
    }

    /// Matrices whose shapes stress the algorithms: all empty, only the
    /// diagonal, one hot receiver, a single non-empty pair.
    fn matrices(p: usize) -> Vec<Sizes> {
        let n = p * p;
        let diagonal: Vec<u64> = (0..n).map(|i| u64::from(i % (p + 1) == 0) * 3).collect();
        let hot: Vec<u64> = (0..n).map(|i| if i % p == p / 2 { 9 } else { 1 }).collect();
        let mut single = vec![0; n];
        single[n - 1 - (p - 1) * usize::from(p > 1)] = 5;
        vec![
            Sizes::per_pair(p, vec![0; n]).unwrap(),
            Sizes::per_pair(p, diagonal).unwrap(),
            Sizes::per_pair(p, hot).unwrap(),
            Sizes::per_pair(p, single).unwrap(),
        ]
    }

    #[test]
    fn every_v_algorithm_verifies_on_edge_matrices_on_1_to_64_ranks() {
        for p in 1..=64 {
            for m in matrices(p) {
                for alg in ["linear", "pairwise", "bruck"] {
                    let s = build(Collective::Alltoallv, alg, m.clone());
                    verify(&s).unwrap_or_else(|e| panic!("alltoallv {alg} P={p}: {e}"));
                }
                // The matrix's first row as an allgatherv's counts.
                let row = Sizes::per_rank(m.counts()[..p].to_vec()).unwrap();
                for alg in ["ring", "linear", "bruck"] {
                    let s = build(Collective::Allgatherv, alg, row.clone());
                    verify(&s).unwrap_or_else(|e| panic!("allgatherv {alg} P={p}: {e}"));
                }
            }
        }
    }

    #[test]
    fn generated_counts_verify_on_1_to_64_ranks() {
        for p in 1..=64 {
            for spec in ["uniform:5", "zipf:1.5", "hot:2", "hot:1"] {
                let Ok(v) = Sizes::parse(spec, SizesShape::PerPair, p, 4, 4, 7) else {
                    assert!(spec == "hot:2" && p == 1, "{spec} on {p}");
                    continue;
                };
                for alg in ["linear", "pairwise", "bruck"] {
                    let s = build(Collective::Alltoallv, alg, v.clone());
                    verify(&s).unwrap_or_else(|e| panic!("alltoallv {alg} {spec} P={p}: {e}"));
                }
            }
        }
    }

    /// A schedule that moves one element too few, or puts a block in its
    /// neighbour's place, is refused: the proof is of exactly the counts.
    #[test]
    fn a_block_of_the_wrong_size_or_place_is_refused() {
        let v = Sizes::per_pair(3, vec![1, 2, 3, 4, 0, 6, 7, 8, 9]).unwrap();
        let good = build(Collective::Alltoallv, "linear", v.clone());
        verify(&good).unwrap();
        // The same schedule held to other counts.
        let mut other = good.clone();
        let mut counts = v.counts().to_vec();
        counts[1] += 1;
        other.sizes = Some(Arc::new(Sizes::per_pair(3, counts).unwrap()));
        assert!(verify(&other).is_err());
        // A receive shifted by one element.
        let mut shifted = good.clone();
        for op in shifted.programs[2].ops.iter_mut() {
            if let Op::Recv { region, .. } = op {
                if region.offset > 0 {
                    region.offset -= 1;
                    break;
                }
            }
        }
        assert!(verify(&shifted).is_err());
    }

    #[test]
    fn generators_are_deterministic_for_a_seed() {
        for spec in ["uniform:1KiB", "zipf:1.1", "hot:3"] {
            for shape in [SizesShape::PerPair, SizesShape::PerRank] {
                let a = Sizes::parse(spec, shape, 16, 100, 1, 42).unwrap();
                let b = Sizes::parse(spec, shape, 16, 100, 1, 42).unwrap();
                let c = Sizes::parse(spec, shape, 16, 100, 1, 43).unwrap();
                assert_eq!(a, b, "{spec}");
                assert_ne!(a, c, "{spec}");
            }
        }
        // Skewed rows keep the mean block; hot:K's K ranks get 90% of each row.
        let hot = Sizes::parse("hot:2", SizesShape::PerPair, 16, 1000, 1, 5).unwrap();
        let hot_cols: Vec<usize> = (0..16)
            .filter(|&d| (0..16).all(|s| hot.block(s, d) > 1000))
            .collect();
        assert_eq!(hot_cols.len(), 2, "{hot_cols:?}");
        for s in 0..16 {
            let row: u64 = (0..16).map(|d| hot.block(s, d)).sum();
            assert_eq!(row, 16_000);
            let to_hot: u64 = hot_cols.iter().map(|&d| hot.block(s, d)).sum();
            assert!(to_hot * 10 >= row * 8, "row {s}: {to_hot} of {row}");
        }
        // The same draw from a known seed, so a change of generator shows.
        let z = Sizes::parse("zipf:1", SizesShape::PerRank, 4, 10, 1, 0).unwrap();
        assert_eq!(z.counts().iter().sum::<u64>(), 40);
        assert!(Generator::parse("hot:0", 1).is_err());
        assert!(Generator::parse("zipf:-1", 1).is_err());
        assert!(Generator::parse("uniform:x", 1).is_err());
        assert!(Sizes::parse("hot:5", SizesShape::PerPair, 4, 1, 1, 0).is_err());
    }

    #[test]
    fn bad_csv_names_the_file_row_and_column() {
        let pair = SizesShape::PerPair;
        let err = |text: &str, shape, p| {
            Sizes::from_csv("sizes.csv", text, shape, p)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("1,2,3\n4,x,6\n7,8,9\n", pair, 3),
            "sizes.csv: row 2, column 2: 'x' is not a count (a whole number ≥ 0)"
        );
        assert_eq!(
            err("1,2,3\n4,5\n7,8,9\n", pair, 3),
            "sizes.csv: row 2 has 2 values, want 3 (ranks)"
        );
        assert_eq!(
            err("1,2\n3,4\n", pair, 3),
            "sizes.csv: row 1 has 2 values, want 3 (ranks)"
        );
        assert_eq!(
            err("1,2\n3,4\n5,6\n", pair, 2),
            "sizes.csv: 3 rows, want 2 (ranks)"
        );
        assert_eq!(
            err("1,-2\n3,4\n", pair, 2),
            "sizes.csv: row 1, column 2: '-2' is not a count (a whole number ≥ 0)"
        );
        assert!(err("# comment\n1,2\n\n3,4,5\n", pair, 2).starts_with("sizes.csv: row 4 has 3"));
        let rank = SizesShape::PerRank;
        assert_eq!(
            err("1,2\n", rank, 3),
            "sizes.csv: 2 values in its one row, want 3 (ranks)"
        );
        assert!(err("1\n2,3\n", rank, 2).starts_with("sizes.csv: row 2 has 2 values, want 1"));
        assert!(err("1,2,3\n", pair, 3000).contains("at most 2048 ranks"));
        // What parses: a row, a column, comments and spaces.
        let ok = Sizes::from_csv("s", "# counts\n 1, 2 ,3\n", rank, 3).unwrap();
        assert_eq!(ok.counts(), &[1, 2, 3]);
        let col = Sizes::from_csv("s", "1\n2\n3\n", rank, 3).unwrap();
        assert_eq!(col, ok);
        let m = Sizes::from_csv(
            "s",
            &Sizes::per_pair(2, vec![1, 0, 2, 3]).unwrap().to_csv(),
            pair,
            2,
        );
        assert_eq!(m.unwrap().counts(), &[1, 0, 2, 3]);
        // Counts whose buffer passes 2^50 bytes are refused before any work.
        let huge = format!("{},1\n1,1\n", 1u64 << 50);
        let v = Sizes::from_csv("s", &huge, pair, 2).unwrap();
        let req =
            Request::new(Collective::Alltoallv, 2, 0, Dtype::F64, ReduceOp::Sum, None).unwrap();
        assert!(req
            .with_sizes(Arc::new(v))
            .unwrap_err()
            .to_string()
            .contains("2^50"));
    }

    #[test]
    fn json_carries_the_counts_and_msccl_refuses_them() {
        let v = Sizes::parse("hot:1", SizesShape::PerPair, 5, 3, 4, 1).unwrap();
        let s = build(Collective::Alltoallv, "bruck", v);
        let mut text = Vec::new();
        schedule::to_json(&s, &mut text).unwrap();
        let back = schedule::from_json(std::str::from_utf8(&text).unwrap()).unwrap();
        assert_eq!(back, s);
        verify(&back).unwrap();
        let g = build(
            Collective::Allgatherv,
            "ring",
            Sizes::per_rank(vec![0, 3, 1]).unwrap(),
        );
        let mut text = Vec::new();
        schedule::to_json(&g, &mut text).unwrap();
        let json = String::from_utf8(text).unwrap();
        assert!(json.contains("\"sizes\":[0,3,1]"), "{json}");
        assert_eq!(schedule::from_json(&json).unwrap(), g);
        // Counts that do not fit the collective or its ranks are refused.
        let refused = |from: &str, to: &str| {
            schedule::from_json(&json.replace(from, to))
                .unwrap_err()
                .to_string()
        };
        assert!(refused("\"sizes\":[0,3,1],", "").contains("needs its sizes"));
        assert!(refused("[0,3,1]", "[0,3]").contains("2 counts, want 3"));
        assert!(refused("[0,3,1]", "[[0,3,1]]").contains("one count per rank"));
        // MSCCL XML cannot hold a count per pair: one line says why.
        let err = schedule::to_msccl_xml(&s, &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("MSCCL XML has no alltoallv"), "{err}");
        assert!(!err.contains('\n'));
    }
}
