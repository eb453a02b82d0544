//! Constant values as written in `.masm` (numbers and vectors of them), and
//! their BCS encoding for a given constant type.

use ethnum::{I256, U256};
use movejit_format::{AccountAddress, SignatureToken};
use std::fmt;

/// An untyped constant: a number with its sign, an address, or a vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AsmValue {
    /// `(non_negative, magnitude)`.
    Number(bool, U256),
    /// Printed as `0x…`; parsed back as a number.
    Address(AccountAddress),
    Vector(Vec<AsmValue>),
}

impl fmt::Display for AsmValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AsmValue::Number(true, n) => write!(f, "{n}"),
            AsmValue::Number(false, n) => write!(f, "-{n}"),
            AsmValue::Address(a) => write!(f, "{}", a.to_hex_short()),
            AsmValue::Vector(elems) => {
                f.write_str("[")?;
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str("]")
            }
        }
    }
}

fn u256_to_address(n: U256) -> AccountAddress {
    AccountAddress(n.to_be_bytes())
}

fn address_to_u256(a: &AccountAddress) -> U256 {
    U256::from_be_bytes(a.0)
}

/// The magnitude of `i`, as an unsigned number (total for `I256::MIN`).
fn magnitude(i: I256) -> U256 {
    i.unsigned_abs()
}

impl AsmValue {
    fn unsigned(&self, max: U256) -> Result<U256, String> {
        match self {
            AsmValue::Number(true, n) if *n <= max => Ok(*n),
            AsmValue::Number(true, n) => Err(format!("number {n} out of range (max {max})")),
            AsmValue::Number(false, n) => Err(format!("negative number -{n} for an unsigned type")),
            AsmValue::Address(a) if max == U256::MAX => Ok(address_to_u256(a)),
            _ => Err("expected an unsigned number".to_string()),
        }
    }

    /// The value as an `I256` within `[min, max]`.
    fn signed(&self, min: I256, max: I256) -> Result<I256, String> {
        let out_of_range = || format!("number {self} out of range ({min}..={max})");
        match self {
            AsmValue::Number(true, n) => {
                if *n > magnitude(max) {
                    return Err(out_of_range());
                }
                Ok(n.as_i256())
            }
            AsmValue::Number(false, n) => {
                if *n > magnitude(min) {
                    return Err(out_of_range());
                }
                // Two's complement negation is exact for every magnitude up to |MIN|.
                Ok(n.as_i256().wrapping_neg())
            }
            _ => Err("expected a signed number".to_string()),
        }
    }

    pub fn from_signed(i: I256) -> AsmValue {
        AsmValue::Number(i >= I256::ZERO, magnitude(i))
    }

    /// The BCS bytes of this value read as type `ty`.
    pub fn to_bcs(&self, ty: &SignatureToken) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        self.write_bcs(ty, &mut out)?;
        Ok(out)
    }

    fn write_bcs(&self, ty: &SignatureToken, out: &mut Vec<u8>) -> Result<(), String> {
        use SignatureToken as T;
        fn le(n: U256, width: usize, out: &mut Vec<u8>) {
            out.extend_from_slice(&n.to_le_bytes()[..width]);
        }
        fn sle(i: I256, width: usize, out: &mut Vec<u8>) {
            out.extend_from_slice(&i.to_le_bytes()[..width]);
        }
        match ty {
            T::Bool => {
                let n = self.unsigned(U256::ONE)?;
                out.push(n.as_u8());
            }
            T::U8 => le(self.unsigned(U256::from(u8::MAX))?, 1, out),
            T::U16 => le(self.unsigned(U256::from(u16::MAX))?, 2, out),
            T::U32 => le(self.unsigned(U256::from(u32::MAX))?, 4, out),
            T::U64 => le(self.unsigned(U256::from(u64::MAX))?, 8, out),
            T::U128 => le(self.unsigned(U256::from(u128::MAX))?, 16, out),
            T::U256 => le(self.unsigned(U256::MAX)?, 32, out),
            T::I8 => sle(self.signed(I256::from(i8::MIN), I256::from(i8::MAX))?, 1, out),
            T::I16 => sle(self.signed(I256::from(i16::MIN), I256::from(i16::MAX))?, 2, out),
            T::I32 => sle(self.signed(I256::from(i32::MIN), I256::from(i32::MAX))?, 4, out),
            T::I64 => sle(self.signed(I256::from(i64::MIN), I256::from(i64::MAX))?, 8, out),
            T::I128 => sle(self.signed(I256::from(i128::MIN), I256::from(i128::MAX))?, 16, out),
            T::I256 => sle(self.signed(I256::MIN, I256::MAX)?, 32, out),
            T::Address => out.extend_from_slice(&u256_to_address(self.unsigned(U256::MAX)?).0),
            T::Vector(elem) => {
                let AsmValue::Vector(elems) = self else {
                    return Err("expected a vector value `[...]`".to_string());
                };
                write_uleb(elems.len() as u64, out);
                for e in elems {
                    e.write_bcs(elem, out)?;
                }
            }
            _ => return Err("a constant of this type cannot be written as a value; use x\"<bcs hex>\"".to_string()),
        }
        Ok(())
    }

    /// Reads a BCS value of type `ty`; `None` if the bytes are not exactly
    /// one such value or the type has no value syntax.
    pub fn from_bcs(ty: &SignatureToken, bytes: &[u8]) -> Option<AsmValue> {
        let mut rest = bytes;
        let v = read_value(ty, &mut rest, 0)?;
        rest.is_empty().then_some(v)
    }
}

