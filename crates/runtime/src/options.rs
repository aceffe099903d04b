//! The options every backend takes.

use crate::error::Result;
use std::time::Duration;
use topocoll_base::param;
use topocoll_schedule::Schedule;

/// Options every backend takes.
#[derive(Clone, Debug)]
pub struct Options {
    /// Transfers (sends) a rank keeps in flight at once; at least 1.
    pub engines: usize,
    /// Give up (with an error naming what is still waiting) after this long.
    pub timeout: Option<Duration>,
    /// Make one rank fail when one of its operations becomes ready (tests).
    pub fault: Option<Fault>,
    /// Threads backend: worker threads (0: one per available core).
    pub workers: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            engines: 4,
            timeout: Some(Duration::from_secs(600)),
            fault: None,
            workers: 0,
        }
    }
}

/// An injected failure: rank `rank` panics when its op `op` becomes ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub rank: usize,
    pub op: usize,
}

impl Fault {
    /// A fault that names no op of the schedule would never fire: refused.
    pub fn check(&self, s: &Schedule) -> Result<()> {
        let Some(program) = s.programs.get(self.rank) else {
            return Err(param!(
                "fault",
                ": rank {} is not one of the schedule's {} ranks",
                self.rank,
                s.ranks
            ));
        };
        if self.op >= program.ops.len() {
            return Err(param!(
                "fault",
                ": rank {} has {} ops, so op {} does not exist",
                self.rank,
                program.ops.len(),
                self.op
            ));
        }
        Ok(())
    }
}
