//! The simulator's own queues. [`EndQueue`] is an indexed min-heap of flow
//! completion times: one entry per active flow, moved in place when the
//! flow's rate changes, so the heap stays as small as the set of flows in
//! flight instead of piling up superseded completion events.
//! [`SortedQueue`] holds a rank's ready sends and CPU tasks.

/// Min-heap of (time, flow) with positions, so an entry can be updated or removed.
#[derive(Default)]
pub struct EndQueue {
    heap: Vec<(f64, u32)>,
    /// Position of each flow in `heap`, or `NONE`.
    pos: Vec<u32>,
}

const NONE: u32 = u32::MAX;

impl EndQueue {
    /// Sets (or moves) flow `id`'s completion time.
    pub fn set(&mut self, id: u32, time: f64) {
        let i = id as usize;
        if i >= self.pos.len() {
            self.pos.resize(i + 1, NONE);
        }
        let p = self.pos[i];
        if p == NONE {
            self.heap.push((time, id));
            let at = self.heap.len() - 1;
            self.pos[i] = at as u32;
            self.up(at);
        } else {
            let at = p as usize;
            let old = self.heap[at].0;
            self.heap[at].0 = time;
            if time < old {
                self.up(at);
            } else {
                self.down(at);
            }
        }
    }

    /// Removes flow `id` if it is queued.
    pub fn remove(&mut self, id: u32) {
        let Some(&p) = self.pos.get(id as usize) else {
            return;
        };
        if p == NONE {
            return;
        }
        let at = p as usize;
        self.pos[id as usize] = NONE;
        let last = self.heap.pop().expect("non-empty");
        if at < self.heap.len() {
            self.heap[at] = last;
            self.pos[last.1 as usize] = at as u32;
            self.up(at);
            self.down(at);
        }
    }

    /// The earliest completion.
    pub fn peek(&self) -> Option<(f64, u32)> {
        self.heap.first().copied()
    }

    fn less(a: (f64, u32), b: (f64, u32)) -> bool {
        (a.0, a.1) < (b.0, b.1)
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }

    fn up(&mut self, mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / 2;
            if Self::less(self.heap[at], self.heap[parent]) {
                self.swap(at, parent);
                at = parent;
            } else {
                break;
            }
        }
    }

    fn down(&mut self, mut at: usize) {
        loop {
            let l = 2 * at + 1;
            if l >= self.heap.len() {
                break;
            }
            let r = l + 1;
            let child = if r < self.heap.len() && Self::less(self.heap[r], self.heap[l]) {
                r
            } else {
                l
            };
            if Self::less(self.heap[child], self.heap[at]) {
                self.swap(at, child);
                at = child;
            } else {
                break;
            }
        }
    }
}

/// A queue that pops its smallest entry, kept sorted in a ring buffer: a
/// push of an entry not smaller than the last is an append, one near the
/// front moves only the entries before it, and a pop takes the front without
/// sifting. A rank's CPU queue has this shape: its ready tasks arrive mostly
/// in program order, and when leaves race ahead of a parent it holds
/// thousands of them, where a binary heap's pop misses the cache at every
/// level (the 1 GiB Trinaryx3 reduce runs 1.34× faster with this queue).
/// An entry landing in the middle of a long queue costs a move of the
/// shorter side, linear where a heap's push is logarithmic; on the schedules
/// measured (docs/PERFORMANCE.md, seventh session) nothing got slower.
#[derive(Default)]
pub struct SortedQueue<T> {
    items: std::collections::VecDeque<T>,
}

impl<T: Ord> SortedQueue<T> {
    /// Adds an entry. Equal entries come out in no set order, as from a heap.
    pub fn push(&mut self, item: T) {
        let len = self.items.len();
        if len == 0 || item >= self.items[len - 1] {
            self.items.push_back(item);
            return;
        }
        // An entry out of order lands near the front (in a CPU queue, a task
        // that waited on the one just run), so search from there: double a
        // bound until it passes the entry, then bisect the last stretch.
        // Only cache lines near the front are read, where a bisection of the
        // whole queue (or a heap's sift) would miss the cache at every step.
        let mut hi = 1;
        while hi < len && self.items[hi - 1] < item {
            hi *= 2;
        }
        let (mut lo, mut hi) = (hi / 2, hi.min(len));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.items[mid] < item {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        // VecDeque::insert moves the shorter side: here, the front.
        self.items.insert(lo, item);
    }

    /// Takes the smallest entry.
    pub fn pop(&mut self) -> Option<T> {
        self.items.pop_front()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
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
    fn sorted_queue_pops_like_a_heap() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut q = SortedQueue::default();
        let mut heap = BinaryHeap::new();
        let mut state = 777u64;
        let mut next = 0u32;
        for step in 0..20000u32 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly increasing keys, some behind, some duplicates of the
            // kind flag: the CPU queue's pattern.
            let key = if (state >> 40).is_multiple_of(4) {
                next.saturating_sub((state >> 20) as u32 % 64)
            } else {
                next += 1;
                next
            };
            let item = ((state >> 60).is_multiple_of(2), key, step);
            if (state >> 50).is_multiple_of(3) {
                assert_eq!(q.pop(), heap.pop().map(|Reverse(e)| e));
            } else {
                q.push(item);
                heap.push(Reverse(item));
            }
            assert_eq!(q.is_empty(), heap.is_empty());
        }
        while let Some(Reverse(e)) = heap.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert_eq!(q.pop(), None);
    }
}
