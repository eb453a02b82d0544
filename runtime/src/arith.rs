//! Integer arithmetic with Move's rules: every overflow, underflow, division
//! by zero, `MIN / -1`, out-of-range cast and shift by at least the bit width
//! is `ARITHMETIC_ERROR`; bits shifted out below the width are dropped.
//!
//! The errors carry the Aptos VM's messages, built only here
//! ([`binop_error`], [`shift_error`], [`negate_error`], casts): every
//! executor, compiled code included (its cold failure paths call the
//! runtime's integer helpers), reports them from these functions.

use crate::error::{TrapResult, VmError};
use crate::scalar::ScalarKind;
use crate::values::Value;
use ethnum::{I256 as BigI, U256 as BigU};

/// A binary integer operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    BitOr,
    BitAnd,
    Xor,
}

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Gt,
    Le,
    Ge,
}

/// The error of `op` failing (`divisor_zero`: a division or remainder by
/// zero rather than `MIN / -1`). The VM says "Integer remainder by zero"
/// for `MIN % -1` too.
pub fn binop_error(op: BinOp, divisor_zero: bool) -> VmError {
    VmError::arithmetic(match op {
        BinOp::Add => "Addition overflow",
        BinOp::Sub => "Subtraction overflow",
        BinOp::Mul => "Multiplication overflow",
        BinOp::Div if divisor_zero => "Division by zero",
        BinOp::Div => "Division overflow",
        BinOp::Mod => "Integer remainder by zero",
        BinOp::BitOr | BinOp::BitAnd | BinOp::Xor => "Bitwise operation overflow",
    })
}

#[doc(hidden)]
pub fn is_zero<T: Default + PartialEq>(y: &T) -> bool {
    *y == T::default()
}

/// The error of a shift by at least the bit width.
pub fn shift_error(left: bool) -> VmError {
    VmError::arithmetic(if left { "Shift Left overflow" } else { "Shift Right overflow" })
}

/// The error of `-MIN`.
pub fn negate_error() -> VmError {
    VmError::arithmetic("Integer negation overflow")
}

/// `x op y` for one integer type as an `Option` (`None`: Move's rules make
/// it an error): the one statement of which operations check what, for
/// every executor's integer paths.
#[macro_export]
macro_rules! checked_int_op {
    ($op:expr, $x:expr, $y:expr) => {{
        use $crate::arith::BinOp;
        let (x, y) = ($x, $y);
        match $op {
            BinOp::Add => x.checked_add(y),
            BinOp::Sub => x.checked_sub(y),
            BinOp::Mul => x.checked_mul(y),
            BinOp::Div => x.checked_div(y),
            BinOp::Mod => x.checked_rem(y),
            BinOp::BitOr => Some(x | y),
            BinOp::BitAnd => Some(x & y),
            BinOp::Xor => Some(x ^ y),
        }
    }};
}

/// `x op y` for one integer type; `?`s [`binop_error`] on overflow.
macro_rules! checked {
    ($op:expr, $x:expr, $y:expr) => {{
        let (op, y) = ($op, $y);
        $crate::checked_int_op!(op, $x, y).ok_or_else(|| $crate::arith::binop_error(op, $crate::arith::is_zero(&y)))?
    }};
}
pub(crate) use checked;

macro_rules! int_binop {
    ($op:expr, $x:expr, $y:expr, $ctor:path) => {
        $ctor(checked!($op, $x, $y))
    };
}

