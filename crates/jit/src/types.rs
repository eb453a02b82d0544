//! Runtime types and flat layouts for the code generator: signature tokens
//! instantiated to [`Type`]s, datatypes resolved through the engine's
//! modules, and the value-depth measure the interpreter checks at `Pack`.
//!
//! Any failure here (an unknown module, a native struct, a layout over the
//! limits) makes the function not compiled: the interpreter then runs it
//! and reports whatever error the program really has.

#![forbid(unsafe_code)]

use crate::error::{CompileError, CompileResult};
use movejit_format::{AccountAddress, CompiledModule, SignatureToken, StatusCode, StructHandleIndex};
use movejit_runtime::layout::Layout;
use movejit_runtime::natives::TypeInfo;
use movejit_runtime::resolve::{self, DatatypeFields, DatatypeSource, LayoutLimits};
use movejit_runtime::{DatatypeId, Type, VmError, VmResult};
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
pub fn datatype_id(m: &CompiledModule, h: StructHandleIndex) -> CompileResult<Arc<DatatypeId>> {
    resolve::datatype_id(m, h).map_err(unresolved)
}

/// The runtime type of `tok` in `m`, type parameters taken from `args`.
pub fn to_type(m: &CompiledModule, tok: &SignatureToken, args: &[Type]) -> CompileResult<Type> {
    resolve::token_type(tok, args, &|h| resolve::datatype_id(m, h)).map_err(unresolved)
}

/// The types of signature `idx` of `m`.
pub fn sig_types(m: &CompiledModule, idx: movejit_format::SignatureIndex, args: &[Type]) -> CompileResult<Vec<Type>> {
    resolve::signature_types(m, idx, args, &|h| resolve::datatype_id(m, h)).map_err(unresolved)
}

/// Resolves datatypes through the engine's modules.
pub struct Types<'a> {
    pub modules: &'a [Arc<CompiledModule>],
    pub by_name: &'a HashMap<(AccountAddress, String), u32>,
    pub limits: TypeLimits,
}

impl DatatypeSource for Types<'_> {
    fn datatype_fields(&self, id: &DatatypeId, args: &[Type]) -> VmResult<Option<DatatypeFields>> {
        let idx = self
            .by_name
            .get(&(id.address, id.module.to_string()))
            .ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR))?;
        let m = self.modules.get(*idx as usize).ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR))?;
        let def =
            resolve::find_datatype(m, &id.name).ok_or_else(|| VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE))?;
        resolve::field_types(m, def, args, &|h| resolve::datatype_id(m, h))
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
