//! Scalar kinds: the one table of Move's primitive value types that fit a
//! register (booleans, the twelve integers, addresses). The interpreter's
//! arithmetic, the JIT's registers and the helpers' operand codes all name a
//! scalar by this enum; its discriminant is the code helpers receive.

use crate::types::Type;
use movejit_format::{Bytecode, SignatureToken};

/// A scalar Move type. The discriminant is the kind's code in the helper ABI
/// (`flat::shims::kind`), stable and below 16 (it fits a nibble).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ScalarKind {
    Bool = 0,
    U8 = 1,
    U16 = 2,
    U32 = 3,
    U64 = 4,
    U128 = 5,
    U256 = 6,
    I8 = 7,
    I16 = 8,
    I32 = 9,
    I64 = 10,
    I128 = 11,
    I256 = 12,
    /// A 32-byte account address (compared only for equality).
    Address = 13,
}

impl ScalarKind {
    /// Every kind, in code order.
    pub const ALL: [ScalarKind; 14] = {
        use ScalarKind::*;
        [Bool, U8, U16, U32, U64, U128, U256, I8, I16, I32, I64, I128, I256, Address]
    };

    /// The twelve integer kinds, unsigned first.
    pub const INTEGERS: [ScalarKind; 12] = {
        use ScalarKind::*;
        [U8, U16, U32, U64, U128, U256, I8, I16, I32, I64, I128, I256]
    };

    /// The kind a (fully instantiated) signature token names, if a scalar.
    pub fn of_token(tok: &SignatureToken) -> Option<ScalarKind> {
        use SignatureToken as S;
        Some(match tok {
            S::Bool => ScalarKind::Bool,
            S::U8 => ScalarKind::U8,
            S::U16 => ScalarKind::U16,
            S::U32 => ScalarKind::U32,
            S::U64 => ScalarKind::U64,
            S::U128 => ScalarKind::U128,
            S::U256 => ScalarKind::U256,
            S::I8 => ScalarKind::I8,
            S::I16 => ScalarKind::I16,
            S::I32 => ScalarKind::I32,
            S::I64 => ScalarKind::I64,
            S::I128 => ScalarKind::I128,
            S::I256 => ScalarKind::I256,
            S::Address => ScalarKind::Address,
            _ => return None,
        })
    }

    /// The target kind of a cast instruction (`None` for any other).
    pub fn cast_target(instr: &Bytecode) -> Option<ScalarKind> {
        use Bytecode as B;
        Some(match instr {
            B::CastU8 => ScalarKind::U8,
            B::CastU16 => ScalarKind::U16,
            B::CastU32 => ScalarKind::U32,
            B::CastU64 => ScalarKind::U64,
            B::CastU128 => ScalarKind::U128,
            B::CastU256 => ScalarKind::U256,
            B::CastI8 => ScalarKind::I8,
            B::CastI16 => ScalarKind::I16,
            B::CastI32 => ScalarKind::I32,
            B::CastI64 => ScalarKind::I64,
            B::CastI128 => ScalarKind::I128,
            B::CastI256 => ScalarKind::I256,
            _ => return None,
        })
    }

    /// The kind of a runtime type, if a scalar.
    pub fn of_type(t: &Type) -> Option<ScalarKind> {
        Self::ALL.into_iter().find(|k| k.to_type() == *t)
    }

    /// The kind of an integer runtime type (`None` for every other type).
    pub fn integer_of(t: &Type) -> Option<ScalarKind> {
        Self::of_type(t).filter(|k| k.is_integer())
    }

    /// The runtime type of this kind.
    pub fn to_type(self) -> Type {
        use ScalarKind as K;
        match self {
            K::Bool => Type::Bool,
            K::U8 => Type::U8,
            K::U16 => Type::U16,
            K::U32 => Type::U32,
            K::U64 => Type::U64,
            K::U128 => Type::U128,
            K::U256 => Type::U256,
            K::I8 => Type::I8,
            K::I16 => Type::I16,
            K::I32 => Type::I32,
            K::I64 => Type::I64,
            K::I128 => Type::I128,
            K::I256 => Type::I256,
            K::Address => Type::Address,
        }
    }

    /// Width in bits of the value (8 for `bool`).
    pub const fn bits(self) -> u32 {
        use ScalarKind::*;
        match self {
            Bool | U8 | I8 => 8,
            U16 | I16 => 16,
            U32 | I32 => 32,
            U64 | I64 => 64,
            U128 | I128 => 128,
            U256 | I256 | Address => 256,
        }
    }

    /// Bytes of the BCS encoding, which is also the flat, in-memory width.
    pub const fn bytes(self) -> usize {
        (self.bits() / 8) as usize
    }

    pub const fn is_signed(self) -> bool {
        use ScalarKind::*;
        matches!(self, I8 | I16 | I32 | I64 | I128 | I256)
    }

    pub const fn is_integer(self) -> bool {
        !matches!(self, ScalarKind::Bool | ScalarKind::Address)
    }

    /// 256-bit kinds (integers and addresses).
    pub const fn is_wide(self) -> bool {
        matches!(self, ScalarKind::U256 | ScalarKind::I256 | ScalarKind::Address)
    }

    /// The largest value, as an unsigned bit pattern (for ≤128-bit kinds).
    pub const fn max_bits(self) -> u128 {
        let b = if self.bits() < 128 { self.bits() } else { 128 };
        let all = if b == 128 { u128::MAX } else { (1u128 << b) - 1 };
        if matches!(self, ScalarKind::Bool) {
            1
        } else if self.is_signed() {
            all >> 1
        } else {
            all
        }
    }

    /// The smallest value as a bit pattern of the kind's width (0 if unsigned).
    pub const fn min_bits(self) -> u128 {
        if self.is_signed() {
            let b = if self.bits() < 128 { self.bits() } else { 128 };
            1u128 << (b - 1)
        } else {
            0
        }
    }

    /// The number helpers name the kind by (part of the helper ABI).
    pub const fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<ScalarKind> {
        Self::ALL.get(code as usize).copied()
    }

    /// The integer kind of a helper code (`None` for bool, address, or a
    /// code that names no kind).
    pub fn integer_from_code(code: u8) -> Option<ScalarKind> {
        Self::from_code(code).filter(|k| k.is_integer())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let cases: &[(ScalarKind, u128, u128)] = &[
            (ScalarKind::Bool, 1, 0),
            (ScalarKind::U8, 255, 0),
            (ScalarKind::I8, 127, 0x80),
            (ScalarKind::U128, u128::MAX, 0),
            (ScalarKind::I128, i128::MAX as u128, 1 << 127),
        ];
        for &(k, max, min) in cases {
            assert_eq!((k.max_bits(), k.min_bits()), (max, min), "{k:?}");
        }
        assert!(!ScalarKind::Address.is_integer() && ScalarKind::Address.is_wide());
    }

    #[test]
    fn codes_and_types_round_trip() {
        for (c, k) in ScalarKind::ALL.into_iter().enumerate() {
            assert_eq!(k.code() as usize, c);
            assert_eq!(ScalarKind::from_code(k.code()), Some(k));
            assert_eq!(ScalarKind::of_type(&k.to_type()), Some(k));
            assert_eq!(ScalarKind::integer_of(&k.to_type()).is_some(), k.is_integer());
        }
        assert_eq!(ScalarKind::from_code(14), None);
        assert_eq!(ScalarKind::of_type(&Type::Signer), None);
        assert_eq!(ScalarKind::INTEGERS.len(), ScalarKind::ALL.iter().filter(|k| k.is_integer()).count());
    }
}
