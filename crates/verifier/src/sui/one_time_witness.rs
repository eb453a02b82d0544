//! One-time witness: a struct named after its module in upper case with a
//! single `bool` field is the module's one-time witness type. It must have
//! exactly the `drop` ability and no type parameters, `init` must take it as
//! its first of two parameters, and no function of the module packs it
//! (the system creates the one instance and hands it to `init`).
//! Without such a struct, `init` takes only the `TxContext`.
//! `sui::sui` (SUI is minted at genesis) and the bridge's token modules are
//! exempt.

use super::{failure, failure_in, self_name, BRIDGE, SUI};
use crate::error::VerifyResult;
use movejit_format::{
    AbilitySet, AccountAddress, Bytecode, CompiledModule, SignatureToken as ST, StructDefinitionIndex,
    StructFieldInformation,
};

const BRIDGE_TOKENS: &[&str] = &["btc", "eth", "usdc", "usdt"];

pub(super) fn verify_module(m: &CompiledModule) -> VerifyResult {
    let (addr, name) = self_name(m);
    if addr == AccountAddress::from_u64(SUI) && name == "sui" {
        return Ok(());
    }
    if addr == AccountAddress::from_u64(BRIDGE) && BRIDGE_TOKENS.contains(&name) {
        return Ok(());
    }
    let upper = name.to_ascii_uppercase();
    let candidate = m.struct_defs.iter().enumerate().find(|(_, def)| {
        let handle = m.struct_handle_at(def.struct_handle);
        m.identifier_at(handle.name) == upper
            && matches!(&def.field_information, StructFieldInformation::Declared(f) if f.len() == 1 && f[0].signature == ST::Bool)
    });
    if let Some((_, def)) = candidate {
        let handle = m.struct_handle_at(def.struct_handle);
        if handle.abilities != AbilitySet(AbilitySet::DROP) {
            return Err(failure(format!("one-time witness type candidate {upper} must have a single ability: drop")));
        }
        if !handle.type_parameters.is_empty() {
            return Err(failure(format!("one-time witness type candidate {upper} cannot have type parameters")));
        }
    }
    for (fi, f) in m.function_defs.iter().enumerate() {
        let handle = m.function_handle_at(f.function);
        if m.identifier_at(handle.name) == "init" {
            let params = &m.signature_at(handle.parameters).0;
            match candidate {
                Some((_, def)) => {
                    let witness = m.struct_handle_at(def.struct_handle);
                    let first_is_witness =
                        matches!(params.first(), Some(ST::Struct(h)) if m.struct_handle_at(*h) == witness);
                    if params.len() != 2 || !first_is_witness {
                        return Err(failure_in(fi as u16, format!("init of a module with a one-time witness type must take {upper} as its first of two parameters")));
                    }
                }
                None if params.len() != 1 => {
                    return Err(failure_in(fi as u16, format!("init takes a one-time witness ({upper}, a struct with one bool field) only if the module declares one; otherwise just the TxContext")));
                }
                None => {}
            }
        }
        if let (Some((wi, _)), Some(code)) = (candidate, &f.code) {
            let packs_witness = code.code.iter().any(|i| match i {
                Bytecode::Pack(d) => packs_same(m, *d, wi),
                _ => false,
            });
            if packs_witness {
                return Err(failure_in(
                    fi as u16,
                    format!("one-time witness type {upper} is instantiated in a function and must never be"),
                ));
            }
        }
    }
    Ok(())
}

/// Sui compares struct definitions by value; definitions are unique after
/// the duplication pass, so equal value means the same index (or a copy of it).
fn packs_same(m: &CompiledModule, packed: StructDefinitionIndex, witness: usize) -> bool {
    packed.idx() == witness || m.struct_defs.get(packed.idx()) == m.struct_defs.get(witness)
}
