//! Communicators in SimGrid's time-independent traces (topocoll's reading:
//! `comm_split COLOR KEY ID`, `comm_dup ID`, a last field `comm=ID`):
//! calls on a communicator run on its ranks, messages match by it, and
//! traces that misuse one are refused in one line.

mod common;

use common::{close, config, network, BW, LAT};
use topocoll_base::error::Error;
use topocoll_workload::{replay, simgrid_ti, Choice, Semantics};

fn time(trace: &str, spec: &str, flops: Option<f64>) -> f64 {
    let w = simgrid_ti::parse("test.txt", trace).unwrap();
    let sem = Semantics {
        flops,
        ..Semantics::default()
    };
    replay(&w, &network(spec), &Choice::default(), &sem, &config())
        .unwrap()
        .result
        .time_s
}

/// Four ranks on a line (0-1-2-3) split by parity, keys reversing each
/// half: the halves are {2, 0} and {3, 1}, so each bcast from its root 0
/// is a message 2 -> 0 and 3 -> 1, both across the link 2 -> 1 at half its
/// rate: two hops of latency and 1 MB at BW / 2. (Had the roots been world
/// ranks 0 and 1, or the halves {0, 2} and {1, 3} in that order, the two
/// messages would run the other way round and share 1 -> 2: the same time;
/// had the calls run on the world, a binomial bcast of 4 ranks: more.)
#[test]
fn a_comm_split_into_two_halves_each_running_a_bcast() {
    let mut trace = String::new();
    for r in 0..4 {
        trace += &format!("{r} init\n{r} comm_split {} {} 1\n", r % 2, 4 - r);
        trace += &format!("{r} bcast 1000000 0 comm=1\n{r} finalize\n");
    }
    close(time(&trace, "mesh:4", None), 2.0 * LAT + 1e6 / (BW / 2.0));
    // The halves' ranks, in their order, as the workload holds them.
    let w = simgrid_ti::parse("t", &trace).unwrap();
    assert_eq!(w.comms, vec![vec![0, 1, 2, 3], vec![2, 0], vec![3, 1]]);
    // By rank / 2 instead: {0, 1} and {2, 3}, messages 0 -> 1 and 2 -> 3 on
    // links of their own, one hop each.
    let mut trace = String::new();
    for r in 0..4 {
        trace += &format!("{r} comm_split {} 0 1\n{r} bcast 1000000 0 comm=1\n", r / 2);
    }
    close(time(&trace, "mesh:4", None), LAT + 1e6 / BW);
}

/// A root is a rank of the call's communicator: root 1 of {2, 0} is world
/// rank 0, whose message to world rank 2 crosses two links alone.
#[test]
fn a_root_is_a_rank_of_the_calls_communicator() {
    let mut trace = String::new();
    for r in [0, 2] {
        trace += &format!("{r} comm_split 0 {} 1\n{r} bcast 1000000 1 comm=1\n", 4 - r);
    }
    for r in [1, 3] {
        trace += &format!("{r} comm_split -1 0 1\n");
    }
    close(time(&trace, "mesh:4", None), 2.0 * LAT + 1e6 / BW);
}

/// Messages match by communicator too: rank 1 receives the world's small
/// message first, though rank 0 sent the large one on the duplicate with
/// the same tag before it; then it computes 1 ms, by when the large one
/// has arrived.
#[test]
fn messages_match_by_source_tag_and_communicator() {
    let trace = "0 comm_dup 1\n0 isend 1 5 1000000 6 comm=1\n0 isend 1 5 1000 6\n0 waitall\n\
                 1 comm_dup 1\n1 recv 0 5 1000 6\n1 compute 1e6\n1 recv 0 5 1000000 6 comm=1\n";
    // The two messages share the link: 1,000 bytes at BW / 2.
    close(time(trace, "mesh:2", Some(1e9)), LAT + 2000.0 / BW + 1e-3);
    // A wait names its communicator: the duplicate's request is the one
    // rank 1 waits for before it computes.
    let trace = "0 comm_dup 1\n0 send 1 5 1000000 6 comm=1\n\
                 1 comm_dup 1\n1 irecv 0 5 1000000 6 comm=1\n1 wait 0 1 5 comm=1\n1 compute 1e6\n";
    close(time(trace, "mesh:2", Some(1e9)), LAT + 1e6 / BW + 1e-3);
}

