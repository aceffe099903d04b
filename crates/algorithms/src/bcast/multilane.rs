//! Multi-lane broadcast across the sites of a grid (after the grid paper's
//! reference [3]): the message crosses to each remote site in P pieces at
//! once. The root first sends the whole message to the other hosts of its
//! site that send a lane (step 1); each lane's sender sends its piece
//! across the WAN to a distinct host of the remote site (step 2, the root
//! its own lanes); the root sends the rest of its site the message, and
//! every remote host that received a piece passes it on to the rest of its
//! site (step 3), so that each remote host assembles the P pieces.
//! Lanes and senders are the multi-lane scatter's (`model::multilane`):
//! lane j of a site lands on the first rank of the j-th run.

use crate::error::Result;
use crate::lanes::{self, Choice};
use crate::model::multilane::Layout;
use crate::{Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Bcast,
    "multilane",
    "grid of sites: the message crosses the WAN in P pieces at once (--lanes N|auto)",
    build,
)
.lanes()
.applies(Applies {
    topology: TopologyNeed::Sites,
    ranks: RankNeed::Any,
    root: RootNeed::Any,
});

fn build(req: &Request) -> Result<Schedule> {
    let sites = lanes::sites(req, &ALGORITHM)?;
    let p = lanes::count(req, sites, Choice::Widest)?;
    let root = req.collective.root().unwrap_or(0) as usize;
    let layout = Layout::new(sites, root, p);
    let offsets = sites.offsets();
    let mut s = req.schedule(&ALGORITHM);
    let n = req.count;
    let progs = &mut s.programs;
    // Piece j of the lanes into a site: elements [n·j/P', n·(j+1)/P').
    let mut pieces = Vec::with_capacity(layout.lanes.len());
    let mut j = 0;
    for (i, lane) in layout.lanes.iter().enumerate() {
        if i > 0 && layout.lanes[i - 1].site != lane.site {
            j = 0;
        }
        let here = layout.lanes.iter().filter(|l| l.site == lane.site).count() as u64;
        let (lo, hi) = (n * j / here, n * (j + 1) / here);
        pieces.push(Region::output(lo, hi - lo));
        j += 1;
    }
    let whole = Region::output(0, n);
    let mut senders: Vec<usize> = Vec::new();
    for lane in &layout.lanes {
        if lane.sender != root && !senders.contains(&lane.sender) {
            senders.push(lane.sender);
        }
    }
    let rest = layout.local[1..].iter().filter(|h| !senders.contains(h));
    // The root: the senders, its own lanes, the rest of its site.
    let mut got = vec![None; progs.len()];
    for &h in senders.iter().chain(rest.clone()) {
        got[h] = Some(progs[h].push(Op::recv(root as u32, 0, whole), &[]));
    }
    let to_root_site = |progs: &mut Vec<topocoll_schedule::Program>, h: usize| {
        progs[root].push(Op::send(h as u32, 0, whole), &[]);
    };
    for &h in &senders {
        to_root_site(progs, h);
    }
    for (i, lane) in layout.lanes.iter().enumerate() {
        let (tag, piece) = (i as u32 + 1, pieces[i]);
        if piece.count == 0 {
            continue;
        }
        let deps: Vec<u32> = got[lane.sender].into_iter().collect();
        progs[lane.sender].push(Op::send(lane.first as u32, tag, piece), &deps);
        let rep = lane.first;
        let landed = progs[rep].push(Op::recv(lane.sender as u32, tag, piece), &[]);
        for h in offsets[lane.site]..offsets[lane.site + 1] {
            if h == rep {
                continue;
            }
            progs[rep].push(Op::send(h as u32, tag, piece), &[landed]);
            progs[h].push(Op::recv(rep as u32, tag, piece), &[]);
        }
    }
    for &h in rest {
        to_root_site(progs, h);
    }
    Ok(s)
}
