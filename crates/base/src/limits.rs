//! Limits every layer shares, below them all.

/// Most ranks a topology or a schedule may have.
pub const MAX_RANKS: usize = 1 << 24;

/// When long work gives up: a search, a bound or a simulation checks it
/// between steps (a max flow, a packing round, 65,536 events), so a
/// command with a time limit answers within it. [`Deadline::NONE`] never
/// passes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Deadline {
    at: Option<std::time::Instant>,
    /// The limit it was set from, for messages.
    limit_s: f64,
}

impl Deadline {
    /// No limit.
    pub const NONE: Deadline = Deadline {
        at: None,
        limit_s: 0.0,
    };

    /// `limit_s` seconds from now (a limit past any run's length, 10⁹ s,
    /// stands for none).
    pub fn after(limit_s: f64) -> Deadline {
        let at = (limit_s < 1e9)
            .then(|| std::time::Instant::now() + std::time::Duration::from_secs_f64(limit_s));
        Deadline { at, limit_s }
    }

    /// The limit in seconds, as given (0 for none).
    pub fn limit_s(&self) -> f64 {
        self.limit_s
    }

    /// Seconds left (infinite for none, 0 once passed).
    pub fn remaining_s(&self) -> f64 {
        self.at.map_or(f64::INFINITY, |at| {
            at.saturating_duration_since(std::time::Instant::now())
                .as_secs_f64()
        })
    }

    /// Whether the time is up.
    pub fn passed(&self) -> bool {
        self.at.is_some_and(|at| std::time::Instant::now() >= at)
    }

    /// A `time_limit` error once the time is up: "time_limit of 20 s ran
    /// out {doing}", where `doing` says what was under way and, where it
    /// can, how long the whole would take.
    pub fn check(&self, doing: impl FnOnce() -> String) -> crate::Result<()> {
        if self.passed() {
            return Err(crate::param!(
                "time_limit",
                " of {} s ran out {}",
                self.limit_s,
                doing()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Deadline;

    #[test]
    fn no_deadline_never_passes() {
        assert!(!Deadline::NONE.passed());
        assert!(Deadline::NONE.check(|| unreachable!()).is_ok());
        assert!(!Deadline::after(1e9).passed());
        assert_eq!(Deadline::NONE.remaining_s(), f64::INFINITY);
    }

    #[test]
    fn a_passed_deadline_names_the_limit_and_the_work() {
        let d = Deadline::after(0.0);
        assert!(d.passed());
        assert_eq!(d.remaining_s(), 0.0);
        let e = d.check(|| "packing trees".into()).unwrap_err();
        assert_eq!(e.to_string(), "time_limit of 0 s ran out packing trees");
    }
}
