//! Entry points: the Move-level rules on scripts' `main` and on entry
//! functions (Sui's stricter entry rules live in `sui_rules`).

use crate::{
    config::VerifierConfig,
    error::{VerifyError, VerifyResult},
};
use movejit_format::{CompiledModule, StatusCode};

/// Modules: Move itself adds nothing for entry functions at v5+ (both
/// chains check entry arguments when they are called).
pub(crate) fn verify_module(m: &CompiledModule, config: &VerifierConfig) -> VerifyResult {
    if config.entry_no_return_values {
        for (i, f) in m.function_defs.iter().enumerate() {
            if f.is_entry && !m.signatures[m.function_handles[f.function.idx()].return_.idx()].0.is_empty() {
                return Err(VerifyError::at_function(StatusCode::INVALID_MAIN_FUNCTION_SIGNATURE, i as u16));
            }
        }
    }
    Ok(())
}

/// Scripts: `main` returns nothing.
pub(crate) fn verify_script_signature(m: &CompiledModule, _config: &VerifierConfig) -> VerifyResult {
    for f in &m.function_defs {
        if !m.signatures[m.function_handles[f.function.idx()].return_.idx()].0.is_empty() {
            return Err(VerifyError::module(StatusCode::INVALID_MAIN_FUNCTION_SIGNATURE));
        }
    }
    Ok(())
}
