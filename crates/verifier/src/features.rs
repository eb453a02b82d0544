//! Flavour and version gating: each instruction must exist in the module's
//! flavour at its bytecode version, and flavour-specific tables must be
//! empty in the other flavour. (The decoder enforces the same for bytes;
//! this keeps hand-built or mutated models honest.)

use crate::{
    config::VerifierConfig,
    error::{VerifyError, VerifyResult},
};
use movejit_format::{CompiledModule, Flavour, SignatureToken as ST, StatusCode};

pub(crate) fn verify_module(m: &CompiledModule, _config: &VerifierConfig) -> VerifyResult {
    let sui = m.flavour == Flavour::Sui;
    let aptos_tables = !(m.struct_variant_handles.is_empty()
        && m.struct_variant_instantiations.is_empty()
        && m.variant_field_handles.is_empty()
        && m.variant_field_instantiations.is_empty());
    let sui_tables = !(m.enum_defs.is_empty()
        && m.enum_def_instantiations.is_empty()
        && m.variant_handles.is_empty()
        && m.variant_instantiation_handles.is_empty());
    if (sui && aptos_tables) || (!sui && sui_tables) {
        return Err(VerifyError::module(StatusCode::MALFORMED).with_message("table of the other flavour"));
    }
    for (fi, f) in m.function_defs.iter().enumerate() {
        let Some(code) = &f.code else { continue };
        if !sui && !code.jump_tables.is_empty() {
            return Err(VerifyError::at_function(StatusCode::MALFORMED, fi as u16));
        }
        for (off, instr) in code.code.iter().enumerate() {
            let op = instr.opcode();
            if op.byte(m.flavour).is_none() || op.since_version() > m.version {
                return Err(VerifyError::at_code(StatusCode::UNKNOWN_OPCODE, fi as u16, off as u16));
            }
        }
    }
    // Signed integers (Aptos v9) and function types (Aptos v8) do not exist elsewhere.
    let allowed = |t: &ST| match t {
        ST::I8 | ST::I16 | ST::I32 | ST::I64 | ST::I128 | ST::I256 => !sui && m.version >= 9,
        ST::Function(..) => !sui && m.version >= 8,
        _ => true,
    };
    let bad = m
        .signatures
        .iter()
        .flat_map(|s| s.0.iter())
        .chain(m.constant_pool.iter().map(|c| &c.type_))
        .any(|t| t.preorder().into_iter().any(|t| !allowed(t)));
    if bad {
        return Err(VerifyError::module(StatusCode::MALFORMED).with_message("type not in this flavour/version"));
    }
    Ok(())
}
