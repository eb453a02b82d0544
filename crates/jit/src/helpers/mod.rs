//! Host helpers compiled code calls for what Cranelift cannot do inline:
//! 128-bit multiplication, division and remainder, and every 256-bit
//! operation, plus casts that involve 256-bit values.
//!
//! Boundary: this module is the JIT's phase-1 helper table. Its functions
//! are `extern "C"`, take wide operands by pointer to little-endian bytes of
//! the value's width (the compiled code's own stack slots) and return a
//! small status number ([`HELPER_OK`], [`HELPER_ARITHMETIC`],
//! [`HELPER_INTERNAL`]). They are meant to move behind the runtime's single
//! helper table once it exists; nothing else in the crate depends on where
//! they live, only on [`Helper`]'s names and signatures.



mod wide;

use cranelift_codegen::ir::{types, AbiParam, Signature};
use cranelift_codegen::isa::CallConv;

pub use wide::{cast, wide_binop, wide_cmp, wide_neg, wide_shift};

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
            Helper::WideBinop => "movejit_wide_binop",
            Helper::WideShift => "movejit_wide_shift",
            Helper::WideCmp => "movejit_wide_cmp",
            Helper::WideNeg => "movejit_wide_neg",
            Helper::Cast => "movejit_cast",
        }
    }

    /// The host address of the function.
    pub fn address(self) -> *const u8 {
        match self {
            Helper::WideBinop => wide_binop as *const u8,
            Helper::WideShift => wide_shift as *const u8,
            Helper::WideCmp => wide_cmp as *const u8,
            Helper::WideNeg => wide_neg as *const u8,
            Helper::Cast => cast as *const u8,
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
