//! How each scalar kind the JIT keeps in registers is represented in
//! Cranelift IR. The kinds themselves are the runtime's [`ScalarKind`]
//! table (re-exported here as `Kind`).
//!
//! Booleans and integers up to 128 bits are one SSA value of their natural
//! width (`bool` is an `i8` holding 0 or 1). 256-bit integers and addresses
//! are four `i64` limbs, least significant first; they go to memory only to
//! meet a helper.

#![forbid(unsafe_code)]

use cranelift_codegen::ir::{types, Type};
pub use movejit_runtime::ScalarKind as Kind;

/// The Cranelift representation of a scalar kind.
pub trait KindIr {
    /// The Cranelift type of one limb (the whole value unless wide).
    fn ir_type(self) -> Type;
    /// The Cranelift types of the value's parts, in order.
    fn lanes(self) -> &'static [Type];
}

impl KindIr for Kind {
    fn ir_type(self) -> Type {
        self.lanes()[0]
    }

    fn lanes(self) -> &'static [Type] {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes() {
        let cases: &[(Kind, &[Type])] = &[
            (Kind::Bool, &[types::I8]),
            (Kind::I16, &[types::I16]),
            (Kind::U64, &[types::I64]),
            (Kind::I128, &[types::I128]),
            (Kind::U256, &[types::I64; 4]),
            (Kind::Address, &[types::I64; 4]),
        ];
        for &(k, lanes) in cases {
            assert_eq!((k.lanes(), k.ir_type()), (lanes, lanes[0]), "{k:?}");
        }
    }
}
