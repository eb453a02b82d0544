//! Constants: each constant's type is a constant type (primitives, address,
//! vectors of those; Aptos also signer-free signed ints) and its bytes are
//! exactly one BCS value of that type.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{CompiledModule, SignatureToken as ST, StatusCode};

pub(crate) fn verify_module(m: &CompiledModule) -> VerifyResult {
    for c in &m.constant_pool {
        if !is_constant_type(&c.type_) {
            return Err(VerifyError::module(StatusCode::INVALID_CONSTANT_TYPE));
        }
        let mut rest = &c.data[..];
        if !read_value(&c.type_, &mut rest, 0) || !rest.is_empty() {
            return Err(VerifyError::module(StatusCode::MALFORMED_CONSTANT_DATA));
        }
    }
    Ok(())
}

fn is_constant_type(t: &ST) -> bool {
    match t {
        ST::Bool | ST::U8 | ST::U16 | ST::U32 | ST::U64 | ST::U128 | ST::U256 | ST::Address => true,
        ST::I8 | ST::I16 | ST::I32 | ST::I64 | ST::I128 | ST::I256 => true,
        ST::Vector(inner) => is_constant_type(inner),
        _ => false,
    }
}

fn take(rest: &mut &[u8], n: usize) -> bool {
    if rest.len() < n {
        return false;
    }
    *rest = &rest[n..];
    true
}

fn uleb(rest: &mut &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&b, tail) = rest.split_first()?;
        *rest = tail;
        v |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            return (v <= u32::MAX as u64).then_some(v);
        }
    }
    None
}

fn read_value(t: &ST, rest: &mut &[u8], depth: usize) -> bool {
    if depth > 256 {
        return false;
    }
    match t {
        ST::Bool => match rest.split_first() {
            Some((&b, tail)) if b <= 1 => {
                *rest = tail;
                true
            }
            _ => false,
        },
        ST::U8 | ST::I8 => take(rest, 1),
        ST::U16 | ST::I16 => take(rest, 2),
        ST::U32 | ST::I32 => take(rest, 4),
        ST::U64 | ST::I64 => take(rest, 8),
        ST::U128 | ST::I128 => take(rest, 16),
        ST::U256 | ST::I256 | ST::Address => take(rest, 32),
        ST::Vector(inner) => {
            let Some(n) = uleb(rest) else { return false };
            if n as usize > rest.len() {
                return false;
            }
            (0..n).all(|_| read_value(inner, rest, depth + 1))
        }
        _ => false,
    }
}
