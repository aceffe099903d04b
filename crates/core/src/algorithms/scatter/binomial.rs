//! Binomial-tree scatter (MPICH's): with relative rank v = (r − root) mod P,
//! a rank receives from v − lowbit(v) the blocks of its subtree, relative
//! ranks v … v + min(lowbit(v), P − v) − 1, into Scratch in relative order,
//! then sends each child v + m (m = lowbit(v)/2, …, 2, 1, largest subtree
//! first) the child's subtree's blocks, and keeps its own. The root first
//! copies its buffer into Scratch rotated, so that every subtree's blocks are
//! contiguous (not needed when the root is rank 0).

use crate::algorithms::{Algorithm, Request};
use crate::algorithms::{Applies, Counterparts, Ompi, OpCount};
use crate::error::Result;
use crate::schedule::CollectiveKind;
use crate::schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Scatter,
    name: "binomial",
    summary: "binomial tree: each rank receives its subtree's blocks and passes on its children's, largest first",
    build,
    stream: None,
    segmented: false,
    lanes: false,
    applies: Applies::ANYWHERE,
    ops: OpCount::Unbounded,
    mpi: Counterparts { ompi: Some(Ompi { id: 2, name: "binomial", function: "binomial" }), mpich: None },
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
    let members: Vec<usize> = (0..p).map(|v| (root + v) % p).collect();
    // The root holds the blocks in relative order: in place in its input
    // when it is rank 0, else in Scratch, rotated.
    let (held, deps) = if root == 0 {
        (Region::input(0, p as u64 * c), Vec::new())
    } else {
        let prog = &mut s.programs[root];
        prog.scratch = p as u64 * c;
        let first = (p - root) as u64 * c;
        let a = prog.push(
            Op::copy(
                Region::input(root as u64 * c, first),
                Region::scratch(0, first),
            ),
            &[],
        );
        let b = prog.push(
            Op::copy(
                Region::input(0, root as u64 * c),
                Region::scratch(first, root as u64 * c),
            ),
            &[],
        );
        (Region::scratch(0, p as u64 * c), vec![a, b])
    };
    tree(&mut s.programs, &members, c, 0, held, &deps);
    Ok(s)
}

/// A binomial scatter among `members` (relative rank v is `members[v]`) of
/// blocks of `c` elements, with messages tagged `tag`: `members[0]` holds
/// the blocks in relative order in `held` once `deps` are done; every other
/// member receives its subtree's into Scratch from offset 0 (straight into
/// its output when the subtree is itself). Each member ends with its block
/// in its output.
pub(crate) fn tree(
    progs: &mut [crate::schedule::Program],
    members: &[usize],
    c: u64,
    tag: u32,
    held: Region,
    deps: &[OpId],
) {
    let p = members.len();
    for (v, &r) in members.iter().enumerate() {
        let prog = &mut progs[r];
        let low = low(v, p);
        let sub = low.min(p - v) as u64;
        let (base, deps): (Region, Vec<OpId>) = if v == 0 {
            (held, deps.to_vec())
        } else {
            let parent = members[v - low] as u32;
            let into = if sub == 1 {
                Region::output(0, c)
            } else {
                prog.scratch = prog.scratch.max(sub * c);
                Region::scratch(0, sub * c)
            };
            let recv = prog.push(Op::recv(parent, tag, into), &[]);
            if sub == 1 {
                continue;
            }
            (into, vec![recv])
        };
        let part = |j: u64, k: u64| Region::new(base.buf, base.offset + j * c, k * c);
        let mut m = low >> 1;
        while m > 0 {
            if v + m < p {
                let k = m.min(p - v - m) as u64;
                prog.push(
                    Op::send(members[v + m] as u32, tag, part(m as u64, k)),
                    &deps,
                );
            }
            m >>= 1;
        }
        prog.push(Op::copy(part(0, 1), Region::output(0, c)), &deps);
    }
}
