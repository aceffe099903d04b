//! Networks that change while a run goes: SimGrid's profiles (SimGrid
//! 3.32, `ProfileBuilder.cpp`), read from a platform's `bandwidth_file`,
//! `latency_file`, `speed_file` and `state_file` attributes and its
//! `<trace>` and `<trace_connect>` elements, and the outages of `--fail
//! LINK@T1..T2`.
//!
//! A profile is a list of dated values: from each date on, the link's
//! bandwidth (bytes/s), the link's latency (s), the host's speed (a
//! multiple of its own) or the link's or host's state (on while the value
//! is above 0, off otherwise) is that value; before the first date it is
//! the platform's (a resource is on). A profile that loops (`LOOPAFTER D`
//! in its file, or a `<trace periodicity="P">`) repeats with the period of
//! its last date plus D (or P): a value dated d falls again at
//! d + k·period.

use crate::{LinkId, NodeId};

/// One profile: its dated values, dates absolute and in order, and its
/// period when it loops.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    events: Vec<(f64, f64)>,
    period: Option<f64>,
}

/// Why a profile's text does not read: the line (from 1) where it does
/// not, when one line is at fault, and what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileError {
    pub line: Option<usize>,
    pub what: String,
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl std::error::Error for ProfileError {}

/// What a profile changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A directed link's bandwidth.
    Bandwidth(LinkId),
    /// A directed link's latency.
    Latency(LinkId),
    /// A host's speed, as a multiple of its own.
    Speed(NodeId),
    /// A directed link's state: on while the value is above 0.
    State(LinkId),
    /// A host's state: on while the value is above 0.
    HostState(NodeId),
}

/// Every profile of a network.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profiles {
    pub of: Vec<(Target, Profile)>,
}

impl Profiles {
    /// The speed profile of host `node`, if it has one.
    pub fn speed(&self, node: NodeId) -> Option<&Profile> {
        self.of
            .iter()
            .find(|(t, _)| *t == Target::Speed(node))
            .map(|(_, p)| p)
    }
}

impl Profile {
    /// An outage: off from `from_s` until `until_s`, on before and after.
    pub fn outage(from_s: f64, until_s: f64) -> Profile {
        Profile {
            events: vec![(from_s, 0.0), (until_s, 1.0)],
            period: None,
        }
    }

