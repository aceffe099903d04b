//! Node-aware barrier, for ranks that share nodes (`--ranks-per-node`, a
//! rankfile, a topology's placement): every rank sends a zero-byte message
//! to its node's leader (its lowest rank), the leaders run a dissemination
//! barrier among themselves once they have heard from their node, and each
//! leader then releases its node's ranks. Only the leaders' ⌈log2 N⌉ rounds
//! cross the network (N nodes). Without a topology, or with one rank per
//! node, every rank leads its own node: the dissemination barrier.

use super::{dissemination::disseminate, NOTHING};
use crate::error::Result;
use crate::{Algorithm, Request};
use topocoll_schedule::{CollectiveKind, Op, OpId, Schedule};

pub const ALGORITHM: Algorithm = Algorithm::new(
    CollectiveKind::Barrier,
    "node_aware",
    "gather to each node's leader, dissemination among leaders, release inside the node",
    build,
);

/// Arrival at the leader; the release is tag 1, the leaders' rounds 2 on.
const ARRIVE: u32 = 0;
const RELEASE: u32 = 1;

fn build(req: &Request) -> Result<Schedule> {
    let p = req.ranks;
    let mut s = req.schedule(&ALGORITHM);
    // The ranks of each node, in rank order, nodes by their first rank.
    let node_of = |r: usize| req.topology.map_or(r as u64, |t| t.rank_node[r] as u64);
    let mut nodes: Vec<(u64, Vec<usize>)> = Vec::new();
    let mut index = rustc_hash::FxHashMap::default();
    for r in 0..p {
        let at = *index.entry(node_of(r)).or_insert_with(|| {
            nodes.push((node_of(r), Vec::new()));
            nodes.len() - 1
        });
        nodes[at].1.push(r);
    }
    let leaders: Vec<usize> = nodes.iter().map(|n| n.1[0]).collect();
    let mut heard: Vec<Vec<OpId>> = Vec::with_capacity(nodes.len());
    for (_, members) in &nodes {
        let lead = members[0];
        let mut got = Vec::new();
        for &m in &members[1..] {
            let sent = s.programs[m].push(Op::send(lead as u32, ARRIVE, NOTHING), &[]);
            s.programs[m].push(Op::recv(lead as u32, RELEASE, NOTHING), &[sent]);
            got.push(s.programs[lead].push(Op::recv(m as u32, ARRIVE, NOTHING), &[]));
        }
        heard.push(got);
    }
    let done = disseminate(&mut s, &leaders, 2, &heard);
    for ((_, members), after) in nodes.iter().zip(&done) {
        for &m in &members[1..] {
            s.programs[members[0]].push(Op::send(m as u32, RELEASE, NOTHING), after);
        }
    }
    Ok(s)
}
