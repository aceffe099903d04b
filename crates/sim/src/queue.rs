//! The simulator's own queues. [`RadixQueue`] is the event loop's
//! priority queue: times only grow in a discrete-event loop, which lets a
//! radix heap replace a binary heap's sifting by appends. [`EndQueue`]
//! keeps flow completion times on one. [`SortedQueue`] holds a rank's ready
//! sends and CPU tasks, and the by-rank driver's pending events of each
//! rank.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A min-queue of (time, value) for a discrete-event loop, in the order of
/// time and then value (a radix heap). Times only grow in such a loop,
/// mostly: an entry lives in the bucket named by the highest bit in which
/// its time's bits differ from `last`, the smallest time found so far. A
/// push is an append to its bucket. Finding the minimum empties the first
/// non-empty bucket into lower ones around its smallest time; each entry
/// moves down a few times in its life, through memory read in order, where
/// a binary heap's every pop sifts through log₂ n cache lines. Bucket 0
/// holds the entries at `last`, sorted by value once when it is filled
/// (already in order when values grow with pushes): ties, like every rank
/// of a ring stepping at one instant, are not sifted one by one. An entry
/// pushed at `last` while bucket 0 is read is inserted in order, moving
/// the entries after it. Entries pushed below `last` wait in a small
/// binary heap: the event loop looks at the next event before it handles a
/// flow end that comes earlier, and that end can schedule an event before
/// the one looked at, which is rare (docs/PERFORMANCE.md).
pub struct RadixQueue<V> {
    last: u64,
    /// Bucket b holds times whose highest bit differing from `last` is bit
    /// b − 1; bucket 0 holds times equal to `last`, sorted, read from `head`.
    buckets: Vec<Vec<(u64, V)>>,
    head: usize,
    /// Bit b − 1 set when bucket b (b ≥ 1) is not empty.
    occupied: u64,
    late: BinaryHeap<Reverse<(u64, V)>>,
    len: usize,
}

impl<V> Default for RadixQueue<V> {
    fn default() -> Self {
        RadixQueue {
            last: 0,
            buckets: (0..=64).map(|_| Vec::new()).collect(),
            head: 0,
            occupied: 0,
            late: BinaryHeap::new(),
            len: 0,
        }
    }
}

impl<V: Copy + Ord> RadixQueue<V> {
    /// The bucket of a time not below `last`.
    fn bucket(&self, key: u64) -> usize {
        (64 - (key ^ self.last).leading_zeros()) as usize
    }

    fn file(&mut self, key: u64, value: V) {
        let b = self.bucket(key);
        if b == 0 {
            // At the time being read: in value order among the unread.
            let zero = &mut self.buckets[0];
            if zero.len() == self.head || zero[zero.len() - 1].1 <= value {
                zero.push((key, value));
            } else {
                let at = self.head + zero[self.head..].partition_point(|e| e.1 <= value);
                zero.insert(at, (key, value));
            }
            return;
        }
        self.buckets[b].push((key, value));
        self.occupied |= 1 << (b - 1);
    }

    /// Adds an entry at `time` (not negative: the bits of non-negative
    /// times order like the times).
    pub fn push(&mut self, time: f64, value: V) {
        debug_assert!(time >= 0.0 && time.is_sign_positive());
        let key = time.to_bits();
        self.len += 1;
        if key < self.last {
            self.late.push(Reverse((key, value)));
        } else {
            self.file(key, value);
        }
    }

    /// Brings the smallest time of the buckets into bucket 0 and returns it.
    fn settle(&mut self) -> Option<u64> {
        if self.head < self.buckets[0].len() {
            return Some(self.last);
        }
        self.buckets[0].clear();
        self.head = 0;
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize + 1;
        self.occupied &= !(1 << (b - 1));
        let mut moving = std::mem::take(&mut self.buckets[b]);
        self.last = moving.iter().map(|e| e.0).min().expect("occupied");
        // Every entry lands in a bucket below b: the buckets below b are
        // empty, and the ones above keep their entries, as `last` changed
        // only in bits below b.
        for &(key, value) in &moving {
            let to = self.bucket(key);
            self.buckets[to].push((key, value));
            if to > 0 {
                self.occupied |= 1 << (to - 1);
            }
        }
        moving.clear();
        self.buckets[b] = moving;
        // Entries arrive in push order, often already sorted (a linear check).
        self.buckets[0].sort_unstable_by_key(|e| e.1);
        Some(self.last)
    }

