//! Views over the model that the code passes share: one function's
//! signature, locals and code, and a script re-expressed as a module.

use crate::error::{VerifyError, VerifyResult};
use movejit_format::{
    AbilitySet, AccountAddress, CodeUnit, CompiledModule, CompiledScript, FunctionDefinition,
    FunctionHandle, FunctionHandleIndex, IdentifierIndex, ModuleHandle, ModuleHandleIndex,
    AddressIdentifierIndex, Signature, SignatureIndex, SignatureToken, StatusCode, Visibility,
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
    let full = |n: usize| n >= u16::MAX as usize - 2;
    if full(script.identifiers.len())
        || full(script.address_identifiers.len())
        || full(script.module_handles.len())
        || full(script.function_handles.len())
        || full(script.signatures.len())
    {
        return Err(VerifyError::module(StatusCode::INDEX_OUT_OF_BOUNDS));
    }
    let mut m = CompiledModule {
        version: script.version,
        flavour: script.flavour,
        module_handles: script.module_handles.clone(),
        struct_handles: script.struct_handles.clone(),
        function_handles: script.function_handles.clone(),
        function_instantiations: script.function_instantiations.clone(),
        signatures: script.signatures.clone(),
        identifiers: script.identifiers.clone(),
        address_identifiers: script.address_identifiers.clone(),
        constant_pool: script.constant_pool.clone(),
        metadata: script.metadata.clone(),
        ..Default::default()
    };
    let name = IdentifierIndex(m.identifiers.len() as u16);
    m.identifiers.push(SCRIPT_MODULE_NAME.to_string());
    let main_name = IdentifierIndex(m.identifiers.len() as u16);
    m.identifiers.push("main".to_string());
    let addr = AddressIdentifierIndex(m.address_identifiers.len() as u16);
    m.address_identifiers.push(AccountAddress::ZERO);
    m.self_module_handle_idx = ModuleHandleIndex(m.module_handles.len() as u16);
    m.module_handles.push(ModuleHandle { address: addr, name });
    let empty = SignatureIndex(m.signatures.len() as u16);
    m.signatures.push(Signature(vec![]));
    let handle = FunctionHandleIndex(m.function_handles.len() as u16);
    m.function_handles.push(FunctionHandle {
        module: m.self_module_handle_idx,
        name: main_name,
        parameters: script.parameters,
        return_: empty,
        type_parameters: script.type_parameters.clone(),
        access_specifiers: script.access_specifiers.clone(),
        attributes: vec![],
    });
    m.function_defs.push(FunctionDefinition {
        function: handle,
        visibility: Visibility::Public,
        is_entry: true,
        acquires_global_resources: vec![],
        code: Some(script.code.clone()),
    });
    Ok(m)
}
