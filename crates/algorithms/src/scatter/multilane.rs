//! Multi-lane scatter across the sites of a grid (the grid paper's
//! algorithm; `model::multilane` has its lanes and cost model). Step 1: the
//! root sends each other sending representative its lanes' blocks over the
//! LAN; step 2: every lane's blocks cross the WAN as one message to the
//! lane's receiving representative, the first rank of its run; step 3: the
//! receiving representatives pass on the blocks of their runs, and the
//! root sends the rest of its own site their blocks. `single_lane` is the
//! same with one lane per remote site (MPICH-G2's representative pair).

use crate::error::Result;
use crate::lanes;
use crate::model::multilane::Layout;
use crate::{Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Scatter,
    "multilane",
    "grid of sites: P representative pairs cross the WAN at once (--lanes N|auto)",
    build,
)
.lanes()
.applies(Applies {
    topology: TopologyNeed::Sites,
    ranks: RankNeed::Any,
    root: RootNeed::Any,
});

pub const SINGLE_LANE: Algorithm = Algorithm::new(
    CollectiveKind::Scatter,
    "single_lane",
    "grid of sites: one representative pair per remote site crosses the WAN",
    build_single,
)
.applies(Applies {
    topology: TopologyNeed::Sites,
    ranks: RankNeed::Any,
    root: RootNeed::Any,
});

fn build(req: &Request) -> Result<Schedule> {
    let layout = lanes::layout(req, &ALGORITHM)?;
    Ok(schedule(req, &ALGORITHM, &layout))
}

fn build_single(req: &Request) -> Result<Schedule> {
    let layout = lanes::single_lane(req, &SINGLE_LANE)?;
    Ok(schedule(req, &SINGLE_LANE, &layout))
}

/// Lane i's messages carry tag i + 1; the root's own site's, tag 0.
fn schedule(req: &Request, alg: &Algorithm, layout: &Layout) -> Schedule {
    let mut s = req.schedule(alg);
    let c = req.count;
    let root = layout.local[0];
    let run = |first: usize, count: usize| Region::input(first as u64 * c, count as u64 * c);
    let progs = &mut s.programs;
    // Step 1, then the root's own lanes (step 2), then its site (step 3).
    for (i, lane) in layout.lanes.iter().enumerate() {
        if lane.sender != root {
            progs[root].push(
                Op::send(
                    lane.sender as u32,
                    i as u32 + 1,
                    run(lane.first, lane.count),
                ),
                &[],
            );
        }
    }
    for (i, lane) in layout.lanes.iter().enumerate() {
        if lane.sender == root {
            progs[root].push(
                Op::send(lane.first as u32, i as u32 + 1, run(lane.first, lane.count)),
                &[],
            );
        }
    }
    for &h in &layout.local[1..] {
        progs[root].push(Op::send(h as u32, 0, run(h, 1)), &[]);
        progs[h].push(Op::recv(root as u32, 0, Region::output(0, c)), &[]);
    }
    progs[root].push(Op::copy(run(root, 1), Region::output(0, c)), &[]);
    // The other senders relay their lanes, in lane order, from Scratch.
    for (i, lane) in layout.lanes.iter().enumerate() {
        let tag = i as u32 + 1;
        let len = lane.count as u64 * c;
        if lane.sender != root {
            let prog = &mut progs[lane.sender];
            let held = Region::scratch(prog.scratch, len);
            prog.scratch += len;
            let got = prog.push(Op::recv(root as u32, tag, held), &[]);
            prog.push(Op::send(lane.first as u32, tag, held), &[got]);
        }
        // The receiving representative keeps the first block of its run
        // and passes on the others.
        let rep = &mut progs[lane.first];
        let into = if lane.count == 1 {
            Region::output(0, c)
        } else {
            rep.scratch = len;
            Region::scratch(0, len)
        };
        let got = rep.push(Op::recv(lane.sender as u32, tag, into), &[]);
        if lane.count > 1 {
            for k in 1..lane.count {
                rep.push(
                    Op::send(
                        (lane.first + k) as u32,
                        tag,
                        Region::scratch(k as u64 * c, c),
                    ),
                    &[got],
                );
            }
            rep.push(
                Op::copy(Region::scratch(0, c), Region::output(0, c)),
                &[got],
            );
            for k in 1..lane.count {
                progs[lane.first + k]
                    .push(Op::recv(lane.first as u32, tag, Region::output(0, c)), &[]);
            }
        }
    }
    s
}
