//! `dst = dst ∘ src` over raw bytes, for every element kind and predefined
//! operator MPI defines on it. The runtime's kernels serve topocoll's five
//! element types; an MPI program brings twelve, and the logical operators.

use crate::abi::{Kind, MpiOp};

/// Combines `src` into `dst` (equal lengths, whole elements of `kind`).
/// The caller has checked that `op` is defined on `kind` (`shim.c` falls
/// back otherwise).
pub fn reduce_bytes(kind: Kind, op: MpiOp, dst: &mut [u8], src: &[u8]) {
    debug_assert_eq!(dst.len(), src.len());
    match kind {
        Kind::I8 => int::<i8>(op, dst, src),
        Kind::I16 => int::<i16>(op, dst, src),
        Kind::I32 => int::<i32>(op, dst, src),
        Kind::I64 => int::<i64>(op, dst, src),
        Kind::U8 | Kind::Opaque => int::<u8>(op, dst, src),
        Kind::U16 => int::<u16>(op, dst, src),
        Kind::U32 => int::<u32>(op, dst, src),
        Kind::U64 => int::<u64>(op, dst, src),
        Kind::Bool => int::<u8>(op, dst, src),
        Kind::F32 => float::<f32>(op, dst, src),
        Kind::F64 => float::<f64>(op, dst, src),
    }
}

/// A fixed-size number read and written as native-endian bytes.
trait Num: Copy {
    const BYTES: usize;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
}

/// What integers do (wrapping, as C's unsigned and two's complement do).
trait Int: Num + Ord + PartialEq {
    const ZERO: Self;
    const ONE: Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
}

macro_rules! num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b.try_into().unwrap())
            }
            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_ne_bytes())
            }
        }
    )*};
}
num!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Int for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline(always)] fn and(self, o: Self) -> Self { self & o }
            #[inline(always)] fn or(self, o: Self) -> Self { self | o }
            #[inline(always)] fn xor(self, o: Self) -> Self { self ^ o }
        }
    )*};
}
int!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Applies `f` element by element; the loop is monomorphic per operator so
/// that it vectorises.
#[inline(always)]
fn zip<T: Num>(dst: &mut [u8], src: &[u8], f: impl Fn(T, T) -> T) {
    for (d, s) in dst
        .chunks_exact_mut(T::BYTES)
        .zip(src.chunks_exact(T::BYTES))
    {
        f(T::load(d), T::load(s)).store(d);
    }
}

fn int<T: Int>(op: MpiOp, dst: &mut [u8], src: &[u8]) {
    let truth = |b: bool| if b { T::ONE } else { T::ZERO };
    match op {
        MpiOp::Sum => zip::<T>(dst, src, T::add),
        MpiOp::Prod => zip::<T>(dst, src, T::mul),
        MpiOp::Min => zip::<T>(dst, src, std::cmp::min),
        MpiOp::Max => zip::<T>(dst, src, std::cmp::max),
        MpiOp::Band => zip::<T>(dst, src, T::and),
        MpiOp::Bor => zip::<T>(dst, src, T::or),
        MpiOp::Bxor => zip::<T>(dst, src, T::xor),
        MpiOp::Land => zip::<T>(dst, src, |a, b| truth(a != T::ZERO && b != T::ZERO)),
        MpiOp::Lor => zip::<T>(dst, src, |a, b| truth(a != T::ZERO || b != T::ZERO)),
        MpiOp::Lxor => zip::<T>(dst, src, |a, b| truth((a != T::ZERO) != (b != T::ZERO))),
    }
}

/// What floats do: the arithmetic and the comparisons (a NaN loses to a
/// number in MIN and MAX, as C's fmin and fmax, which MPI libraries use).
trait Float: Num {
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
}

macro_rules! float {
    ($($t:ty),*) => {$(
        impl Float for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn min(self, o: Self) -> Self { if o < self { o } else { self } }
            #[inline(always)] fn max(self, o: Self) -> Self { if o > self { o } else { self } }
        }
    )*};
}
float!(f32, f64);

fn float<T: Float>(op: MpiOp, dst: &mut [u8], src: &[u8]) {
    match op {
        MpiOp::Sum => zip::<T>(dst, src, T::add),
        MpiOp::Prod => zip::<T>(dst, src, T::mul),
        MpiOp::Min => zip::<T>(dst, src, T::min),
        MpiOp::Max => zip::<T>(dst, src, T::max),
        // shim.c never sends a float with a bitwise or logical operator.
        _ => unreachable!("{op:?} on a float"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Num>(v: &[T]) -> Vec<u8> {
        let mut out = vec![0; v.len() * T::BYTES];
        for (x, b) in v.iter().zip(out.chunks_exact_mut(T::BYTES)) {
            x.store(b);
        }
        out
    }

    #[test]
    fn integer_operators_wrap_and_logical_ones_give_zero_or_one() {
        let mut d = bytes::<i16>(&[i16::MAX, 5, 0, -3]);
        reduce_bytes(Kind::I16, MpiOp::Sum, &mut d, &bytes::<i16>(&[1, 2, 0, -4]));
        assert_eq!(d, bytes::<i16>(&[i16::MIN, 7, 0, -7]));
        let mut d = bytes::<u32>(&[0, 7, 9, 0]);
        reduce_bytes(Kind::U32, MpiOp::Land, &mut d, &bytes::<u32>(&[5, 3, 0, 0]));
        assert_eq!(d, bytes::<u32>(&[0, 1, 0, 0]));
        let mut d = bytes::<u8>(&[1, 0, 1, 0]);
        reduce_bytes(Kind::Bool, MpiOp::Lxor, &mut d, &bytes::<u8>(&[1, 1, 0, 0]));
        assert_eq!(d, bytes::<u8>(&[0, 1, 1, 0]));
        let mut d = bytes::<u64>(&[0b1100, 3]);
        reduce_bytes(
            Kind::U64,
            MpiOp::Bxor,
            &mut d,
            &bytes::<u64>(&[0b1010, u64::MAX]),
        );
        assert_eq!(d, bytes::<u64>(&[0b0110, !3]));
    }

    #[test]
    fn float_min_max_and_product() {
        let mut d = bytes::<f64>(&[1.5, -2.0, 3.0]);
        reduce_bytes(
            Kind::F64,
            MpiOp::Min,
            &mut d,
            &bytes::<f64>(&[0.5, 4.0, 3.0]),
        );
        assert_eq!(d, bytes::<f64>(&[0.5, -2.0, 3.0]));
        let mut d = bytes::<f32>(&[1.5, -2.0]);
        reduce_bytes(Kind::F32, MpiOp::Prod, &mut d, &bytes::<f32>(&[2.0, 4.0]));
        assert_eq!(d, bytes::<f32>(&[3.0, -8.0]));
    }
}
