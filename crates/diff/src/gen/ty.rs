//! Scalar types of generated code, their edge constants and BCS encoding.

#![forbid(unsafe_code)]

use crate::rng::Rng;
use ethnum::{I256, U256};

/// An integer type: the runtime's scalar kinds ([`Int::INTEGERS`]); what
/// the generators need of one is [`IntGen`].
pub use movejit_runtime::ScalarKind as Int;

/// The bit widths of Move's integer types.
pub const WIDTHS: [u32; 6] = [8, 16, 32, 64, 128, 256];

/// Shift amounts (`u8`) at and around every width, and the largest.
pub const SHIFT_EDGES: [u8; 21] = [0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 200, 254, 255];

/// A shift amount for a `bits`-wide value: mostly an edge below the
/// width, sometimes any edge (at or past the width: `ARITHMETIC_ERROR`),
/// else any amount below the width.
pub fn shift_amount(rng: &mut Rng, bits: u32) -> u8 {
    match rng.below(8) {
        0 => rng.pick(&SHIFT_EDGES),
        1 | 2 => rng.below(bits as usize) as u8,
        _ => {
            let below: Vec<u8> = SHIFT_EDGES.into_iter().filter(|k| u32::from(*k) < bits).collect();
            rng.pick(&below)
        }
    }
}

/// The generators' view of an integer type.
pub trait IntGen: Sized {
    fn signed(self) -> bool;
    fn name(self) -> &'static str;
    fn since_version(self) -> u32;
    fn available(version: u32, sui: bool) -> Vec<Int>;
    /// `raw`'s low bits read as this type (named before it became a trait method).
    #[allow(clippy::wrong_self_convention)]
    fn from_bits(self, raw: U256) -> I256;
    fn edges(self) -> Vec<I256>;
    fn key_edges(self) -> Vec<I256>;
    fn probes(self) -> Vec<I256>;
    fn edge_at_width(self, rng: &mut Rng, w: u32) -> I256;
    fn edges_with(self, at: impl Fn(u32) -> (&'static [i64], &'static [i64])) -> Vec<I256>;
    fn order_key(self, v: I256) -> U256;
    fn edge_value(self, rng: &mut Rng) -> I256;
    fn contains(self, v: I256) -> bool;
    fn contains_unsigned(self, v: U256) -> bool;
    fn range(self) -> (I256, I256);
    fn text(self, v: I256) -> String;
    fn bcs(self, v: I256) -> Vec<u8>;
}

