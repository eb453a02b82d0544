//! The Move bytecode verifier for both flavours. (Stub: the passes are being
//! written; until then `verify_module` accepts everything it is given.)

use movejit_format::{CompiledModule, CompiledScript, StatusCode};

/// Where a verification error was found, the way Move reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Module,
    Struct { index: u16 },
    Function { index: u16, code_offset: Option<u16> },
    Script { code_offset: Option<u16> },
}

/// A verification failure: the Move status and where it was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{status} at {location:?}: {message}")]
pub struct VerifyError {
    pub status: StatusCode,
    pub location: Location,
    pub message: String,
}

/// Verifier limits; `aptos()` and `sui()` give each chain's defaults.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct VerifierConfig {}

impl VerifierConfig {
    pub fn aptos() -> Self {
        VerifierConfig {}
    }
    pub fn sui() -> Self {
        VerifierConfig {}
    }
}

/// Verifies `module` against its dependencies (every module it imports).
pub fn verify_module(
    module: &CompiledModule,
    deps: &[&CompiledModule],
    config: &VerifierConfig,
) -> Result<(), VerifyError> {
    let _ = (module, deps, config);
    Ok(())
}

/// Verifies an Aptos script against its dependencies.
pub fn verify_script(
    script: &CompiledScript,
    deps: &[&CompiledModule],
    config: &VerifierConfig,
) -> Result<(), VerifyError> {
    let _ = (script, deps, config);
    Ok(())
}
