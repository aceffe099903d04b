//! Bandwidth reservations in time: the tree-broadcast paper's sharing rule.
//!
//! A transfer of D bytes along hops h_1 … h_n reserves the bottleneck rate b
//! of its path on every hop, hop i during [t0 + o_i, t0 + o_i + D/b) where
//! o_i is the summed latency of hops 1..=i: the data's front reaches hop i
//! after the latencies before it and the message streams through at rate b.
//! The transfer starts at the earliest t0 (not before a given time) at which
//! the rates reserved on every hop stay within its bandwidth. Bookings are
//! never moved once made, so a calendar answers in the order it is asked.
//!
//! The simulator's `--sharing reservation` and the optimal tree-broadcast
//! solver (`optimize::treebcast`) both book through this one type, so the
//! solver's times and the simulator's agree to rounding.

/// One reservation on one resource: `rate` during [start, end).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Booking {
    start: f64,
    end: f64,
    rate: f64,
}

/// Two instants closer than this (relative to their size) are the same
/// instant: a booking that ends at t and one that starts at t, computed by
/// different sums, must not be taken to overlap.
fn same_instant(t: f64) -> f64 {
    1e-12 * t.abs().max(1e-9)
}

/// Rates may exceed a bandwidth by this fraction (rounding in their sums).
const RATE_TOLERANCE: f64 = 1e-9;

/// A hop of a path: the resource it uses and when its use starts after the
/// transfer's start (the summed latencies up to and including it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hop {
    pub resource: u32,
    pub offset: f64,
}

/// The bookings of every resource.
#[derive(Clone, Debug)]
pub struct Calendar {
    capacity: Vec<f64>,
    booked: Vec<Vec<Booking>>,
}

impl Calendar {
    /// A calendar of resources with these bandwidths (bytes/s), all free.
    pub fn new(capacity: Vec<f64>) -> Calendar {
        let n = capacity.len();
        Calendar {
            capacity,
            booked: vec![Vec::new(); n],
        }
    }

    pub fn capacity(&self, resource: u32) -> f64 {
        self.capacity[resource as usize]
    }