/// `a op b` for two integers of the same type.
pub fn binop(op: BinOp, a: Value, b: Value) -> TrapResult<Value> {
    use Value::*;
    Ok(match (a, b) {
        (U8(x), U8(y)) => int_binop!(op, x, y, U8),
        (U16(x), U16(y)) => int_binop!(op, x, y, U16),
        (U32(x), U32(y)) => int_binop!(op, x, y, U32),
        (U64(x), U64(y)) => int_binop!(op, x, y, U64),
        (U128(x), U128(y)) => int_binop!(op, x, y, U128),
        (U256(x), U256(y)) => int_binop!(op, x, y, U256),
        (I8(x), I8(y)) => int_binop!(op, x, y, I8),
        (I16(x), I16(y)) => int_binop!(op, x, y, I16),
        (I32(x), I32(y)) => int_binop!(op, x, y, I32),
        (I64(x), I64(y)) => int_binop!(op, x, y, I64),
        (I128(x), I128(y)) => int_binop!(op, x, y, I128),
        (I256(x), I256(y)) => int_binop!(op, x, y, I256),
        (a, b) => return Err(Box::new(VmError::invariant(format!("{op:?} on {a:?} and {b:?}")))),
    })
}

macro_rules! int_binop_in_place {
    ($op:expr, $x:expr, $y:expr) => {{
        *$x = checked!($op, *$x, *$y);
    }};
}

/// `a = a op b` in place (same rules as [`binop`]; `a` is unchanged on error).
#[inline]
pub fn binop_in_place(op: BinOp, a: &mut Value, b: &Value) -> TrapResult<()> {
    use Value::*;
    match (a, b) {
        (U64(x), U64(y)) => int_binop_in_place!(op, x, y),
        (U8(x), U8(y)) => int_binop_in_place!(op, x, y),
        (U16(x), U16(y)) => int_binop_in_place!(op, x, y),
        (U32(x), U32(y)) => int_binop_in_place!(op, x, y),
        (U128(x), U128(y)) => int_binop_in_place!(op, x, y),
        (U256(x), U256(y)) => int_binop_in_place!(op, x, y),
        (I8(x), I8(y)) => int_binop_in_place!(op, x, y),
        (I16(x), I16(y)) => int_binop_in_place!(op, x, y),
        (I32(x), I32(y)) => int_binop_in_place!(op, x, y),
        (I64(x), I64(y)) => int_binop_in_place!(op, x, y),
        (I128(x), I128(y)) => int_binop_in_place!(op, x, y),
        (I256(x), I256(y)) => int_binop_in_place!(op, x, y),
        (a, b) => return Err(Box::new(VmError::invariant(format!("{op:?} on {a:?} and {b:?}")))),
    }
    Ok(())
}

/// `a < b` and friends.
#[inline]
pub fn compare(op: CmpOp, a: &Value, b: &Value) -> TrapResult<bool> {
    use std::cmp::Ordering::*;
    use Value::*;
    let o = match (a, b) {
        (U8(x), U8(y)) => x.cmp(y),
        (U16(x), U16(y)) => x.cmp(y),
        (U32(x), U32(y)) => x.cmp(y),
        (U64(x), U64(y)) => x.cmp(y),
        (U128(x), U128(y)) => x.cmp(y),
        (U256(x), U256(y)) => x.cmp(y),
        (I8(x), I8(y)) => x.cmp(y),
        (I16(x), I16(y)) => x.cmp(y),
        (I32(x), I32(y)) => x.cmp(y),
        (I64(x), I64(y)) => x.cmp(y),
        (I128(x), I128(y)) => x.cmp(y),
        (I256(x), I256(y)) => x.cmp(y),
        (a, b) => return Err(Box::new(VmError::invariant(format!("{op:?} on {a:?} and {b:?}")))),
    };
    Ok(match op {
        CmpOp::Lt => o == Less,
        CmpOp::Gt => o == Greater,
        CmpOp::Le => o != Greater,
        CmpOp::Ge => o != Less,
    })
}

