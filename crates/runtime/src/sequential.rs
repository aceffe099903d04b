//! The sequential executor: the reference every backend matches bit for bit.

use crate::error::{Error, Result, RunKind};
use crate::plan::Plan;
use crate::state::RankState;
use crate::{run_local, Elem, RankBuffers};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use topocoll_schedule::{Op, OpId, Schedule};

/// Executes a schedule one operation at a time in one thread, receives
/// matched eagerly: the obvious executor, the reference the backends must
/// match bit for bit. Errors on a deadlock or a mismatched message.
pub fn run_sequential<T: Elem>(s: &Schedule, bufs: &mut [RankBuffers<T>]) -> Result<()> {
    let plan = Plan::new(s)?;
    let p = s.ranks;
    let mut st: Vec<RankState> = (0..p).map(|r| plan.rank_state(r, usize::MAX)).collect();
    type Queue<T> = VecDeque<(OpId, Vec<T>)>;
    let mut msgs: FxHashMap<(u32, u32, u32), Queue<T>> = FxHashMap::default();
    let mut posted: FxHashMap<(u32, u32, u32), VecDeque<OpId>> = FxHashMap::default();
    let deliver = |bufs: &mut [RankBuffers<T>],
                   dst: usize,
                   rop: OpId,
                   src: usize,
                   sop: OpId,
                   data: &[T]|
     -> Result<()> {
        let op = &s.programs[dst].ops[rop as usize];
        let Op::Recv {
            region, combine, ..
        } = *op
        else {
            unreachable!()
        };
        if region.count as usize != data.len() {
            return Err(mismatch(s, src, sop, dst, rop));
        }
        let d = bufs[dst].region_mut(region);
        if combine {
            T::reduce_into(s.op, d, data);
        } else {
            d.copy_from_slice(data);
        }
        Ok(())
    };
    loop {
        let mut progressed = false;
        for r in 0..p {
            while let Some(i) = st[r].pop_local() {
                run_local(s, &mut bufs[r], &s.programs[r].ops[i as usize]);
                plan.complete(r, &mut st[r], i);
                progressed = true;
            }
            while let Some(i) = st[r].start_send() {
                let Op::Send {
                    peer, tag, region, ..
                } = s.programs[r].ops[i as usize]
                else {
                    unreachable!()
                };
                let data = bufs[r].region(region).to_vec();
                let key = (r as u32, peer, tag);
                if let Some(j) = posted.get_mut(&key).and_then(|q| q.pop_front()) {
                    deliver(bufs, peer as usize, j, r, i, &data)?;
                    plan.complete(peer as usize, &mut st[peer as usize], j);
                } else {
                    msgs.entry(key).or_default().push_back((i, data));
                }
                st[r].send_finished();
                plan.complete(r, &mut st[r], i);
                progressed = true;
            }
            while let Some(i) = st[r].pop_recv() {
                let Op::Recv { peer, tag, .. } = s.programs[r].ops[i as usize] else {
                    unreachable!()
                };
                let key = (peer, r as u32, tag);
                if let Some((sop, data)) = msgs.get_mut(&key).and_then(|q| q.pop_front()) {
                    deliver(bufs, r, i, peer as usize, sop, &data)?;
                    plan.complete(r, &mut st[r], i);
                } else {
                    posted.entry(key).or_default().push_back(i);
                }
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    if let Some(r) = (0..p).find(|&r| !st[r].finished()) {
        let waiting: Vec<String> = posted
            .iter()
            .filter(|(k, q)| k.1 as usize == r && !q.is_empty())
            .map(|(k, q)| format!("op {} waits for rank {} tag {}", q[0], k.0, k.2))
            .take(3)
            .collect();
        return Err(Error::runtime(
            RunKind::Deadlock,
            format!(
                "deadlock: rank {r} can never finish ({} of {} operations done; {})",
                st[r].done,
                st[r].total(),
                if waiting.is_empty() {
                    "no receive waiting".into()
                } else {
                    waiting.join(", ")
                }
            ),
        ));
    }
    if let Some(((src, dst, tag), q)) = msgs.iter().find(|(_, q)| !q.is_empty()) {
        return Err(Error::runtime(
            RunKind::Unreceived,
            format!(
                "rank {src} op {} sends to rank {dst} tag {tag}, which never receives it",
                q[0].0
            ),
        ));
    }
    Ok(())
}

/// The error for a send and a receive whose sizes differ.
pub(crate) fn mismatch(s: &Schedule, src: usize, sop: OpId, dst: usize, rop: OpId) -> Error {
    Error::runtime(
        RunKind::Mismatch,
        format!(
            "mismatched message: rank {dst} op {rop} ({}) does not fit rank {src} op {sop} ({})",
            s.programs[dst].ops[rop as usize].describe(),
            s.programs[src].ops[sop as usize].describe()
        ),
    )
}
