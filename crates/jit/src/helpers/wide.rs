//! The wide-integer helpers (ethnum for 256 bits, Rust's u128/i128).

#![allow(clippy::not_unsafe_ptr_arg_deref, unsafe_code)]

use super::{op, HELPER_ARITHMETIC, HELPER_INTERNAL, HELPER_OK};
use crate::kind::Kind;
use ethnum::{I256, U256};

/// Reads `N` bytes at `p`.
///
/// # Safety
/// `p` must be valid for reading `N` bytes.
unsafe fn read<const N: usize>(p: *const u8) -> [u8; N] {
    let mut b = [0u8; N];
    // SAFETY: the caller guarantees `p` is readable for N bytes; `b` is a
    // fresh local of N bytes, so the ranges cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), N) };
    b
}

/// Writes `bytes` at `p`.
///
/// # Safety
/// `p` must be valid for writing `bytes.len()` bytes.
unsafe fn write(p: *mut u8, bytes: &[u8]) {
    // SAFETY: the caller guarantees `p` is writable for that many bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
}

fn status<T>(r: Option<T>, out: impl FnOnce(T)) -> u32 {
    match r {
        Some(v) => {
            out(v);
            HELPER_OK
        }
        None => HELPER_ARITHMETIC,
    }
}

macro_rules! checked_binop {
    ($op:expr, $x:expr, $y:expr) => {
        match $op {
            op::ADD => $x.checked_add($y),
            op::SUB => $x.checked_sub($y),
            op::MUL => $x.checked_mul($y),
            op::DIV => $x.checked_div($y),
            op::MOD => $x.checked_rem($y),
            _ => return HELPER_INTERNAL,
        }
    };
}

/// `*out = *a op *b` for 128- and 256-bit kinds, with Move's error rules
/// (overflow, division by zero and `MIN / -1` are arithmetic errors).
pub extern "C" fn wide_binop(opc: u32, kind: u32, a: *const u8, b: *const u8, out: *mut u8) -> u32 {
    // SAFETY: compiled code passes pointers to stack slots at least as wide
    // as the kind (32 bytes each), `out` distinct from the inputs.
    unsafe {
        match Kind::from_code(kind) {
            Some(Kind::U128) => {
                let (x, y) = (u128::from_le_bytes(read(a)), u128::from_le_bytes(read(b)));
                status(checked_binop!(opc, x, y), |r| write(out, &r.to_le_bytes()))
            }
            Some(Kind::I128) => {
                let (x, y) = (i128::from_le_bytes(read(a)), i128::from_le_bytes(read(b)));
                status(checked_binop!(opc, x, y), |r| write(out, &r.to_le_bytes()))
            }
            Some(Kind::U256) => {
                let (x, y) = (U256::from_le_bytes(read(a)), U256::from_le_bytes(read(b)));
                status(checked_binop!(opc, x, y), |r| write(out, &r.to_le_bytes()))
            }
            Some(Kind::I256) => {
                let (x, y) = (I256::from_le_bytes(read(a)), I256::from_le_bytes(read(b)));
                status(checked_binop!(opc, x, y), |r| write(out, &r.to_le_bytes()))
            }
            _ => HELPER_INTERNAL,
        }
    }
}

/// `*out = *a << amount` or `>> amount` for u256 (any `u8` amount is below
/// the width, so this never fails).
pub extern "C" fn wide_shift(opc: u32, kind: u32, a: *const u8, amount: u32, out: *mut u8) -> u32 {
    if Kind::from_code(kind) != Some(Kind::U256) || amount >= 256 {
        return HELPER_INTERNAL;
    }
    // SAFETY: as in `wide_binop`: 32-byte slots from compiled code.
    unsafe {
        let x = U256::from_le_bytes(read(a));
        let r = match opc {
            op::SHL => x << amount,
            op::SHR => x >> amount,
            _ => return HELPER_INTERNAL,
        };
        write(out, &r.to_le_bytes());
    }
    HELPER_OK
}

/// Compares two 256-bit values: 0 less, 1 equal, 2 greater, 3 bad kind.
pub extern "C" fn wide_cmp(kind: u32, a: *const u8, b: *const u8) -> u32 {
    // SAFETY: 32-byte slots from compiled code.
    let ord = unsafe {
        match Kind::from_code(kind) {
            Some(Kind::U256) => U256::from_le_bytes(read(a)).cmp(&U256::from_le_bytes(read(b))),
            Some(Kind::I256) => I256::from_le_bytes(read(a)).cmp(&I256::from_le_bytes(read(b))),
            _ => return 3,
        }
    };
    match ord {
        std::cmp::Ordering::Less => 0,
        std::cmp::Ordering::Equal => 1,
        std::cmp::Ordering::Greater => 2,
    }
}

