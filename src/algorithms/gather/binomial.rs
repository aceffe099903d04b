//! Binomial-tree gather (MPICH's), the binomial scatter reversed: with
//! relative rank v = (r − root) mod P, a rank collects in Scratch, in
//! relative order, its own block and its children's subtrees (child v + m
//! for m = 1, 2, 4, … below lowbit(v)), then sends the whole of its subtree
//! to v − lowbit(v). The root copies the collected blocks into its output
//! rotated back (it collects straight into its output when it is rank 0).

use super::super::scatter::binomial::low;
use crate::algorithms::{Algorithm, Request};
use crate::error::Result;
use crate::schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: "gather",
    name: "binomial",
    summary: "binomial tree: each rank collects its children's subtrees, smallest first, and sends its own to its parent",
    build,
    stream: None,
    segmented: false,
};

fn build(req: &Request) -> Result<Schedule> {
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let c = req.count;
    let root = req.collective.root().unwrap_or(0) as usize;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        let low = low(v, p);
        let sub = low.min(p - v) as u64;
        if v != 0 && sub == 1 {
            prog.push(
                Op::Send {
                    peer: ((v - low + root) % p) as u32,
                    tag: 0,
                    region: Region::input(0, c),
                    route: 0,
                },
                &[],
            );
            continue;
        }
        let direct = v == 0 && root == 0;
        let at = |j: u64, k: u64| {
            if direct {
                Region::output(j * c, k * c)
            } else {
                Region::scratch(j * c, k * c)
            }
        };
        if !direct {
            prog.scratch = sub * c;
        }
        let mut done: Vec<OpId> = vec![prog.push(
            Op::Copy {
                src: Region::input(0, c),
                dst: at(0, 1),
            },
            &[],
        )];
        let mut m = 1;
        while m < low && v + m < p {
            let k = m.min(p - v - m) as u64;
            done.push(prog.push(
                Op::Recv {
                    peer: ((v + m + root) % p) as u32,
                    tag: 0,
                    region: at(m as u64, k),
                    combine: false,
                },
                &[],
            ));
            m <<= 1;
        }
        if v != 0 {
            prog.push(
                Op::Send {
                    peer: ((v - low + root) % p) as u32,
                    tag: 0,
                    region: at(0, sub),
                    route: 0,
                },
                &done,
            );
        } else if !direct {
            let first = (p - root) as u64 * c;
            prog.push(
                Op::Copy {
                    src: Region::scratch(0, first),
                    dst: Region::output(root as u64 * c, first),
                },
                &done,
            );
            prog.push(
                Op::Copy {
                    src: Region::scratch(first, root as u64 * c),
                    dst: Region::output(0, root as u64 * c),
                },
                &done,
            );
        }
    }
    Ok(s)
}
