//! The integer helpers: thin `extern "C"` shims over `runtime::arith`,
//! the same functions the interpreter executes, so both executors share one
//! implementation of every wide or checked operation.

#![allow(clippy::not_unsafe_ptr_arg_deref, unsafe_code)]

use super::{op, HELPER_ARITHMETIC, HELPER_INTERNAL, HELPER_OK};
use crate::kind::Kind;
use ethnum::{I256, U256};
use movejit_runtime::arith::{self, BinOp, CastTo, CmpOp};
use movejit_runtime::{StatusCode, Value, VmError};

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

/// The value of `kind` stored at `p` in its flat layout (little-endian,
/// the kind's width).
///
/// # Safety
/// `p` must be readable for `kind.bytes()` bytes.
unsafe fn load(kind: Kind, p: *const u8) -> Option<Value> {
    // SAFETY (all arms): the caller guarantees `kind.bytes()` readable bytes.
    unsafe {
        Some(match kind {
            Kind::U8 => Value::U8(read::<1>(p)[0]),
            Kind::U16 => Value::U16(u16::from_le_bytes(read(p))),
            Kind::U32 => Value::U32(u32::from_le_bytes(read(p))),
            Kind::U64 => Value::U64(u64::from_le_bytes(read(p))),
            Kind::U128 => Value::U128(u128::from_le_bytes(read(p))),
            Kind::U256 => Value::U256(U256::from_le_bytes(read(p))),
            Kind::I8 => Value::I8(i8::from_le_bytes(read(p))),
            Kind::I16 => Value::I16(i16::from_le_bytes(read(p))),
            Kind::I32 => Value::I32(i32::from_le_bytes(read(p))),
            Kind::I64 => Value::I64(i64::from_le_bytes(read(p))),
            Kind::I128 => Value::I128(i128::from_le_bytes(read(p))),
            Kind::I256 => Value::I256(I256::from_le_bytes(read(p))),
            Kind::Bool | Kind::Address => return None,
        })
    }
}

/// Stores an integer value at `p` in its flat layout; `HELPER_INTERNAL`
/// for anything else.
///
/// # Safety
/// `p` must be writable for the value's width.
unsafe fn store(v: &Value, p: *mut u8) -> u32 {
    // SAFETY (all arms): the caller guarantees room for the value's width.
    unsafe {
        match v {
            Value::U8(x) => write(p, &x.to_le_bytes()),
            Value::U16(x) => write(p, &x.to_le_bytes()),
            Value::U32(x) => write(p, &x.to_le_bytes()),
            Value::U64(x) => write(p, &x.to_le_bytes()),
            Value::U128(x) => write(p, &x.to_le_bytes()),
            Value::U256(x) => write(p, &x.to_le_bytes()),
            Value::I8(x) => write(p, &x.to_le_bytes()),
            Value::I16(x) => write(p, &x.to_le_bytes()),
            Value::I32(x) => write(p, &x.to_le_bytes()),
            Value::I64(x) => write(p, &x.to_le_bytes()),
            Value::I128(x) => write(p, &x.to_le_bytes()),
            Value::I256(x) => write(p, &x.to_le_bytes()),
            _ => return HELPER_INTERNAL,
        }
    }
    HELPER_OK
}

/// The helper status of a runtime error.
fn status_of(e: &VmError) -> u32 {
    if e.status == StatusCode::ARITHMETIC_ERROR {
        HELPER_ARITHMETIC
    } else {
        HELPER_INTERNAL
    }
}

fn finish(r: Result<Value, Box<VmError>>, out: *mut u8) -> u32 {
    match r {
        // SAFETY: `out` is a 32-byte slot of compiled code (every helper
        // entry point's contract).
        Ok(v) => unsafe { store(&v, out) },
        Err(e) => status_of(&e),
    }
}

