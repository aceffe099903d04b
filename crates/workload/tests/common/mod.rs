//! What the workload tests share: the network and node model the
//! hand-computed times assume, a SimGrid trace's replayed time, and the
//! comparison with a time worked out by hand.
//!
//! Each test file is its own binary and uses part of this module, so the
//! rest is dead code there.
#![allow(dead_code)]

use topocoll_sim::SimConfig;
use topocoll_topology::{parse_spec, Topology};
use topocoll_workload::{replay, simgrid_ti, Choice, Semantics};

/// Every link's rate, bytes/s.
pub const BW: f64 = 1e9;
/// Every link's latency, seconds.
pub const LAT: f64 = 1e-6;

/// A `spec` network whose every link moves `BW` bytes/s after `LAT` s.
pub fn network(spec: &str) -> Topology {
    let mut t = parse_spec(spec).unwrap();
    t.set_uniform_links(Some(BW), Some(LAT)).unwrap();
    t
}

/// The node model with no limit on engines (as `replay` runs by default).
pub fn config() -> SimConfig {
    SimConfig {
        engines: u32::MAX as usize,
        ..SimConfig::default()
    }
}

/// The replayed time of the SimGrid trace `trace` on `topo`, each
/// collective served as `choice` says, compute at `flops` per second.
pub fn time(trace: &str, topo: &Topology, choice: &Choice, flops: Option<f64>) -> f64 {
    let w = simgrid_ti::parse("test.txt", trace).unwrap();
    let sem = Semantics {
        flops,
        ..Semantics::default()
    };
    replay(&w, topo, choice, &sem, &config())
        .unwrap()
        .result
        .time_s
}

/// `got` is the time worked out by hand, `want`, to 1e-9 of it (or of a
/// picosecond, for times of zero).
pub fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.max(1e-12),
        "replayed {got:e} s, worked out {want:e} s"
    );
}