/// `a << n` / `a >> n` (`n` is a u8; `n` ≥ width is an error).
pub fn shift(left: bool, a: Value, n: Value) -> TrapResult<Value> {
    use Value::*;
    let n = match n {
        U8(n) => n as u32,
        v => return Err(Box::new(VmError::invariant(format!("shift amount {v:?}")))),
    };
    macro_rules! sh {
        ($x:expr, $bits:expr, $ctor:path) => {{
            if n >= $bits {
                return Err(Box::new(shift_error(left)));
            }
            if left {
                $ctor($x << n)
            } else {
                $ctor($x >> n)
            }
        }};
    }
    Ok(match a {
        U8(x) => sh!(x, 8, U8),
        U16(x) => sh!(x, 16, U16),
        U32(x) => sh!(x, 32, U32),
        U64(x) => sh!(x, 64, U64),
        U128(x) => sh!(x, 128, U128),
        U256(x) => sh!(x, 256, U256),
        I8(x) => sh!(x, 8, I8),
        I16(x) => sh!(x, 16, I16),
        I32(x) => sh!(x, 32, I32),
        I64(x) => sh!(x, 64, I64),
        I128(x) => sh!(x, 128, I128),
        I256(x) => sh!(x, 256, I256),
        v => return Err(Box::new(VmError::invariant(format!("shift of {v:?}")))),
    })
}

/// `-a` for signed integers (`-MIN` is an error).
pub fn negate(a: Value) -> TrapResult<Value> {
    use Value::*;
    let e = negate_error;
    Ok(match a {
        I8(x) => I8(x.checked_neg().ok_or_else(e)?),
        I16(x) => I16(x.checked_neg().ok_or_else(e)?),
        I32(x) => I32(x.checked_neg().ok_or_else(e)?),
        I64(x) => I64(x.checked_neg().ok_or_else(e)?),
        I128(x) => I128(x.checked_neg().ok_or_else(e)?),
        I256(x) => I256(x.checked_neg().ok_or_else(e)?),
        v => return Err(Box::new(VmError::invariant(format!("negate of {v:?}")))),
    })
}

/// Every integer as an I256-plus-sign wide form: (is_negative, magnitude-or-value).
/// U256 values above BigI::MAX are kept as unsigned.
enum Wide {
    U(BigU),
    I(BigI),
}

fn widen(v: &Value) -> TrapResult<Wide> {
    use Value::*;
    Ok(match v {
        U8(x) => Wide::U(BigU::from(*x)),
        U16(x) => Wide::U(BigU::from(*x)),
        U32(x) => Wide::U(BigU::from(*x)),
        U64(x) => Wide::U(BigU::from(*x)),
        U128(x) => Wide::U(BigU::from(*x)),
        U256(x) => Wide::U(*x),
        I8(x) => Wide::I(BigI::from(*x)),
        I16(x) => Wide::I(BigI::from(*x)),
        I32(x) => Wide::I(BigI::from(*x)),
        I64(x) => Wide::I(BigI::from(*x)),
        I128(x) => Wide::I(BigI::from(*x)),
        I256(x) => Wide::I(*x),
        v => return Err(Box::new(VmError::invariant(format!("cast of {v:?}")))),
    })
}

/// The error of casting `v` out of `to`'s range: the VM's Rust type names,
/// 256-bit targets (and a `u256` source cast to `i256`) spelled as paths.
fn cast_error(v: &Value, to: ScalarKind) -> VmError {
    use Value::*;
    let (from, value) = match v {
        U8(x) => ("u8", x.to_string()),
        U16(x) => ("u16", x.to_string()),
        U32(x) => ("u32", x.to_string()),
        U64(x) => ("u64", x.to_string()),
        U128(x) => ("u128", x.to_string()),
        U256(x) if to == ScalarKind::I256 => ("int256::U256", x.to_string()),
        U256(x) => ("U256", x.to_string()),
        I8(x) => ("i8", x.to_string()),
        I16(x) => ("i16", x.to_string()),
        I32(x) => ("i32", x.to_string()),
        I64(x) => ("i64", x.to_string()),
        I128(x) => ("i128", x.to_string()),
        I256(x) => ("I256", x.to_string()),
        v => return VmError::invariant(format!("cast of {v:?}")),
    };
    let to = match to {
        ScalarKind::U8 => "u8",
        ScalarKind::U16 => "u16",
        ScalarKind::U32 => "u32",
        ScalarKind::U64 => "u64",
        ScalarKind::U128 => "u128",
        ScalarKind::U256 => "int256::U256",
        ScalarKind::I8 => "i8",
        ScalarKind::I16 => "i16",
        ScalarKind::I32 => "i32",
        ScalarKind::I64 => "i64",
        ScalarKind::I128 => "i128",
        ScalarKind::I256 => "int256::I256",
        ScalarKind::Bool | ScalarKind::Address => return VmError::invariant(format!("cast to {to:?}")),
    };
    VmError::arithmetic(format!("Cannot cast {from}({value}) to {to}"))
}

