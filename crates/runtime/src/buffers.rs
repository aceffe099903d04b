//! A rank's three buffers: their sizes, their contents at the start, and
//! the local operations (copy, combine) between them.

use crate::Elem;
use topocoll_schedule::{Buf, Op, ReduceOp, Region, Schedule};

/// One rank's three buffers.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RankBuffers<T> {
    pub input: Vec<T>,
    pub output: Vec<T>,
    pub scratch: Vec<T>,
}

impl<T: Elem> RankBuffers<T> {
    pub fn get(&self, buf: Buf) -> &Vec<T> {
        match buf {
            Buf::Input => &self.input,
            Buf::Output => &self.output,
            Buf::Scratch => &self.scratch,
        }
    }

    pub fn get_mut(&mut self, buf: Buf) -> &mut Vec<T> {
        match buf {
            Buf::Input => &mut self.input,
            Buf::Output => &mut self.output,
            Buf::Scratch => &mut self.scratch,
        }
    }

    /// The elements of a region (which must lie inside the buffer).
    pub fn region(&self, r: Region) -> &[T] {
        &self.get(r.buf)[r.offset as usize..r.end() as usize]
    }

    pub fn region_mut(&mut self, r: Region) -> &mut [T] {
        &mut self.get_mut(r.buf)[r.offset as usize..r.end() as usize]
    }
}

/// Bytes of `rank`'s three buffers.
pub fn buffer_bytes(s: &Schedule, rank: usize) -> u64 {
    [Buf::Input, Buf::Output, Buf::Scratch]
        .iter()
        .map(|&b| s.buffer_len(rank, b))
        .fold(0u64, |a, n| a.saturating_add(n))
        .saturating_mul(s.elem_bytes())
}

/// Rank `rank`'s buffers at the start: its own data holds the pattern, the
/// rest is zero.
pub fn initial_buffers<T: Elem>(s: &Schedule, rank: usize) -> RankBuffers<T> {
    let len = |b: Buf| s.buffer_len(rank, b) as usize;
    let mut b = RankBuffers {
        input: vec![T::default(); len(Buf::Input)],
        output: vec![T::default(); len(Buf::Output)],
        scratch: vec![T::default(); len(Buf::Scratch)],
    };
    reset_buffers(s, rank, &mut b);
    b
}

/// Refills a rank's own data with the pattern (between repeated runs).
pub fn reset_buffers<T: Elem>(s: &Schedule, rank: usize, b: &mut RankBuffers<T>) {
    if let Some((buf, len)) = s.initial(rank) {
        for (i, x) in b.get_mut(buf)[..len as usize].iter_mut().enumerate() {
            *x = T::pattern(rank, i as u64, s.op);
        }
    }
}

/// Two different buffers of a rank, one to read and one to write.
fn split<T: Elem>(b: &mut RankBuffers<T>, src: Buf, dst: Buf) -> (&[T], &mut [T]) {
    let RankBuffers {
        input,
        output,
        scratch,
    } = b;
    match (src, dst) {
        (Buf::Input, Buf::Output) => (input, output),
        (Buf::Input, Buf::Scratch) => (input, scratch),
        (Buf::Output, Buf::Input) => (output, input),
        (Buf::Output, Buf::Scratch) => (output, scratch),
        (Buf::Scratch, Buf::Input) => (scratch, input),
        (Buf::Scratch, Buf::Output) => (scratch, output),
        _ => unreachable!("split needs two different buffers"),
    }
}

/// Runs a local operation (copy, combine, compute) on one rank's buffers.
pub(crate) fn run_local<T: Elem>(s: &Schedule, b: &mut RankBuffers<T>, op: &Op) {
    match *op {
        Op::Copy { src, dst } => move_within(s.op, b, src, dst, false),
        Op::Combine { src, dst } => move_within(s.op, b, src, dst, true),
        _ => {}
    }
}

/// `dst = src` or `dst = dst ∘ src` within one rank's buffers. Overlapping
/// regions (only an unverified schedule has them) go through a copy of the
/// source.
fn move_within<T: Elem>(
    op: ReduceOp,
    b: &mut RankBuffers<T>,
    src: Region,
    dst: Region,
    combine: bool,
) {
    let (lo, hi) = (src.offset as usize, src.end() as usize);
    let (dlo, dhi) = (dst.offset as usize, dst.end() as usize);
    if src.buf != dst.buf {
        let (a, d) = split(b, src.buf, dst.buf);
        if combine {
            T::reduce_into(op, &mut d[dlo..dhi], &a[lo..hi]);
        } else {
            d[dlo..dhi].copy_from_slice(&a[lo..hi]);
        }
        return;
    }
    let v = b.get_mut(src.buf);
    if !combine {
        v.copy_within(lo..hi, dlo);
    } else if hi <= dlo || dhi <= lo {
        let (x, y) = if lo < dlo {
            let (l, h) = v.split_at_mut(dlo);
            (&l[lo..hi], &mut h[..dhi - dlo])
        } else {
            let (l, h) = v.split_at_mut(lo);
            (&h[..hi - lo], &mut l[dlo..dhi])
        };
        T::reduce_into(op, y, x);
    } else {
        let tmp: Vec<T> = v[lo..hi].to_vec();
        T::reduce_into(op, &mut v[dlo..dhi], &tmp);
    }
}
