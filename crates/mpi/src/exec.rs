//! One rank's run of its program over a [`Transport`]: every operation is
//! started as soon as the ones it waits for are done (sends too: the MPI
//! library paces them, so there is no engine limit to escape from), and
//! completions are taken as the transport reports them.

use crate::abi::{Kind, MpiOp};
use crate::reduce::reduce_bytes;
use std::cell::RefCell;
use std::collections::VecDeque;
use topocoll_schedule::{Buf, Op, OpId, Program, Region, Successors};

thread_local! {
    /// Byte buffers kept from one call to the next (landing buffers,
    /// scratch, temporaries): a fresh multi-megabyte allocation each call
    /// costs its page faults and its zeroing every time.
    static POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// A buffer of `len` bytes from the pool (its contents are whatever the
/// last user left: callers overwrite or fill it).
pub fn take_buffer(len: usize) -> Vec<u8> {
    let mut v = POOL
        .with(|p| {
            let mut p = p.borrow_mut();
            // The smallest kept buffer that is large enough, else the largest.
            let i = p
                .iter()
                .enumerate()
                .filter(|(_, b)| b.capacity() >= len)
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i);
            i.map(|i| p.swap_remove(i)).or_else(|| p.pop())
        })
        .unwrap_or_default();
    if v.len() < len {
        v.resize(len, 0);
    } else {
        v.truncate(len);
    }
    v
}

/// Returns a buffer to the pool (at most a few are kept).
pub fn give_buffer(v: Vec<u8>) {
    POOL.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < 16 {
            p.push(v);
        }
    });
}

/// Point-to-point messages between the ranks of one communicator. Each
/// started transfer gets a slot, reported back by [`Transport::wait`].
pub trait Transport {
    /// Starts sending `len` bytes at `buf` to `peer`.
    ///
    /// # Safety
    /// `buf..buf+len` stays valid and unchanged until the slot completes.
    unsafe fn send(&mut self, buf: *const u8, len: usize, peer: u32, tag: u32) -> Option<usize>;
    /// Starts receiving `len` bytes from `peer` into `buf`.
    ///
    /// # Safety
    /// `buf..buf+len` stays valid and untouched until the slot completes.
    unsafe fn recv(&mut self, buf: *mut u8, len: usize, peer: u32, tag: u32) -> Option<usize>;
    /// Waits until at least one started transfer completes and appends
    /// the slots of those that did to `done`.
    fn wait(&mut self, done: &mut Vec<usize>) -> Option<()>;
}

/// A rank's three buffers as byte ranges (the caller's memory or its own).
pub struct Buffers {
    pub input: *mut u8,
    pub input_len: usize,
    pub output: *mut u8,
    pub output_len: usize,
    pub scratch: Vec<u8>,
}

impl Buffers {
    fn base(&mut self, buf: Buf) -> (*mut u8, usize) {
        match buf {
            Buf::Input => (self.input, self.input_len),
            Buf::Output => (self.output, self.output_len),
            Buf::Scratch => (self.scratch.as_mut_ptr(), self.scratch.len()),
        }
    }

    /// The bytes of a region, `unit` bytes an element; `None` past the buffer.
    fn span(&mut self, r: Region, unit: usize) -> Option<(*mut u8, usize)> {
        let (base, len) = self.base(r.buf);
        let start = (r.offset as usize).checked_mul(unit)?;
        let n = (r.count as usize).checked_mul(unit)?;
        if start.checked_add(n)? > len {
            return None;
        }
        // SAFETY: start + n lies within the buffer (checked above).
        Some((unsafe { base.add(start) }, n))
    }
}

/// What a run combines with: the element kind and operator of the call.
#[derive(Clone, Copy)]
pub struct Combiner {
    pub kind: Kind,
    pub op: Option<MpiOp>,
}

impl Combiner {
    fn apply(&self, dst: &mut [u8], src: &[u8]) -> Result<(), String> {
        match self.op {
            Some(op) => {
                reduce_bytes(self.kind, op, dst, src);
                Ok(())
            }
            None => Err("the schedule combines, but the call has no operator".into()),
        }
    }
}

/// Runs `prog` (with its successors and dependency counts) on `b`, regions
/// counted in `unit`-byte elements; an error says which operation failed.
pub fn execute(
    prog: &Program,
    succ: &Successors,
    ndeps: &[u32],
    b: &mut Buffers,
    unit: usize,
    comb: Combiner,
    t: &mut dyn Transport,
) -> Result<(), String> {
    STATE.with(|st| {
        let mut st = st.borrow_mut();
        let st = &mut *st;
        run(prog, succ, ndeps, b, unit, comb, t, st)
    })
}

/// What a run keeps between its steps, kept from one call to the next so
/// that a small collective allocates nothing.
#[derive(Default)]
struct RunState {
    remaining: Vec<u32>,
    ready: VecDeque<OpId>,
    /// Slot -> (op, landing buffer of a combining receive).
    active: Vec<Option<(OpId, Option<Vec<u8>>)>>,
    done_slots: Vec<usize>,
}

thread_local! {
    static STATE: RefCell<RunState> = RefCell::new(RunState::default());
}