/// Casts an integer; values out of the target's range are an error.
pub fn cast(v: Value, to: ScalarKind) -> TrapResult<Value> {
    let w = widen(&v)?;
    let err = || cast_error(&v, to);
    macro_rules! to_unsigned {
        ($t:ty, $ctor:path) => {
            match w {
                Wide::U(x) => <$t>::try_from(x).ok().map($ctor),
                Wide::I(x) => {
                    if x < BigI::ZERO {
                        None
                    } else {
                        <$t>::try_from(x.as_u256()).ok().map($ctor)
                    }
                }
            }
        };
    }
    macro_rules! to_signed {
        ($t:ty, $ctor:path) => {
            match w {
                Wide::U(x) => {
                    if x > BigI::MAX.as_u256() {
                        None
                    } else {
                        <$t>::try_from(x.as_i256()).ok().map($ctor)
                    }
                }
                Wide::I(x) => <$t>::try_from(x).ok().map($ctor),
            }
        };
    }
    let r = match to {
        ScalarKind::U8 => to_unsigned!(u8, Value::U8),
        ScalarKind::U16 => to_unsigned!(u16, Value::U16),
        ScalarKind::U32 => to_unsigned!(u32, Value::U32),
        ScalarKind::U64 => to_unsigned!(u64, Value::U64),
        ScalarKind::U128 => to_unsigned!(u128, Value::U128),
        ScalarKind::U256 => match w {
            Wide::U(x) => Some(Value::U256(x)),
            Wide::I(x) => (x >= BigI::ZERO).then(|| Value::U256(x.as_u256())),
        },
        ScalarKind::I8 => to_signed!(i8, Value::I8),
        ScalarKind::I16 => to_signed!(i16, Value::I16),
        ScalarKind::I32 => to_signed!(i32, Value::I32),
        ScalarKind::I64 => to_signed!(i64, Value::I64),
        ScalarKind::I128 => to_signed!(i128, Value::I128),
        ScalarKind::I256 => match w {
            Wide::U(x) => (x <= BigI::MAX.as_u256()).then(|| Value::I256(x.as_i256())),
            Wide::I(x) => Some(Value::I256(x)),
        },
        ScalarKind::Bool | ScalarKind::Address => None,
    };
    r.ok_or_else(|| Box::new(err()))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rules() {
        assert!(binop(BinOp::Add, Value::U8(255), Value::U8(1)).is_err());
        let mut a = Value::U64(7);
        binop_in_place(BinOp::Mul, &mut a, &Value::U64(6)).expect("in range");
        assert_eq!(a, Value::U64(42));
        assert!(binop_in_place(BinOp::Sub, &mut a, &Value::U64(43)).is_err());
        assert_eq!(a, Value::U64(42));
        assert!(binop(BinOp::Div, Value::I8(-128), Value::I8(-1)).is_err());
        assert!(binop(BinOp::Mod, Value::I8(-128), Value::I8(-1)).is_err());
        assert_eq!(binop(BinOp::Div, Value::I8(-7), Value::I8(2)).ok(), Some(Value::I8(-3)));
        assert_eq!(shift(true, Value::U8(0x81), Value::U8(1)).ok(), Some(Value::U8(2)));
        assert!(shift(true, Value::U8(1), Value::U8(8)).is_err());
        assert!(cast(Value::I8(-1), ScalarKind::U256).is_err());
        assert!(cast(Value::U256(BigU::MAX), ScalarKind::I256).is_err());
        assert_eq!(cast(Value::I64(-5), ScalarKind::I8).ok(), Some(Value::I8(-5)));
        assert!(negate(Value::I16(i16::MIN)).is_err());
    }
}
