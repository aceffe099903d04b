//! Element types and reduction kernels.
//!
//! Every kernel is a plain element-wise loop over zipped slices with the
//! operator chosen *outside* the loop, so the compiler sees one branch-free
//! body per (type, operator) and vectorises it. Element i of the result
//! depends only on element i of the operands, so vectorising never changes a
//! float result: the reduction order across ranks is fixed by the schedule,
//! the kernels never reassociate.
//!
//! Semantics: integer sum and product wrap (two's complement, like MPI on
//! every real implementation); float min and max are IEEE minNum/maxNum
//! (`f64::min`), which only differ from `<` on NaN, which the runtime never
//! generates.

pub use topocoll_schedule::Dtype;
use topocoll_schedule::ReduceOp;

/// An element type the runtime can move and reduce.
pub trait Elem: Copy + Send + Sync + PartialEq + Default + std::fmt::Debug + 'static {
    const DTYPE: Dtype;
    /// One application of the operator (the scalar reference).
    fn apply(op: ReduceOp, a: Self, b: Self) -> Self;
    /// `dst[i] = dst[i] ∘ src[i]`.
    fn reduce_into(op: ReduceOp, dst: &mut [Self], src: &[Self]);
    /// `out[i] = a[i] ∘ b[i]`.
    fn reduce3(op: ReduceOp, out: &mut [Self], a: &[Self], b: &[Self]);
    /// The deterministic initial value of element `index` of `rank`'s data.
    fn pattern(rank: usize, index: u64, op: ReduceOp) -> Self;
    /// The value's bits, so comparisons are bit-exact (also for floats).
    fn bits(self) -> u64;
    /// As a float, for tolerance checks and messages.
    fn to_f64(self) -> f64;
    /// From a float (an `as` conversion), for cheap fills.
    fn from_f64(x: f64) -> Self;
}

