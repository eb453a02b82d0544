//! Loaded modules: a decoded, verified module plus the lookups execution
//! needs (datatype ids per handle, functions and datatypes by name, natives
//! bound per native function), and conversion of signature tokens to runtime
//! types.

use movejit_format::{CompiledModule, FunctionAttribute, SignatureToken, StructHandleIndex, Visibility};
use movejit_runtime::resolve::{self, DatatypeFields};
use movejit_runtime::{DatatypeId, ModuleId, NativeFunction, NativeRegistry, StatusCode, Type, VmError, VmResult};
use std::collections::HashMap;
use std::sync::Arc;

pub use movejit_runtime::resolve::DatatypeDef;

/// What a call needs to know about a function definition, precomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FnInfo {
    pub params: usize,
    /// Declared locals beyond the parameters (0 for natives).
    pub locals: usize,
    pub is_native: bool,
}

/// The name of function definition `def` of `m` (empty when out of bounds).
pub fn function_name(m: &CompiledModule, def: u16) -> String {
    m.function_defs
        .get(def as usize)
        .and_then(|f| m.function_handles.get(f.function.idx()))
        .and_then(|h| m.identifiers.get(h.name.idx()))
        .cloned()
        .unwrap_or_default()
}

/// A module ready to run.
pub struct LoadedModule {
    pub id: ModuleId,
    pub module: CompiledModule,
    /// The datatype id of each struct/datatype handle.
    pub handle_ids: Vec<Arc<DatatypeId>>,
    pub datatypes: HashMap<String, DatatypeDef>,
    pub functions: HashMap<String, u16>,
    /// The native bound to each native function definition.
    pub natives: Vec<Option<NativeFunction>>,
    /// Per function definition.
    pub fn_info: Vec<FnInfo>,
    /// Serialized size in bytes (what loading it costs under Aptos's
    /// schedule; 0 for a script).
    pub size: u64,
}

impl AsRef<CompiledModule> for LoadedModule {
    fn as_ref(&self) -> &CompiledModule {
        &self.module
    }
}

/// A loaded module reads as its compiled module (code, handles, pools).
impl std::ops::Deref for LoadedModule {
    type Target = CompiledModule;
    fn deref(&self) -> &CompiledModule {
        &self.module
    }
}

impl std::fmt::Debug for LoadedModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LoadedModule({})", self.id)
    }
}

impl LoadedModule {
    /// Builds the lookups. Natives missing from the registry stay unbound
    /// (calling one is `MISSING_DEPENDENCY`).
    pub fn new(module: CompiledModule, natives: &NativeRegistry) -> VmResult<Self> {
        let bad = || VmError::invariant("module index out of bounds");
        let id = resolve::module_id(&module, module.self_module_handle_idx)?;
        let address = id.address;
        let handle_ids = resolve::handle_datatype_ids(&module)?;
        let mut datatypes = HashMap::new();
        for (i, d) in module.struct_defs.iter().enumerate() {
            let h = handle_ids.get(d.struct_handle.idx()).ok_or_else(bad)?;
            datatypes.insert(h.name.to_string(), DatatypeDef::Struct(i as u16));
        }
        for (i, d) in module.enum_defs.iter().enumerate() {
            let h = handle_ids.get(d.enum_handle.idx()).ok_or_else(bad)?;
            datatypes.insert(h.name.to_string(), DatatypeDef::SuiEnum(i as u16));
        }
        let mut functions = HashMap::new();
        let mut fn_info = Vec::with_capacity(module.function_defs.len());
        let mut bound = Vec::with_capacity(module.function_defs.len());
        for (i, f) in module.function_defs.iter().enumerate() {
            let fh = module.function_handles.get(f.function.idx()).ok_or_else(bad)?;
            let fname = module.identifiers.get(fh.name.idx()).ok_or_else(bad)?;
            functions.insert(fname.clone(), i as u16);
            let count =
                |sig: movejit_format::SignatureIndex| module.signatures.get(sig.idx()).map(|s| s.0.len()).unwrap_or(0);
            fn_info.push(FnInfo {
                params: count(fh.parameters),
                locals: f.code.as_ref().map(|c| count(c.locals)).unwrap_or(0),
                is_native: f.is_native(),
            });
            bound.push(if f.is_native() { natives.get(&address, &id.name, fname) } else { None });
        }
        Ok(LoadedModule { id, module, handle_ids, datatypes, functions, natives: bound, fn_info, size: 0 })
    }

    pub fn function_name(&self, def: u16) -> String {
        function_name(&self.module, def)
    }

    /// Whether closures over function `def` may be serialized.
    pub fn is_persistent(&self, def: u16) -> bool {
        let m = &self.module;
        let Some(f) = m.function_defs.get(def as usize) else { return false };
        let public = f.visibility == Visibility::Public;
        let attr = m
            .function_handles
            .get(f.function.idx())
            .is_some_and(|h| h.attributes.contains(&FunctionAttribute::Persistent));
        public || attr
    }

    pub fn datatype_id(&self, h: StructHandleIndex) -> VmResult<Arc<DatatypeId>> {
        self.handle_ids.get(h.idx()).cloned().ok_or_else(|| VmError::invariant("struct handle out of bounds"))
    }

    /// The runtime type of a signature token, type parameters taken from `ty_args`.
    pub fn to_type(&self, tok: &SignatureToken, ty_args: &[Type]) -> VmResult<Type> {
        resolve::token_type(tok, ty_args, &|h| self.datatype_id(h))
    }

    /// The types of signature `idx`.
    pub fn sig_types(&self, idx: movejit_format::SignatureIndex, ty_args: &[Type]) -> VmResult<Vec<Type>> {
        resolve::signature_types(&self.module, idx, ty_args, &|h| self.datatype_id(h))
    }

    /// The instantiated field types of the datatype named `name`
    /// (`TYPE_RESOLUTION_FAILURE` when the module declares none; `None`:
    /// native).
    pub fn datatype_fields(&self, name: &str, ty_args: &[Type]) -> VmResult<Option<DatatypeFields>> {
        let def = self.datatypes.get(name).ok_or_else(|| VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE))?;
        self.field_types(*def, ty_args)
    }

    /// The instantiated field types of datatype `def` (`None`: native).
    pub fn field_types(&self, def: DatatypeDef, ty_args: &[Type]) -> VmResult<Option<DatatypeFields>> {
        resolve::field_types(&self.module, def, ty_args, &|h| self.datatype_id(h))
    }
}