    fn late_first(&mut self) -> bool {
        match (self.settle(), self.late.peek()) {
            (Some(k), Some(Reverse(l))) => l.0 < k,
            (None, Some(_)) => true,
            (_, None) => false,
        }
    }

    /// The earliest entry's time and value.
    pub fn peek(&mut self) -> Option<(f64, V)> {
        let &(key, value) = if self.late_first() {
            &self.late.peek()?.0
        } else {
            self.buckets[0].get(self.head)?
        };
        Some((f64::from_bits(key), value))
    }

    /// Takes the earliest entry.
    pub fn pop(&mut self) -> Option<(f64, V)> {
        let (key, value) = if self.late_first() {
            self.late.pop()?.0
        } else {
            let e = *self.buckets[0].get(self.head)?;
            self.head += 1;
            e
        };
        self.len -= 1;
        Some((f64::from_bits(key), value))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Empties the queue, keeping its buckets' memory.
    fn clear(&mut self) {
        for b in &mut self.buckets {
            b.clear();
        }
        self.late.clear();
        self.head = 0;
        self.occupied = 0;
        self.len = 0;
    }
}

/// Completion times of flows, smallest (time, flow) first, each flow's
/// entry moved or removed as its rate changes. A move pushes a new entry
/// and leaves the old one, recognised as stale when it comes to the front
/// (its time is no longer the flow's). When stale entries outnumber live
/// ones the queue is rebuilt from each flow's current time, so it holds at
/// most about twice the flows in flight; the rebuild reads the flows' times
/// in id order, with no sort (the queue orders them), in the memory it
/// had.
#[derive(Default)]
pub struct EndQueue {
    queue: RadixQueue<u32>,
    /// Each flow's queued completion time (as bits), or `NO_END`.
    current: Vec<u64>,
    live: usize,
}

const NO_END: u64 = u64::MAX;

impl EndQueue {
    /// Sets (or moves) flow `id`'s completion time.
    pub fn set(&mut self, id: u32, time: f64) {
        let i = id as usize;
        if i >= self.current.len() {
            self.current.resize(i + 1, NO_END);
        }
        if self.current[i] == time.to_bits() {
            return;
        }
        if self.current[i] == NO_END {
            self.live += 1;
        }
        self.current[i] = time.to_bits();
        self.queue.push(time, id);
        if self.queue.len() > 2 * self.live + 1024 {
            self.rebuild();
        }
    }

    /// Removes flow `id` if it is queued.
    pub fn remove(&mut self, id: u32) {
        if let Some(c) = self.current.get_mut(id as usize) {
            if *c != NO_END {
                *c = NO_END;
                self.live -= 1;
            }
        }
    }

    /// The earliest completion.
    pub fn peek(&mut self) -> Option<(f64, u32)> {
        while let Some((time, id)) = self.queue.peek() {
            if self.current[id as usize] == time.to_bits() {
                return Some((time, id));
            }
            self.queue.pop();
        }
        None
    }

