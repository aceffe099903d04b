//! Linear gather (what MPI libraries do for small counts): every rank sends
//! its block to the root, which receives them from root+1, root+2, … and
//! copies its own.

use crate::algorithms::{Algorithm, Request};
use crate::algorithms::{Applies, Counterparts, Ompi, OpCount};
use crate::error::Result;
use crate::schedule::CollectiveKind;
use crate::schedule::{Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Gather,
    name: "linear",
    summary: "every rank sends its block straight to the root",
    build,
    stream: None,
    segmented: false,
    lanes: false,
    applies: Applies::ANYWHERE,
    ops: OpCount::Unbounded,
    mpi: Counterparts {
        ompi: Some(Ompi {
            id: 1,
            name: "basic_linear",
            function: "basic_linear",
        }),
        mpich: None,
    },
};

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let c = req.count;
    let root = req.collective.root().unwrap_or(0) as usize;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        if r == root {
            prog.push(
                Op::Copy {
                    src: Region::input(0, c),
                    dst: Region::output(r as u64 * c, c),
                },
                &[],
            );
            for k in 1..p {
                let peer = (root + k) % p;
                prog.push(
                    Op::Recv {
                        peer: peer as u32,
                        tag: 0,
                        region: Region::output(peer as u64 * c, c),
                        combine: false,
                    },
                    &[],
                );
            }
        } else {
            prog.push(
                Op::Send {
                    peer: root as u32,
                    tag: 0,
                    region: Region::input(0, c),
                    route: 0,
                },
                &[],
            );
        }
    }
    Ok(s)
}