/// A duplicate of the world runs the world's schedule on the topology, and
/// a split of a split is a communicator of the ranks both keep.
#[test]
fn duplicates_and_splits_of_splits_hold_the_right_ranks() {
    let mut trace = String::new();
    for r in 0..8 {
        trace += &format!(
            "{r} comm_dup 3\n{r} comm_split {} {r} 1 comm=3\n{r} comm_split {} 0 2 comm=1\n",
            r / 4,
            r % 2
        );
    }
    let w = simgrid_ti::parse("t", &trace).unwrap();
    assert_eq!(
        w.comms,
        vec![
            (0..8).collect::<Vec<u32>>(),
            (0..8).collect(),
            vec![0, 1, 2, 3],
            vec![4, 5, 6, 7],
            vec![0, 2],
            vec![1, 3],
            vec![4, 6],
            vec![5, 7],
        ]
    );
}

fn refusal(trace: &str) -> String {
    let topo = network("mesh:2");
    let e = simgrid_ti::parse("bad.txt", trace)
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
        .expect("refused");
    assert!(
        matches!(e.base(), Some(Error::Parse { .. })),
        "{trace:?}: {e:?}"
    );
    let text = e.to_string();
    assert!(!text.contains('\n'), "{text}");
    text
}

/// Each misuse of a communicator is refused in one line naming the file
/// and line: a call on a communicator never created or that is
/// MPI_COMM_NULL, ranks that disagree on a call's size, root or
/// communicator, a peer or root outside it, creations the ranks do not
/// make alike.
#[test]
fn bad_communicators_are_refused_naming_file_and_line() {
    let cases = [
        (
            "0 bcast 10 0 comm=4\n1 bcast 10 0 comm=4\n",
            "bad.txt:1",
            "communicator 4 was never created on rank 0",
        ),
        (
            "0 bcast 10 0 comm=1\n0 comm_dup 1\n1 comm_dup 1\n",
            "bad.txt:1",
            "never created on rank 0",
        ),
        (
            "0 comm_split -1 0 1\n0 barrier comm=1\n1 comm_split 0 0 1\n",
            "bad.txt:2",
            "communicator 1 is MPI_COMM_NULL on rank 0",
        ),
        (
            "0 comm_dup 1\n0 bcast 10 0 comm=1\n1 comm_dup 1\n1 bcast 20 0 comm=1\n",
            "bad.txt:4",
            "rank 1 calls bcast of 20 bytes from root 0 where rank 0",
        ),
        (
            "0 comm_dup 1\n0 bcast 10 1 comm=1\n1 comm_dup 1\n1 bcast 10 0 comm=1\n",
            "bad.txt:4",
            "rank 1 calls bcast of 10 bytes from root 0 where rank 0",
        ),
        (
            "0 comm_dup 1\n0 bcast 10 0 comm=1\n1 comm_dup 1\n1 bcast 10 0\n",
            "bad.txt:4",
            "rank 1's collective call 1 (bcast) is never made by rank 0",
        ),
        (
            "0 comm_split 0 0 1\n0 bcast 10 1 comm=1\n1 comm_split 1 0 1\n",
            "bad.txt:2",
            "root 1 is not one of the 1 ranks of communicator 1",
        ),
        (
            "0 comm_split 0 0 1\n0 send 1 0 10 comm=1\n1 comm_split 1 0 1\n",
            "bad.txt:2",
            "rank 1 is not a rank of communicator 1",
        ),
        (
            "0 comm_dup 1\n0 send 1 0 10 6 comm=1\n1 comm_dup 1\n1 recv 0 0 10 6\n",
            "bad.txt:4",
            "sends it no such message",
        ),
        (
            "0 comm_dup 1\n1 init\n",
            "bad.txt:1",
            "comm_dup is never made by rank 1",
        ),
        (
            "0 comm_dup 1\n1 comm_split 0 0 1\n",
            "bad.txt:2",
            "rank 1 calls comm_split where rank 0",
        ),
        ("0 comm_dup 0\n", "bad.txt:1", "holds already"),
        ("0 comm_dup 1 comm=2\n", "bad.txt:1", "has not created"),
        (
            "0 barrier comm=x\n",
            "bad.txt:1",
            "does not name a communicator",
        ),
    ];
    for (trace, at, what) in cases {
        let text = refusal(trace);
        assert!(
            text.starts_with(at) && text.contains(what),
            "{trace:?}: {text}"
        );
    }
}

/// What SimGrid's tracer writes (no communicator) and bare `comm_split`
/// and `comm_dup` lines read as SimGrid's replayer reads them: every call
/// on the world.
#[test]
fn lines_without_communicators_are_on_the_world() {
    let trace = "0 comm_size 2\n0 comm_split\n0 comm_dup\n0 bcast 1000000 1\n\
                 1 comm_size 2\n1 comm_split\n1 comm_dup\n1 bcast 1000000 1\n";
    let w = simgrid_ti::parse("t", trace).unwrap();
    assert_eq!(w.comms, vec![vec![0, 1]]);
    close(time(trace, "mesh:2", None), LAT + 1e6 / BW);
}
