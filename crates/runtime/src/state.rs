//! One rank's dynamic state (what is ready, by kind), and the claims that
//! turn overlapping accesses into errors.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use topocoll_schedule::{Buf, Op, OpId, Program, Region};

/// One rank's dynamic state: dependency counters and what is ready, by kind.
pub struct RankState {
    pub(crate) remaining: Vec<u32>,
    /// Operations completed.
    pub done: usize,
    pub(crate) total: usize,
    pub(crate) local: VecDeque<OpId>,
    pub(crate) recvs: VecDeque<OpId>,
    pub(crate) sends: BinaryHeap<Reverse<OpId>>,
    /// Sends started and not yet complete.
    pub in_flight: usize,
    pub(crate) engines: usize,
}

impl RankState {
    pub(crate) fn classify(&mut self, prog: &Program, op: OpId) {
        match prog.ops[op as usize] {
            Op::Send { .. } => self.sends.push(Reverse(op)),
            Op::Recv { .. } => self.recvs.push_back(op),
            _ => self.local.push_back(op),
        }
    }

    /// A ready local operation (copy, combine, compute), oldest first.
    pub fn pop_local(&mut self) -> Option<OpId> {
        self.local.pop_front()
    }

    /// A ready receive to post.
    pub fn pop_recv(&mut self) -> Option<OpId> {
        self.recvs.pop_front()
    }

    /// The next send an engine takes (lowest program index), if an engine is free.
    pub fn start_send(&mut self) -> Option<OpId> {
        if self.in_flight >= self.engines {
            return None;
        }
        self.start_send_beyond_engines()
    }

    /// The next ready send even when every engine is busy (the MPI backend's
    /// escape from rendezvous deadlock).
    pub fn start_send_beyond_engines(&mut self) -> Option<OpId> {
        let Reverse(op) = self.sends.pop()?;
        self.in_flight += 1;
        Some(op)
    }

    /// A started send has completed (call [`Plan::complete`] too).
    pub fn send_finished(&mut self) {
        self.in_flight -= 1;
    }

    /// Sends ready but not started.
    pub fn queued_sends(&self) -> usize {
        self.sends.len()
    }

    pub fn finished(&self) -> bool {
        self.done == self.total
    }

    pub fn total(&self) -> usize {
        self.total
    }
}

/// Regions in use by running operations of one rank, so that overlapping
/// accesses (a race the verifier would have rejected) become errors instead
/// of undefined behaviour.
#[derive(Default)]
pub(crate) struct Claims {
    active: Vec<(Buf, u64, u64, bool, u64)>,
}

impl Claims {
    /// Claims `regs` (region, writes) for claim `id`; on a conflict returns the
    /// id holding the conflicting region.
    pub(crate) fn claim(
        &mut self,
        id: u64,
        regs: &[(Region, bool)],
    ) -> std::result::Result<(), u64> {
        for (k, (r, w)) in regs.iter().enumerate() {
            if r.count == 0 {
                continue;
            }
            let overlaps = |b: Buf, lo: u64, hi: u64, w2: bool| {
                b == r.buf && lo < r.end() && r.offset < hi && (*w || w2)
            };
            if let Some(a) = self.active.iter().find(|a| overlaps(a.0, a.1, a.2, a.3)) {
                return Err(a.4);
            }
            if regs[..k]
                .iter()
                .any(|(r2, w2)| r2.count > 0 && overlaps(r2.buf, r2.offset, r2.end(), *w2))
            {
                return Err(id);
            }
        }
        for (r, w) in regs {
            if r.count > 0 {
                self.active.push((r.buf, r.offset, r.end(), *w, id));
            }
        }
        Ok(())
    }

    pub(crate) fn release(&mut self, id: u64) {
        self.active.retain(|a| a.4 != id);
    }

    /// No claims (keeping the memory for the next run).
    #[cfg(feature = "mpi")]
    pub(crate) fn clear(&mut self) {
        self.active.clear();
    }
}

/// The regions an operation reads and writes on its own rank (a send reads,
/// a receive writes).
pub(crate) fn op_regions(op: &Op) -> Vec<(Region, bool)> {
    match *op {
        Op::Send { region, .. } => vec![(region, false)],
        Op::Recv { region, .. } => vec![(region, true)],
        Op::Copy { src, dst } | Op::Combine { src, dst } => vec![(src, false), (dst, true)],
        Op::Compute { .. } => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_detect_overlap() {
        let mut c = Claims::default();
        c.claim(1, &[(Region::output(0, 10), false)]).unwrap();
        c.claim(2, &[(Region::output(5, 10), false)]).unwrap();
        assert_eq!(c.claim(3, &[(Region::output(9, 1), true)]), Err(1));
        c.claim(3, &[(Region::input(9, 1), true)]).unwrap();
        c.release(1);
        assert_eq!(c.claim(4, &[(Region::output(0, 5), true)]), Ok(()));
        assert_eq!(
            c.claim(
                5,
                &[
                    (Region::scratch(0, 5), true),
                    (Region::scratch(4, 1), false)
                ]
            ),
            Err(5)
        );
    }
}