/// `*out = -*a` for i256 (`-MIN` is an arithmetic error).
pub extern "C" fn wide_neg(kind: u32, a: *const u8, out: *mut u8) -> u32 {
    if Kind::from_code(kind) != Some(Kind::I256) {
        return HELPER_INTERNAL;
    }
    // SAFETY: 32-byte slots from compiled code.
    unsafe {
        let x = I256::from_le_bytes(read(a));
        status(x.checked_neg(), |r| write(out, &r.to_le_bytes()))
    }
}

/// A cast between any two integer kinds: `*a` holds the source in its own
/// width, `*out` receives the target in its own width. Out of range (never
/// wrapping) is an arithmetic error.
pub extern "C" fn cast(src: u32, dst: u32, a: *const u8, out: *mut u8) -> u32 {
    let (Some(src), Some(dst)) = (Kind::from_code(src), Kind::from_code(dst)) else {
        return HELPER_INTERNAL;
    };
    if !src.is_integer() || !dst.is_integer() {
        return HELPER_INTERNAL;
    }
    // SAFETY: 32-byte slots from compiled code; only `src.bytes()` are read.
    let mut bytes = [0u8; 32];
    unsafe { std::ptr::copy_nonoverlapping(a, bytes.as_mut_ptr(), src.bytes()) };
    // Sign- or zero-extend to 256 bits.
    let negative = src.is_signed() && bytes[src.bytes() - 1] & 0x80 != 0;
    if negative {
        bytes[src.bytes()..].fill(0xFF);
    }
    let bits = U256::from_le_bytes(bytes);
    let w = dst.bits();
    let fits = if dst.is_signed() {
        if !src.is_signed() && bits >> 255u32 == U256::ONE {
            // Above i256::MAX: exceeds every signed target.
            false
        } else if w == 256 {
            true
        } else {
            let v = I256::from_le_bytes(bytes);
            let max = (I256::ONE << (w - 1)) - I256::ONE;
            let min = -max - I256::ONE;
            v >= min && v <= max
        }
    } else if negative {
        false
    } else if w == 256 {
        true
    } else {
        bits <= (U256::ONE << w) - U256::ONE
    };
    if !fits {
        return HELPER_ARITHMETIC;
    }
    // SAFETY: `out` is a 32-byte slot; `dst.bytes()` ≤ 32.
    unsafe { write(out, &bytes[..dst.bytes()]) };
    HELPER_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cast_bytes(src: Kind, dst: Kind, v: &[u8]) -> Result<Vec<u8>, u32> {
        let mut a = [0u8; 32];
        a[..v.len()].copy_from_slice(v);
        let mut out = [0u8; 32];
        match cast(src.code(), dst.code(), a.as_ptr(), out.as_mut_ptr()) {
            HELPER_OK => Ok(out[..dst.bytes()].to_vec()),
            e => Err(e),
        }
    }

    #[test]
    fn casts_check_ranges() {
        assert_eq!(cast_bytes(Kind::U256, Kind::U8, &[200]), Ok(vec![200]));
        assert_eq!(cast_bytes(Kind::U256, Kind::I8, &[200]), Err(HELPER_ARITHMETIC));
        assert_eq!(cast_bytes(Kind::I8, Kind::U256, &[0xFF]), Err(HELPER_ARITHMETIC));
        assert_eq!(cast_bytes(Kind::I8, Kind::I256, &[0xFF]), Ok(vec![0xFF; 32]));
        assert_eq!(cast_bytes(Kind::U256, Kind::I256, &[0xFF; 32]), Err(HELPER_ARITHMETIC));
        let mut max = [0xFFu8; 32];
        max[31] = 0x7F;
        assert_eq!(cast_bytes(Kind::U256, Kind::I256, &max), Ok(max.to_vec()));
        assert_eq!(cast_bytes(Kind::I256, Kind::I128, &max), Err(HELPER_ARITHMETIC));
    }

    #[test]
    fn binops_follow_move_rules() {
        let run = |opc, k: Kind, x: &[u8], y: &[u8]| {
            let (mut a, mut b, mut o) = ([0u8; 32], [0u8; 32], [0u8; 32]);
            a[..x.len()].copy_from_slice(x);
            b[..y.len()].copy_from_slice(y);
            (wide_binop(opc, k.code(), a.as_ptr(), b.as_ptr(), o.as_mut_ptr()), o)
        };
        assert_eq!(run(op::DIV, Kind::U128, &[7], &[0]).0, HELPER_ARITHMETIC);
        let min = (i128::MIN).to_le_bytes();
        let m1 = (-1i128).to_le_bytes();
        assert_eq!(run(op::DIV, Kind::I128, &min, &m1).0, HELPER_ARITHMETIC);
        assert_eq!(run(op::MOD, Kind::I128, &min, &m1).0, HELPER_ARITHMETIC);
        let (s, o) = run(op::MUL, Kind::U256, &[3], &[5]);
        assert_eq!((s, o[0]), (HELPER_OK, 15));
        assert_eq!(run(op::ADD, Kind::U256, &[0xFF; 32], &[1]).0, HELPER_ARITHMETIC);
        assert_eq!(run(9, Kind::U256, &[1], &[1]).0, HELPER_INTERNAL);
    }
}
