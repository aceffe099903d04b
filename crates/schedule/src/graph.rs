//! Derived views of a schedule that every consumer needs: each operation's
//! successors (the reverse of its dependencies) and the static matching of
//! sends to receives.

use super::{Op, OpId, Program, Schedule};
use crate::error::{Error, Result, VerifyError, VerifyKind};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// For each op of a program, the ops that wait for it (compressed rows).
pub struct Successors {
    start: Vec<u32>,
    list: Vec<OpId>,
}

impl Successors {
    pub fn new(prog: &Program) -> Successors {
        let n = prog.len();
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            for &d in prog.deps(i) {
                start[d as usize + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0; start[n] as usize];
        for i in 0..n {
            for &d in prog.deps(i) {
                list[fill[d as usize] as usize] = i as OpId;
                fill[d as usize] += 1;
            }
        }
        Successors { start, list }
    }

    /// The ops that wait for op `i`.
    pub fn of(&self, i: usize) -> &[OpId] {
        &self.list[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Number of dependencies of each op (the counters an executor decrements).
pub fn dependency_counts(prog: &Program) -> Vec<u32> {
    (0..prog.len()).map(|i| prog.deps(i).len() as u32).collect()
}

/// For every op: for a send, the index of the receive it meets on its peer;
/// for a receive, the index of the send it meets on its peer; otherwise
/// `u32::MAX`. The k-th send of a (source, destination, tag) in program order
/// meets the k-th receive of it. Errors name the first message without a partner.
pub fn match_messages(s: &Schedule) -> Result<Vec<Vec<OpId>>> {
    let mut partner: Vec<Vec<OpId>> = s.programs.iter().map(|p| vec![u32::MAX; p.len()]).collect();
    let mut recvs: FxHashMap<(u32, u32, u32), VecDeque<OpId>> = FxHashMap::default();
    for (rank, prog) in s.programs.iter().enumerate() {
        for (i, op) in prog.ops.iter().enumerate() {
            if let Op::Recv { peer, tag, .. } = op {
                recvs
                    .entry((*peer, rank as u32, *tag))
                    .or_default()
                    .push_back(i as OpId);
            }
        }
    }
    for (rank, prog) in s.programs.iter().enumerate() {
        for (i, op) in prog.ops.iter().enumerate() {
            if let Op::Send { peer, tag, .. } = op {
                let j = recvs
                    .get_mut(&(rank as u32, *peer, *tag))
                    .and_then(|q| q.pop_front())
                    .ok_or_else(|| {
                        Error::Verify(VerifyError::at(
                            VerifyKind::Unreceived,
                            rank,
                            Some(i),
                            format!(
                                "rank {rank} op {i} sends to rank {peer} with tag {tag}, but rank {peer} has no receive left for it"
                            ),
                        ))
                    })?;
                partner[rank][i] = j;
                partner[*peer as usize][j as usize] = i as OpId;
            }
        }
    }
    let mut left: Vec<_> = recvs.into_iter().filter(|(_, q)| !q.is_empty()).collect();
    left.sort_unstable_by_key(|(k, _)| *k);
    if let Some(((src, dst, tag), q)) = left.first() {
        return Err(Error::Verify(VerifyError::at(
            VerifyKind::Mismatch,
            *dst as usize,
            Some(q[0] as usize),
            format!(
                "rank {dst} op {} receives from rank {src} with tag {tag}, but rank {src} sends no such message",
                q[0]
            ),
        )));
    }
    Ok(partner)
}
