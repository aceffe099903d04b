//! Bine-tree broadcast (De Sensi et al., SC 2025): a binomial tree whose
//! edges are Swing's peers taken from the farthest down
//! (`algorithms::butterfly::bine_tree`): with relative rank
//! v = (r − root) mod P, the root sends to v ± ρ(S−1), then every rank
//! that has the buffer to its peer at ρ(S−2), and so on, the distances
//! shrinking to 1 at the leaves, so that the farthest hops carry the fewest
//! messages. On P = 2^S + e ranks the first 2e relative ranks pair up and
//! the odd one of each pair gets the buffer from its neighbour after the
//! tree (the fold of `bine_tree`): ⌈log2 P⌉ steps on every P.

use crate::butterfly::{bine_tree, Seat};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, Region, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(CollectiveKind::Bcast, "bine", "Bine tree: binomial tree on rank ± ρ(s), farthest child first, distances shrinking (P not a power of two: neighbours pair up, one served last)", build);

fn build(req: &Request) -> Result<Schedule> {
    ALGORITHM.check(req)?;
    let mut s = req.schedule(&ALGORITHM);
    let p = req.ranks;
    let root = req.collective.root().unwrap_or(0) as usize;
    let tree = bine_tree(p)?;
    let (bf, parent) = (&tree.bf, &tree.parent);
    let all = Region::output(0, req.count);
    let real = |v: usize| ((v + root) % p) as u32;
    for (r, prog) in s.programs.iter_mut().enumerate() {
        let v = (r + p - root) % p;
        let q = match tree.seat(v) {
            Seat::Runs(q) => q,
            Seat::SitsOut => {
                prog.push(Op::recv(real(v - 1), 0, all), &[]);
                continue;
            }
        };
        let (first, deps) = match parent[q] {
            Some((k, from)) => (
                k + 1,
                vec![prog.push(Op::recv(real(tree.rank(from)), 0, all), &[])],
            ),
            None => (0, Vec::new()),
        };
        for k in first..bf.steps() {
            prog.push(Op::send(real(tree.rank(bf.peer(q, k))), 0, all), &deps);
        }
        if let Some(w) = tree.partner(q) {
            prog.push(Op::send(real(w), 0, all), &deps);
        }
    }
    Ok(s)
}
