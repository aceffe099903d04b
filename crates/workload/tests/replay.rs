//! Replays of small traces against times worked out by hand, and the one
//! line each bad trace gets.

mod common;

use common::{close, config, network, time, BW, LAT};
use topocoll_base::error::Error;
use topocoll_workload::{replay, simgrid_ti, Choice, Semantics};

/// A blocking ping-pong of 1 MB each way: two messages one after the other,
/// each its latency and its bytes at the link's rate.
#[test]
fn a_ping_pong_takes_two_message_times() {
    let trace = "0 init\n1 init\n0 send 1 0 1e6\n1 recv 0 0 1e6\n1 send 0 1 1e6\n0 recv 1 1 1e6\n0 finalize\n1 finalize\n";
    let t = time(trace, &network("mesh:2"), &Choice::default(), None);
    close(t, 2.0 * (LAT + 1e6 / BW));
}

/// Each rank computes (1 and 2 Mflop at 1 Gflop/s), then a
/// recursive-doubling allreduce of 1,000 doubles on two ranks: one exchange
/// that the later rank starts.
#[test]
fn compute_then_allreduce_waits_for_the_slower_rank() {
    let trace = "0 init\n1 init\n0 compute 1e6\n1 compute 2e6\n0 allreduce 1000 0 0\n1 allreduce 1000 0 0\n";
    let choice = Choice::parse("allreduce=recursive_doubling").unwrap();
    let t = time(trace, &network("mesh:2"), &choice, Some(1e9));
    close(t, 2e-3 + LAT + 8000.0 / BW);
    // Each rank's compute is its own flops at the host's speed.
    let w = simgrid_ti::parse("test.txt", trace).unwrap();
    let sem = Semantics {
        flops: Some(1e9),
        ..Semantics::default()
    };
    let r = replay(&w, &network("mesh:2"), &choice, &sem, &config()).unwrap();
    close(r.rank_compute_s[0], 1e-3);
    close(r.rank_compute_s[1], 2e-3);
}

/// Four ranks on a ring each post a send to the next and a receive from the
/// one before, then wait for both: four messages at once on four links.
#[test]
fn an_isend_irecv_ring_takes_one_message_time() {
    let mut trace = String::new();
    for r in 0..4 {
        trace += &format!(
            "{r} isend {} 5 1000000\n{r} irecv {} 5 1000000\n{r} waitall\n",
            (r + 1) % 4,
            (r + 3) % 4
        );
    }
    trace += "0 finalize\n";
    let t = time(&trace, &network("torus:4"), &Choice::default(), None);
    close(t, LAT + 1e6 / BW);
}

/// A blocking send below the eager limit returns at once: the sender's
/// compute after it overlaps the message.
#[test]
fn a_small_blocking_send_returns_at_once() {
    let trace = "0 send 1 0 1000\n0 compute 1e6\n1 recv 0 0 1000\n";
    let t = time(trace, &network("mesh:2"), &Choice::default(), Some(1e9));
    close(t, 1e-3);
    let big = "0 send 1 0 100000\n0 compute 1e6\n1 recv 0 0 100000\n";
    let t = time(big, &network("mesh:2"), &Choice::default(), Some(1e9));
    close(t, LAT + 1e5 / BW + 1e-3);
}

/// A wait or waitall on an isend below the eager limit returns at once (an
/// SMPI detached send): the sender's compute after it overlaps the message;
/// on a larger isend it waits for the message to arrive.
#[test]
fn a_wait_on_a_small_isend_returns_at_once() {
    for wait in ["wait 0 1 0", "waitall"] {
        let trace = format!("0 isend 1 0 1000\n0 {wait}\n0 compute 1e6\n1 recv 0 0 1000\n");
        let t = time(&trace, &network("mesh:2"), &Choice::default(), Some(1e9));
        close(t, 1e-3);
        let big = format!("0 isend 1 0 100000\n0 {wait}\n0 compute 1e6\n1 recv 0 0 100000\n");
        let t = time(&big, &network("mesh:2"), &Choice::default(), Some(1e9));
        close(t, LAT + 1e5 / BW + 1e-3);
    }
}

/// A wait with no request pending returns at once (LULESH's trace waits on
/// requests a waitall completed; SimGrid 3.32 aborts there).
#[test]
fn a_wait_on_a_completed_request_returns_at_once() {
    let trace =
        "0 isend 1 0 1e6\n0 waitall\n0 wait 0 1 0\n1 irecv 0 0 1e6\n1 waitall\n1 wait 0 1 0\n";
    let t = time(trace, &network("mesh:2"), &Choice::default(), None);
    close(t, LAT + 1e6 / BW);
}

