//! Runtime types and flat layouts for the code generator, over the loader's
//! modules (`movejit_loader::LoadedModule`): signature tokens instantiated
//! to [`Type`]s with the module's datatype ids per handle, datatype fields
//! from the module's datatype table, and the value-depth measure the
//! interpreter checks at `Pack`. Nothing here resolves on its own: it is
//! the loader's resolution with the JIT's error mapping and limits.
//!
//! Any failure here (an unknown module, a native struct, a layout over the
//! limits) makes the function not compiled: the interpreter then runs it
//! and reports whatever error the program really has.

#![forbid(unsafe_code)]

use crate::error::{CompileError, CompileResult};
use movejit_format::{SignatureIndex, SignatureToken, StatusCode, StructHandleIndex};
use movejit_loader::LoadedModule;
use movejit_runtime::layout::Layout;
use movejit_runtime::natives::TypeInfo;
use movejit_runtime::resolve::{self, DatatypeFields, DatatypeSource, LayoutLimits};
use movejit_runtime::{DatatypeId, ModuleId, Type, VmError, VmResult};
use std::collections::HashMap;
use std::sync::Arc;

/// The type limits the interpreter applies (`runtime::Limits`).
#[derive(Clone, Copy, Debug)]
pub struct TypeLimits {
    pub max_type_depth: usize,
    pub max_value_depth: usize,
    pub max_layout_nodes: Option<usize>,
}

/// A type resolution error as a compile error (the function is then not
/// compiled and the interpreter reports what the program really does).
fn unresolved(e: VmError) -> CompileError {
    let status = e.to_string();
    CompileError::Malformed(e.message.unwrap_or(status))
}

/// The datatype a struct handle of `m` names.
pub fn datatype_id(m: &LoadedModule, h: StructHandleIndex) -> CompileResult<Arc<DatatypeId>> {
    m.datatype_id(h).map_err(unresolved)
}

/// The runtime type of `tok` in `m`, type parameters taken from `args`.
pub fn to_type(m: &LoadedModule, tok: &SignatureToken, args: &[Type]) -> CompileResult<Type> {
    m.to_type(tok, args).map_err(unresolved)
}

/// The types of signature `idx` of `m`.
pub fn sig_types(m: &LoadedModule, idx: SignatureIndex, args: &[Type]) -> CompileResult<Vec<Type>> {
    m.sig_types(idx, args).map_err(unresolved)
}

/// Parameter and result types of function definition `fdef` of `m`
/// instantiated with `type_args` (which must be as many as it declares).
pub fn function_types(m: &LoadedModule, fdef: u16, type_args: &[Type]) -> CompileResult<(Vec<Type>, Vec<Type>)> {
    let bad = |what: &str| CompileError::Malformed(format!("function {what}"));
    let d = m.function_defs.get(fdef as usize).ok_or_else(|| bad("definition index"))?;
    let h = m.function_handles.get(d.function.idx()).ok_or_else(|| bad("handle index"))?;
    if h.type_parameters.len() != type_args.len() {
        return Err(CompileError::Malformed("wrong number of type arguments".into()));
    }
    Ok((sig_types(m, h.parameters, type_args)?, sig_types(m, h.return_, type_args)?))
}

/// Resolves datatypes through the engine's modules.
pub struct Types<'a> {
    pub modules: &'a [Arc<LoadedModule>],
    pub by_id: &'a HashMap<ModuleId, u32>,
    pub limits: TypeLimits,
}

impl DatatypeSource for Types<'_> {
    fn datatype_fields(&self, id: &DatatypeId, args: &[Type]) -> VmResult<Option<DatatypeFields>> {
        let mid = ModuleId { address: id.address, name: id.module.clone() };
        let m = self
            .by_id
            .get(&mid)
            .and_then(|i| self.modules.get(*i as usize))
            .ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR))?;
        m.datatype_fields(&id.name, args)
    }
}

impl Types<'_> {
    /// The interpreter's value depth of `t` (capped just above the limit).
    pub fn value_depth(&self, t: &Type) -> CompileResult<usize> {
        resolve::value_depth(self, t, self.limits.max_value_depth)
            .map_err(|e| CompileError::Unsupported(format!("value depth: {e}")))
    }
}

impl TypeInfo for Types<'_> {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        let limits = LayoutLimits { max_depth: self.limits.max_type_depth, max_nodes: self.limits.max_layout_nodes };
        resolve::layout(self, ty, limits)
    }
}
