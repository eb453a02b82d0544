//! The engine (shared, thread-safe: configuration and the module cache) and
//! sessions (one per sequence of calls over a resolver: loaded modules,
//! global-storage cache and change set).

use crate::interpreter::Interpreter;
use crate::loader::{DatatypeDef, LoadedModule};
use movejit_format::{decode_module, StatusFlavour, StructFieldInformation};
use movejit_runtime::bcs;
use movejit_runtime::natives::TypeInfo;
use movejit_runtime::{
    AccountAddress, ChangeSet, CostTable, ErrorLocation, GasMeter, Layout, Limits, ModuleId, NativeRegistry,
    Resolver, StatusCode, Type, Value, VmError, VmResult, WriteOp,
};
use sha2::Digest;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Which executor runs the code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExecutorKind {
    #[default]
    Interpreter,
    /// Not yet: the Cranelift JIT.
    Jit,
    /// Not yet: JIT for hot functions, interpreter otherwise.
    Auto,
}

/// Everything an engine is built from.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    pub flavour: StatusFlavour,
    pub limits: Limits,
    pub natives: NativeRegistry,
    pub costs: CostTable,
    pub executor: ExecutorKind,
}

impl EngineConfig {
    /// Aptos flavour, default limits, the Move stdlib natives at 0x1.
    pub fn aptos() -> Self {
        EngineConfig {
            flavour: StatusFlavour::Aptos,
            limits: Limits::default(),
            natives: NativeRegistry::with_stdlib(),
            costs: CostTable::default(),
            executor: ExecutorKind::Interpreter,
        }
    }
    pub fn sui() -> Self {
        EngineConfig { flavour: StatusFlavour::Sui, ..EngineConfig::aptos() }
    }
}

/// A shared execution engine. `Send + Sync`: sessions on many threads may
/// use one engine; decoded and verified modules are cached by content.
pub struct Engine {
    pub(crate) config: EngineConfig,
    cache: Mutex<HashMap<[u8; 32], Arc<LoadedModule>>>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Self {
        Engine { config, cache: Mutex::new(HashMap::new()) }
    }
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }
    /// A session reading modules and resources through `resolver`.
    pub fn new_session<'e, 'r>(&'e self, resolver: &'r dyn Resolver) -> Session<'e, 'r> {
        Session {
            engine: self,
            resolver,
            modules: HashMap::new(),
            call_cache: HashMap::new(),
            globals: Globals::default(),
        }
    }
}

/// What a successful call returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutionResult {
    /// BCS of each return value.
    pub returns: Vec<Vec<u8>>,
    /// (parameter index, BCS of the final value) for each `&mut` parameter.
    pub mutrefs: Vec<(usize, Vec<u8>)>,
    pub gas_used: u64,
}

#[derive(Debug)]
pub(crate) struct GlobalMeta {
    pub address: AccountAddress,
    pub ty: Type,
    pub existed: bool,
    pub dirty: bool,
}

/// The session's cache of global resources.
#[derive(Debug, Default)]
pub(crate) struct Globals {
    pub index: HashMap<(AccountAddress, Type), u32>,
    pub meta: Vec<GlobalMeta>,
    pub values: Vec<Option<Value>>,
}

/// A sequence of calls over one resolver.
pub struct Session<'e, 'r> {
    pub(crate) engine: &'e Engine,
    resolver: &'r dyn Resolver,
    pub(crate) modules: HashMap<ModuleId, Arc<LoadedModule>>,
    /// (calling module, function handle) → (callee module, definition index).
    pub(crate) call_cache: HashMap<(usize, u16), (Arc<LoadedModule>, u16)>,
    pub(crate) globals: Globals,
}

fn verifier_config(f: StatusFlavour) -> movejit_verifier::VerifierConfig {
    match f {
        StatusFlavour::Aptos => movejit_verifier::VerifierConfig::aptos(),
        StatusFlavour::Sui => movejit_verifier::VerifierConfig::sui(),
    }
}

