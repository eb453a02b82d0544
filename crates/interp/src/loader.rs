//! Loaded modules: a decoded, verified module plus the lookups execution
//! needs (datatype ids per handle, functions and datatypes by name, natives
//! bound per native function), and conversion of signature tokens to runtime
//! types.

use movejit_format::{
    CompiledModule, FunctionAttribute, SignatureToken, StructFieldInformation, StructHandleIndex, Visibility,
};
use movejit_runtime::{DatatypeId, ModuleId, NativeFunction, NativeRegistry, Type, VmError, VmResult};
use std::collections::HashMap;
use std::sync::Arc;

/// Where a datatype is defined inside its module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DatatypeDef {
    /// Index into `struct_defs` (Aptos enums included).
    Struct(u16),
    /// Index into `enum_defs` (Sui).
    SuiEnum(u16),
}

/// What a call needs to know about a function definition, precomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FnInfo {
    pub params: usize,
    /// Declared locals beyond the parameters (0 for natives).
    pub locals: usize,
    pub is_native: bool,
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
        let self_h = module.module_handles.get(module.self_module_handle_idx.idx()).ok_or_else(bad)?;
        let address = *module.address_identifiers.get(self_h.address.idx()).ok_or_else(bad)?;
        let name = module.identifiers.get(self_h.name.idx()).ok_or_else(bad)?.clone();
        let id = ModuleId::new(address, &name);
        let mut handle_ids = Vec::with_capacity(module.struct_handles.len());
        for h in &module.struct_handles {
            let mh = module.module_handles.get(h.module.idx()).ok_or_else(bad)?;
            handle_ids.push(Arc::new(DatatypeId {
                address: *module.address_identifiers.get(mh.address.idx()).ok_or_else(bad)?,
                module: module.identifiers.get(mh.name.idx()).ok_or_else(bad)?.as_str().into(),
                name: module.identifiers.get(h.name.idx()).ok_or_else(bad)?.as_str().into(),
            }));
        }
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
            bound.push(if f.is_native() { natives.get(&address, &name, fname) } else { None });
        }
        Ok(LoadedModule { id, module, handle_ids, datatypes, functions, natives: bound, fn_info })
    }

    pub fn function_name(&self, def: u16) -> String {
        let m = &self.module;
        m.function_defs
            .get(def as usize)
            .and_then(|f| m.function_handles.get(f.function.idx()))
            .and_then(|h| m.identifiers.get(h.name.idx()))
            .cloned()
            .unwrap_or_default()
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
        use SignatureToken as S;
        Ok(match tok {
            S::Vector(t) => Type::Vector(Box::new(self.to_type(t, ty_args)?)),
            S::Reference(t) => Type::Reference(Box::new(self.to_type(t, ty_args)?)),
            S::MutableReference(t) => Type::MutableReference(Box::new(self.to_type(t, ty_args)?)),
            S::Struct(h) => Type::Datatype(self.datatype_id(*h)?, Vec::new()),
            S::StructInstantiation(h, args) => Type::Datatype(
                self.datatype_id(*h)?,
                args.iter().map(|a| self.to_type(a, ty_args)).collect::<VmResult<_>>()?,
            ),
            S::Function(p, r, ab) => Type::Function(
                p.iter().map(|a| self.to_type(a, ty_args)).collect::<VmResult<_>>()?,
                r.iter().map(|a| self.to_type(a, ty_args)).collect::<VmResult<_>>()?,
                *ab,
            ),
            S::TypeParameter(i) => {
                ty_args.get(*i as usize).cloned().ok_or_else(|| VmError::invariant("type parameter out of range"))?
            }
            primitive => Type::primitive(primitive).ok_or_else(|| VmError::invariant("no primitive form"))?,
        })
    }

    /// The types of signature `idx`.
    pub fn sig_types(&self, idx: movejit_format::SignatureIndex, ty_args: &[Type]) -> VmResult<Vec<Type>> {
        let sig = self.module.signatures.get(idx.idx()).ok_or_else(|| VmError::invariant("signature out of bounds"))?;
        sig.0.iter().map(|t| self.to_type(t, ty_args)).collect()
    }

    /// Field counts of a struct definition (`None` for enums / natives).
    pub fn struct_field_count(&self, def: usize) -> VmResult<usize> {
        match self.module.struct_defs.get(def).map(|d| &d.field_information) {
            Some(StructFieldInformation::Declared(f)) => Ok(f.len()),
            _ => Err(VmError::invariant("not a plain struct")),
        }
    }

    /// Field count of variant `v` of an Aptos enum struct definition.
    pub fn variant_field_count(&self, def: usize, v: u16) -> VmResult<usize> {
        match self.module.struct_defs.get(def).map(|d| &d.field_information) {
            Some(StructFieldInformation::DeclaredVariants(vs)) => {
                vs.get(v as usize).map(|v| v.fields.len()).ok_or_else(|| VmError::invariant("bad variant"))
            }
            _ => Err(VmError::invariant("not an enum")),
        }
    }

    /// Field count of variant `v` of a Sui enum definition.
    pub fn sui_variant_field_count(&self, def: usize, v: u16) -> VmResult<usize> {
        self.module
            .enum_defs
            .get(def)
            .and_then(|e| e.variants.get(v as usize))
            .map(|v| v.fields.len())
            .ok_or_else(|| VmError::invariant("bad variant"))
    }
}