/// A trace read through an index of per-rank files is the same workload as
/// the shared trace of the same lines.
#[test]
fn an_index_of_rank_files_reads_as_the_shared_trace() {
    let dir = std::env::temp_dir().join(format!("topocoll-ti-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("files")).unwrap();
    std::fs::write(dir.join("files/0.txt"), "0 init\n0 send 1 3 500 0\n").unwrap();
    std::fs::write(dir.join("files/1.txt"), "1 init\n1 recv 0 3 500 0\n").unwrap();
    std::fs::write(dir.join("index.txt"), "files/0.txt\nfiles/1.txt\n").unwrap();
    let w = simgrid_ti::read(&dir.join("index.txt")).unwrap();
    let shared =
        simgrid_ti::parse("s", "0 init\n0 send 1 3 500 0\n1 init\n1 recv 0 3 500 0\n").unwrap();
    let actions = |w: &topocoll_workload::Workload| -> Vec<Vec<topocoll_workload::Action>> {
        w.programs
            .iter()
            .map(|p| p.iter().map(|s| s.action.clone()).collect())
            .collect()
    };
    assert_eq!(actions(&w), actions(&shared));
    assert_eq!(w.files[1], dir.join("files/1.txt").display().to_string());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// SimGrid's datatypes size the counts: 500 doubles (id 0) are 4,000 bytes;
/// a count without a type is of bytes, or of doubles after `init` with an
/// argument.
#[test]
fn counts_are_in_elements_of_simgrid_datatypes() {
    use topocoll_workload::Action;
    let w = simgrid_ti::parse(
        "s",
        "0 init\n0 send 1 0 500 0\n0 send 1 0 500\n1 init 1\n1 send 0 0 500\n",
    )
    .unwrap();
    let bytes: Vec<u64> = w
        .programs
        .iter()
        .flatten()
        .filter_map(|s| match s.action {
            Action::Send { bytes, .. } => Some(bytes),
            _ => None,
        })
        .collect();
    assert_eq!(bytes, [4000, 500, 4000]);
}

/// A zero-byte alltoall is written with its receive count left out; the
/// next field (the send type) is read in its place, as SimGrid reads it.
#[test]
fn a_zero_byte_alltoall_reads_the_next_field_as_simgrid_does() {
    use topocoll_workload::Action;
    let w = simgrid_ti::parse("s", "0 alltoall 0 1 1\n1 alltoall 0 1 1\n").unwrap();
    match &w.programs[0][0].action {
        Action::Call(c) => assert_eq!(c.bytes, 0),
        other => panic!("{other:?}"),
    }
}

/// SimGrid drops a file's last line when no newline ends it.
#[test]
fn a_last_line_without_a_newline_is_not_replayed() {
    let w = simgrid_ti::parse("s", "0 compute 5\n0 compute 7").unwrap();
    assert_eq!(w.programs[0].len(), 1);
}

fn refusal(trace: &str) -> topocoll_workload::Error {
    let topo = network("mesh:2");
    simgrid_ti::parse("bad.txt", trace)
        .and_then(|w| {
            replay(
                &w,
                &topo,
                &Choice::default(),
                &Semantics::default(),
                &config(),
            )
        })
        .err()
        .expect("refused")
}

/// Each bad trace is refused in one line that names its file and line.
#[test]
fn bad_traces_are_refused_naming_file_and_line() {
    let cases = [
        (
            "0 init\n0 sned 1 0 5\n1 init\n",
            "bad.txt:2",
            "unknown action 'sned' (did you mean 'send'?)",
        ),
        ("0 send 1 0\n1 recv 0 0 5\n", "bad.txt:1", "needs 3"),
        (
            "0 send 1 0 abc\n1 recv 0 0 5\n",
            "bad.txt:1",
            "'abc' is not a number",
        ),
        (
            "0 send 7 0 5\n1 init\n",
            "bad.txt:1",
            "rank 7 is not one of the trace's 2 ranks",
        ),
        (
            "0 init\n1 recv 0 4 5\n",
            "bad.txt:2",
            "rank 0 sends it no such message",
        ),
        ("0 send 1 4 5\n1 init\n", "bad.txt:1", "never receives it"),
        (
            "0 bcast 10 0\n1 bcast 20 0\n",
            "bad.txt:2",
            "calls bcast of 20 bytes from root 0 where rank 0",
        ),
        (
            "0 bcast 10\n0 barrier\n1 bcast 10\n",
            "bad.txt:2",
            "is never made by rank 1",
        ),
        ("0 compute 5\n1 init\n", "bad.txt:1", "give --flops"),
        (
            "0 bcast 10 0 99\n1 bcast 10 0 99\n",
            "bad.txt:1",
            "not a SimGrid datatype id",
        ),
    ];
    for (trace, at, what) in cases {
        let e = refusal(trace);
        assert!(
            matches!(e.base(), Some(Error::Parse { .. })),
            "{trace:?}: {e:?}"
        );
        let text = e.to_string();
        assert!(
            text.starts_with(at) && text.contains(what),
            "{trace:?}: {text}"
        );
        assert!(!text.contains('\n'), "{text}");
    }
}

/// A missing rank file is refused naming it.
#[test]
fn a_missing_rank_file_is_refused_naming_it() {
    let dir = std::env::temp_dir().join(format!("topocoll-ti-missing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("index.txt"), "a.txt\nb.txt\n").unwrap();
    let e = simgrid_ti::read(&dir.join("index.txt")).unwrap_err();
    assert!(matches!(e.base(), Some(Error::Io { .. })), "{e:?}");
    assert!(e.to_string().contains("a.txt"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--compare`'s runs are the workload replayed with each algorithm chosen
/// in turn, the same bits as each replayed alone.
#[test]
fn comparing_algorithms_replays_the_workload_under_each() {
    use topocoll_workload::{compare, Trace};
    let trace =
        "0 allreduce 1000 0 0\n1 allreduce 1000 0 0\n2 allreduce 1000 0 0\n3 allreduce 1000 0 0\n";
    let w = simgrid_ti::parse("t", trace).unwrap();
    let topo = network("torus:4");
    let (kind, algs) = Choice::alternatives("allreduce=ring,recursive_doubling").unwrap();
    let runs = compare(
        &Trace::Actions(w.clone()),
        &topo,
        &Choice::default(),
        kind,
        &algs,
        &Semantics::default(),
        &config(),
    )
    .unwrap();
    for (alg, run) in algs.iter().zip(&runs) {
        let alone = Choice::parse(&format!("allreduce={}", alg.name())).unwrap();
        let t = replay(&w, &topo, &alone, &Semantics::default(), &config()).unwrap();
        assert_eq!(
            run.result.time_s.to_bits(),
            t.result.time_s.to_bits(),
            "{}",
            alg.name()
        );
        assert_eq!(run.calls[0].algorithm, alg.name());
    }
    assert!(Choice::alternatives("allreduce").is_err());
    assert!(Choice::alternatives("allreduce=nosuch").is_err());
}

/// A gatherv of 1 MB from each of ranks 1 and 3 to rank 2 on a ring of four:
/// both messages at once on links of their own, one message time; the
/// report names it a gatherv from root 2. A scatterv back is the same.
#[test]
fn a_gatherv_and_a_scatterv_are_their_blocks_to_and_from_the_root() {
    let counts = "0 1000000 0 1000000";
    let mut gatherv = String::new();
    let mut scatterv = String::new();
    for (r, mine) in [(0, 0), (1, 1_000_000), (2, 0), (3, 1_000_000)] {
        gatherv += &format!("{r} gatherv {mine} {counts} 2 6 6\n");
        scatterv += &format!("{r} scatterv {counts} {mine} 2 6 6\n");
    }
    let topo = network("torus:4");
    for (trace, name) in [(&gatherv, "gatherv"), (&scatterv, "scatterv")] {
        let w = simgrid_ti::parse("test.txt", trace).unwrap();
        let r = replay(
            &w,
            &topo,
            &Choice::default(),
            &Semantics::default(),
            &config(),
        )
        .unwrap();
        close(r.result.time_s, LAT + 1e6 / BW);
        let call = &r.calls[0];
        assert_eq!(
            (call.name(), call.root(), call.algorithm),
            (name, Some(2), "linear")
        );
    }
}

/// Ranks that disagree on a gatherv's root are refused at the line.
#[test]
fn a_gatherv_whose_ranks_disagree_on_its_root_is_refused() {
    let trace = "0 gatherv 8 8 8 0 6 6\n1 gatherv 8 8 8 1 6 6\n";
    let w = simgrid_ti::parse("test.txt", trace).unwrap();
    let Err(e) = replay(
        &w,
        &network("mesh:2"),
        &Choice::default(),
        &Semantics::default(),
        &config(),
    ) else {
        panic!("replayed");
    };
    assert!(
        matches!(e.base(), Some(Error::Parse { line: 2, .. })),
        "{e}"
    );
    assert!(
        e.to_string().contains("gatherv of 8 bytes from root 1"),
        "{e}"
    );
}