    /// A profile's text as SimGrid reads it: a `DATE VALUE` line per event,
    /// dates in order, `#` and `%` lines and blank ones skipped,
    /// `LOOPAFTER D` or `PERIODICITY P` to loop; `periodicity` is a
    /// `<trace>`'s attribute. Stochastic profiles are refused. The error
    /// names the line.
    pub fn parse(text: &str, periodicity: Option<f64>) -> Result<Profile, ProfileError> {
        let mut events: Vec<(f64, f64)> = Vec::new();
        let mut loop_after = None;
        let mut periodicity = periodicity.filter(|p| *p > 0.0);
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            let at = |what: String| ProfileError {
                line: Some(i + 1),
                what,
            };
            if line.is_empty() || line.starts_with('#') || line.starts_with('%') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let number = |s: &str| -> Result<f64, ProfileError> {
                s.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| at(format!("'{s}' is not a non-negative number")))
            };
            match fields.as_slice() {
                ["LOOPAFTER", d] => loop_after = Some(number(d)?),
                ["PERIODICITY", p] => periodicity = Some(number(p)?),
                [first, ..] if first.starts_with("STOCHASTIC") => {
                    return Err(at("stochastic profiles are not read".into()))
                }
                [date, value] => {
                    let (date, value) = (number(date)?, number(value)?);
                    if events.last().is_some_and(|e| e.0 > date) {
                        return Err(at(format!(
                            "date {date} comes before the line above's: dates must be in order"
                        )));
                    }
                    events.push((date, value));
                }
                _ => return Err(at(format!("'{line}' is not DATE VALUE"))),
            }
        }
        let last = events.last().map_or(0.0, |e| e.0);
        let whole = |what: String| ProfileError { line: None, what };
        let period = match (loop_after, periodicity) {
            (Some(_), Some(_)) => {
                return Err(whole(
                    "a profile loops by LOOPAFTER or by its periodicity, not both".into(),
                ))
            }
            (Some(d), None) => Some(last + d),
            (None, Some(p)) if p < last => {
                return Err(whole(format!(
                    "periodicity {p} is shorter than the last date, {last}"
                )))
            }
            (None, Some(p)) => Some(p),
            (None, None) => None,
        };
        // A loop of no length would fire forever at one date.
        let period = period.filter(|p| *p > 0.0 && !events.is_empty());
        Ok(Profile { events, period })
    }

    /// The `k`-th event from the start (dates in order, looping as the
    /// profile does), or `None` past the last of a profile that does not loop.
    pub fn event(&self, k: u64) -> Option<(f64, f64)> {
        let n = self.events.len() as u64;
        if n == 0 {
            return None;
        }
        match self.period {
            None => self.events.get(k as usize).copied(),
            Some(p) => {
                let (round, i) = (k / n, (k % n) as usize);
                let (d, v) = self.events[i];
                Some((d + round as f64 * p, v))
            }
        }
    }

    /// The smallest value the profile takes.
    pub fn least(&self) -> Option<f64> {
        self.events.iter().map(|e| e.1).reduce(f64::min)
    }

    /// When work of `seconds` at a scale of 1, started at `start`, is done
    /// on a host whose speed is scaled by this profile (1 before its first
    /// date): the scale integrated from `start`. A looping profile's whole
    /// periods are taken at once, so long work costs no more than short.
    pub fn finish(&self, start: f64, seconds: f64) -> f64 {
        let n = self.events.len() as u64;
        // The work one period holds, from its first event to the next
        // period's.
        let period_work = self.period.map(|p| {
            (0..n)
                .map(|i| {
                    let (d, v) = self.event(i).expect("within the profile");
                    let next = self.event(i + 1).map_or(d + p, |e| e.0);
                    v * (next - d)
                })
                .sum::<f64>()
        });
        let mut left = seconds;
        let mut t = start;
        let mut scale = 1.0;
        let mut k = 0;
        loop {
            match self.event(k) {
                Some((d, v)) if d <= t => {
                    scale = v;
                    k += 1;
                }
                Some((d, v)) => {
                    let can = (d - t) * scale;
                    if can >= left {
                        return t + left / scale;
                    }
                    left -= can;
                    t = d;
                    scale = v;
                    k += 1;
                }
                None if scale > 0.0 => return t + left / scale,
                None => return f64::INFINITY,
            }
            if left <= 0.0 {
                return t;
            }
            // At a period's first event: skip all but the last whole
            // periods the work fills.
            if let (Some(p), Some(w)) = (self.period, period_work) {
                if (k - 1) % n == 0 && w > 0.0 && left > 2.0 * w {
                    let m = (left / w).floor() - 1.0;
                    t += m * p;
                    left -= m * w;
                    k += m as u64 * n;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SimGrid's example `link1_bandwidth.profile`: values at 2 and 4,
    /// `LOOPAFTER 6`, so again at 12 and 14, 22 and 24.
    #[test]
    fn a_loop_repeats_with_the_last_date_plus_its_delay() {
        let p = Profile::parse("2 2000000\n4 3000000\nLOOPAFTER 6\n", None).unwrap();
        let dates: Vec<f64> = (0..6).map(|k| p.event(k).unwrap().0).collect();
        assert_eq!(dates, [2.0, 4.0, 12.0, 14.0, 22.0, 24.0]);
        let q = Profile::parse("0.0 1.0\n11.0 0.5\n20.0 0.9\n", Some(21.0)).unwrap();
        assert_eq!(q.event(3), Some((21.0, 1.0)));
        assert_eq!(Profile::parse("1 5\n", None).unwrap().event(1), None);
    }

    /// Long work on a looping profile, whole periods at once, ends where
    /// the event-by-event integration does.
    #[test]
    fn whole_periods_are_taken_at_once() {
        let p = Profile::parse("0 0.5\n2 1.0\n4 0.7\n6 0.1\n8 4\nLOOPAFTER 10\n", None).unwrap();
        let stepwise = |start: f64, mut left: f64| {
            let (mut t, dt) = (start, 1e-3);
            let scale = |t: f64| {
                let x = t % 18.0;
                [(0.0, 0.5), (2.0, 1.0), (4.0, 0.7), (6.0, 0.1), (8.0, 4.0)]
                    .iter()
                    .rev()
                    .find(|e| x >= e.0)
                    .map_or(1.0, |e| e.1)
            };
            while left > 0.0 {
                left -= scale(t) * dt;
                t += dt;
            }
            t
        };
        for (start, work) in [(0.0, 100.0), (3.5, 250.0), (1.0, 7.0)] {
            let (got, want) = (p.finish(start, work), stepwise(start, work));
            assert!((got - want).abs() < 5e-3, "{start} {work}: {got} vs {want}");
        }
        assert!(p.finish(0.0, 1e12).is_finite());
    }

    /// Work at half speed takes twice as long; a speed that changes under
    /// it is integrated.
    #[test]
    fn work_is_done_at_the_integrated_speed() {
        let p = Profile::parse("0 0.5\n2 1.0\nLOOPAFTER 2\n", None).unwrap();
        // 0..2 at 0.5 (1 s of work), 2..4 at 1 (2 s of work).
        assert_eq!(p.finish(0.0, 1.0), 2.0);
        assert_eq!(p.finish(0.0, 2.0), 3.0);
        assert_eq!(p.finish(1.0, 0.5), 2.0);
        assert_eq!(
            Profile::parse("1 0\n", None).unwrap().finish(0.0, 2.0),
            f64::INFINITY
        );
    }

    #[test]
    fn malformed_profiles_are_refused_naming_the_line() {
        for (text, what) in [
            ("2 1\n1 1\n", "line 2: date 1 comes before"),
            ("1 x\n", "line 1: 'x' is not"),
            ("1 2 3\n", "is not DATE VALUE"),
            ("STOCHASTIC\n", "stochastic"),
        ] {
            let e = Profile::parse(text, None).unwrap_err();
            assert!(e.line.is_some(), "{text}: {e}");
            assert!(e.to_string().contains(what), "{text}: {e}");
        }
    }
}