impl<'e, 'r> Session<'e, 'r> {
    pub fn flavour(&self) -> StatusFlavour {
        self.engine.config.flavour
    }

    /// Loads (decodes, links, verifies) a module and its dependencies.
    pub fn load_module(&mut self, id: &ModuleId) -> VmResult<Arc<LoadedModule>> {
        let mut visiting = Vec::new();
        self.load_rec(id, &mut visiting)
    }

    fn load_rec(&mut self, id: &ModuleId, visiting: &mut Vec<ModuleId>) -> VmResult<Arc<LoadedModule>> {
        if let Some(m) = self.modules.get(id) {
            return Ok(m.clone());
        }
        if visiting.contains(id) {
            return Err(VmError::new(StatusCode::CYCLIC_MODULE_DEPENDENCY).with_message(format!("{id}")));
        }
        let bytes = self
            .resolver
            .get_module(id)
            .ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR).with_message(format!("module {id} not found")))?;
        let key: [u8; 32] = sha2::Sha256::digest(&bytes).into();
        let cached = self.engine.cache.lock().map(|c| c.get(&key).cloned()).unwrap_or(None);
        visiting.push(id.clone());
        let loaded = match cached {
            Some(m) => {
                for (a, n) in m.module.immediate_dependencies() {
                    self.load_rec(&ModuleId::new(a, &n), visiting)?;
                }
                m
            }
            None => {
                let module = decode_module(&bytes).map_err(|e| {
                    VmError::new(e.status).with_message(format!("{id}: {}", e.message))
                })?;
                let deps_ids: Vec<ModuleId> =
                    module.immediate_dependencies().into_iter().map(|(a, n)| ModuleId::new(a, &n)).collect();
                let mut deps = Vec::new();
                for d in &deps_ids {
                    deps.push(self.load_rec(d, visiting)?);
                }
                let dep_refs: Vec<_> = deps.iter().map(|d| &d.module).collect();
                movejit_verifier::verify_module(&module, &dep_refs, &verifier_config(self.flavour())).map_err(|e| {
                    let (function_index, code_offset) = match e.location {
                        movejit_verifier::Location::Function { index, code_offset } => (index, code_offset.unwrap_or(0)),
                        _ => (0, 0),
                    };
                    let mut err = VmError::new(StatusCode::UNEXPECTED_VERIFIER_ERROR)
                        .with_message(format!("{}: {}", e.status.name(), e.message));
                    err.location = Some(ErrorLocation {
                        module: id.long_string(),
                        function_name: String::new(),
                        function_index,
                        code_offset,
                    });
                    err
                })?;
                let m = Arc::new(LoadedModule::new(module, &self.engine.config.natives)?);
                if &m.id != id {
                    return Err(VmError::new(StatusCode::LINKER_ERROR).with_message("module id mismatch"));
                }
                if let Ok(mut c) = self.engine.cache.lock() {
                    c.insert(key, m.clone());
                }
                m
            }
        };
        visiting.pop();
        self.modules.insert(id.clone(), loaded.clone());
        Ok(loaded)
    }

    /// Loads every module a type names.
    pub fn load_type(&mut self, t: &Type) -> VmResult<()> {
        match t {
            Type::Vector(e) | Type::Reference(e) | Type::MutableReference(e) => self.load_type(e),
            Type::Datatype(id, args) => {
                let mid = ModuleId { address: id.address, name: id.module.clone() };
                let m = self.load_module(&mid)?;
                if !m.datatypes.contains_key(&*id.name) {
                    return Err(VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE).with_message(format!("{t}")));
                }
                args.iter().try_for_each(|a| self.load_type(a))
            }
            Type::Function(p, r, _) => p.iter().chain(r).try_for_each(|a| self.load_type(a)),
            _ => Ok(()),
        }
    }

    /// Resolves `module::name` to a loaded function definition.
    pub(crate) fn resolve_function(&mut self, module: &ModuleId, name: &str) -> VmResult<(Arc<LoadedModule>, u16)> {
        let m = self.load_module(module)?;
        let def = *m.functions.get(name).ok_or_else(|| {
            VmError::new(StatusCode::FUNCTION_RESOLUTION_FAILURE).with_message(format!("{module}::{name}"))
        })?;
        Ok((m, def))
    }

    /// Calls `module::name<ty_args>(args)`; `args` are BCS bytes, `&T`
    /// parameters given as the BCS of `T`.
    pub fn execute_function(
        &mut self,
        module: &ModuleId,
        name: &str,
        ty_args: &[Type],
        args: &[Vec<u8>],
        gas: &mut GasMeter,
    ) -> Result<ExecutionResult, VmError> {
        let (m, def) = self.resolve_function(module, name)?;
        let fh = m
            .module
            .function_defs
            .get(def as usize)
            .and_then(|f| m.module.function_handles.get(f.function.idx()))
            .ok_or_else(|| VmError::invariant("function handle"))?
            .clone();
        if fh.type_parameters.len() != ty_args.len() {
            return Err(VmError::new(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH));
        }
        for t in ty_args {
            if t.depth() > self.engine.config.limits.max_type_depth {
                return Err(VmError::new(StatusCode::VM_MAX_TYPE_DEPTH_REACHED));
            }
            self.load_type(t)?;
        }
        let params = m.sig_types(fh.parameters, ty_args)?;
        let returns = m.sig_types(fh.return_, ty_args)?;
        if params.len() != args.len() {
            return Err(VmError::new(StatusCode::NUMBER_OF_ARGUMENTS_MISMATCH));
        }
        let mut arg_values = Vec::with_capacity(args.len());
        for (t, bytes) in params.iter().zip(args) {
            let inner = match t {
                Type::Reference(t) | Type::MutableReference(t) => t,
                t => t,
            };
            let l = self.layout_of(inner).map_err(|_| VmError::new(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT))?;
            let v = bcs::deserialize_arg(bytes, &l)
                .map_err(|_| VmError::new(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT))?;
            arg_values.push(v);
        }
        let mut interp = Interpreter::new(self, gas);
        let (ret_values, mem) = interp.run_entry(m.clone(), def, ty_args.to_vec(), &params, arg_values)?;
        let mut out = ExecutionResult { returns: Vec::new(), mutrefs: Vec::new(), gas_used: gas.used() };
        for (v, t) in ret_values.iter().zip(&returns) {
            let inner = match t {
                Type::Reference(t) | Type::MutableReference(t) => t,
                t => t,
            };
            let l = self.layout_of(inner)?;
            let v = mem.deref(v)?;
            out.returns.push(bcs::serialize(v, &l).map_err(|e| {
                if e.status == StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR {
                    e
                } else {
                    VmError::invariant("failed to serialize return values")
                }
            })?);
        }
        let root = mem.frames.first();
        for (i, t) in params.iter().enumerate() {
            if let Type::MutableReference(inner) = t {
                let l = self.layout_of(inner)?;
                let v = root.and_then(|r| r.get(i)).ok_or_else(|| VmError::invariant("argument frame"))?;
                out.mutrefs.push((i, bcs::serialize(v, &l)?));
            }
        }
        self.globals.values = mem.globals;
        Ok(out)
    }

    /// The resource writes of everything executed so far.
    pub fn finish(self) -> VmResult<ChangeSet> {
        let mut cs = ChangeSet::default();
        for (i, meta) in self.globals.meta.iter().enumerate() {
            if !meta.dirty {
                continue;
            }
            let v = self.globals.values.get(i).and_then(|v| v.as_ref());
            match v {
                Some(v) => {
                    let l = self.layout_of(&meta.ty)?;
                    cs.resources.insert((meta.address, meta.ty.clone()), WriteOp::Write(bcs::serialize(v, &l)?));
                }
                None if meta.existed => {
                    cs.resources.insert((meta.address, meta.ty.clone()), WriteOp::Delete);
                }
                None => {}
            }
        }
        Ok(cs)
    }

    /// The slot of resource `ty` at `address`, loading it on first use.
    pub(crate) fn global_slot(&mut self, address: AccountAddress, ty: &Type, values: &mut Vec<Option<Value>>) -> VmResult<u32> {
        if let Some(s) = self.globals.index.get(&(address, ty.clone())) {
            return Ok(*s);
        }
        let value = match self.resolver.get_resource(&address, ty) {
            Some(bytes) => {
                let l = self.layout_of(ty)?;
                Some(bcs::deserialize(&bytes, &l).map_err(|_| VmError::new(StatusCode::FAILED_TO_DESERIALIZE_RESOURCE))?)
            }
            None => None,
        };
        let slot = self.globals.meta.len() as u32;
        self.globals.meta.push(GlobalMeta { address, ty: ty.clone(), existed: value.is_some(), dirty: false });
        values.push(value);
        self.globals.index.insert((address, ty.clone()), slot);
        Ok(slot)
    }

    fn layout_rec(&self, t: &Type, depth: usize) -> VmResult<Layout> {
        if depth > self.engine.config.limits.max_type_depth {
            return Err(VmError::new(StatusCode::VM_MAX_TYPE_DEPTH_REACHED));
        }
        Ok(match t {
            Type::Bool => Layout::Bool,
            Type::U8 => Layout::U8,
            Type::U16 => Layout::U16,
            Type::U32 => Layout::U32,
            Type::U64 => Layout::U64,
            Type::U128 => Layout::U128,
            Type::U256 => Layout::U256,
            Type::I8 => Layout::I8,
            Type::I16 => Layout::I16,
            Type::I32 => Layout::I32,
            Type::I64 => Layout::I64,
            Type::I128 => Layout::I128,
            Type::I256 => Layout::I256,
            Type::Address => Layout::Address,
            Type::Signer => Layout::Signer,
            Type::Vector(e) => Layout::Vector(Box::new(self.layout_rec(e, depth + 1)?)),
            Type::Function(..) => Layout::Function,
            Type::Datatype(id, args) => {
                let mid = ModuleId { address: id.address, name: id.module.clone() };
                let m = self
                    .modules
                    .get(&mid)
                    .ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR).with_message(format!("{mid} not loaded")))?;
                let def = m
                    .datatypes
                    .get(&*id.name)
                    .ok_or_else(|| VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE).with_message(format!("{t}")))?;
                let fields = |fs: &[movejit_format::FieldDefinition]| -> VmResult<Vec<Layout>> {
                    fs.iter().map(|f| self.layout_rec(&m.to_type(&f.signature, args)?, depth + 1)).collect()
                };
                match def {
                    DatatypeDef::Struct(i) => {
                        let sd = m.module.struct_defs.get(*i as usize).ok_or_else(|| VmError::invariant("struct def"))?;
                        match &sd.field_information {
                            StructFieldInformation::Native => return Err(VmError::invariant("native struct")),
                            StructFieldInformation::Declared(fs) => Layout::Struct(fields(fs)?),
                            StructFieldInformation::DeclaredVariants(vs) => {
                                Layout::Enum(vs.iter().map(|v| fields(&v.fields)).collect::<VmResult<_>>()?)
                            }
                        }
                    }
                    DatatypeDef::SuiEnum(i) => {
                        let ed = m.module.enum_defs.get(*i as usize).ok_or_else(|| VmError::invariant("enum def"))?;
                        Layout::Enum(ed.variants.iter().map(|v| fields(&v.fields)).collect::<VmResult<_>>()?)
                    }
                }
            }
            Type::Reference(_) | Type::MutableReference(_) | Type::TyParam(_) => {
                return Err(VmError::invariant(format!("no layout for {t}")))
            }
        })
    }
}

impl TypeInfo for Session<'_, '_> {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        self.layout_rec(ty, 1)
    }
}
