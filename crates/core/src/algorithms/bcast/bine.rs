//! Bine-tree broadcast (De Sensi et al., SC 2025): a binomial tree whose
//! edges are Swing's peers taken from the farthest down
//! (`algorithms::butterfly::bine_tree`): with relative rank
//! v = (r − root) mod P, the root sends to v ± ρ(S−1), then every rank
//! that has the buffer to its peer at ρ(S−2), and so on, the distances
//! shrinking to 1 at the leaves, so that the farthest hops carry the fewest
//! messages. P must be a power of two (the reference implementation's
//! limit); other counts are refused.

use crate::algorithms::butterfly::bine_tree;
use crate::algorithms::{Algorithm, Request};
use crate::algorithms::{Applies, Counterparts, OpCount, RankNeed, RootNeed, TopologyNeed};
use crate::error::Result;
use crate::schedule::{CollectiveKind, Op, Region, Schedule};

/// Where the Bine collectives apply: any network, P a power of two.
pub(crate) const POWER_OF_TWO: Applies = Applies {
    topology: TopologyNeed::Any,
    ranks: RankNeed::PowerOfTwo(
        "Bine trees are defined on a power of two ranks, not {p} (as in the reference implementation)",
    ),
    root: RootNeed::Any,
};

pub const ALGORITHM: Algorithm = Algorithm {
    collective: CollectiveKind::Bcast,
    name: "bine",
    summary: "Bine tree: binomial tree on rank ± ρ(s), farthest child first, distances shrinking (P a power of two)",
    build,
    stream: None,
    segmented: false,
    radix: false,
    lanes: false,
    applies: POWER_OF_TWO,
    ops: OpCount::Unbounded,
    mpi: Counterparts::NONE,
};

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    let mut s = req.schedule(ALGORITHM.name);
    let p = req.ranks;
    let root = req.collective.root().unwrap_or(0) as usize;
    let tree = bine_tree(p)?;
    let (bf, parent) = (&tree.bf, &tree.parent);
    let all = Region::output(0, req.count);
    let real = |v: usize| ((v + root) % p) as u32;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        let (first, deps) = match parent[v] {
            Some((k, from)) => (k + 1, vec![prog.push(Op::recv(real(from), 0, all), &[])]),
            None => (0, Vec::new()),
        };
        for k in first..bf.steps() {
            prog.push(Op::send(real(bf.peer(v, k)), 0, all), &deps);
        }
    }
    Ok(s)
}
