//! Views over the model that the code passes share: one function's
//! signature, locals and code, and a script re-expressed as a module.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{
    AbilitySet, CodeUnit, CompiledModule, CompiledScript, FunctionDefinition, FunctionHandle, SignatureIndex,
    SignatureToken, StatusCode,
};

/// Everything a code pass needs to know about the function it checks.
pub(crate) struct FunctionContext<'a> {
    pub index: u16,
    pub def: &'a FunctionDefinition,
    #[allow(dead_code)]
    pub handle: &'a FunctionHandle,
    pub code: &'a CodeUnit,
    pub parameters: &'a [SignatureToken],
    pub returns: &'a [SignatureToken],
    pub locals: &'a [SignatureToken],
    pub type_parameters: &'a [AbilitySet],
}

impl<'a> FunctionContext<'a> {
    pub fn new(
        module: &'a CompiledModule,
        index: u16,
        def: &'a FunctionDefinition,
        code: &'a CodeUnit,
    ) -> VyResult<Self> {
        let oob = || VerifyError::at_function(StatusCode::INDEX_OUT_OF_BOUNDS, index);
        let handle = module.function_handles.get(def.function.idx()).ok_or_else(oob)?;
        let sig = |i: SignatureIndex| module.signatures.get(i.idx()).map(|s| &s.0[..]).ok_or_else(oob);
        Ok(FunctionContext {
            index,
            def,
            handle,
            code,
            parameters: sig(handle.parameters)?,
            returns: sig(handle.return_)?,
            locals: sig(code.locals)?,
            type_parameters: &handle.type_parameters,
        })
    }

    pub fn num_locals(&self) -> usize {
        self.parameters.len() + self.locals.len()
    }

    /// The type of local `i` (parameters first).
    pub fn local_at(&self, i: u8) -> Option<&'a SignatureToken> {
        let i = i as usize;
        if i < self.parameters.len() {
            self.parameters.get(i)
        } else {
            self.locals.get(i - self.parameters.len())
        }
    }

    pub fn err(&self, status: StatusCode, offset: u16) -> VerifyError {
        VerifyError::at_code(status, self.index, offset)
    }
}

type VyResult<T> = VerifyResult<T>;

/// The name a script's synthetic module and function get.
pub(crate) const SCRIPT_MODULE_NAME: &str = "<SELF>";

/// A script as a module with one function `main`, so every code pass serves
/// both (the same trick Move's own linker uses).
pub(crate) fn script_as_module(script: &CompiledScript) -> VerifyResult<CompiledModule> {
    script.as_module(SCRIPT_MODULE_NAME).ok_or_else(|| VerifyError::module(StatusCode::INDEX_OUT_OF_BOUNDS))
}