    /// Keeps only each flow's current entry.
    fn rebuild(&mut self) {
        self.queue.clear();
        for (id, &key) in self.current.iter().enumerate() {
            if key != NO_END {
                self.queue.push(f64::from_bits(key), id as u32);
            }
        }
    }
}

/// A min-queue kept sorted in a vector read from `head`: a rank's ready
/// sends and CPU tasks, and the by-rank driver's pending events of each
/// rank (`super::local`). Its entries come mostly later than all others (a
/// flow's end, data arriving, a send or task in program order): an append.
/// Or earlier than all (a send's overhead ahead of the combines waiting):
/// a write just before `head`, without reading the far end, which on a long
/// queue has left the cache. A pop moves `head` on, without sifting, and
/// the entries are read in order: a sweep finds a rank's events due at the
/// front, line after line, where a binary heap's pop misses the cache at
/// every level of a long queue (docs/PERFORMANCE.md). An entry out of
/// order is placed by searching from the front (in a CPU queue, a task
/// that waited on the one just run lands there), and the shorter side
/// moves: linear where a heap's push is logarithmic, since such entries
/// land near the front (docs/PERFORMANCE.md).
pub struct SortedQueue<T> {
    items: Vec<T>,
    /// The first entry still queued; the entries before it are spent.
    head: u32,
}

impl<T> Default for SortedQueue<T> {
    fn default() -> Self {
        SortedQueue {
            items: Vec::new(),
            head: 0,
        }
    }
}

/// Queues up to this long place an entry out of order by moving the
/// entries above it one by one.
const SHORT: usize = 16;

impl<T: Ord + Copy> SortedQueue<T> {
    /// Adds an entry. Equal entries come out in no set order, as from a heap.
    #[inline]
    pub fn push(&mut self, item: T) {
        let head = self.head as usize;
        let len = self.items.len();
        if head == len {
            self.items.clear();
            self.head = 0;
            self.items.push(item);
            return;
        }
        if head > 0 && item < self.items[head] {
            self.head -= 1;
            self.items[head - 1] = item;
            return;
        }
        if item >= self.items[len - 1] {
            self.make_room();
            self.items.push(item);
            return;
        }
        self.insert(item);
    }

    /// Places an entry below the last. In a short queue (a rank's pending
    /// events: three to eight, and seven pushes in ten are appends or
    /// writes before `head`), it is appended and moved down past the
    /// entries above it, one to five.
    #[inline]
    fn insert(&mut self, item: T) {
        if self.items.len() - self.head as usize > SHORT {
            return self.insert_far(item);
        }
        self.make_room();
        self.items.push(item);
        let queued = &mut self.items[self.head as usize..];
        let mut at = queued.len() - 1;
        while at > 0 && queued[at - 1] > item {
            queued[at] = queued[at - 1];
            at -= 1;
        }
        queued[at] = item;
    }

    /// Places an entry below the last in a long queue: double a bound from
    /// the front until it passes the entry, then bisect the last stretch,
    /// and move the shorter side. Only lines near the front are read, where
    /// a bisection of the whole queue (or a heap's sift) would miss the
    /// cache at every step.
    #[inline(never)]
    fn insert_far(&mut self, item: T) {
        let head = self.head as usize;
        let queued = &self.items[head..];
        let mut hi = 1;
        while hi < queued.len() && queued[hi - 1] < item {
            hi *= 2;
        }
        let at = queued[hi / 2..hi.min(queued.len())].partition_point(|e| *e < item) + hi / 2;
        if head > 0 && at < queued.len() - at {
            // The entries before it move down into a spent place.
            self.items.copy_within(head..head + at, head - 1);
            self.items[head - 1 + at] = item;
            self.head -= 1;
        } else {
            self.make_room();
            let head = self.head as usize;
            self.items.insert(head + at, item);
        }
    }

    /// Before the vector grows: drops the spent entries if they are at
    /// least half of it, so that it holds at most twice the queue.
    #[inline]
    fn make_room(&mut self) {
        if self.items.len() == self.items.capacity() && 2 * self.head as usize >= self.items.len() {
            self.items.drain(..self.head as usize);
            self.head = 0;
        }
    }

    /// Takes the smallest entry.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        let item = *self.items.get(self.head as usize)?;
        self.head += 1;
        Some(item)
    }

    /// The smallest entry.
    #[inline]
    pub fn peek(&self) -> Option<&T> {
        self.items.get(self.head as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.head as usize == self.items.len()
    }

    /// The entries, smallest first.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.items[self.head as usize..]
    }

