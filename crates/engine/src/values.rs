//! Scalar values between the interpreter's tree values and the JIT's
//! little-endian slots.

use movejit_jit::Kind;
use movejit_runtime::ethnum::{I256, U256};
use movejit_runtime::{AccountAddress, Type, Value};

/// The JIT kind of a (fully instantiated) type, if scalar.
pub fn kind_of(t: &Type) -> Option<Kind> {
    Some(match t {
        Type::Bool => Kind::Bool,
        Type::U8 => Kind::U8,
        Type::U16 => Kind::U16,
        Type::U32 => Kind::U32,
        Type::U64 => Kind::U64,
        Type::U128 => Kind::U128,
        Type::U256 => Kind::U256,
        Type::I8 => Kind::I8,
        Type::I16 => Kind::I16,
        Type::I32 => Kind::I32,
        Type::I64 => Kind::I64,
        Type::I128 => Kind::I128,
        Type::I256 => Kind::I256,
        Type::Address => Kind::Address,
        _ => return None,
    })
}

/// Little-endian bytes of a scalar value.
pub fn bytes_of(v: &Value) -> Option<Vec<u8>> {
    Some(match v {
        Value::Bool(b) => vec![*b as u8],
        Value::U8(x) => x.to_le_bytes().to_vec(),
        Value::U16(x) => x.to_le_bytes().to_vec(),
        Value::U32(x) => x.to_le_bytes().to_vec(),
        Value::U64(x) => x.to_le_bytes().to_vec(),
        Value::U128(x) => x.to_le_bytes().to_vec(),
        Value::U256(x) => x.to_le_bytes().to_vec(),
        Value::I8(x) => x.to_le_bytes().to_vec(),
        Value::I16(x) => x.to_le_bytes().to_vec(),
        Value::I32(x) => x.to_le_bytes().to_vec(),
        Value::I64(x) => x.to_le_bytes().to_vec(),
        Value::I128(x) => x.to_le_bytes().to_vec(),
        Value::I256(x) => x.to_le_bytes().to_vec(),
        Value::Address(a) => a.0.to_vec(),
        _ => return None,
    })
}

fn arr<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

/// The value of kind `k` from its little-endian bytes.
pub fn value_of(k: Kind, b: &[u8]) -> Option<Value> {
    Some(match k {
        Kind::Bool => match b {
            [0] => Value::Bool(false),
            [1] => Value::Bool(true),
            _ => return None,
        },
        Kind::U8 => Value::U8(u8::from_le_bytes(arr(b)?)),
        Kind::U16 => Value::U16(u16::from_le_bytes(arr(b)?)),
        Kind::U32 => Value::U32(u32::from_le_bytes(arr(b)?)),
        Kind::U64 => Value::U64(u64::from_le_bytes(arr(b)?)),
        Kind::U128 => Value::U128(u128::from_le_bytes(arr(b)?)),
        Kind::U256 => Value::U256(U256::from_le_bytes(arr(b)?)),
        Kind::I8 => Value::I8(i8::from_le_bytes(arr(b)?)),
        Kind::I16 => Value::I16(i16::from_le_bytes(arr(b)?)),
        Kind::I32 => Value::I32(i32::from_le_bytes(arr(b)?)),
        Kind::I64 => Value::I64(i64::from_le_bytes(arr(b)?)),
        Kind::I128 => Value::I128(i128::from_le_bytes(arr(b)?)),
        Kind::I256 => Value::I256(I256::from_le_bytes(arr(b)?)),
        Kind::Address => Value::Address(AccountAddress(arr(b)?)),
    })
}
