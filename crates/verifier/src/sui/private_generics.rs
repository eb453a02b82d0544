//! Private generics (Sui's v2 rule, protocol 100+): some framework functions
//! have "internal" type parameters, which a caller may only instantiate with
//! a datatype declared in its own module (`transfer::transfer<T>` needs `T`
//! from the caller's module; `transfer::public_transfer<T>` does not, `T`
//! having `store` is enough and is checked by Move's type rules).
//! `sui::transfer` and `sui::event` must list every public function here, so
//! that a framework upgrade cannot add an unchecked one.

use super::{failure_in, function_name, is_defined_here, self_name, QualifiedName, STD, SUI};
use crate::error::{VerifyError, VerifyResult};
use movejit_format::{AccountAddress, Bytecode, CompiledModule, StatusCode, Visibility};

/// (address, module, function, which type parameters are internal).
const FUNCTIONS_TO_CHECK: &[(u64, &str, &str, &[bool])] = &[
    (STD, "internal", "permit", &[true]),
    (SUI, "event", "emit", &[true]),
    (SUI, "event", "emit_authenticated", &[true]),
    (SUI, "event", "num_events", &[]),
    (SUI, "event", "events_by_type", &[false]),
    (SUI, "transfer", "public_transfer", &[false]),
    (SUI, "transfer", "public_freeze_object", &[false]),
    (SUI, "transfer", "public_share_object", &[false]),
    (SUI, "transfer", "public_receive", &[false]),
    (SUI, "transfer", "receiving_object_id", &[false]),
    (SUI, "transfer", "public_party_transfer", &[false]),
    (SUI, "transfer", "transfer", &[true]),
    (SUI, "transfer", "freeze_object", &[true]),
    (SUI, "transfer", "share_object", &[true]),
    (SUI, "transfer", "receive", &[true]),
    (SUI, "transfer", "party_transfer", &[true]),
    (SUI, "coin_registry", "new_currency", &[true]),
];

/// Modules whose public functions must all be in [`FUNCTIONS_TO_CHECK`].
const EXHAUSTIVE_MODULES: &[(u64, &str)] = &[(SUI, "event"), (SUI, "transfer")];

fn rules_for(name: QualifiedName<'_>) -> Option<&'static [bool]> {
    FUNCTIONS_TO_CHECK
        .iter()
        .find(|(a, m, f, _)| name.0 == AccountAddress::from_u64(*a) && name.1 == *m && name.2 == *f)
        .map(|(_, _, _, rules)| *rules)
}

/// Sui reports these as `VMInvariantViolation` (a framework bug, not a
/// user error); VERIFIER_INVARIANT_VIOLATION stays reserved for bugs here.
fn invariant(msg: String) -> VerifyError {
    VerifyError::module(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR)
        .with_message(format!("sui private generics invariant: {msg}"))
}

pub(super) fn verify_module(m: &CompiledModule) -> VerifyResult {
    let (addr, name) = self_name(m);
    // `sui::test_scenario` emulates transactions in tests and may bypass the rule.
    if addr == AccountAddress::from_u64(SUI) && name == "test_scenario" {
        return Ok(());
    }
    if EXHAUSTIVE_MODULES.iter().any(|(a, n)| addr == AccountAddress::from_u64(*a) && name == *n) {
        for f in m.function_defs.iter().filter(|f| f.visibility == Visibility::Public) {
            let fname = m.identifier_at(m.function_handle_at(f.function).name);
            if rules_for((addr, name, fname)).is_none() {
                return Err(invariant(format!("unknown public function {name}::{fname}")));
            }
        }
    }
    for (fi, f) in m.function_defs.iter().enumerate() {
        let Some(code) = &f.code else { continue };
        for instr in &code.code {
            let (handle, ty_args) = match instr {
                Bytecode::Call(h) => (m.function_handle_at(*h), &[][..]),
                Bytecode::CallGeneric(i) => {
                    let inst = &m.function_instantiations[i.idx()];
                    (m.function_handle_at(inst.handle), &m.signature_at(inst.type_parameters).0[..])
                }
                _ => continue,
            };
            let callee = function_name(m, handle);
            let Some(internal) = rules_for(callee) else { continue };
            if internal.len() != ty_args.len() {
                return Err(invariant(format!(
                    "{}::{} expects {} type arguments, found {}",
                    callee.1,
                    callee.2,
                    internal.len(),
                    ty_args.len()
                )));
            }
            for (i, (ty, is_internal)) in ty_args.iter().zip(internal).enumerate() {
                if *is_internal && !is_defined_here(m, ty) {
                    return Err(failure_in(
                        fi as u16,
                        format!(
                            "invalid call to '{}::{}::{}': type argument #{i} must be a type defined in the current module",
                            callee.0.to_hex_long(),
                            callee.1,
                            callee.2
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}
