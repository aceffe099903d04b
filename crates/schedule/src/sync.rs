//! What the verifier proves of a barrier, which moves no data: every rank's
//! exit waits on every rank's entry. In the happens-before graph of the
//! schedule (an op after the ops it depends on; a receive after the send it
//! matches), rank r leaves once every op of r that no later op of r waits
//! for (its exits) is done, so for every rank q one of those exits must
//! have an ancestor on q: an op of q runs only once q has entered the
//! barrier, so r cannot leave before q has entered. A rank with
//! no ops among several waits on no one and fails.

use super::{match_messages, Op, OpId, Schedule, Successors};
use crate::error::{Error, Result, VerifyError, VerifyKind};

/// Ranks handled per pass: one bit each in a word per op.
const GROUP: usize = 64;

/// Passes × ops the check may take before it gives up (a few seconds).
const MAX_WORK: u64 = 1 << 33;

/// Proves every rank's exits wait on every rank (see the module).
pub(super) fn check_barrier(s: &Schedule) -> Result<()> {
    let p = s.ranks;
    if p <= 1 {
        return Ok(());
    }
    if let Some(r) = s.programs.iter().position(|prog| prog.is_empty()) {
        return Err(Error::Verify(VerifyError::at(
            VerifyKind::Barrier,
            r,
            None,
            format!(
                "barrier: rank {r} has no operations, so no rank waits for it to enter and it waits for no one"
            ),
        )));
    }
    let ops = s.num_ops() as u64;
    let passes = p.div_ceil(GROUP) as u64;
    if passes.saturating_mul(ops) > MAX_WORK {
        return Err(Error::too_large(format!(
            "too large to verify: the barrier check on {p} ranks would take {passes} passes over {ops} ops; verify fewer ranks, or skip the verifier (simulate --no-verify)"
        )));
    }
    let partner = match_messages(s)?;
    let order = topological_order(s, &partner)?;
    let succ: Vec<Successors> = s.programs.iter().map(Successors::new).collect();
    let base: Vec<usize> = s
        .programs
        .iter()
        .scan(0usize, |at, prog| {
            let b = *at;
            *at += prog.len();
            Some(b)
        })
        .collect();
    let mut reach = vec![0u64; ops as usize];
    for g in 0..passes as usize {
        let (lo, hi) = (g * GROUP, ((g + 1) * GROUP).min(p));
        let full = if hi - lo == GROUP {
            u64::MAX
        } else {
            (1u64 << (hi - lo)) - 1
        };
        reach.fill(0);
        for &(r, i) in &order {
            let (r, i) = (r as usize, i as usize);
            let mut m = if (lo..hi).contains(&r) {
                1u64 << (r - lo)
            } else {
                0
            };
            for &d in s.programs[r].deps(i) {
                m |= reach[base[r] + d as usize];
            }
            if let Op::Recv { peer, .. } = s.programs[r].ops[i] {
                let j = partner[r][i] as usize;
                m |= reach[base[peer as usize] + j];
            }
            reach[base[r] + i] = m;
        }
        for (r, prog) in s.programs.iter().enumerate() {
            // Rank r leaves once all its ops are done: once its exits are.
            let exits = (0..prog.len()).filter(|&i| succ[r].of(i).is_empty());
            let m = exits.fold(0, |m, i| m | reach[base[r] + i]);
            if m != full {
                let q = lo + (!m & full).trailing_zeros() as usize;
                return Err(Error::Verify(VerifyError::at(
                    VerifyKind::Barrier,
                    r,
                    None,
                    format!(
                        "barrier: rank {r} can leave before rank {q} has entered: no operation of rank {q} happens before any of rank {r}'s last operations"
                    ),
                )));
            }
        }
    }
    Ok(())
}

/// The ops in an order where each comes after its dependencies and a
/// receive after its send (the verifier's run has already shown there is
/// one: no deadlock).
fn topological_order(s: &Schedule, partner: &[Vec<OpId>]) -> Result<Vec<(u32, OpId)>> {
    let succ: Vec<Successors> = s.programs.iter().map(Successors::new).collect();
    let mut count: Vec<Vec<u32>> = s
        .programs
        .iter()
        .map(|prog| {
            (0..prog.len())
                .map(|i| {
                    prog.deps(i).len() as u32 + u32::from(matches!(prog.ops[i], Op::Recv { .. }))
                })
                .collect()
        })
        .collect();
    let mut ready: Vec<(u32, OpId)> = Vec::new();
    for (r, c) in count.iter().enumerate() {
        for (i, &n) in c.iter().enumerate() {
            if n == 0 {
                ready.push((r as u32, i as OpId));
            }
        }
    }
    let mut order = Vec::with_capacity(s.num_ops());
    while let Some((r, i)) = ready.pop() {
        order.push((r, i));
        let (ru, iu) = (r as usize, i as usize);
        let mut release = |rank: usize, j: OpId, ready: &mut Vec<(u32, OpId)>| {
            count[rank][j as usize] -= 1;
            if count[rank][j as usize] == 0 {
                ready.push((rank as u32, j));
            }
        };
        for &j in succ[ru].of(iu) {
            release(ru, j, &mut ready);
        }
        if let Op::Send { peer, .. } = s.programs[ru].ops[iu] {
            release(peer as usize, partner[ru][iu], &mut ready);
        }
    }
    if order.len() != s.num_ops() {
        return Err(Error::Verify(VerifyError::new(
            VerifyKind::Deadlock,
            "barrier: the operations wait on each other in a cycle",
        )));
    }
    Ok(order)
}
