//! The scalar kinds the JIT keeps in registers, and how each is represented
//! in Cranelift IR.
//!
//! Booleans and integers up to 128 bits are one SSA value of their natural
//! width (`bool` is an `i8` holding 0 or 1). 256-bit integers are four `i64`
//! limbs, least significant first; they go to memory only to meet a helper.

#![forbid(unsafe_code)]

use cranelift_codegen::ir::{types, Type};
use movejit_format::SignatureToken;

/// A scalar Move type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Bool,
    U8,
    U16,
    U32,
    U64,
    U128,
    U256,
    I8,
    I16,
    I32,
    I64,
    I128,
    I256,
    /// A 32-byte account address: four `i64` lanes of its bytes, compared
    /// only for equality.
    Address,
}

impl Kind {
    /// The kind of a (fully instantiated) signature token, if it is a scalar.
    pub fn of(tok: &SignatureToken) -> Option<Kind> {
        use SignatureToken as T;
        Some(match tok {
            T::Bool => Kind::Bool,
            T::U8 => Kind::U8,
            T::U16 => Kind::U16,
            T::U32 => Kind::U32,
            T::U64 => Kind::U64,
            T::U128 => Kind::U128,
            T::U256 => Kind::U256,
            T::I8 => Kind::I8,
            T::I16 => Kind::I16,
            T::I32 => Kind::I32,
            T::I64 => Kind::I64,
            T::I128 => Kind::I128,
            T::I256 => Kind::I256,
            T::Address => Kind::Address,
            _ => return None,
        })
    }

    /// The kind of `tok` with type parameters replaced by `type_args`.
    pub fn of_instantiated(tok: &SignatureToken, type_args: &[Kind]) -> Option<Kind> {
        match tok {
            SignatureToken::TypeParameter(i) => type_args.get(*i as usize).copied(),
            t => Kind::of(t),
        }
    }

    /// Width in bits of the value (8 for `bool`).
    pub fn bits(self) -> u32 {
        use Kind::*;
        match self {
            Bool | U8 | I8 => 8,
            U16 | I16 => 16,
            U32 | I32 => 32,
            U64 | I64 => 64,
            U128 | I128 => 128,
            U256 | I256 | Address => 256,
        }
    }

    /// Bytes of the BCS encoding, which is also the in-memory width.
    pub fn bytes(self) -> usize {
        (self.bits() / 8) as usize
    }

    pub fn is_signed(self) -> bool {
        use Kind::*;
        matches!(self, I8 | I16 | I32 | I64 | I128 | I256)
    }

    pub fn is_integer(self) -> bool {
        !matches!(self, Kind::Bool | Kind::Address)
    }

    /// 256-bit kinds (integers and addresses) live in four `i64` limbs.
    pub fn is_wide(self) -> bool {
        matches!(self, Kind::U256 | Kind::I256 | Kind::Address)
    }

    /// The Cranelift type of one limb (the whole value unless wide).
    pub fn ir_type(self) -> Type {
        match self.bits() {
            8 => types::I8,
            16 => types::I16,
            32 => types::I32,
            64 => types::I64,
            128 => types::I128,
            _ => types::I64,
        }
    }

    /// The Cranelift types of the value's parts, in order.
    pub fn lanes(self) -> &'static [Type] {
        const W: [Type; 4] = [types::I64; 4];
        match self.bits() {
            8 => &[types::I8],
            16 => &[types::I16],
            32 => &[types::I32],
            64 => &[types::I64],
            128 => &[types::I128],
            _ => &W,
        }
    }

    /// The largest value, as an unsigned bit pattern (for ≤128-bit kinds).
    pub fn max_bits(self) -> u128 {
        let b = self.bits().min(128);
        let all = if b == 128 { u128::MAX } else { (1u128 << b) - 1 };
        if self == Kind::Bool {
            1
        } else if self.is_signed() {
            all >> 1
        } else {
            all
        }
    }

    /// The smallest value as a bit pattern of the kind's width (0 if unsigned).
    pub fn min_bits(self) -> u128 {
        if self.is_signed() {
            1u128 << (self.bits().min(128) - 1)
        } else {
            0
        }
    }

    /// The number helpers use to name a kind (stable, part of the helper ABI).
    pub fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<Kind> {
        use Kind::*;
        const ALL: [Kind; 14] = [Bool, U8, U16, U32, U64, U128, U256, I8, I16, I32, I64, I128, I256, Address];
        ALL.get(code as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(Kind::U8.max_bits(), 255);
        assert_eq!(Kind::I8.max_bits(), 127);
        assert_eq!(Kind::I8.min_bits(), 0x80);
        assert_eq!(Kind::U128.max_bits(), u128::MAX);
        assert_eq!(Kind::I128.max_bits(), i128::MAX as u128);
        assert_eq!(Kind::I128.min_bits(), 1u128 << 127);
        for c in 0..14 {
            assert_eq!(Kind::from_code(c).map(Kind::code), Some(c));
        }
        assert_eq!(Kind::from_code(14), None);
        assert!(!Kind::Address.is_integer() && Kind::Address.is_wide());
    }
}
