//! Multi-lane gather across the sites of a grid: the multi-lane scatter
//! reversed (`model::multilane` has its lanes). Each lane's receiving
//! representative, the first rank of its run, collects the run's blocks;
//! the run crosses the WAN as one message to the lane's representative in
//! the root's site, which hands it to the root over the LAN (the root
//! takes its own lanes straight from the WAN); the rest of the root's site
//! sends the root their blocks. `single_lane` is the same with one lane
//! per remote site.

use crate::algorithms::lanes;
use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::model::multilane::Layout;
use crate::schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "gather",
    name: "multilane",
    summary: "grid of sites: P representative pairs cross the WAN at once (--lanes N|auto)",
    build,
    stream: None,
    segmented: false,
    lanes: true,
};

pub const SINGLE_LANE: Algorithm = Algorithm {
    collective: "gather",
    name: "single_lane",
    summary: "grid of sites: one representative pair per remote site crosses the WAN",
    build: build_single,
    stream: None,
    segmented: false,
    lanes: false,
};

fn build(req: &Request) -> Result<Schedule> {
    let layout = lanes::layout(req, ALGORITHM.name, false)?;
    Ok(schedule(req, ALGORITHM.name, &layout))
}

fn build_single(req: &Request) -> Result<Schedule> {
    let layout = lanes::layout(req, SINGLE_LANE.name, true)?;
    Ok(schedule(req, SINGLE_LANE.name, &layout))
}

/// Lane i's messages carry tag i + 1; the root's own site's, tag 0.
fn schedule(req: &Request, name: &str, layout: &Layout) -> Schedule {
    let mut s = req.schedule(name);
    let c = req.count;
    let root = layout.local[0];
    let run = |first: usize, count: usize| Region::output(first as u64 * c, count as u64 * c);
    let progs = &mut s.programs;
    // The root's own site sends first (the scatter's step 3 reversed).
    for &h in &layout.local[1..] {
        progs[h].push(Op::send(root as u32, 0, Region::input(0, c)), &[]);
        progs[root].push(Op::recv(h as u32, 0, run(h, 1)), &[]);
    }
    progs[root].push(Op::copy(Region::input(0, c), run(root, 1)), &[]);
    for (i, lane) in layout.lanes.iter().enumerate() {
        let tag = i as u32 + 1;
        let len = lane.count as u64 * c;
        // The run's ranks send the representative their blocks; it sends
        // the run across the WAN once it has them all.
        let rep_peer = lane.first as u32;
        for k in 1..lane.count {
            progs[lane.first + k].push(Op::send(rep_peer, tag, Region::input(0, c)), &[]);
        }
        let rep = &mut progs[lane.first];
        let (held, deps): (Region, Vec<OpId>) = if lane.count == 1 {
            (Region::input(0, c), Vec::new())
        } else {
            rep.scratch = len;
            let mut deps =
                vec![rep.push(Op::copy(Region::input(0, c), Region::scratch(0, c)), &[])];
            for k in 1..lane.count {
                deps.push(rep.push(
                    Op::recv(
                        (lane.first + k) as u32,
                        tag,
                        Region::scratch(k as u64 * c, c),
                    ),
                    &[],
                ));
            }
            (Region::scratch(0, len), deps)
        };
        rep.push(Op::send(lane.sender as u32, tag, held), &deps);
        if lane.sender == root {
            progs[root].push(
                Op::recv(lane.first as u32, tag, run(lane.first, lane.count)),
                &[],
            );
        } else {
            let relay = &mut progs[lane.sender];
            let held = Region::scratch(relay.scratch, len);
            relay.scratch += len;
            let got = relay.push(Op::recv(lane.first as u32, tag, held), &[]);
            relay.push(Op::send(root as u32, tag, held), &[got]);
            progs[root].push(
                Op::recv(lane.sender as u32, tag, run(lane.first, lane.count)),
                &[],
            );
        }
    }
    s
}
