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
    /// can, how long the whole would take ([`pace`]).
    pub fn check(&self, doing: impl FnOnce() -> String) -> crate::Result<()> {
        if self.passed() {
            return Err(self.error(&format!("ran out {}", doing())));
        }
        Ok(())
    }

    /// The `time_limit` error "time_limit of 20 s {rest}": the one form
    /// every refusal for want of time takes, which [`ran_out`] recognises.
    pub fn error(&self, rest: &str) -> crate::Error {
        crate::param!(TIME_LIMIT, " of {} s {rest}", self.limit_s)
    }
}

/// The parameter a [`Deadline`]'s errors name (`--time-limit` on the
/// command line).
const TIME_LIMIT: &str = "time_limit";

/// Whether `e`, a layer error's shared part (`Error::base()`), is a
/// [`Deadline`]'s: work given up for want of time, which a search that has
/// found something may take as its end.
pub fn ran_out(e: Option<&crate::Error>) -> bool {
    matches!(e, Some(crate::Error::Param { param, .. }) if *param == TIME_LIMIT)
}

/// "12.0 s (about 340 s for all)": the time `done` of `all` steps took since
/// `started`, and the whole at that pace, for a [`Deadline::check`]'s
/// message.
pub fn pace(started: std::time::Instant, done: usize, all: usize) -> String {
    let spent = started.elapsed().as_secs_f64();
    if done == 0 {
        return format!("{spent:.1} s");
    }
    format!(
        "{spent:.1} s (about {:.0} s for all)",
        spent * all as f64 / done as f64
    )
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
        assert!(super::ran_out(Some(&e)));
        assert_eq!(e.to_string(), "time_limit of 0 s ran out packing trees");
        let other: crate::Error = crate::param!("engines", " must be at least 1");
        assert!(!super::ran_out(Some(&other)));
    }
}