fn write_uleb(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn read_uleb(rest: &mut &[u8]) -> Option<u64> {
    let mut value: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&b, tail) = rest.split_first()?;
        *rest = tail;
        value |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            // Canonical BCS: no trailing zero groups, and lengths fit in u32.
            if b == 0 && shift > 0 {
                return None;
            }
            return u32::try_from(value).ok().map(u64::from);
        }
    }
    None
}

fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if rest.len() < n {
        return None;
    }
    let (head, tail) = rest.split_at(n);
    *rest = tail;
    Some(head)
}

fn read_value(ty: &SignatureToken, rest: &mut &[u8], depth: usize) -> Option<AsmValue> {
    use SignatureToken as T;
    if depth > 64 {
        return None;
    }
    let unsigned = |rest: &mut &[u8], width: usize| -> Option<AsmValue> {
        let b = take(rest, width)?;
        let mut buf = [0u8; 32];
        buf[..width].copy_from_slice(b);
        Some(AsmValue::Number(true, U256::from_le_bytes(buf)))
    };
    let signed = |rest: &mut &[u8], width: usize| -> Option<AsmValue> {
        let b = take(rest, width)?;
        let fill = if b[width - 1] & 0x80 != 0 { 0xff } else { 0 };
        let mut buf = [fill; 32];
        buf[..width].copy_from_slice(b);
        Some(AsmValue::from_signed(I256::from_le_bytes(buf)))
    };
    Some(match ty {
        T::Bool => match take(rest, 1)?[0] {
            b @ (0 | 1) => AsmValue::Number(true, U256::from(b)),
            _ => return None,
        },
        T::U8 => unsigned(rest, 1)?,
        T::U16 => unsigned(rest, 2)?,
        T::U32 => unsigned(rest, 4)?,
        T::U64 => unsigned(rest, 8)?,
        T::U128 => unsigned(rest, 16)?,
        T::U256 => unsigned(rest, 32)?,
        T::I8 => signed(rest, 1)?,
        T::I16 => signed(rest, 2)?,
        T::I32 => signed(rest, 4)?,
        T::I64 => signed(rest, 8)?,
        T::I128 => signed(rest, 16)?,
        T::I256 => signed(rest, 32)?,
        T::Address => {
            let b = take(rest, 32)?;
            let mut a = [0u8; 32];
            a.copy_from_slice(b);
            AsmValue::Address(AccountAddress(a))
        }
        T::Vector(elem) => {
            let len = read_uleb(rest)? as usize;
            // Every element takes at least one byte: check before allocating.
            if len > rest.len() {
                return None;
            }
            let mut elems = Vec::with_capacity(len);
            for _ in 0..len {
                elems.push(read_value(elem, rest, depth + 1)?);
            }
            AsmValue::Vector(elems)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use SignatureToken as T;

    #[test]
    fn round_trips_through_bcs() {
        let cases: Vec<(T, Vec<u8>)> = vec![
            (T::Bool, vec![1]),
            (T::U16, vec![0xff, 0xfe]),
            (T::I8, vec![0x80]),
            (T::I256, {
                let mut v = vec![0u8; 32];
                v[31] = 0x80;
                v
            }),
            (T::I64, (-5i64).to_le_bytes().to_vec()),
            (T::Vector(Box::new(T::Vector(Box::new(T::U8)))), vec![2, 2, 1, 2, 0]),
            (T::Vector(Box::new(T::Address)), {
                let mut v = vec![1];
                v.extend(AccountAddress::from_u64(0xcafe).0);
                v
            }),
        ];
        for (ty, bytes) in cases {
            let v = AsmValue::from_bcs(&ty, &bytes).unwrap();
            assert_eq!(v.to_bcs(&ty).unwrap(), bytes, "{ty:?} {v}");
        }
    }

    #[test]
    fn rejects_bad_bytes_and_ranges() {
        assert_eq!(AsmValue::from_bcs(&T::Bool, &[2]), None);
        assert_eq!(AsmValue::from_bcs(&T::U64, &[1, 2]), None);
        assert_eq!(AsmValue::from_bcs(&T::Vector(Box::new(T::U8)), &[0xff, 0xff, 0xff, 0xff, 0x0f]), None);
        assert!(AsmValue::Number(false, U256::from(129u32)).to_bcs(&T::I8).is_err());
        assert!(AsmValue::Number(false, U256::from(128u32)).to_bcs(&T::I8).is_ok());
        assert!(AsmValue::Number(true, U256::from(256u32)).to_bcs(&T::U8).is_err());
        assert_eq!(AsmValue::from_signed(I256::MIN).to_bcs(&T::I256).unwrap()[31], 0x80);
    }
}