    /// The earliest t0 ≥ `not_before` at which `rate` fits on every hop for
    /// `dur` seconds from the hop's offset.
    ///
    /// When the window of a hop overlaps a point x where the load is too
    /// high, no start before (the earliest end among the bookings live at x)
    /// − offset can fit: those bookings stay live from x to that end, and
    /// every later window still reaches into [x, end). So the search jumps
    /// there and checks again; every jump passes a booking's end.
    pub fn earliest(&self, hops: &[Hop], rate: f64, dur: f64, not_before: f64) -> f64 {
        let mut t = not_before;
        'again: loop {
            for h in hops {
                if let Some(end) = self.conflict(h, rate, dur, t) {
                    t = end - h.offset;
                    continue 'again;
                }
            }
            return t;
        }
    }

    /// Whether `rate` fits on hop `h` for `dur` from t0 + offset; if not,
    /// the earliest end among the bookings live at the first point where it
    /// does not.
    fn conflict(&self, h: &Hop, rate: f64, dur: f64, t0: f64) -> Option<f64> {
        let cap = self.capacity[h.resource as usize] * (1.0 + RATE_TOLERANCE);
        let list = &self.booked[h.resource as usize];
        if list.is_empty() {
            return None;
        }
        let a = t0 + h.offset;
        let b = a + dur;
        let overlaps = |k: &Booking| k.start < b - same_instant(b) && k.end > a + same_instant(a);
        // Quick answer: everything in the window together still fits.
        let total: f64 = list.iter().filter(|k| overlaps(k)).map(|k| k.rate).sum();
        if total + rate <= cap {
            return None;
        }
        // The load is a step function rising only at bookings' starts: check
        // the window's start and every start inside it, earliest first.
        let mut points: Vec<f64> = vec![a];
        points.extend(
            list.iter()
                .filter(|k| overlaps(k) && k.start > a)
                .map(|k| k.start),
        );
        points.sort_by(f64::total_cmp);
        for x in points {
            let live = |k: &&Booking| {
                overlaps(k) && k.start <= x + same_instant(x) && k.end > x + same_instant(x)
            };
            let load: f64 = list.iter().filter(live).map(|k| k.rate).sum();
            if load + rate > cap {
                return list.iter().filter(live).map(|k| k.end).reduce(f64::min);
            }
        }
        None
    }

    /// Books `rate` on every hop for `dur` from t0 + the hop's offset.
    pub fn book(&mut self, hops: &[Hop], rate: f64, dur: f64, t0: f64) {
        for h in hops {
            let start = t0 + h.offset;
            self.booked[h.resource as usize].push(Booking {
                start,
                end: start + dur,
                rate,
            });
        }
    }

    /// Takes back the last booking made on each hop's resource (the
    /// solver's undo of `book` with the same hops).
    pub fn unbook(&mut self, hops: &[Hop]) {
        for h in hops {
            self.booked[h.resource as usize].pop();
        }
    }

    /// Drops the bookings that ended by `t`: no start at or after `t` can
    /// meet them.
    pub fn forget_before(&mut self, t: f64) {
        for list in &mut self.booked {
            list.retain(|k| k.end > t + same_instant(t));
        }
    }

    /// Drops the bookings on these hops' resources that ended by `t`.
    pub fn forget_before_on(&mut self, hops: &[Hop], t: f64) {
        for h in hops {
            self.booked[h.resource as usize].retain(|k| k.end > t + same_instant(t));
        }
    }

    /// The bookings on a resource that end after `t`, as (start, end, rate)
    /// bit patterns sorted: what the future of a search state depends on.
    pub fn live_after(&self, resource: u32, t: f64, out: &mut Vec<u64>) {
        let mut live: Vec<[u64; 3]> = self.booked[resource as usize]
            .iter()
            .filter(|k| k.end > t + same_instant(t))
            .map(|k| [k.start.to_bits(), k.end.to_bits(), k.rate.to_bits()])
            .collect();
        live.sort_unstable();
        out.extend(live.iter().flatten());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(resource: u32, offset: f64) -> Hop {
        Hop { resource, offset }
    }

    #[test]
    fn a_full_link_makes_the_next_transfer_wait_for_its_end() {
        let mut c = Calendar::new(vec![1.0]);
        let h = [hop(0, 0.5)];
        assert_eq!(c.earliest(&h, 1.0, 2.0, 0.0), 0.0);
        c.book(&h, 1.0, 2.0, 0.0); // [0.5, 2.5)
        assert_eq!(c.earliest(&h, 1.0, 2.0, 0.0), 2.0);
        // Half the rate fits beside half the rate.
        let mut c = Calendar::new(vec![1.0]);
        c.book(&h, 0.5, 2.0, 0.0);
        assert_eq!(c.earliest(&h, 0.5, 2.0, 0.0), 0.0);
        c.book(&h, 0.5, 2.0, 0.0);
        assert_eq!(c.earliest(&h, 0.5, 1.0, 0.0), 2.0);
    }

    #[test]
    fn hop_offsets_let_a_transfer_end_a_hop_as_another_starts_it() {
        // Booked [3, 4) on resource 0. A transfer reaching that hop after
        // 1 s for 2 s fits if it starts by 0 (window [1, 3)) and otherwise
        // only from 3 (window [4, 6)).
        let mut c = Calendar::new(vec![1.0, 1.0]);
        c.book(&[hop(0, 3.0)], 1.0, 1.0, 0.0);
        let h = [hop(1, 0.0), hop(0, 1.0)];
        assert_eq!(c.earliest(&h, 1.0, 2.0, 0.0), 0.0);
        assert_eq!(c.earliest(&h, 1.0, 2.0, 0.5), 3.0);
        // A gap too short is skipped: [1, 2) free, then [2, 3) booked.
        let mut c = Calendar::new(vec![1.0]);
        c.book(&[hop(0, 0.0)], 1.0, 1.0, 0.0);
        c.book(&[hop(0, 0.0)], 1.0, 1.0, 2.0);
        assert_eq!(c.earliest(&[hop(0, 0.0)], 1.0, 1.5, 0.0), 3.0);
        assert_eq!(c.earliest(&[hop(0, 0.0)], 1.0, 1.0, 0.0), 1.0);
        c.unbook(&[hop(0, 0.0)]);
        assert_eq!(c.earliest(&[hop(0, 0.0)], 1.0, 1.5, 0.0), 1.0);
    }
}