impl IntGen for Int {
    fn signed(self) -> bool {
        self.is_signed()
    }
    fn name(self) -> &'static str {
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
            Int::Bool => "bool",
            Int::Address => "address",
        }
    }
    /// The bytecode version that has this type (u16/u32/u256: 6, signed: 9).
    fn since_version(self) -> u32 {
        match self {
            Int::U8 | Int::U64 | Int::U128 => 5,
            Int::U16 | Int::U32 | Int::U256 => 6,
            _ => 9,
        }
    }
    /// The types a unit of `version` (and flavour) may use.
    fn available(version: u32, sui: bool) -> Vec<Int> {
        Int::INTEGERS.into_iter().filter(|i| i.since_version() <= version && !(sui && i.signed())).collect()
    }

    /// The value of the low `bits()` bits of `raw` in this type, in the
    /// representation of [`Int::range`] (signed types sign-extend; u256
    /// keeps its bits).
    fn from_bits(self, raw: U256) -> I256 {
        let bits = self.bits();
        let raw = if bits == 256 { raw } else { raw & ((U256::ONE << bits) - 1) };
        if self.signed() && bits < 256 && raw >= (U256::ONE << (bits - 1)) {
            raw.as_i256() - (I256::ONE << bits)
        } else {
            raw.as_i256()
        }
    }

    /// The boundary values of this type, where the bugs live: 0, ±1, ±2,
    /// ±3 and, at every integer width `w` up to this type's, 2^(w-1) and
    /// 2^w + {-2, -1, 0, 1} and their negations, each wrapped to this
    /// type's bits. So a type gets its own MIN, MIN+1, MAX, MAX-1 and the
    /// edges of every narrower type, and an unsigned type the two's
    /// complement bits of the signed edges (u256: i128::MIN as bits). Sorted
    /// and distinct; the one source of the edges the generators and the
    /// boundary table use ([`Int::key_edges`] and [`Int::probes`] are
    /// subsets of it).
    fn edges(self) -> Vec<I256> {
        self.edges_with(|_| (&[-2, -1, 0, 1], &[-2, -1, 0, 1]))
    }

    /// The edges the boundary table runs exhaustively: all of this type's
    /// own width, and 2^(w-1) - {0, 1}, 2^w - {0, 1} (and negations) at
    /// each narrower width (the MAX and MIN of every narrower type and the
    /// first values past them).
    fn key_edges(self) -> Vec<I256> {
        let own = self.bits();
        self.edges_with(move |w| if w == own { (&[-2, -1, 0, 1], &[-2, -1, 0, 1]) } else { (&[-1, 0], &[-1, 0]) })
    }

    /// A few values to pair with every constant: 0..3 and the edges of
    /// this type's own width (MIN, MIN+1, MAX, -1, 2^(bits-1) as bits...).
    fn probes(self) -> Vec<I256> {
        let own = self.bits();
        self.edges_with(move |w| if w == own { (&[-1, 0], &[-1, 0]) } else { (&[], &[]) })
    }

    /// One of the edges at width `w` alone (the MIN and MAX of the `w`-bit
    /// types and their neighbours, in this type): what a cast to a `w`-bit
    /// type must get exactly right.
    fn edge_at_width(self, rng: &mut Rng, w: u32) -> I256 {
        let e = self.edges_with(move |x| if x == w { (&[-2, -1, 0, 1], &[-2, -1, 0, 1]) } else { (&[], &[]) });
        e[rng.below(e.len())]
    }

    /// 0..4, the deltas `at(w)` gives around 2^(w-1) and 2^w at every width
    /// up to this type's, and their negations, wrapped to this type.
    fn edges_with(self, at: impl Fn(u32) -> (&'static [i64], &'static [i64])) -> Vec<I256> {
        let mut cands: Vec<U256> = (0u64..4).map(U256::from).collect();
        for w in WIDTHS.into_iter().filter(|w| *w <= self.bits()) {
            let half = U256::ONE << (w - 1);
            let full = half.wrapping_add(half);
            let (around_half, around_full) = at(w);
            cands.extend(around_half.iter().map(|d| half.wrapping_add(I256::from(*d).as_u256())));
            cands.extend(around_full.iter().map(|d| full.wrapping_add(I256::from(*d).as_u256())));
        }
        let negated: Vec<U256> = cands.iter().map(|c| c.wrapping_neg()).collect();
        cands.extend(negated);
        let mut out: Vec<I256> = cands.into_iter().map(|c| self.from_bits(c)).collect();
        out.sort_unstable_by_key(|v| self.order_key(*v));
        out.dedup();
        out
    }

    /// Sort key of a value in this type's order (u256 values are bits).
    fn order_key(self, v: I256) -> U256 {
        if self == Int::U256 {
            v.as_u256()
        } else {
            (v ^ I256::MIN).as_u256()
        }
    }

    /// An interesting value as signed 256-bit (always in range): mostly one
    /// of [`Int::edges`], else small, 2^k±1 for any k, or any value.
    fn edge_value(self, rng: &mut Rng) -> I256 {
        let bits = self.bits();
        match rng.below(10) {
            0..=5 => {
                let edges = self.edges();
                edges[rng.below(edges.len())]
            }
            6 => self.from_bits(I256::from(rng.below(20) as i64 - 10).as_u256()),
            7 => {
                let p = U256::ONE << rng.below(bits as usize);
                let d = I256::from(rng.below(3) as i64 - 1).as_u256();
                self.from_bits(p.wrapping_add(d))
            }
            _ => {
                let mut raw = U256::ZERO;
                for i in 0..4 {
                    raw |= U256::from(rng.next_u64()) << (64 * i);
                }
                self.from_bits(raw)
            }
        }
    }

    /// Whether the mathematical value `v` is in this type's range (for
    /// u256, `v` is a value, not bits: negative values are out).
    fn contains(self, v: I256) -> bool {
        if v < I256::ZERO {
            let (min, _) = self.range();
            self.signed() && v >= min
        } else {
            self.contains_unsigned(v.as_u256())
        }
    }

    /// Whether the non-negative value `v` is in this type's range.
    fn contains_unsigned(self, v: U256) -> bool {
        let bits = self.bits() - u32::from(self.signed());
        bits == 256 || v < (U256::ONE << bits)
    }

    /// (MIN, MAX) as signed 256-bit; u256's MAX does not fit and is
    /// represented by -1 (all ones), see [`Int::bcs`].
    fn range(self) -> (I256, I256) {
        let bits = self.bits();
        match (self.signed(), bits) {
            (true, 256) => (I256::MIN, I256::MAX),
            (true, b) => (-(I256::ONE << (b - 1)), (I256::ONE << (b - 1)) - 1),
            (false, 256) => (I256::MIN, I256::MAX),
            (false, b) => (I256::ZERO, (I256::ONE << b) - 1),
        }
    }

    /// The value as `.masm` text (u256 values are the two's complement bits).
    fn text(self, v: I256) -> String {
        if self == Int::U256 {
            v.as_u256().to_string()
        } else {
            v.to_string()
        }
    }

    /// BCS (little-endian, width bytes).
    fn bcs(self, v: I256) -> Vec<u8> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> I256 {
        U256::from_str_radix(s, 10).expect("number").as_i256()
    }

    #[test]
    fn edges_are_in_range_and_cover_narrower_types() {
        for t in Int::INTEGERS {
            let e = t.edges();
            let (min, max) = t.range();
            assert!(e.iter().all(|v| *v >= min && *v <= max), "{t:?}");
            assert!(e.contains(&min) && e.contains(&max) && e.contains(&I256::ZERO), "{t:?}");
            let mut sorted = e.clone();
            sorted.dedup();
            assert_eq!(sorted.len(), e.len(), "{t:?} has duplicates");
        }
        let u8s: Vec<i64> = Int::U8.edges().iter().map(|v| v.as_i64()).collect();
        assert_eq!(u8s, [0, 1, 2, 3, 126, 127, 128, 129, 130, 253, 254, 255]);
        let i8s: Vec<i64> = Int::I8.edges().iter().map(|v| v.as_i64()).collect();
        assert_eq!(i8s, [-128, -127, -126, -3, -2, -1, 0, 1, 2, 3, 126, 127]);
        let u256 = Int::U256.edges();
        // 2^127, 2^128 - 1, u64::MAX + 1, i128::MIN as bits, u256::MAX - 1, 2^255.
        for want in [
            u("170141183460469231731687303715884105728"),
            u("340282366920938463463374607431768211455"),
            u("18446744073709551616"),
            -(I256::ONE << 127u32),
            I256::from(-2),
            I256::MIN,
        ] {
            assert!(u256.contains(&want), "u256 edges lack {}", Int::U256.text(want));
        }
        let i256 = Int::I256.edges();
        for want in
            [I256::ONE << 127, (I256::ONE << 128u32) - 1, -(I256::ONE << 127u32) - 1, I256::MIN + 1, I256::MAX - 1]
        {
            assert!(i256.contains(&want), "i256 edges lack {want}");
        }
    }

    #[test]
    fn table_sets_are_nested_and_keep_the_f1_values() {
        for t in Int::INTEGERS {
            let (e, k, p) = (t.edges(), t.key_edges(), t.probes());
            assert!(k.iter().all(|v| e.contains(v)) && p.iter().all(|v| k.contains(v)), "{t:?}");
        }
        let k = Int::I256.key_edges();
        for want in [I256::ONE << 127u32, (I256::ONE << 128u32) - 1, I256::ONE << 128u32, -(I256::ONE << 127u32)] {
            assert!(k.contains(&want), "i256 key edges lack {want}");
        }
    }

    #[test]
    fn shift_edges_straddle_every_width() {
        for w in WIDTHS {
            for k in [w - 1, w, w + 1].into_iter().filter(|k| *k < 256) {
                assert!(SHIFT_EDGES.contains(&(k as u8)), "{k}");
            }
        }
    }
}
