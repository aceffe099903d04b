//! Multi-lane allgather across the sites of a grid: every site's blocks
//! cross to every other site in P runs at once. Step 1: the hosts of each
//! site exchange their blocks over the LAN; step 2: the j-th host of a site
//! sends the j-th run of its site's blocks (runs as even as they can be)
//! across the WAN to a host of each other site, the (j mod n)-th of a site
//! of n; step 3: that host passes the run on to the rest of its site.

use crate::error::Result;
use crate::lanes::{self, Choice};
use crate::{Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Allgather, "multilane", "grid of sites: each site's blocks cross to every other site in P runs at once (--lanes N|auto)", build).lanes().applies(Applies { topology: TopologyNeed::Sites, ranks: RankNeed::Any, root: RootNeed::Any });

fn build(req: &Request) -> Result<Schedule> {
    let sites = lanes::sites(req, &ALGORITHM)?;
    let p = lanes::count(req, sites, Choice::Widest)?;
    let offsets = sites.offsets();
    let k = sites.sizes.len();
    let mut s = req.schedule(&ALGORITHM);
    let c = req.count;
    let block = |r: usize, blocks: usize| Region::output(r as u64 * c, blocks as u64 * c);
    let progs = &mut s.programs;
    // Step 1: each host's block to the rest of its site; `have[h]` are the
    // ops after which host h holds its whole site's blocks.
    let mut have: Vec<Vec<OpId>> = vec![Vec::new(); progs.len()];
    for site in 0..k {
        let hosts = offsets[site]..offsets[site + 1];
        for h in hosts.clone() {
            have[h].push(progs[h].push(Op::copy(Region::input(0, c), block(h, 1)), &[]));
            for g in hosts.clone().filter(|&g| g != h) {
                progs[h].push(Op::send(g as u32, 0, Region::input(0, c)), &[]);
                let got = progs[g].push(Op::recv(h as u32, 0, block(h, 1)), &[]);
                have[g].push(got);
            }
        }
    }
    // Steps 2 and 3, run by run; run (from, to, j) is tagged 1, 2, ….
    let mut tag = 0u32;
    let mut relays = Vec::new();
    for from in 0..k {
        let n = sites.sizes[from];
        let runs = p.clamp(1, n);
        for to in (0..k).filter(|&t| t != from) {
            let mut first = offsets[from];
            for j in 0..runs {
                tag += 1;
                let count = n / runs + usize::from(j < n % runs);
                let run = block(first, count);
                first += count;
                let sender = offsets[from] + j;
                let receiver = offsets[to] + j % sites.sizes[to];
                progs[sender].push(Op::send(receiver as u32, tag, run), &have[sender]);
                let landed = progs[receiver].push(Op::recv(sender as u32, tag, run), &[]);
                relays.push((to, receiver, landed, run, tag));
            }
        }
    }
    // Step 3 after every WAN send, so that a host's engine sends its WAN
    // runs before it relays.
    for (to, receiver, landed, run, tag) in relays {
        for h in (offsets[to]..offsets[to + 1]).filter(|&h| h != receiver) {
            progs[receiver].push(Op::send(h as u32, tag, run), &[landed]);
            progs[h].push(Op::recv(receiver as u32, tag, run), &[]);
        }
    }
    Ok(s)
}
