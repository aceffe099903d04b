//! Binomial-tree scatter (MPICH's): with relative rank v = (r − root) mod P,
//! a rank receives from v − lowbit(v) the blocks of its subtree, relative
//! ranks v … v + min(lowbit(v), P − v) − 1, into Scratch in relative order,
//! then sends each child v + m (m = lowbit(v)/2, …, 2, 1, largest subtree
//! first) the child's subtree's blocks, and keeps its own. The root first
//! copies its buffer into Scratch rotated, so that every subtree's blocks are
//! contiguous (not needed when the root is rank 0).

use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::CollectiveKind;
use topocoll_schedule::{Op, OpId, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Scatter, "binomial", "binomial tree: each rank receives its subtree's blocks and passes on its children's, largest first", build).ompi(2, "binomial", "binomial");

/// The span of v's subtree in a radix-k tree before it is cut at P: k^t
/// for the t trailing zero digits of v in base k (lowbit(v) for k = 2), and
/// the root's: the first power of k ≥ P.
pub(crate) fn low(v: usize, p: usize, k: usize) -> usize {
    let mut m = 1usize;
    if v == 0 {
        while m < p {
            m = m.saturating_mul(k);
        }
    } else {
        while (v / m).is_multiple_of(k) {
            m *= k;
        }
    }
    m
}

fn build(req: &Request) -> Result<Schedule> {
    build_radix(req, &ALGORITHM, 2)
}

/// The scatter down a radix-`k` tree (binomial for k = 2) from the
/// request's root, as `alg`'s schedule.
pub(crate) fn build_radix(req: &Request, alg: &Algorithm, k: usize) -> Result<Schedule> {
    let mut s = req.schedule(alg);
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
    tree(&mut s.programs, &members, c, 0, held, &deps, k);
    Ok(s)
}

/// A binomial (radix-`k`: k-nomial) scatter among `members` (relative
/// rank v is `members[v]`) of blocks of `c` elements, with messages tagged
/// `tag`: `members[0]` holds the blocks in relative order in `held` once
/// `deps` are done; every other member receives its subtree's into Scratch
/// from offset 0 (straight into its output when the subtree is itself).
/// Each member ends with its block in its output. A child v + j·m (m a
/// power of k below v's span, 1 ≤ j < k) roots ranks v + j·m … v + j·m +
/// m − 1, contiguous in relative order; the largest spans go first, and
/// within one span the lower j (never cut shorter by P than a higher one).
pub(crate) fn tree(
    progs: &mut [topocoll_schedule::Program],
    members: &[usize],
    c: u64,
    tag: u32,
    held: Region,
    deps: &[OpId],
    k: usize,
) {
    let p = members.len();
    for (v, &r) in members.iter().enumerate() {
        let prog = &mut progs[r];
        let low = low(v, p, k);
        let sub = low.min(p - v) as u64;
        let (base, deps): (Region, Vec<OpId>) = if v == 0 {
            (held, deps.to_vec())
        } else {
            // v less its lowest non-zero base-k digit.
            let parent = members[v - (v / low) % k * low] as u32;
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
        let mut m = low / k;
        while m > 0 {
            for j in 1..k {
                // (j·m < low ≤ a power of k at most P·k: no overflow.)
                let child = v + j * m;
                if child >= p {
                    break;
                }
                let n = m.min(p - child) as u64;
                prog.push(
                    Op::send(members[child] as u32, tag, part((j * m) as u64, n)),
                    &deps,
                );
            }
            m /= k;
        }
        prog.push(Op::copy(part(0, 1), Region::output(0, c)), &deps);
    }
}
