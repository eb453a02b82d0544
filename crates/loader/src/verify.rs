//! Verification at load and at publishing: the verifier's rules for each,
//! and the one mapping of a verifier error to a located `VmError`.

use crate::LoadedModule;
use movejit_format::{CompiledModule, StatusFlavour};
use movejit_runtime::{ErrorLocation, ModuleId, StatusCode, VmError, VmResult};
use movejit_verifier::{Location, VerifierConfig, VerifyError};
use std::sync::Arc;

/// Why a module is verified: the rules and how a failure is reported
/// differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Publishing (and scripts): every rule; a failure reports the
    /// verifier's status.
    Publish,
    /// Loading from storage: the module passed publishing, so publish-only
    /// rules (its friends existing) no longer apply, and a failure is
    /// `UNEXPECTED_VERIFIER_ERROR` with the Move VM's message
    /// ([`UNVERIFIABLE_ON_CHAIN`]), then the verifier's status.
    Load,
}

/// The verifier's rules for code published (and scripts run) under `f`.
pub fn verifier_config(f: StatusFlavour) -> VerifierConfig {
    match f {
        StatusFlavour::Aptos => VerifierConfig::aptos(),
        StatusFlavour::Sui => VerifierConfig::sui(),
    }
}

fn stage_config(f: StatusFlavour, stage: Stage) -> VerifierConfig {
    match stage {
        Stage::Publish => verifier_config(f),
        // A friend module may legitimately be absent from the store.
        Stage::Load => VerifierConfig { check_friends_exist: false, ..verifier_config(f) },
    }
}

/// Verifies `module` (named `id`) against its linking context (the
/// dependency closure and the friends of [`crate::SessionModules::linking_context`]).
pub fn verify_linked(
    module: &CompiledModule,
    id: &ModuleId,
    closure: &[Arc<LoadedModule>],
    friends: &[CompiledModule],
    flavour: StatusFlavour,
    stage: Stage,
) -> VmResult<()> {
    // The closure's modules were verified when they were loaded.
    let verified: Vec<&CompiledModule> = closure.iter().map(|d| &d.module).collect();
    let friends: Vec<&CompiledModule> = friends.iter().collect();
    movejit_verifier::verify_module_against(module, &verified, &friends, &stage_config(flavour, stage))
        .map_err(|e| verification_error(e, id, stage))
}

/// The first line of the Move VM's message for a module in storage that
/// fails verification when loaded; the VM follows it with a dump of the
/// verifier's error, this crate with the verifier's status and message.
pub const UNVERIFIABLE_ON_CHAIN: &str =
    "Unexpected verifier/deserialization error! This likely means there is code stored on chain that is unverifiable!";

/// The `VmError` of a verifier failure in module `id`, located at the
/// function and code offset the verifier names (0, 0 for a module-level
/// failure).
pub fn verification_error(e: VerifyError, id: &ModuleId, stage: Stage) -> VmError {
    let (function_index, code_offset) = match e.location {
        Location::Function { index, code_offset } => (index, code_offset.unwrap_or(0)),
        _ => (0, 0),
    };
    let mut err = match stage {
        Stage::Publish => VmError::new(e.status).with_message(e.message),
        Stage::Load => VmError::new(StatusCode::UNEXPECTED_VERIFIER_ERROR).with_message(format!(
            "{UNVERIFIABLE_ON_CHAIN}\nError: {}: {}",
            e.status.name(),
            e.message
        )),
    };
    err.location =
        Some(ErrorLocation { module: id.long_string(), function_name: String::new(), function_index, code_offset });
    err
}

#[cfg(test)]
mod tests {
    use super::*;
    use movejit_format::AccountAddress;

    /// Each verifier location and stage, mapped to (status, message,
    /// function index, code offset).
    #[test]
    fn verifier_errors_are_located() {
        let id = ModuleId::new(AccountAddress::ZERO, "m");
        let f = |index, code_offset| Location::Function { index, code_offset };
        let on_load = format!("{UNVERIFIABLE_ON_CHAIN}\nError: NEGATIVE_STACK_SIZE_WITHIN_BLOCK: why");
        let cases: [(Location, Stage, StatusCode, &str, u16, u16); 5] = [
            (f(3, Some(7)), Stage::Publish, StatusCode::NEGATIVE_STACK_SIZE_WITHIN_BLOCK, "why", 3, 7),
            (f(2, None), Stage::Publish, StatusCode::NEGATIVE_STACK_SIZE_WITHIN_BLOCK, "why", 2, 0),
            (Location::Module, Stage::Publish, StatusCode::NEGATIVE_STACK_SIZE_WITHIN_BLOCK, "why", 0, 0),
            (f(3, Some(7)), Stage::Load, StatusCode::UNEXPECTED_VERIFIER_ERROR, &on_load, 3, 7),
            (Location::Struct { index: 1 }, Stage::Load, StatusCode::UNEXPECTED_VERIFIER_ERROR, &on_load, 0, 0),
        ];
        for (location, stage, status, message, function_index, code_offset) in cases {
            let e = VerifyError {
                status: StatusCode::NEGATIVE_STACK_SIZE_WITHIN_BLOCK,
                location: location.clone(),
                message: "why".into(),
            };
            let err = verification_error(e, &id, stage);
            assert_eq!(err.status, status, "{location:?} {stage:?}");
            assert_eq!(err.message.as_deref(), Some(message), "{location:?} {stage:?}");
            let at = err.location.expect("located");
            assert_eq!(at.module, id.long_string());
            assert_eq!((at.function_index, at.code_offset), (function_index, code_offset), "{location:?} {stage:?}");
        }
    }
}
