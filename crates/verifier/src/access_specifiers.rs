//! Aptos access specifiers (resource access control: `reads R(addr)`, ...).
//!
//! Aptos's bytecode verifier checks nothing about them beyond the feature
//! gate (`features.rs`: FEATURE_NOT_ENABLED when resource access control is
//! off; production has it on) and its bounds checker skips them. They are
//! checked when the loader builds a module's functions
//! (`move-vm/runtime/src/loader/access_specifier_loader.rs`, called from
//! `Function::new` for every function definition and for a script):
//! an index out of range, or an address computed by a function other than
//! `0x1::signer::address_of` / `0x1::object::owner`, is
//! ACCESS_CONTROL_INVARIANT_VIOLATION. movejit's verifier is its loader's
//! gate, so this pass does that part, after every other module pass as in
//! Aptos (verify, then load).
//!
//! Stricter than Aptos, so nothing unchecked reaches the runtime: the
//! indices of imported handles' specifiers are checked too (Aptos never
//! loads them), and a parameter-derived address must name a parameter
//! (Aptos would fail only when the function runs).

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{
    AccessSpecifier, AccountAddress, AddressSpecifier, CompiledModule, ResourceSpecifier, StatusCode,
};

pub(crate) fn verify_module(m: &CompiledModule) -> VerifyResult {
    for (hi, h) in m.function_handles.iter().enumerate() {
        let Some(specs) = &h.access_specifiers else { continue };
        let num_params = m.signatures.get(h.parameters.idx()).map_or(0, |s| s.0.len());
        for spec in specs {
            check_bounds(m, spec, num_params)
                .map_err(|e| e.with_message(format!("function handle {hi}: access specifier index out of range")))?;
        }
    }
    for (fi, f) in m.function_defs.iter().enumerate() {
        let Some(h) = m.function_handles.get(f.function.idx()) else { continue };
        for spec in h.access_specifiers.iter().flatten() {
            check_address_function(m, spec)
                .map_err(|e| VerifyError::at_function(e.status, fi as u16).with_message(e.message))?;
        }
    }
    Ok(())
}

fn violation() -> VerifyError {
    VerifyError::module(StatusCode::ACCESS_CONTROL_INVARIANT_VIOLATION)
}

fn check_bounds(m: &CompiledModule, s: &AccessSpecifier, num_params: usize) -> VerifyResult {
    let within = |i: usize, len: usize| if i < len { Ok(()) } else { Err(violation()) };
    match &s.resource {
        ResourceSpecifier::Any => {}
        ResourceSpecifier::DeclaredAtAddress(a) => within(a.idx(), m.address_identifiers.len())?,
        ResourceSpecifier::DeclaredInModule(h) => {
            within(h.idx(), m.module_handles.len())?;
            let mh = &m.module_handles[h.idx()];
            within(mh.address.idx(), m.address_identifiers.len())?;
            within(mh.name.idx(), m.identifiers.len())?;
        }
        ResourceSpecifier::Resource(h) => within(h.idx(), m.struct_handles.len())?,
        ResourceSpecifier::ResourceInstantiation(h, sig) => {
            within(h.idx(), m.struct_handles.len())?;
            within(sig.idx(), m.signatures.len())?;
        }
    }
    match &s.address {
        AddressSpecifier::Any => {}
        AddressSpecifier::Literal(a) => within(a.idx(), m.address_identifiers.len())?,
        AddressSpecifier::Parameter(p, f) => {
            within(*p as usize, num_params)?;
            if let Some(f) = f {
                within(f.idx(), m.function_instantiations.len())?;
                let fh = m.function_instantiations[f.idx()].handle;
                within(fh.idx(), m.function_handles.len())?;
            }
        }
    }
    Ok(())
}

/// `reads R(f(param))`: `f` is `0x1::signer::address_of` or `0x1::object::owner`.
fn check_address_function(m: &CompiledModule, s: &AccessSpecifier) -> VerifyResult {
    let AddressSpecifier::Parameter(_, Some(inst)) = &s.address else { return Ok(()) };
    // Bounds were checked above for every handle.
    let fh = m.function_handle_at(m.function_instantiations[inst.idx()].handle);
    let mh = m.module_handle_at(fh.module);
    let module = (*m.address_identifier_at(mh.address), m.identifier_at(mh.name));
    let known = module.0 == AccountAddress::from_u64(1)
        && matches!((module.1, m.identifier_at(fh.name)), ("signer", "address_of") | ("object", "owner"));
    if known {
        Ok(())
    } else {
        Err(violation().with_message(format!(
            "function `{}::{}` not supported for address specifier",
            module.1,
            m.identifier_at(fh.name)
        )))
    }
}