    /// The largest entry (for a prefetch: where an append compares).
    pub fn last(&self) -> Option<&T> {
        self.as_slice().last()
    }

    /// Where the next append writes (for a prefetch).
    pub fn end(&self) -> *const T {
        self.items.as_ptr().wrapping_add(self.items.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_like_a_sorted_set() {
        let mut q = EndQueue::default();
        let mut model: Vec<(f64, u32)> = Vec::new();
        let mut state = 12345u64;
        for step in 0..5000u32 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let id = (state >> 33) as u32 % 50;
            let t = ((state >> 11) % 1000) as f64;
            if step % 3 == 0 {
                q.remove(id);
                model.retain(|e| e.1 != id);
            } else {
                q.set(id, t);
                model.retain(|e| e.1 != id);
                model.push((t, id));
            }
            let want = model
                .iter()
                .copied()
                .fold(None, |m: Option<(f64, u32)>, e| match m {
                    Some(x) if (x.0, x.1) <= (e.0, e.1) => Some(x),
                    _ => Some(e),
                });
            assert_eq!(q.peek(), want);
        }
    }

    #[test]
    fn radix_queue_pops_by_time_then_value() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut q = RadixQueue::default();
        let mut heap = BinaryHeap::new();
        let mut state = 4242u64;
        let mut now = 0.0f64;
        for step in 0..50000u64 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // An event loop's times: at or after the last one taken, at
            // every scale; many ties; a few just below it (late). Values
            // mostly grow, as the event loop's sequence numbers do.
            let time = match (state >> 58) % 8 {
                0 => (now - ((state >> 20) % 3) as f64 * 1e-7).max(0.0),
                1 | 2 => now,
                3 => now * (1.0 + f64::EPSILON),
                4 => now + ((state >> 8) % 1000) as f64 * 1e-3,
                _ => now + ((state >> 40) % 5) as f64 * 1e-6,
            };
            let value = if (state >> 30).is_multiple_of(5) {
                step / 2 // out of order, and duplicates
            } else {
                step
            };
            if (state >> 50).is_multiple_of(3) {
                let want = heap.pop().map(|Reverse((t, v))| (f64::from_bits(t), v));
                assert_eq!(q.pop(), want);
                if let Some((t, _)) = want {
                    now = now.max(t);
                }
            } else {
                q.push(time, value);
                heap.push(Reverse((time.to_bits(), value)));
            }
            assert_eq!(q.len(), heap.len());
            let want = heap.peek().map(|Reverse((t, v))| (f64::from_bits(*t), *v));
            assert_eq!(q.peek(), want);
        }
        while let Some(Reverse((t, v))) = heap.pop() {
            assert_eq!(q.pop(), Some((f64::from_bits(t), v)));
        }
        assert_eq!(q.pop(), None);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn radix_queue_orders_ties_pushed_while_read() {
        let mut q = RadixQueue::default();
        for v in [5u32, 9, 7] {
            q.push(2.0, v);
        }
        q.push(3.0, 1);
        assert_eq!(q.pop(), Some((2.0, 5)));
        // At the time being read, below the unread ties, and below it.
        q.push(2.0, 8);
        q.push(2.0, 6);
        q.push(1.5, 4);
        q.push(2.0, 10);
        let order: Vec<(f64, u32)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            [
                (1.5, 4),
                (2.0, 6),
                (2.0, 7),
                (2.0, 8),
                (2.0, 9),
                (2.0, 10),
                (3.0, 1)
            ]
        );
    }

    #[test]
    fn a_cleared_radix_queue_holds_nothing_and_takes_new_entries() {
        let mut q = RadixQueue::default();
        for (t, v) in [(1.0, 1u32), (1.0, 2), (1.0, 3), (2.0, 4)] {
            q.push(t, v);
        }
        assert_eq!(q.pop(), Some((1.0, 1)));
        q.push(0.5, 5); // below the time being read: late
        q.clear();
        assert_eq!((q.len(), q.pop()), (0, None));
        q.push(3.0, 7);
        q.push(0.25, 6); // late again: below the last time read
        assert_eq!(q.pop(), Some((0.25, 6)));
        assert_eq!(q.pop(), Some((3.0, 7)));
    }

    #[test]
    fn end_queue_rebuilds_without_losing_flows() {
        // Many moves of a few flows: stale entries pile up and are dropped.
        let mut q = EndQueue::default();
        for round in 0..10_000u32 {
            for id in 0..3u32 {
                q.set(id, f64::from(round * 3 + id) + 1.0);
            }
        }
        assert!(q.queue.len() <= 2 * 3 + 1024);
        assert_eq!(q.peek(), Some((29998.0, 0)));
        q.remove(0);
        assert_eq!(q.peek(), Some((29999.0, 1)));
        q.set(2, 5.0);
        assert_eq!(q.peek(), Some((5.0, 2)));
    }

    /// Drives a `SortedQueue` and a `BinaryHeap` side by side for `steps`
    /// steps of a 64-bit LCG from `seed`: `draw(state, step, last popped)`
    /// says whether to pop, or which entry to push. After each step both
    /// hold the same entries, in order, and the vector holds at most four
    /// times the longest queue (spent entries are dropped); at the end both
    /// pop the same.
    fn beside_a_heap<T: Ord + Copy + std::fmt::Debug>(
        steps: u32,
        seed: u64,
        mut draw: impl FnMut(u64, u32, Option<T>) -> Option<T>,
    ) {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut q = SortedQueue::default();
        let mut heap = BinaryHeap::new();
        let (mut state, mut popped, mut most) = (seed, None, 0);
        for step in 0..steps {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match draw(state, step, popped) {
                None => {
                    let got = q.pop();
                    assert_eq!(got, heap.pop().map(|Reverse(e)| e));
                    popped = got.or(popped);
                }
                Some(item) => {
                    q.push(item);
                    heap.push(Reverse(item));
                }
            }
            assert_eq!(q.is_empty(), heap.is_empty());
            assert_eq!(q.peek().copied(), heap.peek().map(|Reverse(e)| *e));
            let sorted = heap.clone().into_sorted_vec();
            let sorted: Vec<T> = sorted.into_iter().rev().map(|Reverse(e)| e).collect();
            assert_eq!(q.as_slice(), &sorted[..]);
            most = most.max(sorted.len());
            assert!(
                q.items.capacity() <= 4 * most + 8,
                "spent entries are dropped"
            );
        }
        while let Some(Reverse(e)) = heap.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn sorted_queue_pops_like_a_heap() {
        // Mostly increasing keys, some behind, some duplicates of the kind
        // flag: the CPU queue's pattern (it grows to thousands).
        let mut next = 0u32;
        beside_a_heap(20000, 777, |state, step, _| {
            if (state >> 50).is_multiple_of(3) {
                return None;
            }
            let key = if (state >> 40).is_multiple_of(4) {
                next.saturating_sub((state >> 20) as u32 % 64)
            } else {
                next += 1;
                next
            };
            Some(((state >> 60).is_multiple_of(2), key, step))
        });
    }

    #[test]
    fn sorted_queue_pops_events_like_a_heap() {
        // Events after the present (the last popped), some far, some just
        // after (ahead of all queued), some equal in time with different
        // kinds: a rank's pending events.
        beside_a_heap(
            50000,
            4242,
            |state, step, popped: Option<(u64, u8, u32)>| {
                if (state >> 50).is_multiple_of(2) {
                    return None;
                }
                let now = popped.map_or(0, |e| e.0);
                let key = now
                    + match (state >> 40) % 5 {
                        0 => 0,
                        1 => 1,
                        2 => (state >> 20) % 8,
                        _ => (state >> 20) % 100,
                    };
                Some((key, (state >> 60) as u8 % 3, step))
            },
        );
    }
}
