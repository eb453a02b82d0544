//! The runtime's helper table (`movejit_runtime::helpers`) as the code
//! generator sees it: each entry's Cranelift signature is generated from the
//! table's parameter and result kinds, and compiled code imports the entry's
//! `extern "C"` shim under a symbol of its own. Helpers are named by their
//! typed index ([`HelperId`]), never by string.
//!
//! Every helper takes the [`ExecContext`](movejit_runtime::flat::ExecContext)
//! first; a status result is `status::OK` to continue or `status::FAILED`
//! when the helper recorded its error (status, sub-status, message) in the
//! context, and the calling site then records the location.

#![forbid(unsafe_code)]

use cranelift_codegen::ir::{types, AbiParam, Signature, Type};
use cranelift_codegen::isa::CallConv;
use movejit_runtime::helpers::Kind;
pub use movejit_runtime::helpers::{status, GasAccess, HelperId};

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

/// The symbol compiled code imports `h` under.
pub fn symbol(h: HelperId) -> String {
    format!("movejit_rt_{}", h.entry().name)
}

/// The Cranelift signature of `h` under the host's C calling convention.
pub fn signature(h: HelperId, call_conv: CallConv, ptr: Type) -> Signature {
    let ir = |k: Kind| match k {
        Kind::Ptr => ptr,
        Kind::U8 => types::I8,
        Kind::U64 => types::I64,
        Kind::Status => types::I32,
    };
    let e = h.entry();
    let mut sig = Signature::new(call_conv);
    sig.params.extend(e.params.iter().map(|k| AbiParam::new(ir(*k))));
    sig.returns.push(AbiParam::new(ir(e.result)));
    sig
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_the_table() {
        let sig = signature(HelperId::vec_len(), CallConv::SystemV, types::I64);
        assert_eq!(sig.params.len(), 2);
        assert_eq!(sig.returns[0].value_type, types::I64);
        let sig = signature(HelperId::int_binop(), CallConv::SystemV, types::I64);
        assert_eq!(
            sig.params.iter().map(|p| p.value_type).collect::<Vec<_>>(),
            [types::I64, types::I64, types::I64, types::I64, types::I8]
        );
        assert_eq!(sig.returns[0].value_type, types::I32);
        assert_eq!(symbol(HelperId::global_exists()), "movejit_rt_global_exists");
    }
}
