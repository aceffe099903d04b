//! Binomial-tree scatter (MPICH's): with relative rank v = (r − root) mod P,
//! a rank receives from v − lowbit(v) the blocks of its subtree, relative
//! ranks v … v + min(lowbit(v), P − v) − 1, into Scratch in relative order,
//! then sends each child v + m (m = lowbit(v)/2, …, 2, 1, largest subtree
//! first) the child's subtree's blocks, and keeps its own. The root first
//! copies its buffer into Scratch rotated, so that every subtree's blocks are
//! contiguous (not needed when the root is rank 0).

use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "scatter",
    name: "binomial",
    summary: "binomial tree: each rank receives its subtree's blocks and passes on its children's, largest first",
    build,
    stream: None,
    segmented: false,
};

/// lowbit(v), and the root's: the first power of two ≥ P.
pub(crate) fn low(v: usize, p: usize) -> usize {
    if v == 0 {
        p.next_power_of_two()
    } else {
        1 << v.trailing_zeros()
    }
}

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let c = req.count;
    let root = req.collective.root().unwrap_or(0) as usize;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        let low = low(v, p);
        let sub = low.min(p - v) as u64;
        // This rank holds relative blocks v.. in Scratch (the root when it
        // is rank 0: in place in its input), once `deps` are done.
        let in_place = v == 0 && root == 0;
        let held = |j: u64, k: u64| {
            if in_place {
                Region::input(j * c, k * c)
            } else {
                Region::scratch(j * c, k * c)
            }
        };
        let deps: Vec<OpId> = if v == 0 {
            if in_place {
                Vec::new()
            } else {
                prog.scratch = p as u64 * c;
                let first = (p - root) as u64 * c;
                let a = prog.push(
                    Op::Copy {
                        src: Region::input(root as u64 * c, first),
                        dst: Region::scratch(0, first),
                    },
                    &[],
                );
                let b = prog.push(
                    Op::Copy {
                        src: Region::input(0, root as u64 * c),
                        dst: Region::scratch(first, root as u64 * c),
                    },
                    &[],
                );
                vec![a, b]
            }
        } else {
            let parent = ((v - low + root) % p) as u32;
            let into = if sub == 1 {
                Region::output(0, c)
            } else {
                prog.scratch = sub * c;
                Region::scratch(0, sub * c)
            };
            let recv = prog.push(
                Op::Recv {
                    peer: parent,
                    tag: 0,
                    region: into,
                    combine: false,
                },
                &[],
            );
            if sub == 1 {
                continue;
            }
            vec![recv]
        };
        let mut m = low >> 1;
        while m > 0 {
            if v + m < p {
                let child = ((v + m + root) % p) as u32;
                let k = m.min(p - v - m) as u64;
                prog.push(
                    Op::Send {
                        peer: child,
                        tag: 0,
                        region: held(m as u64, k),
                        route: 0,
                    },
                    &deps,
                );
            }
            m >>= 1;
        }
        let own = if v == 0 {
            Region::input(root as u64 * c, c)
        } else {
            held(0, 1)
        };
        let copy_deps = if v == 0 { Vec::new() } else { deps };
        prog.push(
            Op::Copy {
                src: own,
                dst: Region::output(0, c),
            },
            &copy_deps,
        );
    }
    Ok(s)
}
