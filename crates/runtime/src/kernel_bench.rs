//! The reduction kernels timed against memory bandwidth: every kernel next
//! to a STREAM-add-like f64 loop with the same memory traffic **on the same
//! memory** (on a VM, two allocations of the same size can differ twofold
//! in bandwidth), in one run: `dst=a∘b` against STREAM's add
//! `a[i] = b[i] + c[i]` (three arrays) and `dst=dst∘src` against its
//! in-place form `a[i] += b[i]` (two arrays). Each kernel is timed
//! alternately with its STREAM loop, best of `iters` each, so both see the
//! same machine load. Bandwidth counts 2 reads + 1 write per element.
//! (`topocoll bench --kernels`.)

use super::{kernels, Elem};
use crate::error::Result;
use crate::with_dtype;
use std::time::Instant;
use topocoll_schedule::{Dtype, ReduceOp};

/// One kernel against its STREAM loop.
#[derive(Clone, Copy, Debug)]
pub struct KernelRow {
    pub dtype: Dtype,
    pub op: ReduceOp,
    /// `dst = dst ∘ src` (else `dst = a ∘ b`).
    pub in_place: bool,
    /// Best of the runs, 10^9 bytes/s.
    pub gbs: f64,
    pub stream_gbs: f64,
    /// The median over back-to-back pairs of stream time over kernel time.
    pub of_stream: f64,
}

/// Times every kernel of every type (or of `only`) on arrays of `bytes`
/// each, handing each row to `row` as it is measured.
pub fn run(
    bytes: u64,
    iters: usize,
    only: Option<Dtype>,
    row: &mut dyn FnMut(&KernelRow) -> Result<()>,
) -> Result<()> {
    let words = (bytes / 8) as usize;
    let mut mem: [Vec<u64>; 3] = std::array::from_fn(|_| vec![0u64; words]);
    for dtype in [Dtype::F64, Dtype::F32, Dtype::I64, Dtype::I32, Dtype::U8] {
        if only.is_some_and(|d| d != dtype) {
            continue;
        }
        with_dtype!(dtype, T => kernel_rows::<T>(&mut mem, iters, row)?);
    }
    Ok(())
}

/// Views 8-byte words as elements of `T`.
fn view<T: Elem>(v: &mut [u64]) -> &mut [T] {
    let n = v.len() * 8 / T::DTYPE.size() as usize;
    // SAFETY: every Elem type is plain data of size 1, 4 or 8 (alignment at
    // most 8, the words'), valid for any bit pattern; the length covers the
    // same bytes.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut T, n) }
}

fn kernel_rows<T: Elem>(
    mem: &mut [Vec<u64>; 3],
    iters: usize,
    row: &mut dyn FnMut(&KernelRow) -> Result<()>,
) -> Result<()> {
    let [m0, m1, m2] = mem;
    for &op in kernels::ops_for(T::DTYPE) {
        for in_place in [true, false] {
            // Fresh operands for each row (outside the timing): values in
            // [1, 2) (never denormal, products stay finite), cheap to write.
            for m in [&mut *m0, &mut *m1, &mut *m2] {
                for (i, x) in view::<T>(m).iter_mut().enumerate() {
                    *x = T::from_f64(1.0 + (i & 1023) as f64 / 1024.0);
                }
            }
            let (t, ts, ratio) = best_pair(iters, |stream| {
                if !stream {
                    if in_place {
                        T::reduce_into(op, view::<T>(m0), view::<T>(m1));
                    } else {
                        T::reduce3(op, view::<T>(m0), view::<T>(m1), view::<T>(m2));
                    }
                    return;
                }
                let (a, b, c) = (view::<f64>(m0), view::<f64>(m1), view::<f64>(m2));
                if in_place {
                    for (x, y) in a.iter_mut().zip(b.iter()) {
                        *x += y;
                    }
                } else {
                    for ((x, y), z) in a.iter_mut().zip(b.iter()).zip(c.iter()) {
                        *x = y + z;
                    }
                }
                std::hint::black_box(a);
            });
            let bytes = (m0.len() * 8) as f64;
            let (gbs, sgbs) = (3.0 * bytes / t / 1e9, 3.0 * bytes / ts / 1e9);
            row(&KernelRow {
                dtype: T::DTYPE,
                op,
                in_place,
                gbs,
                stream_gbs: sgbs,
                of_stream: ratio,
            })?;
        }
    }
    Ok(())
}

/// Times `f(false)` (the kernel) and `f(true)` (its STREAM loop) alternately
/// `iters` times after a warm-up: the best time of each, and the median of
/// the per-pair ratios stream/kernel (a pair runs back to back, under the
/// same load from the rest of the machine, so the ratio is the robust figure).
fn best_pair(iters: usize, mut f: impl FnMut(bool)) -> (f64, f64, f64) {
    f(false);
    f(true);
    let (mut bk, mut bs) = (f64::INFINITY, f64::INFINITY);
    let mut ratios = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t0 = Instant::now();
        f(false);
        let tk = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        f(true);
        let ts = t0.elapsed().as_secs_f64();
        bk = bk.min(tk);
        bs = bs.min(ts);
        ratios.push(ts / tk);
    }
    ratios.sort_by(f64::total_cmp);
    (bk, bs, ratios[ratios.len() / 2])
}
