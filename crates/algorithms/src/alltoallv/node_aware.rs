//! Node-aware alltoallv (`algorithms::compose`), the node-aware all-to-all's
//! shape with a count per pair, for nodes of any sizes: each node's ranks
//! send their whole send buffers (their rows) to the node's leader (its
//! lowest rank); the N leaders run an alltoallv of node-to-node blocks,
//! node j's for node i holding every block from j's ranks to i's
//! (`--inter`, default linear); and each leader sends each of its ranks
//! its whole receive buffer (its column).
//!
//! A leader packs the blocks with local copies twice. Before the exchange,
//! from the gathered rows (and its own input) into `[i][t][u]`: for node i,
//! local source t's block for i's rank u, so the blocks for node i are one
//! run. After it, from what node j sent, `[j][t][u]`, into `[u][s]`: for
//! local rank u, source rank s's block at its place in u's output (the
//! leader's own straight into its output). Empty blocks take no copy and
//! a rank with nothing to send or receive takes no message; copies of
//! blocks that stay together are one copy.
//!
//! `node_aware_multi`, for nodes of K ranks each: every rank of a node
//! leads the blocks its node sends to the ranks of its own local index:
//! an alltoallv inside each node, then K alltoallvs side by side among the
//! nodes' ranks of one index (`--inter`), each on the counts of the blocks
//! it carries, each block crossing the network once (`algorithms::exchange`,
//! which says why this form). The ranks of one index form the groups, so
//! nodes of unequal sizes are refused.

use crate::compose::{self, each_node, Composer, Frame, NodeNeed, Nodes};
use crate::error::Result;
use crate::exchange;
use crate::{Algorithm, Request};
use topocoll_schedule::{Buf, Collective, CollectiveKind, Op, Region, Schedule, Sizes};

pub const ALGORITHM: Algorithm = compose::node_aware(
    CollectiveKind::Alltoallv,
    "gather each node's send buffers to its leader, alltoallv of node-to-node blocks among leaders (--inter, default linear), scatter inside each node",
    build,
    NodeNeed::Shared,
    INTER,
);

pub const MULTI: Algorithm = compose::node_aware_multi(
    ALGORITHM,
    "alltoallv in each node so rank t holds its node's blocks for the ranks t, K alltoallvs among same-index ranks (--inter, default linear) (nodes of equal size)",
    build_multi,
    NodeNeed::Equal,
);

/// The leaders' default algorithm.
pub const INTER: &Algorithm = &super::linear::ALGORITHM;

/// Where a leader keeps its node's data: the gathered rows of the ranks but
/// itself (`gathered[r]`, area A from 0), later what the leaders' exchange
/// brings; the blocks it sends (area B from `area`), later the columns it
/// scatters; and how the leaders' exchange packs the blocks.
struct Layout {
    /// A rank's row's offset in its leader's area A (the leader's: unused).
    gathered: Vec<u64>,
    /// A rank's column's offset in its leader's area B (the leader's: unused).
    column: Vec<u64>,
    /// Each area's length: the most any node's rows or columns take.
    area: u64,
    /// The leaders' counts ([`node_sizes`]).
    between: Sizes,
}

/// Where area A starts in a leader's scratch (area B: at `Layout::area`).
const A: u64 = 0;

impl Layout {
    fn new(nodes: &Nodes, leaders: &[usize], v: &Sizes) -> Result<Layout> {
        let p = v.ranks();
        let (mut gathered, mut column) = (vec![0; p], vec![0; p]);
        let mut area = 0u64;
        // No sum overflows: a rank's buffers hold at most 2^50 bytes and an
        // alltoallv takes at most 2,048 ranks (`Sizes::check`), so a node's
        // rows or columns stay below 2^61 elements, and three areas of them
        // below 2^63.
        for (j, m) in nodes.members.iter().enumerate() {
            let (mut rows, mut cols) = (0u64, 0u64);
            for &r in m.iter().filter(|&&r| r != leaders[j]) {
                (gathered[r], column[r]) = (rows, cols);
                rows += v.input_len(r);
                cols += v.output_len(r);
            }
            let l = leaders[j];
            area = area.max((v.input_len(l) + rows).max(v.output_len(l) + cols));
        }
        Ok(Layout {
            gathered,
            column,
            area,
            between: node_sizes(nodes, v)?,
        })
    }

    /// Leader `l` of node j's copies from the gathered rows (area A; its
    /// own row in its input) to the blocks it sends (area B, packed as the
    /// leaders' counts say).
    fn to_send(&self, nodes: &Nodes, v: &Sizes, j: usize, l: usize) -> Vec<Op> {
        let mut moves = Vec::new();
        for i in 0..nodes.count() {
            let to = self.area + self.between.send_at(j, i);
            for (s, d, at, n) in pair_blocks(nodes, j, i, v) {
                let from = if s == l {
                    Region::input(v.send_at(s, d), n)
                } else {
                    Region::scratch(A + self.gathered[s] + v.send_at(s, d), n)
                };
                moves.push((from, Region::scratch(to + at, n)));
            }
        }
        compose::joined_copies(moves)
    }

