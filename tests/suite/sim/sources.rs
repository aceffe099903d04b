//! Schedule sources (`schedule::OpSource`) as the simulator reads them: one
//! whose dependency counts and successors disagree stops the simulation
//! with an internal error.

use topocoll::algorithms::Request;
use topocoll::lookahead::Lookahead;
use topocoll::schedule::{Collective, Dtype, Materialised, OpSource, ReduceOp};
use topocoll::sim::{simulate_source, SimConfig};
use topocoll::topology::parse_spec;

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
    let mut req = Request::new(
        Collective::Allreduce,
        t.num_ranks(),
        100 * 8,
        Dtype::F64,
        ReduceOp::Sum,
        Some(&t),
    )
    .unwrap();
    req.segment_bytes = Some(7 * 8);
    let s =
        topocoll::algorithms::build(&topocoll::algorithms::allreduce::trinaryx3::ALGORITHM, &req)
            .unwrap();
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
