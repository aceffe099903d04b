//! MagPIe-style hierarchical gather across the sites of a grid: the WAN is
//! crossed once per remote site. Every site gathers along a binomial tree
//! to its coordinator (its first rank; the root in the root's site), and
//! each coordinator sends its site's blocks to the root in one message.

use super::binomial::tree;
use crate::algorithms::{lanes, Algorithm, Request};
use crate::error::Result;
use crate::model::multilane::Layout;
use crate::schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "gather",
    name: "hierarchical",
    summary: "grid of sites (MagPIe): binomial trees inside the sites, then one WAN message per remote site",
    build,
    stream: None,
    segmented: false,
    lanes: false,
};

fn build(req: &Request) -> Result<Schedule> {
    let sites = lanes::sites(req, ALGORITHM.name)?;
    let mut s = req.schedule(ALGORITHM.name);
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
        s.programs[first].scratch = len;
        let members: Vec<usize> = (first..first + n).collect();
        let done = tree(&mut s.programs, &members, c, 0, Region::scratch(0, len));
        s.programs[first].push(Op::send(root as u32, 1, Region::scratch(0, len)), &done);
        s.programs[root].push(
            Op::recv(first as u32, 1, Region::output(first as u64 * c, len)),
            &[],
        );
    }
    // The root's site collects in Scratch in relative order, rotated back.
    let base = offsets[home];
    let (n0, off) = (local.len() as u64, (root - base) as u64);
    s.programs[root].scratch = n0 * c;
    let done = tree(&mut s.programs, &local, c, 0, Region::scratch(0, n0 * c));
    let prog = &mut s.programs[root];
    prog.push(
        Op::copy(
            Region::scratch(0, (n0 - off) * c),
            Region::output(root as u64 * c, (n0 - off) * c),
        ),
        &done,
    );
    prog.push(
        Op::copy(
            Region::scratch((n0 - off) * c, off * c),
            Region::output(base as u64 * c, off * c),
        ),
        &done,
    );
    Ok(s)
}
