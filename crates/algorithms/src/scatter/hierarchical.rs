//! MagPIe-style hierarchical scatter across the sites of a grid: the WAN is
//! crossed once per remote site. The root first sends each remote site's
//! blocks, in one message, to the site's coordinator (its first rank);
//! then the root and every coordinator scatter within their site along a
//! binomial tree.

use super::binomial::tree;
use crate::error::Result;
use crate::model::multilane::Layout;
use crate::{lanes, Algorithm, Request};
use crate::{Applies, RankNeed, RootNeed, TopologyNeed};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Scatter,
    "hierarchical",
    "grid of sites (MagPIe): one WAN message per remote site, then binomial trees inside the sites",
    build,
)
.applies(Applies {
    topology: TopologyNeed::Sites,
    ranks: RankNeed::Any,
    root: RootNeed::Any,
});

fn build(req: &Request) -> Result<Schedule> {
    let sites = lanes::sites(req, &ALGORITHM)?;
    let mut s = req.schedule(&ALGORITHM);
    let c = req.count;
    let root = req.collective.root().unwrap_or(0) as usize;
    let offsets = sites.offsets();
    let local = Layout::new(sites, root, 1).local;
    let home = sites.site_of(root);
    let k = sites.sizes.len();
    for step in 1..k {
        let t = (home + step) % k;
        let (first, n) = (offsets[t], sites.sizes[t]);
        let len = n as u64 * c;
        s.programs[root].push(
            Op::send(first as u32, 1, Region::input(first as u64 * c, len)),
            &[],
        );
        let coord = &mut s.programs[first];
        coord.scratch = len;
        let got = coord.push(Op::recv(root as u32, 1, Region::scratch(0, len)), &[]);
        let members: Vec<usize> = (first..first + n).collect();
        tree(
            &mut s.programs,
            &members,
            c,
            0,
            Region::scratch(0, len),
            &[got],
            2,
        );
    }
    // The root's site, rotated into Scratch so that subtrees are contiguous.
    let base = offsets[home];
    let (n0, off) = (local.len() as u64, (root - base) as u64);
    let prog = &mut s.programs[root];
    prog.scratch = n0 * c;
    let a = prog.push(
        Op::copy(
            Region::input(root as u64 * c, (n0 - off) * c),
            Region::scratch(0, (n0 - off) * c),
        ),
        &[],
    );
    let b = prog.push(
        Op::copy(
            Region::input(base as u64 * c, off * c),
            Region::scratch((n0 - off) * c, off * c),
        ),
        &[],
    );
    tree(
        &mut s.programs,
        &local,
        c,
        0,
        Region::scratch(0, n0 * c),
        &[a, b],
        2,
    );
    Ok(s)
}
