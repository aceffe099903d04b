//! K-nomial-tree broadcast (`--radix K`, default 4; K = 2 is the binomial
//! tree): with relative rank v = (r − root) mod P written in base K, a rank
//! hangs under v less its lowest non-zero digit, so the root's children are
//! j·K^i and every subtree is a run of consecutive relative ranks. The
//! buffer goes down the tree whole, or in `--segment` pieces that follow
//! each other (the pipelined trees' helper, `algorithms::pipelined`): a
//! rank forwards a piece to its children, deepest subtree first, as soon as
//! it has it. ⌈log_K P⌉ levels, each parent sending up to (K − 1) per level
//! below it.

use crate::error::fail;
use crate::error::Result;
use crate::pipelined::{self, Phases, Plan};
use crate::trees::{Tree, NO_AXIS, NO_PARENT};
use crate::OpCount;
use crate::{Algorithm, Request, Stream, DEFAULT_RADIX};
use topocoll_schedule::{CollectiveKind, Schedule};

// Open MPI 4.1's knomial bcast (7) hangs the same tree but sends to a
// rank's children level by level from the top, in rising rank within a
// level (3 before 6 at radix 3), where these go deepest subtree first,
// higher rank first among equals; MPICH 4.0 has no blocking k-nomial
// bcast.
pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Bcast,
    "knomial",
    "k-nomial tree (--radix K, default 4), whole or pipelined in --segment pieces",
    build,
)
.stream(stream)
.segmented()
.radix()
.ops(OpCount::Generated);

/// The plan of the k-nomial broadcast (`Phases::Bcast`) or reduce
/// (`Phases::Reduce`) as `alg`'s.
pub(crate) fn knomial_plan(req: &Request, alg: &Algorithm, phases: Phases) -> Result<Plan> {
    let root = req.collective.root().unwrap_or(0) as usize;
    let tree = knomial_tree(req.ranks, root, req.radix.unwrap_or(DEFAULT_RADIX))?;
    pipelined::single_tree(req, alg, tree, phases, None)
}

fn build(req: &Request) -> Result<Schedule> {
    knomial_plan(req, &ALGORITHM, Phases::Bcast)?.materialise()
}

fn stream(req: &Request) -> Result<Stream> {
    Ok(Stream::Pipeline(
        knomial_plan(req, &ALGORITHM, Phases::Bcast)?.stream()?,
    ))
}

/// The radix-`k` k-nomial tree over `p` ranks rooted at `root`: relative
/// rank v's parent is v less its lowest non-zero base-k digit.
pub fn knomial_tree(p: usize, root: usize, k: usize) -> Result<Tree> {
    if root >= p {
        return Err(fail!(
            Algorithm,
            Request,
            "tree root {root} is not one of the {p} ranks"
        ));
    }
    let parent = (0..p)
        .map(|r| {
            let v = (r + p - root) % p;
            if v == 0 {
                return NO_PARENT;
            }
            // The lowest non-zero digit's place m (m·k ≤ v while it moves).
            let mut m = 1;
            while (v / m).is_multiple_of(k) {
                m *= k;
            }
            ((v - (v / m) % k * m + root) % p) as u32
        })
        .collect();
    Tree::from_parents(root as u32, parent, vec![NO_AXIS; p])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_two_is_the_binomial_tree_and_radix_three_hangs_by_digits() {
        for p in 1..40 {
            for root in [0, p / 2, p - 1] {
                let b = crate::trees::binomial_tree(p, root).unwrap();
                assert_eq!(knomial_tree(p, root, 2).unwrap(), b);
            }
        }
        // Open MPI's picture of radix 3 on 10 ranks.
        let t = knomial_tree(10, 0, 3).unwrap();
        let mut root: Vec<u32> = t.children(0).to_vec();
        root.sort();
        assert_eq!(root, vec![1, 2, 3, 6, 9]);
        assert_eq!(
            (t.parent[4], t.parent[5], t.parent[7], t.parent[8]),
            (3, 3, 6, 6)
        );
        // A radix above P is a star.
        assert_eq!(knomial_tree(5, 2, 100).unwrap().children(2).len(), 4);
    }
}
