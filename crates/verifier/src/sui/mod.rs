//! Sui's package rules on top of Move's verifier: what `sui-verifier`
//! (`sui-execution/latest/sui-verifier`) checks when a package is published,
//! in its order: key structs start with `id: sui::object::UID` and no enum
//! has `key`; no global storage instructions; every object is packed with a
//! freshly made UID (id leak); "internal" type parameters of framework
//! functions (`transfer::transfer`, `event::emit`, ...) are instantiated with
//! the caller's own types (private generics, v2 as of protocol 100); `init`
//! and entry-function signatures; the one-time witness.
//!
//! Sui reports every failure here as `SuiMoveVerificationError` (an
//! execution failure outside Move's status space); it maps to
//! UNKNOWN_VERIFICATION_ERROR, the message naming the rule. A blown work
//! budget keeps the configured meter status (Sui: `SuiMoveVerificationTimedout`
//! for PROGRAM_TOO_COMPLEX). Rules for test-only code (`#[test]` functions
//! may call `init` or pack a one-time witness) do not apply: on chain no
//! function is a test function.
//!
//! Also here: modules carry no metadata (Sui's compilers emit none).

mod entry_points;
mod global_storage;
mod id_leak;
mod one_time_witness;
mod private_generics;
mod struct_with_key;

use crate::{
    config::VerifierConfig,
    error::{VerifyError, VerifyResult},
    meter::Meter,
};
use movejit_format::{
    AccountAddress, CompiledModule, FunctionHandle, SignatureToken as ST, StatusCode, StructHandleIndex,
};

pub(crate) fn verify_module(m: &CompiledModule, config: &VerifierConfig) -> VerifyResult {
    if !m.metadata.is_empty() {
        return Err(failure("modules carry no metadata"));
    }
    struct_with_key::verify_module(m)?;
    global_storage::verify_module(m)?;
    id_leak::verify_module(m, &mut Meter::new(config))?;
    private_generics::verify_module(m)?;
    entry_points::verify_module(m)?;
    one_time_witness::verify_module(m)
}

pub(super) const STD: u64 = 0x1;
pub(super) const SUI: u64 = 0x2;
pub(super) const SUI_SYSTEM: u64 = 0x3;
pub(super) const BRIDGE: u64 = 0xb;

/// A fully qualified name `(address, module, member)`.
pub(super) type QualifiedName<'a> = (AccountAddress, &'a str, &'a str);

pub(super) fn is(name: QualifiedName<'_>, addr: u64, module: &str, member: &str) -> bool {
    name.0 == AccountAddress::from_u64(addr) && name.1 == module && name.2 == member
}

/// The declaring module and name of a datatype handle.
pub(super) fn datatype_name(m: &CompiledModule, h: StructHandleIndex) -> QualifiedName<'_> {
    let sh = m.struct_handle_at(h);
    let mh = m.module_handle_at(sh.module);
    (*m.address_identifier_at(mh.address), m.identifier_at(mh.name), m.identifier_at(sh.name))
}

pub(super) fn function_name<'a>(m: &'a CompiledModule, fh: &FunctionHandle) -> QualifiedName<'a> {
    let mh = m.module_handle_at(fh.module);
    (*m.address_identifier_at(mh.address), m.identifier_at(mh.name), m.identifier_at(fh.name))
}

/// The module's own address and name.
pub(super) fn self_name(m: &CompiledModule) -> (AccountAddress, &str) {
    (*m.address(), m.name())
}

/// Whether `ty` is the non-generic datatype `addr::module::name`.
pub(super) fn is_datatype(m: &CompiledModule, ty: &ST, addr: u64, module: &str, name: &str) -> bool {
    matches!(ty, ST::Struct(h) if is(datatype_name(m, *h), addr, module, name))
}

/// `&TxContext` or `&mut TxContext`.
pub(super) fn is_tx_context(m: &CompiledModule, ty: &ST) -> bool {
    matches!(ty, ST::Reference(inner) | ST::MutableReference(inner) if is_datatype(m, inner, SUI, "tx_context", "TxContext"))
}

/// A datatype declared in this module (what an "internal" type argument
/// must be).
pub(super) fn is_defined_here(m: &CompiledModule, ty: &ST) -> bool {
    match ty {
        ST::Struct(h) | ST::StructInstantiation(h, _) => m.struct_handle_at(*h).module == m.self_module_handle_idx,
        _ => false,
    }
}

pub(super) fn failure(msg: impl std::fmt::Display) -> VerifyError {
    VerifyError::module(StatusCode::UNKNOWN_VERIFICATION_ERROR).with_message(format!("SuiMoveVerificationError: {msg}"))
}

pub(super) fn failure_in(function: u16, msg: impl std::fmt::Display) -> VerifyError {
    VerifyError::at_function(StatusCode::UNKNOWN_VERIFICATION_ERROR, function)
        .with_message(format!("SuiMoveVerificationError: {msg}"))
}