    /// Leader `l` of node i's copies from what the leaders' exchange brought
    /// (area A) to its ranks' columns (area B; its own straight into its
    /// output).
    fn to_scatter(&self, nodes: &Nodes, v: &Sizes, i: usize, l: usize) -> Vec<Op> {
        let mut moves = Vec::new();
        for j in 0..nodes.count() {
            let from = A + self.between.recv_at(i, j);
            for (s, d, at, n) in pair_blocks(nodes, j, i, v) {
                let to = if d == l {
                    Region::output(v.recv_at(d, s), n)
                } else {
                    Region::scratch(self.area + self.column[d] + v.recv_at(d, s), n)
                };
                moves.push((Region::scratch(from + at, n), to));
            }
        }
        compose::joined_copies(moves)
    }
}

fn build(req: &Request) -> Result<Schedule> {
    let lead = compose::leaders(req, &ALGORITHM)?;
    let v = req.sizes()?;
    let (nodes, leaders) = (&lead.nodes, &lead.ranks);
    let lay = Layout::new(nodes, leaders, v)?;
    let mut cp = Composer::new(req, &ALGORITHM);
    // The rows to each leader.
    let tag = cp.tag();
    for (j, m) in nodes.members.iter().enumerate() {
        let l = leaders[j];
        let mut recvs = Vec::new();
        for &r in m.iter().filter(|&&r| r != l && v.input_len(r) > 0) {
            let n = v.input_len(r);
            cp.step(r, &[Op::send(l as u32, tag, Region::input(0, n))]);
            recvs.push(Op::recv(
                r as u32,
                tag,
                Region::scratch(A + lay.gathered[r], n),
            ));
        }
        cp.step(l, &recvs);
    }
    cp.next_phase()?;
    for (j, &l) in leaders.iter().enumerate() {
        cp.reserve(l, 2 * lay.area);
        cp.step(l, &lay.to_send(nodes, v, j, l));
    }
    let sub = compose::phase_sized(req, lead.inter, Collective::Alltoallv, lay.between.clone())?;
    let frame = Frame {
        input: (Buf::Scratch, lay.area),
        output: (Buf::Scratch, A),
        scratch: 2 * lay.area,
    };
    cp.embed(&sub, leaders, frame)?;
    for (i, &l) in leaders.iter().enumerate() {
        cp.step(l, &lay.to_scatter(nodes, v, i, l));
    }
    cp.next_phase()?;
    // The columns to each rank.
    let tag = cp.tag();
    each_node(nodes, leaders, |m, lead| {
        let l = m[lead];
        let mut sends = Vec::new();
        for &u in m.iter().filter(|&&u| u != l && v.output_len(u) > 0) {
            let n = v.output_len(u);
            let column = Region::scratch(lay.area + lay.column[u], n);
            sends.push(Op::send(u as u32, tag, column));
            cp.step(u, &[Op::recv(l as u32, tag, Region::output(0, n))]);
        }
        cp.step(l, &sends);
        Ok(())
    })?;
    Ok(cp.finish())
}

fn build_multi(req: &Request) -> Result<Schedule> {
    let (nodes, inter) = compose::setup(req, &MULTI)?;
    let blocks = exchange::Blocks::Sized(req.sizes()?);
    exchange::build(req, &MULTI, &nodes, inter, blocks)
}

/// The leaders' counts: node j's block for node i holds every block from
/// j's ranks to i's.
fn node_sizes(nodes: &Nodes, v: &Sizes) -> Result<Sizes> {
    let n = nodes.count();
    let mut m = vec![0u64; n * n];
    for (s, &j) in nodes.node_of.iter().enumerate() {
        for (d, &i) in nodes.node_of.iter().enumerate() {
            m[j * n + i] += v.block(s, d);
        }
    }
    Ok(Sizes::per_pair(n, m)?)
}

/// The blocks of node j's block for node i, in the order the leaders send
/// them (`[t][u]`: j's local source t, then i's local rank u): source,
/// destination, offset in the node-to-node block, length.
fn pair_blocks<'a>(
    nodes: &'a Nodes,
    j: usize,
    i: usize,
    v: &'a Sizes,
) -> impl Iterator<Item = (usize, usize, u64, u64)> + 'a {
    let mut at = 0;
    nodes.members[j]
        .iter()
        .flat_map(move |&s| nodes.members[i].iter().map(move |&d| (s, d)))
        .map(move |(s, d)| {
            let n = v.block(s, d);
            at += n;
            (s, d, at - n, n)
        })
}
