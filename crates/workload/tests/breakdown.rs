//! Where a replay's time went, against times worked out by hand: each
//! rank's compute, communication and waiting, each call's time and bound.

mod common;

use common::{close, network, BW, LAT};
use topocoll_sim::SimConfig;
use topocoll_workload::{replay, simgrid_ti, Choice, Semantics};

fn traced(trace: &str, spec: &str) -> topocoll_workload::Replayed {
    let w = simgrid_ti::parse("t.txt", trace).unwrap();
    let cfg = SimConfig {
        engines: u32::MAX as usize,
        trace: true,
        ..SimConfig::default()
    };
    let sem = Semantics {
        flops: Some(1e9),
        ..Semantics::default()
    };
    replay(&w, &network(spec), &Choice::default(), &sem, &cfg).unwrap()
}

/// Rank 0 computes 1 ms, then sends 1 MB that rank 1 waits for from the
/// start: rank 0 computes 1 ms and communicates LAT + 1 MB / BW; rank 1
/// waits 1 ms and communicates the same.
#[test]
fn a_late_sender_leaves_its_receiver_waiting_for_its_compute() {
    let r = traced(
        "0 compute 1e6\n0 send 1 0 1000000\n1 recv 0 0 1000000\n",
        "mesh:2",
    );
    let b = r.breakdown.unwrap();
    let msg = LAT + 1e6 / BW;
    close(b.ranks[0].compute_s, 1e-3);
    close(b.ranks[0].communication_s, msg);
    close(b.ranks[0].wait_s, 0.0);
    close(b.ranks[1].compute_s, 0.0);
    close(b.ranks[1].communication_s, msg);
    close(b.ranks[1].wait_s, 1e-3);
    close(b.ranks[1].finish_s, 1e-3 + msg);
}

/// Two bcasts of 1 MB on two ranks, the second after rank 1 computes 1 ms:
/// the first takes one message's time (msg = LAT + 1 MB / BW) from when
/// both enter; in the second, rank 0 enters at msg and its message (eager)
/// arrives at 2 msg, after rank 1 entered at msg + 1 ms: the call takes
/// msg from its first entry, 2 msg - (msg + 1 ms) from its last. The bound
/// of each is at least the 1 MB the root must send over its one link.
#[test]
fn each_calls_time_runs_from_the_first_entry_to_the_last_exit() {
    let r = traced(
        "0 bcast 1000000 0\n0 bcast 1000000 0\n1 bcast 1000000 0\n1 compute 1e6\n1 bcast 1000000 0\n",
        "mesh:2",
    );
    let b = r.breakdown.unwrap();
    assert_eq!(r.calls.len(), 1);
    assert_eq!(r.calls[0].calls, 2);
    let msg = LAT + 1e6 / BW;
    close(b.calls[0].time_s, 2.0 * msg);
    close(b.calls[0].after_all_s, msg + (2.0 * msg - (msg + 1e-3)));
    let bound = b.calls[0].bound_s.unwrap();
    assert!(
        bound >= 2.0 * 1e6 / BW * (1.0 - 1e-9) && bound <= 2.0 * msg,
        "{bound:e}"
    );
}
