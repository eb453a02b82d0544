//! Sui package rules on top of Move's verifier (part of what `sui-verifier`
//! adds when a package is published): no global storage instructions, no
//! metadata, entry functions return only droppable values, and a module
//! initializer `init` is private, non-entry, non-generic, returns nothing
//! and takes an optional one-time witness then `&TxContext`/`&mut TxContext`.
//! (Not yet: entry parameter kinds, object/UID, id-leak and private-generics
//! rules.)
//! Sui reports these outside Move's status space; they map here to
//! UNKNOWN_VERIFICATION_ERROR with a message saying which rule failed.

use crate::{error::{VerifyError, VerifyResult}, types::abilities};
use movejit_format::{Bytecode, CompiledModule, StatusCode};

pub(crate) fn verify_module(m: &CompiledModule) -> VerifyResult {
    let fail = |msg: &str| VerifyError::module(StatusCode::UNKNOWN_VERIFICATION_ERROR).with_message(msg.to_string());
    if !m.metadata.is_empty() {
        return Err(fail("sui: modules carry no metadata"));
    }
    for (fi, f) in m.function_defs.iter().enumerate() {
        if let Some(code) = &f.code {
            for (off, instr) in code.code.iter().enumerate() {
                use Bytecode::*;
                if matches!(
                    instr,
                    MoveFrom(_) | MoveFromGeneric(_) | MoveTo(_) | MoveToGeneric(_) | ImmBorrowGlobal(_)
                        | ImmBorrowGlobalGeneric(_) | MutBorrowGlobal(_) | MutBorrowGlobalGeneric(_) | Exists(_)
                        | ExistsGeneric(_)
                ) {
                    return Err(VerifyError::at_code(StatusCode::UNKNOWN_VERIFICATION_ERROR, fi as u16, off as u16)
                        .with_message("sui: global storage instructions are not allowed"));
                }
            }
        }
        let fh = &m.function_handles[f.function.idx()];
        if m.identifiers[fh.name.idx()] == "init" {
            check_init(m, f).map_err(|msg| VerifyError::at_function(StatusCode::UNKNOWN_VERIFICATION_ERROR, fi as u16).with_message(msg))?;
        }
        if f.is_entry {
            let fh = &m.function_handles[f.function.idx()];
            for t in &m.signatures[fh.return_.idx()].0 {
                if !abilities(m, t, &fh.type_parameters)?.has_drop() {
                    return Err(VerifyError::at_function(StatusCode::UNKNOWN_VERIFICATION_ERROR, fi as u16)
                        .with_message("sui: entry function returns a value without drop"));
                }
            }
        }
    }
    Ok(())
}

fn check_init(m: &CompiledModule, f: &movejit_format::FunctionDefinition) -> Result<(), String> {
    use movejit_format::{SignatureToken as ST, Visibility};
    let fh = &m.function_handles[f.function.idx()];
    if f.visibility != Visibility::Private || f.is_entry {
        return Err("sui: init must be private and not entry".into());
    }
    if !fh.type_parameters.is_empty() || !m.signatures[fh.return_.idx()].0.is_empty() {
        return Err("sui: init takes no type parameters and returns nothing".into());
    }
    let params = &m.signatures[fh.parameters.idx()].0;
    let is_tx_context = |t: &ST| match t {
        ST::Reference(inner) | ST::MutableReference(inner) => match &**inner {
            ST::Struct(h) => {
                let sh = &m.struct_handles[h.idx()];
                let mh = &m.module_handles[sh.module.idx()];
                m.address_identifiers[mh.address.idx()] == movejit_format::AccountAddress::from_u64(2)
                    && m.identifiers[mh.name.idx()] == "tx_context"
                    && m.identifiers[sh.name.idx()] == "TxContext"
            }
            _ => false,
        },
        _ => false,
    };
    match params.as_slice() {
        [ctx] if is_tx_context(ctx) => Ok(()),
        [witness, ctx] if is_tx_context(ctx) => {
            // One-time witness: this module's struct named after the module in
            // upper case, with only `drop`.
            let ST::Struct(h) = witness else { return Err("sui: init witness must be a struct".into()) };
            let sh = &m.struct_handles[h.idx()];
            let name_ok = m.identifiers[sh.name.idx()] == m.name().to_ascii_uppercase();
            if sh.module != m.self_module_handle_idx || !name_ok || sh.abilities != movejit_format::AbilitySet(movejit_format::AbilitySet::DROP) {
                return Err("sui: init's first parameter must be the module's one-time witness".into());
            }
            Ok(())
        }
        _ => Err("sui: init must take (witness,) &TxContext or &mut TxContext".into()),
    }
}