#[allow(clippy::too_many_arguments)]
fn run(
    prog: &Program,
    succ: &Successors,
    ndeps: &[u32],
    b: &mut Buffers,
    unit: usize,
    comb: Combiner,
    t: &mut dyn Transport,
    st: &mut RunState,
) -> Result<(), String> {
    let n = prog.ops.len();
    let RunState {
        remaining,
        ready,
        active,
        done_slots,
    } = st;
    remaining.clear();
    remaining.extend_from_slice(ndeps);
    ready.clear();
    ready.extend((0..n as OpId).filter(|&i| ndeps[i as usize] == 0));
    for a in active.iter_mut() {
        if let Some((_, Some(land))) = a.take() {
            give_buffer(land);
        }
    }
    let mut done = 0;
    let bad = |i: OpId, why: &str| format!("op {i} ({}): {why}", prog.ops[i as usize].describe());
    let mut complete = |op: OpId, ready: &mut VecDeque<OpId>, done: &mut usize| {
        *done += 1;
        for &j in succ.of(op as usize) {
            remaining[j as usize] -= 1;
            if remaining[j as usize] == 0 {
                ready.push_back(j);
            }
        }
    };
    while done < n {
        while let Some(i) = ready.pop_front() {
            match prog.ops[i as usize] {
                Op::Send {
                    peer, region, tag, ..
                } => {
                    let (p, len) = b
                        .span(region, unit)
                        .ok_or_else(|| bad(i, "past its buffer"))?;
                    // SAFETY: the verifier's race check keeps every other
                    // operation off this region until the send completes.
                    let slot = unsafe { t.send(p, len, peer, tag) }
                        .ok_or_else(|| bad(i, "the MPI send failed"))?;
                    put(active, slot, (i, None));
                }
                Op::Recv {
                    peer,
                    region,
                    tag,
                    combine,
                } => {
                    let (p, len) = b
                        .span(region, unit)
                        .ok_or_else(|| bad(i, "past its buffer"))?;
                    let slot = if combine {
                        let mut land = take_buffer(len);
                        // SAFETY: the landing buffer moves with the slot
                        // (a Vec's heap block does not move) until it completes.
                        let s = unsafe { t.recv(land.as_mut_ptr(), len, peer, tag) };
                        s.map(|s| (s, Some(land)))
                    } else {
                        // SAFETY: as for sends; a receive's region is its own.
                        unsafe { t.recv(p, len, peer, tag) }.map(|s| (s, None))
                    };
                    let (slot, land) = slot.ok_or_else(|| bad(i, "the MPI receive failed"))?;
                    put(active, slot, (i, land));
                }
                Op::Copy { src, dst } | Op::Combine { src, dst } => {
                    let (s, len) = b.span(src, unit).ok_or_else(|| bad(i, "past its buffer"))?;
                    let (d, dlen) = b.span(dst, unit).ok_or_else(|| bad(i, "past its buffer"))?;
                    if len != dlen {
                        return Err(bad(i, "sides of different sizes"));
                    }
                    let combine = matches!(prog.ops[i as usize], Op::Combine { .. });
                    // The regions of a verified schedule's local operation
                    // do not overlap; an overlapping pair goes through a copy.
                    let src_copy;
                    // SAFETY: both spans lie in their buffers; `src_copy`
                    // breaks any overlap before a mutable view is made.
                    let (sv, dv) = unsafe {
                        let overlap = s < d.add(dlen) && d < s.add(len);
                        let sv: &[u8] = if overlap {
                            src_copy = std::slice::from_raw_parts(s, len).to_vec();
                            &src_copy
                        } else {
                            std::slice::from_raw_parts(s, len)
                        };
                        (sv, std::slice::from_raw_parts_mut(d, dlen))
                    };
                    if combine {
                        comb.apply(dv, sv).map_err(|e| bad(i, &e))?;
                    } else {
                        dv.copy_from_slice(sv);
                    }
                    complete(i, ready, &mut done);
                }
                Op::Compute { .. } => complete(i, ready, &mut done),
            }
        }
        if done == n {
            break;
        }
        done_slots.clear();
        t.wait(done_slots)
            .ok_or_else(|| "waiting for messages failed".to_string())?;
        for &slot in done_slots.iter() {
            let Some((i, land)) = active.get_mut(slot).and_then(Option::take) else {
                return Err(format!(
                    "the MPI library completed slot {slot}, which holds no transfer"
                ));
            };
            if let Some(land) = land {
                let Op::Recv { region, .. } = prog.ops[i as usize] else {
                    unreachable!("only receives land")
                };
                let (d, len) = b
                    .span(region, unit)
                    .ok_or_else(|| bad(i, "past its buffer"))?;
                // SAFETY: the receive's region is its own until it completes.
                let dv = unsafe { std::slice::from_raw_parts_mut(d, len) };
                comb.apply(dv, &land).map_err(|e| bad(i, &e))?;
                give_buffer(land);
            }
            complete(i, ready, &mut done);
        }
    }
    Ok(())
}

fn put<T>(v: &mut Vec<Option<T>>, slot: usize, x: T) {
    if v.len() <= slot {
        v.resize_with(slot + 1, || None);
    }
    v[slot] = Some(x);
}