/// `*out = *a op *b` (`op::ADD`..`op::MOD`) for one integer kind, by
/// `runtime::arith::binop`, the interpreter's own implementation.
pub extern "C" fn int_binop(opc: u32, kind: u32, a: *const u8, b: *const u8, out: *mut u8) -> u32 {
    let op = match opc {
        op::ADD => BinOp::Add,
        op::SUB => BinOp::Sub,
        op::MUL => BinOp::Mul,
        op::DIV => BinOp::Div,
        op::MOD => BinOp::Mod,
        _ => return HELPER_INTERNAL,
    };
    let Some(kind) = Kind::from_code(kind) else { return HELPER_INTERNAL };
    // SAFETY: compiled code passes 32-byte slots for `a`, `b` and `out`.
    let (Some(x), Some(y)) = (unsafe { load(kind, a) }, unsafe { load(kind, b) }) else {
        return HELPER_INTERNAL;
    };
    finish(arith::binop(op, x, y), out)
}

/// `*out = *a << amount` / `>> amount` by `runtime::arith::shift`.
pub extern "C" fn int_shift(opc: u32, kind: u32, a: *const u8, amount: u32, out: *mut u8) -> u32 {
    let (Some(kind), Ok(n)) = (Kind::from_code(kind), u8::try_from(amount)) else { return HELPER_INTERNAL };
    // SAFETY: compiled code passes 32-byte slots for `a` and `out`.
    let Some(x) = (unsafe { load(kind, a) }) else { return HELPER_INTERNAL };
    finish(arith::shift(opc == op::SHL, x, Value::U8(n)), out)
}

/// Compares `*a` with `*b` by `runtime::arith::compare`: 0 less, 1 equal,
/// 2 greater, 3 not comparable.
pub extern "C" fn int_cmp(kind: u32, a: *const u8, b: *const u8) -> u32 {
    let Some(kind) = Kind::from_code(kind) else { return 3 };
    // SAFETY: compiled code passes 32-byte slots for `a` and `b`.
    let (Some(x), Some(y)) = (unsafe { load(kind, a) }, unsafe { load(kind, b) }) else { return 3 };
    match (arith::compare(CmpOp::Lt, &x, &y), arith::compare(CmpOp::Gt, &x, &y)) {
        (Ok(true), _) => 0,
        (Ok(false), Ok(false)) => 1,
        (Ok(false), Ok(true)) => 2,
        _ => 3,
    }
}

/// `*out = -*a` by `runtime::arith::negate`.
pub extern "C" fn int_negate(kind: u32, a: *const u8, out: *mut u8) -> u32 {
    let Some(kind) = Kind::from_code(kind) else { return HELPER_INTERNAL };
    // SAFETY: compiled code passes 32-byte slots for `a` and `out`.
    let Some(x) = (unsafe { load(kind, a) }) else { return HELPER_INTERNAL };
    finish(arith::negate(x), out)
}

/// A cast between integer kinds by `runtime::arith::cast`: `*a` holds the
/// source in its own width, `*out` receives the target in its own width.
pub extern "C" fn int_cast(src: u32, dst: u32, a: *const u8, out: *mut u8) -> u32 {
    let (Some(src), Some(dst)) = (Kind::from_code(src), Kind::from_code(dst)) else {
        return HELPER_INTERNAL;
    };
    let to = match dst {
        Kind::U8 => CastTo::U8,
        Kind::U16 => CastTo::U16,
        Kind::U32 => CastTo::U32,
        Kind::U64 => CastTo::U64,
        Kind::U128 => CastTo::U128,
        Kind::U256 => CastTo::U256,
        Kind::I8 => CastTo::I8,
        Kind::I16 => CastTo::I16,
        Kind::I32 => CastTo::I32,
        Kind::I64 => CastTo::I64,
        Kind::I128 => CastTo::I128,
        Kind::I256 => CastTo::I256,
        Kind::Bool | Kind::Address => return HELPER_INTERNAL,
    };
    // SAFETY: compiled code passes 32-byte slots for `a` and `out`.
    let Some(x) = (unsafe { load(src, a) }) else { return HELPER_INTERNAL };
    finish(arith::cast(x, to), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cast_bytes(src: Kind, dst: Kind, v: &[u8]) -> Result<Vec<u8>, u32> {
        let mut a = [0u8; 32];
        a[..v.len()].copy_from_slice(v);
        let mut out = [0u8; 32];
        match int_cast(src.code(), dst.code(), a.as_ptr(), out.as_mut_ptr()) {
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
            (int_binop(opc, k.code(), a.as_ptr(), b.as_ptr(), o.as_mut_ptr()), o)
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
