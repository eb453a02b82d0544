//! Scalar types of generated code, their edge constants and BCS encoding.

#![forbid(unsafe_code)]

use crate::rng::Rng;
use ethnum::{I256, U256};

/// An integer type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Int {
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
}

impl Int {
    pub const ALL: [Int; 12] =
        [Int::U8, Int::U16, Int::U32, Int::U64, Int::U128, Int::U256, Int::I8, Int::I16, Int::I32, Int::I64, Int::I128, Int::I256];

    pub fn bits(self) -> u32 {
        match self {
            Int::U8 | Int::I8 => 8,
            Int::U16 | Int::I16 => 16,
            Int::U32 | Int::I32 => 32,
            Int::U64 | Int::I64 => 64,
            Int::U128 | Int::I128 => 128,
            Int::U256 | Int::I256 => 256,
        }
    }
    pub fn signed(self) -> bool {
        matches!(self, Int::I8 | Int::I16 | Int::I32 | Int::I64 | Int::I128 | Int::I256)
    }
    pub fn name(self) -> &'static str {
        match self {
            Int::U8 => "u8",
            Int::U16 => "u16",
            Int::U32 => "u32",
            Int::U64 => "u64",
            Int::U128 => "u128",
            Int::U256 => "u256",
            Int::I8 => "i8",
            Int::I16 => "i16",
            Int::I32 => "i32",
            Int::I64 => "i64",
            Int::I128 => "i128",
            Int::I256 => "i256",
        }
    }
    /// The bytecode version that has this type (u16/u32/u256: 6, signed: 9).
    pub fn since_version(self) -> u32 {
        match self {
            Int::U8 | Int::U64 | Int::U128 => 5,
            Int::U16 | Int::U32 | Int::U256 => 6,
            _ => 9,
        }
    }
    /// The types a unit of `version` (and flavour) may use.
    pub fn available(version: u32, sui: bool) -> Vec<Int> {
        Int::ALL.into_iter().filter(|i| i.since_version() <= version && !(sui && i.signed())).collect()
    }

    /// An interesting value as signed 256-bit (always in range): 0, 1, -1,
    /// MIN, MAX, 2^k±1, small, or any.
    pub fn edge_value(self, rng: &mut Rng) -> I256 {
        let bits = self.bits();
        let (min, max) = self.range();
        let v = match rng.below(10) {
            0 => I256::ZERO,
            1 => I256::ONE,
            2 if self == Int::U256 => I256::MINUS_ONE,
            3 if self == Int::U256 => I256::ZERO,
            2 => max,
            3 => min,
            4 | 5 => {
                let k = rng.below(bits as usize - usize::from(self.signed())) as u32;
                let p = I256::ONE << k;
                match rng.below(3) {
                    0 => p,
                    1 => p.wrapping_sub(I256::ONE),
                    _ => p.wrapping_add(I256::ONE),
                }
            }
            6 | 7 => I256::from(rng.below(20) as i64),
            8 if self.signed() => -I256::from(rng.below(20) as i64 + 1),
            _ => {
                let mut raw = U256::ZERO;
                for i in 0..4 {
                    raw |= U256::from(rng.next_u64()) << (64 * i);
                }
                let raw = if bits == 256 { raw } else { raw & ((U256::ONE << bits) - 1) };
                if self.signed() && bits < 256 && raw >= (U256::ONE << (bits - 1)) {
                    raw.as_i256() - (I256::ONE << bits)
                } else {
                    raw.as_i256()
                }
            }
        };
        if v < min || v > max {
            I256::ZERO
        } else {
            v
        }
    }

    /// (MIN, MAX) as signed 256-bit; u256's MAX does not fit and is
    /// represented by -1 (all ones), see [`Int::bcs`].
    pub fn range(self) -> (I256, I256) {
        let bits = self.bits();
        match (self.signed(), bits) {
            (true, 256) => (I256::MIN, I256::MAX),
            (true, b) => (-(I256::ONE << (b - 1)), (I256::ONE << (b - 1)) - 1),
            (false, 256) => (I256::MIN, I256::MAX),
            (false, b) => (I256::ZERO, (I256::ONE << b) - 1),
        }
    }

    /// The value as `.masm` text (u256 values are the two's complement bits).
    pub fn text(self, v: I256) -> String {
        if self == Int::U256 {
            v.as_u256().to_string()
        } else {
            v.to_string()
        }
    }

    /// BCS (little-endian, width bytes).
    pub fn bcs(self, v: I256) -> Vec<u8> {
        v.to_le_bytes()[..(self.bits() / 8) as usize].to_vec()
    }
}

/// A scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sc {
    Bool,
    Int(Int),
}

impl Sc {
    pub fn name(self) -> &'static str {
        match self {
            Sc::Bool => "bool",
            Sc::Int(i) => i.name(),
        }
    }
    /// A random value's BCS.
    pub fn random_bcs(self, rng: &mut Rng) -> Vec<u8> {
        match self {
            Sc::Bool => vec![rng.below(2) as u8],
            Sc::Int(i) => i.bcs(i.edge_value(rng)),
        }
    }
}
