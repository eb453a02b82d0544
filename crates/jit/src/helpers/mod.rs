//! Host helpers compiled code calls for what Cranelift cannot do inline:
//! 128-bit multiplication, division and remainder, and every 256-bit
//! operation, plus casts that involve 256-bit values.
//!
//! Boundary: this module holds the `extern "C"` shims for the integer
//! entries of the runtime's helper table (`runtime/src/helpers.rs`:
//! `int_binop`, `int_cmp`, `int_shift`, `int_cast`; negation, which that
//! table has no entry for yet, is `int_negate`). Each wraps the
//! `runtime::arith` function the interpreter calls. Operands go by pointer
//! to the flat layout of jit-abi.md 1.3 (little-endian, the kind's width) in
//! the compiled code's own stack slots; the result is a status word
//! ([`HELPER_OK`], [`HELPER_ARITHMETIC`], [`HELPER_INTERNAL`]) and the call
//! site records the error and its location. The signatures here differ from
//! the sketch in the runtime's table (no context argument, explicit
//! operation and kind codes); they move behind that table once it fixes
//! them; nothing else in the crate depends on where the shims live.



mod wide;

use cranelift_codegen::ir::{types, AbiParam, Signature};
use cranelift_codegen::isa::CallConv;

pub use wide::{int_binop, int_cast, int_cmp, int_negate, int_shift};

pub const HELPER_OK: u32 = 0;
pub const HELPER_ARITHMETIC: u32 = 1;
pub const HELPER_INTERNAL: u32 = 2;

/// Binary operations of [`wide_binop`].
pub mod op {
    pub const ADD: u32 = 0;
    pub const SUB: u32 = 1;
    pub const MUL: u32 = 2;
    pub const DIV: u32 = 3;
    pub const MOD: u32 = 4;
    pub const SHL: u32 = 0;
    pub const SHR: u32 = 1;
}

/// The helpers, as compiled code names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Helper {
    /// `(op, kind, a*, b*, out*) -> status`
    WideBinop,
    /// `(op, kind, a*, amount, out*) -> status`
    WideShift,
    /// `(kind, a*, b*) -> 0 less | 1 equal | 2 greater` (3: bad kind)
    WideCmp,
    /// `(kind, a*, out*) -> status`
    WideNeg,
    /// `(src_kind, dst_kind, a*, out*) -> status`
    Cast,
}

#[derive(Clone, Copy)]
enum Arg {
    U32,
    Ptr,
}

impl Helper {
    pub const ALL: [Helper; 5] =
        [Helper::WideBinop, Helper::WideShift, Helper::WideCmp, Helper::WideNeg, Helper::Cast];

    /// The symbol the JIT module imports it under.
    pub fn symbol(self) -> &'static str {
        match self {
            Helper::WideBinop => "int_binop",
            Helper::WideShift => "int_shift",
            Helper::WideCmp => "int_cmp",
            Helper::WideNeg => "int_negate",
            Helper::Cast => "int_cast",
        }
    }

    /// The host address of the function.
    pub fn address(self) -> *const u8 {
        match self {
            Helper::WideBinop => int_binop as *const u8,
            Helper::WideShift => int_shift as *const u8,
            Helper::WideCmp => int_cmp as *const u8,
            Helper::WideNeg => int_negate as *const u8,
            Helper::Cast => int_cast as *const u8,
        }
    }

    fn params(self) -> &'static [Arg] {
        use Arg::*;
        match self {
            Helper::WideBinop => &[U32, U32, Ptr, Ptr, Ptr],
            Helper::WideShift => &[U32, U32, Ptr, U32, Ptr],
            Helper::WideCmp => &[U32, Ptr, Ptr],
            Helper::WideNeg => &[U32, Ptr, Ptr],
            Helper::Cast => &[U32, U32, Ptr, Ptr],
        }
    }

    /// The Cranelift signature under the host's C calling convention.
    pub fn signature(self, call_conv: CallConv, ptr: types::Type) -> Signature {
        let mut sig = Signature::new(call_conv);
        for a in self.params() {
            sig.params.push(AbiParam::new(match a {
                Arg::U32 => types::I32,
                Arg::Ptr => ptr,
            }));
        }
        sig.returns.push(AbiParam::new(types::I32));
        sig
    }
}
