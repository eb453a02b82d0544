//! `init` and entry functions.
//!
//! No function calls a function named `init` (of any module). A module's
//! `init` is private, not `entry`, not generic, returns nothing and takes one
//! or two parameters, the last `&TxContext` / `&mut TxContext` (the optional
//! first one, the one-time witness, is `one_time_witness`'s business).
//! An entry function's parameters, apart from a trailing `TxContext`, are
//! primitives (with `ID`, ascii/utf8 `String`, `Option` of a primitive and
//! vectors of primitives), objects (`key` types, by value or reference),
//! vectors of objects, or `Receiving<T>`; never a mutable `Clock` or
//! `Random`. Its results are non-reference values with `drop`.

use super::{failure_in, is, is_datatype, is_tx_context, STD, SUI};
use crate::{error::VerifyResult, types::abilities};
use movejit_format::{AbilitySet, Bytecode, CompiledModule, FunctionDefinition, SignatureToken as ST, Visibility};

pub(super) fn verify_module(m: &CompiledModule) -> VerifyResult {
    for (fi, f) in m.function_defs.iter().enumerate() {
        let fail = |msg: String| failure_in(fi as u16, msg);
        verify_init_not_called(m, f).map_err(fail)?;
        let handle = m.function_handle_at(f.function);
        if m.identifier_at(handle.name) == "init" {
            verify_init_function(m, f).map_err(fail)?;
            continue;
        }
        if f.is_entry {
            verify_entry_function(m, f).map_err(fail)?;
        }
    }
    Ok(())
}

fn verify_init_not_called(m: &CompiledModule, f: &FunctionDefinition) -> Result<(), String> {
    let Some(code) = &f.code else { return Ok(()) };
    for (off, instr) in code.code.iter().enumerate() {
        let handle = match instr {
            Bytecode::Call(h) => m.function_handle_at(*h),
            Bytecode::CallGeneric(i) => m.function_handle_at(m.function_instantiations[i.idx()].handle),
            _ => continue,
        };
        if m.identifier_at(handle.name) == "init" {
            return Err(format!("call to an 'init' function at offset {off}: init cannot be called from Move code"));
        }
    }
    Ok(())
}

fn verify_init_function(m: &CompiledModule, f: &FunctionDefinition) -> Result<(), String> {
    let handle = m.function_handle_at(f.function);
    if f.visibility != Visibility::Private {
        return Err("'init' must be private".into());
    }
    if f.is_entry {
        return Err("'init' cannot be 'entry'".into());
    }
    if !handle.type_parameters.is_empty() {
        return Err("'init' cannot have type parameters".into());
    }
    if !m.signature_at(handle.return_).0.is_empty() {
        return Err("'init' cannot have return values".into());
    }
    let params = &m.signature_at(handle.parameters).0;
    match params.last() {
        Some(last) if params.len() <= 2 && is_tx_context(m, last) => Ok(()),
        Some(_) if params.len() <= 2 => {
            Err("the last parameter of 'init' must be &mut 0x2::tx_context::TxContext or &TxContext".into())
        }
        _ => Err("'init' takes one or two parameters".into()),
    }
}

fn verify_entry_function(m: &CompiledModule, f: &FunctionDefinition) -> Result<(), String> {
    let handle = m.function_handle_at(f.function);
    let tparams = &handle.type_parameters;
    let params = &m.signature_at(handle.parameters).0;
    let non_ctx = match params.last() {
        Some(last) if is_tx_context(m, last) => &params[..params.len() - 1],
        _ => &params[..],
    };
    for p in non_ctx {
        verify_param_type(m, tparams, p)?;
    }
    for r in &m.signature_at(handle.return_).0 {
        if r.is_reference() {
            return Err("invalid entry point return type: expected a non-reference type".into());
        }
        let abs = abilities(m, r, tparams).map_err(|e| format!("invalid return type: {e}"))?;
        if !abs.has_drop() {
            return Err("invalid entry point return type: the type does not have 'drop'".into());
        }
    }
    Ok(())
}

fn verify_param_type(m: &CompiledModule, tparams: &[AbilitySet], p: &ST) -> Result<(), String> {
    if is_by_value_or_mut(m, p, "clock", "Clock") {
        return Err("invalid entry point parameter type: Clock must be passed by immutable reference".into());
    }
    if is_by_value_or_mut(m, p, "random", "Random") {
        return Err("invalid entry point parameter type: Random must be passed by immutable reference".into());
    }
    if is_primitive(m, tparams, p)
        || is_object(m, tparams, p)?
        || is_object_vector(m, tparams, p)?
        || is_receiving(m, p)
    {
        Ok(())
    } else {
        Err("invalid entry point parameter type: expected a primitive or object type".into())
    }
}

/// `0x2::module::name` or `&mut` of it (Sui's "mutable" Clock / Random test).
fn is_by_value_or_mut(m: &CompiledModule, p: &ST, module: &str, name: &str) -> bool {
    match p {
        ST::MutableReference(inner) => is_by_value_or_mut(m, inner, module, name),
        _ => is_datatype(m, p, SUI, module, name),
    }
}

fn is_primitive(m: &CompiledModule, tparams: &[AbilitySet], p: &ST) -> bool {
    match p {
        ST::Bool | ST::U8 | ST::U16 | ST::U32 | ST::U64 | ST::U128 | ST::U256 | ST::Address => true,
        // Optimistic: no primitive has `key`.
        ST::TypeParameter(i) => tparams.get(*i as usize).is_some_and(|a| !a.has_key()),
        ST::Struct(h) => {
            let n = super::datatype_name(m, *h);
            is(n, SUI, "object", "ID") || is(n, STD, "ascii", "String") || is(n, STD, "string", "String")
        }
        ST::StructInstantiation(h, args) => {
            is(super::datatype_name(m, *h), STD, "option", "Option")
                && args.len() == 1
                && is_primitive(m, tparams, &args[0])
        }
        ST::Vector(inner) => is_primitive(m, tparams, inner),
        _ => false,
    }
}

fn is_object(m: &CompiledModule, tparams: &[AbilitySet], p: &ST) -> Result<bool, String> {
    match p {
        ST::Reference(inner) | ST::MutableReference(inner) => is_object(m, tparams, inner),
        _ => is_object_struct(m, tparams, p),
    }
}

fn is_object_vector(m: &CompiledModule, tparams: &[AbilitySet], p: &ST) -> Result<bool, String> {
    match p {
        ST::Vector(inner) => is_object_struct(m, tparams, inner),
        _ => is_object_struct(m, tparams, p),
    }
}

fn is_object_struct(m: &CompiledModule, tparams: &[AbilitySet], p: &ST) -> Result<bool, String> {
    match p {
        ST::TypeParameter(i) => Ok(tparams.get(*i as usize).is_some_and(|a| a.has_key())),
        ST::Struct(_) | ST::StructInstantiation(..) => {
            Ok(abilities(m, p, tparams).map_err(|e| format!("invalid parameter type: {e}"))?.has_key())
        }
        _ => Ok(false),
    }
}

fn is_receiving(m: &CompiledModule, p: &ST) -> bool {
    match p {
        ST::Reference(inner) | ST::MutableReference(inner) => is_receiving(m, inner),
        ST::StructInstantiation(h, args) => {
            is(super::datatype_name(m, *h), SUI, "transfer", "Receiving") && args.len() == 1
        }
        _ => false,
    }
}