/// A 64-bit mix of (rank, index) (SplitMix64's finaliser): cheap and well spread.
#[inline]
pub fn mix(rank: usize, index: u64) -> u64 {
    let mut z = (rank as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(index.wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[inline(always)]
fn zip2_body<T: Copy>(dst: &mut [T], src: &[T], f: impl Fn(T, T) -> T) {
    let n = dst.len().min(src.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    for (d, s) in dst.iter_mut().zip(src) {
        *d = f(*d, *s);
    }
}

#[inline(always)]
fn zip3_body<T: Copy>(out: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
    let n = out.len().min(a.len()).min(b.len());
    let (out, a, b) = (&mut out[..n], &a[..n], &b[..n]);
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = f(*x, *y);
    }
}

// The same loops compiled for wider vector units, chosen at run time: the
// default x86-64 target only has SSE2, which lacks 64-bit multiplies and
// compares (i64 prod, min, max) and processes half as much per instruction.
#[cfg(target_arch = "x86_64")]
mod wide {
    #[target_feature(enable = "avx2")]
    pub unsafe fn zip2_avx2<T: Copy>(dst: &mut [T], src: &[T], f: impl Fn(T, T) -> T) {
        super::zip2_body(dst, src, f)
    }
    #[target_feature(enable = "avx2")]
    pub unsafe fn zip3_avx2<T: Copy>(out: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
        super::zip3_body(out, a, b, f)
    }
    #[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
    pub unsafe fn zip2_avx512<T: Copy>(dst: &mut [T], src: &[T], f: impl Fn(T, T) -> T) {
        super::zip2_body(dst, src, f)
    }
    #[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
    pub unsafe fn zip3_avx512<T: Copy>(out: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
        super::zip3_body(out, a, b, f)
    }

    /// 2: AVX-512 (F, DQ, BW, VL), 1: AVX2, 0: baseline.
    pub fn level() -> u8 {
        use std::sync::atomic::{AtomicU8, Ordering};
        static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);
        let l = LEVEL.load(Ordering::Relaxed);
        if l != u8::MAX {
            return l;
        }
        let l = if std::env::var_os("TOPOCOLL_NO_SIMD_DISPATCH").is_some() {
            0
        } else if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
        {
            2
        } else if is_x86_feature_detected!("avx2") {
            1
        } else {
            0
        };
        LEVEL.store(l, Ordering::Relaxed);
        l
    }
}

#[inline(always)]
fn zip2<T: Copy>(dst: &mut [T], src: &[T], f: impl Fn(T, T) -> T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has the features each variant is compiled for.
    unsafe {
        match wide::level() {
            2 => return wide::zip2_avx512(dst, src, f),
            1 => return wide::zip2_avx2(dst, src, f),
            _ => {}
        }
    }
    zip2_body(dst, src, f)
}

#[inline(always)]
fn zip3<T: Copy>(out: &mut [T], a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has the features each variant is compiled for.
    unsafe {
        match wide::level() {
            2 => return wide::zip3_avx512(out, a, b, f),
            1 => return wide::zip3_avx2(out, a, b, f),
            _ => {}
        }
    }
    zip3_body(out, a, b, f)
}

/// Expands to a match on the operator with one monomorphic loop per arm.
macro_rules! per_op {
    ($op:expr, $run:ident, [$($args:expr),*], int) => {
        match $op {
            ReduceOp::Sum => $run($($args,)* |a, b| a.wrapping_add(b)),
            ReduceOp::Prod => $run($($args,)* |a, b| a.wrapping_mul(b)),
            ReduceOp::Min => $run($($args,)* |a, b| if b < a { b } else { a }),
            ReduceOp::Max => $run($($args,)* |a, b| if b > a { b } else { a }),
            ReduceOp::Band => $run($($args,)* |a, b| a & b),
            ReduceOp::Bor => $run($($args,)* |a, b| a | b),
            ReduceOp::Bxor => $run($($args,)* |a, b| a ^ b),
        }
    };
    ($op:expr, $run:ident, [$($args:expr),*], float) => {
        match $op {
            ReduceOp::Sum => $run($($args,)* |a, b| a + b),
            ReduceOp::Prod => $run($($args,)* |a, b| a * b),
            ReduceOp::Min => $run($($args,)* |a, b| a.min(b)),
            ReduceOp::Max => $run($($args,)* |a, b| a.max(b)),
            // Rejected when the request is made (ReduceOp::parse); never reached.
            ReduceOp::Band | ReduceOp::Bor | ReduceOp::Bxor => {
                panic!("bitwise operator on a float type")
            }
        }
    };
}

macro_rules! int_elem {
    ($t:ty, $d:expr) => {
        impl Elem for $t {
            const DTYPE: Dtype = $d;
            #[inline]
            fn apply(op: ReduceOp, a: Self, b: Self) -> Self {
                // The baseline loop, not the dispatched one: the tests
                // compare the vector variants against this.
                let mut x = [a];
                per_op!(op, zip2_body, [&mut x, &[b]], int);
                x[0]
            }
            fn reduce_into(op: ReduceOp, dst: &mut [Self], src: &[Self]) {
                per_op!(op, zip2, [dst, src], int)
            }
            fn reduce3(op: ReduceOp, out: &mut [Self], a: &[Self], b: &[Self]) {
                per_op!(op, zip3, [out, a, b], int)
            }
            fn pattern(rank: usize, index: u64, op: ReduceOp) -> Self {
                let h = mix(rank, index);
                match op {
                    // Odd values keep a wrapping product from collapsing to zero.
                    ReduceOp::Prod => (h | 1) as $t,
                    _ => h as $t,
                }
            }
            fn bits(self) -> u64 {
                self as u64
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
        }
    };
}

int_elem!(u8, Dtype::U8);
int_elem!(i32, Dtype::I32);
int_elem!(i64, Dtype::I64);

macro_rules! float_elem {
    ($t:ty, $d:expr) => {
        impl Elem for $t {
            const DTYPE: Dtype = $d;
            #[inline]
            fn apply(op: ReduceOp, a: Self, b: Self) -> Self {
                // The baseline loop, not the dispatched one: the tests
                // compare the vector variants against this.
                let mut x = [a];
                per_op!(op, zip2_body, [&mut x, &[b]], float);
                x[0]
            }
            fn reduce_into(op: ReduceOp, dst: &mut [Self], src: &[Self]) {
                per_op!(op, zip2, [dst, src], float)
            }
            fn reduce3(op: ReduceOp, out: &mut [Self], a: &[Self], b: &[Self]) {
                per_op!(op, zip3, [out, a, b], float)
            }
            /// Sums: random mantissas, random signs and magnitudes spread over
            /// 2^-8..2^8, so a sum's rounding depends on the order of its terms
            /// (a bit-identity test is meaningful). Products: 1 ± 2^-4 at most,
            /// so 256 factors neither overflow nor underflow. Never zero, never NaN.
            fn pattern(rank: usize, index: u64, op: ReduceOp) -> Self {
                let h = mix(rank, index);
                let unit = ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64; // (0, 1)
                let v = match op {
                    ReduceOp::Prod => 1.0 + (unit - 0.5) / 8.0,
                    _ => {
                        let exp = ((h >> 3) % 17) as i32 - 8;
                        let sign = if h & 1 == 0 { 1.0 } else { -1.0 };
                        sign * (1.0 + unit) * 2f64.powi(exp)
                    }
                };
                v as $t
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
        }
    };
}

float_elem!(f32, Dtype::F32);
float_elem!(f64, Dtype::F64);

/// Calls `$body` with `$T` bound to the Rust type of a [`Dtype`].
#[macro_export]
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::kernels::Dtype::U8 => {
                type $T = u8;
                $body
            }
            $crate::kernels::Dtype::I32 => {
                type $T = i32;
                $body
            }
            $crate::kernels::Dtype::I64 => {
                type $T = i64;
                $body
            }
            $crate::kernels::Dtype::F32 => {
                type $T = f32;
                $body
            }
            $crate::kernels::Dtype::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

/// `dst = src` with stores that bypass the caches (non-temporal), for copies
/// into memory that will not be read again soon: an ordinary store first
/// reads the destination's line into the cache, so a copy far larger than
/// the caches moves three bytes over the memory bus per byte copied, and a
/// streaming one two (1.7 times the rate on 64 MiB buffers,
/// docs/PERFORMANCE.md). Ends with a store fence, so the data is visible to
/// any thread that synchronises with the caller afterwards. Elsewhere than
/// x86-64, an ordinary copy.
pub fn stream_copy<T: Elem>(dst: &mut [T], src: &[T]) {
    assert_eq!(dst.len(), src.len(), "stream_copy: lengths differ");
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let n = std::mem::size_of_val(dst);
        let d = dst.as_mut_ptr().cast::<u8>();
        let s = src.as_ptr().cast::<u8>();
        // Ordinary copies up to the first 16-byte aligned destination byte
        // and after the last whole 64-byte block.
        let head = d.align_offset(16).min(n);
        let body = (n - head) / 64 * 64;
        // SAFETY: the two slices are valid for `n` bytes and cannot overlap
        // (one is borrowed mutably); every access below is inside them, and
        // the streaming stores go to 16-byte aligned addresses. SSE2 is part
        // of x86-64.
        unsafe {
            std::ptr::copy_nonoverlapping(s, d, head);
            let mut i = head;
            while i < head + body {
                let a = _mm_loadu_si128(s.add(i).cast::<__m128i>());
                let b = _mm_loadu_si128(s.add(i + 16).cast::<__m128i>());
                let c = _mm_loadu_si128(s.add(i + 32).cast::<__m128i>());
                let e = _mm_loadu_si128(s.add(i + 48).cast::<__m128i>());
                _mm_stream_si128(d.add(i).cast::<__m128i>(), a);
                _mm_stream_si128(d.add(i + 16).cast::<__m128i>(), b);
                _mm_stream_si128(d.add(i + 32).cast::<__m128i>(), c);
                _mm_stream_si128(d.add(i + 48).cast::<__m128i>(), e);
                i += 64;
            }
            std::ptr::copy_nonoverlapping(s.add(i), d.add(i), n - i);
            _mm_sfence();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// The operators that apply to a type.
pub fn ops_for(dtype: Dtype) -> &'static [ReduceOp] {
    use ReduceOp::*;
    if dtype.is_float() {
        &[Sum, Prod, Min, Max]
    } else {
        &[Sum, Prod, Min, Max, Band, Bor, Bxor]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<T: Elem>() {
        // Lengths around every vector width, so tails are covered too.
        for n in [0usize, 1, 3, 7, 15, 16, 17, 31, 33, 63, 64, 65, 100, 257] {
            for &op in ops_for(T::DTYPE) {
                let a: Vec<T> = (0..n as u64).map(|i| T::pattern(1, i, op)).collect();
                let b: Vec<T> = (0..n as u64).map(|i| T::pattern(2, i, op)).collect();
                let mut d = a.clone();
                T::reduce_into(op, &mut d, &b);
                let mut o = vec![T::default(); n];
                T::reduce3(op, &mut o, &a, &b);
                for i in 0..n {
                    assert_eq!(d[i].bits(), T::apply(op, a[i], b[i]).bits());
                    assert_eq!(o[i].bits(), d[i].bits());
                }
            }
        }
    }

    #[test]
    fn kernels_agree_with_scalar() {
        check::<u8>();
        check::<i32>();
        check::<i64>();
        check::<f32>();
        check::<f64>();
    }

    #[test]
    fn stream_copy_copies_every_byte() {
        // Every alignment of the destination and lengths around the 64-byte
        // block, so the head, the body and the tail are all exercised.
        let src: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        for off in 0..17 {
            for n in [0usize, 1, 15, 16, 63, 64, 65, 127, 128, 200, 900] {
                let mut dst = vec![0u8; 1000];
                stream_copy(&mut dst[off..off + n], &src[..n]);
                assert_eq!(&dst[off..off + n], &src[..n], "offset {off}, {n} bytes");
                assert!(dst[..off].iter().chain(&dst[off + n..]).all(|&b| b == 0));
            }
        }
        let src: Vec<f64> = (0..333).map(|i| i as f64 * 0.5).collect();
        let mut dst = vec![0.0; 333];
        stream_copy(&mut dst, &src);
        assert_eq!(dst, src);
    }

    #[test]
    fn operators() {
        assert_eq!(i32::apply(ReduceOp::Min, 3, -4), -4);
        assert_eq!(i64::apply(ReduceOp::Max, 3, -4), 3);
        assert_eq!(u8::apply(ReduceOp::Sum, 200, 100), 44);
        assert_eq!(u8::apply(ReduceOp::Bxor, 0b1100, 0b1010), 0b0110);
        assert_eq!(f64::apply(ReduceOp::Prod, 1.5, 2.0), 3.0);
    }

    #[test]
    fn float_sums_depend_on_order() {
        // The pattern must make order visible, or the determinism tests prove nothing.
        let xs: Vec<f64> = (0..64).map(|r| f64::pattern(r, 0, ReduceOp::Sum)).collect();
        let fwd = xs.iter().fold(0.0, |a, b| a + b);
        let rev = xs.iter().rev().fold(0.0, |a, b| a + b);
        assert_ne!(fwd.to_bits(), rev.to_bits());
    }
}
