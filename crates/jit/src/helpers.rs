//! The runtime's helper table (`movejit_runtime::helpers::HELPERS`) as the
//! code generator sees it: each entry's Cranelift signature is generated
//! from the table's parameter and result kinds, and compiled code imports
//! the entry's `extern "C"` shim under a symbol of its own.
//!
//! Every helper takes the [`ExecContext`](movejit_runtime::flat::ExecContext)
//! first; a `Status` result is 0 to continue or 1 when the helper recorded
//! its error (status, sub-status) in the context, and the calling site then
//! records the location.

#![forbid(unsafe_code)]

use cranelift_codegen::ir::{types, AbiParam, Signature, Type};
use cranelift_codegen::isa::CallConv;
use movejit_runtime::helpers::{Kind as HKind, HELPERS};

/// One helper: its index in `HELPERS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Helper(usize);

/// Operation codes of the integer shims (`code = kind | op << 4`).
pub mod op {
    pub const ADD: u8 = 0;
    pub const SUB: u8 = 1;
    pub const MUL: u8 = 2;
    pub const DIV: u8 = 3;
    pub const MOD: u8 = 4;
    pub const LT: u8 = 0;
    pub const GT: u8 = 1;
    pub const LE: u8 = 2;
    pub const GE: u8 = 3;
    pub const SHL: u8 = 0;
    pub const SHR: u8 = 1;
}

impl Helper {
    /// The entry named `name`, if the table has it with a shim.
    pub fn named(name: &str) -> Option<Helper> {
        HELPERS.iter().position(|h| h.name == name && h.shim.is_some()).map(Helper)
    }

    /// Every entry that has an implementation.
    pub fn all() -> impl Iterator<Item = Helper> {
        HELPERS.iter().enumerate().filter(|(_, h)| h.shim.is_some()).map(|(i, _)| Helper(i))
    }

    pub fn name(self) -> &'static str {
        HELPERS[self.0].name
    }

    /// The symbol compiled code imports it under.
    pub fn symbol(self) -> String {
        format!("movejit_rt_{}", self.name())
    }

    /// The host address of the shim (entries without one are never
    /// constructed: see [`Helper::named`]).
    pub fn address(self) -> *const u8 {
        HELPERS[self.0].shim.unwrap_or(std::ptr::null())
    }

    /// The Cranelift signature under the host's C calling convention.
    pub fn signature(self, call_conv: CallConv, ptr: Type) -> Signature {
        let ir = |k: HKind| match k {
            HKind::Ptr => ptr,
            HKind::U8 => types::I8,
            HKind::U64 => types::I64,
            HKind::Status => types::I32,
        };
        let h = &HELPERS[self.0];
        let mut sig = Signature::new(call_conv);
        sig.params.extend(h.params.iter().map(|k| AbiParam::new(ir(*k))));
        sig.returns.push(AbiParam::new(ir(h.result)));
        sig
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_helpers_are_in_the_table() {
        for n in [
            "int_binop",
            "int_cmp",
            "int_shift",
            "int_cast",
            "int_negate",
            "vec_pack",
            "value_copy",
            "value_drop",
            "value_eq",
        ] {
            let h = Helper::named(n).unwrap_or_else(|| panic!("{n}"));
            assert_eq!(h.name(), n);
            assert!(!h.address().is_null());
        }
        assert!(Helper::named("call_native").is_some());
        for n in ["global_exists", "global_borrow", "global_move_from", "global_move_to"] {
            assert!(Helper::named(n).is_some(), "{n}");
        }
    }
}
