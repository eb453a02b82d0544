//! The state the interpreter executes against: [`EngineState`], shared by
//! every session and thread of one engine (configuration, the module cache
//! and warm module sets, prepared instances, entry plans, layouts), and
//! [`SessionState`], one per sequence of calls over a resolver (the loaded
//! module set, the global-storage cache with its undo journal, value depths,
//! the flat interpreter's call-site caches, the session's compiled code).
//!
//! movejit-engine's `Engine` and `Session` own one of each and drive them:
//! publishing (`movejit_engine`'s `publish.rs`) loads through
//! [`SessionState::load_module`] and links with
//! [`SessionState::linking_context`]; entry calls go through
//! [`SessionState::execute_function`] / [`SessionState::execute_script`];
//! [`SessionState::finish`] turns the globals into the change set. The flat
//! interpreter (`flat/`) reads and writes the rest of the session directly
//! (crate-private fields): it is this crate's own executor.

use crate::flat::exec::FlatInterp;
use crate::flat::{FlatSession, PreparedTable};
use crate::fxhash::FxHashMap;
use movejit_format::{AbilitySet, StatusFlavour};
use movejit_loader::{verifier_config, LoadedModule, ModuleCache, SessionModules};
use movejit_runtime::compiled::{CompiledCode, CompiledCodeFactory, CompiledStats, ModuleSource};
use movejit_runtime::flat::{bcs as flat_bcs, FlatValue};
use movejit_runtime::natives::TypeInfo;
use movejit_runtime::resolve::{self, DatatypeFields, DatatypeSource, LayoutLimits};
use movejit_runtime::DatatypeId;
use movejit_runtime::{
    AccountAddress, ChangeSet, EngineConfig, ErrorLocation, ExecutorKind, GasMeter, Layout, ModuleId, Resolver,
    StatusCode, Type, TypeId, TypeTable, VmError, VmResult, WriteOp,
};
use std::sync::{Arc, Mutex, RwLock};

/// Message prefix of the `FEATURE_NOT_ENABLED` error of executor `Jit` when
/// the called function (or something it reaches) cannot be compiled.
pub const JIT_NOT_COMPILED: &str = "not compiled by the JIT: ";

/// The engine-wide state of the interpreter. `Send + Sync`: sessions on
/// many threads use one; decoded and verified modules are cached by
/// content.
pub struct EngineState {
    pub(crate) config: EngineConfig,
    /// The loader's engine-wide module cache and warm module sets.
    pub(crate) modules: ModuleCache,
    /// Unique while the process runs: names the engine in threads' entry
    /// memos ([`EntryMemo`]).
    serial: u64,
    /// Compiled code for the `Jit` / `Auto` executors.
    compiled: Option<Arc<dyn CompiledCodeFactory>>,
    /// Prepared function instances (flat interpreter), by (module, function
    /// definition, type arguments), and native callees: append-only, each
    /// keeps its module alive, so the module's address stays a unique key.
    pub(crate) prepared: PreparedTable,
    /// A meter over `config.costs`, built once: the meters of nested runs
    /// (compiled code calling interpreted code) share its table.
    pub(crate) meter_template: GasMeter,
    /// Entry functions whose checks passed, per warm module set.
    entries: EntryPlans,
    /// Flat layouts per warm module set: a type's layout depends only on
    /// the modules its session has, so sessions over one set share them.
    pub(crate) set_layouts: RwLock<FxHashMap<u64, FxHashMap<Type, Arc<movejit_runtime::flat::FlatLayout>>>>,
    /// Flat layouts of the primitive types (`flat::primitive_flat_layouts`).
    pub(crate) primitive_layouts: Vec<Option<Arc<movejit_runtime::flat::FlatLayout>>>,
    /// Frame stacks of finished entry runs, kept for the next ones:
    /// allocating a chunk per short call and freeing it cost more than many
    /// such calls (each frame is zeroed when pushed). At most
    /// [`SPARE_STACKS`] are kept.
    pub(crate) spare_stacks: Mutex<Vec<movejit_runtime::flat::mem::FrameStack>>,
}

static NEXT_ENGINE_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// What a thread remembers of its last entry calls: per (engine, module,
/// function, type arguments), the warm set its session took and the plan
/// it found. Indices only (sets and plans live as long as their engine and
/// are found through it), checked like any warm set against the store.
struct EntryMemo {
    engine: u64,
    module: ModuleId,
    name: String,
    ty_args: Vec<Type>,
    set: usize,
    plan: usize,
}

/// Entry calls a thread remembers.
const ENTRY_MEMOS: usize = 8;

thread_local! {
    static ENTRY_MEMOS_OF_THREAD: std::cell::RefCell<Vec<EntryMemo>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl EntryMemo {
    fn find(engine: u64, module: &ModuleId, name: &str, ty_args: &[Type]) -> Option<(usize, usize)> {
        ENTRY_MEMOS_OF_THREAD
            .try_with(|m| {
                m.borrow()
                    .iter()
                    .rev()
                    .find(|e| e.engine == engine && e.name == name && e.module == *module && e.ty_args[..] == *ty_args)
                    .map(|e| (e.set, e.plan))
            })
            .ok()
            .flatten()
    }

    fn remember(engine: u64, set: usize, plan: usize, module: &ModuleId, name: &str, ty_args: &[Type]) {
        let _ = ENTRY_MEMOS_OF_THREAD.try_with(|m| {
            let mut m = m.borrow_mut();
            m.retain(|e| !(e.engine == engine && e.name == name && e.module == *module && e.ty_args[..] == *ty_args));
            if m.len() >= ENTRY_MEMOS {
                m.remove(0);
            }
            m.push(EntryMemo {
                engine,
                module: module.clone(),
                name: name.to_string(),
                ty_args: ty_args.to_vec(),
                set,
                plan,
            });
        });
    }
}

/// Frame stacks an engine keeps (one per thread running calls at once is
/// enough).
pub(crate) const SPARE_STACKS: usize = 16;

/// What calling an entry function needs once its checks passed (type
/// arguments, signature, argument depths and layouts): all of it follows
/// from the session's modules and the type arguments, so a session over a
/// warm module set reuses the plan of an earlier session over the same set
/// and only decodes its arguments.
pub(crate) struct EntryPlan {
    pub(crate) module: Arc<LoadedModule>,
    pub(crate) def: u16,
    pub(crate) params: Vec<Type>,
    pub(crate) returns: Vec<Type>,
    /// The flat layout each argument decodes into (a reference's target's).
    pub(crate) arg_layouts: Vec<Arc<movejit_runtime::flat::FlatLayout>>,
    /// Set once a call of the plan succeeded: the direct compiled entry
    /// path (`flat/direct.rs`).
    pub(crate) direct: std::sync::OnceLock<crate::flat::direct::DirectEntry>,
    /// What the compiled code found for the plan (`CompiledCode::compile_entry`).
    pub(crate) compiled: movejit_runtime::compiled::EntrySlot,
}

/// The engine's entry plans: append-only while it lives, so a session
/// borrows a plan for `'e` without touching a reference count.
#[derive(Default)]
struct EntryPlans {
    plans: boxcar::Vec<EntryPlan>,
    by_key: WarmIndex,
}

/// A function instantiation within a warm module set: (set, module by the
/// address of its loaded form, function definition).
pub(crate) type WarmKey = (u64, usize, u16);

/// Indices into an engine-wide append-only table, per warm module set:
/// (`WarmKey`, type arguments) → index of the entry.
#[derive(Default)]
pub(crate) struct WarmIndex(RwLock<FxHashMap<WarmKey, Instantiations>>);

/// The type-argument lists of one `WarmKey`, each with its entry's index.
type Instantiations = Vec<(Vec<Type>, usize)>;

impl WarmIndex {
    pub(crate) fn find(&self, key: &WarmKey, ty_args: &[Type]) -> Option<usize> {
        let map = self.0.read().ok()?;
        Some(map.get(key)?.iter().find(|(t, _)| t[..] == *ty_args)?.1)
    }

    /// Records the index `add()` gives, unless `(key, ty_args)` has one.
    pub(crate) fn insert_with(&self, key: WarmKey, ty_args: &[Type], add: impl FnOnce() -> usize) {
        if let Ok(mut map) = self.0.write() {
            let v = map.entry(key).or_default();
            if !v.iter().any(|(t, _)| t[..] == *ty_args) {
                v.push((ty_args.to_vec(), add()));
            }
        }
    }
}

impl EntryPlans {
    fn find(&self, key: &WarmKey, ty_args: &[Type]) -> Option<&EntryPlan> {
        self.plans.get(self.by_key.find(key, ty_args)?)
    }

    fn find_index(&self, key: &WarmKey, ty_args: &[Type]) -> Option<usize> {
        self.by_key.find(key, ty_args)
    }

    /// Adds `plan` unless the key has one; the index of the key's plan.
    fn add(&self, key: WarmKey, ty_args: &[Type], plan: EntryPlan) -> Option<usize> {
        self.by_key.insert_with(key, ty_args, || self.plans.push(plan));
        self.by_key.find(&key, ty_args)
    }
}

impl EngineState {
    /// The state of an engine built from `config`; its `Jit` / `Auto`
    /// executors run compiled code made by `compiled` (one [`CompiledCode`]
    /// per session; without it, executor `Jit` refuses every call).
    pub fn new(config: EngineConfig, compiled: Option<Arc<dyn CompiledCodeFactory>>) -> Self {
        let meter_template = GasMeter::new(config.costs.clone(), 0);
        EngineState {
            config,
            modules: ModuleCache::default(),
            serial: NEXT_ENGINE_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            compiled,
            prepared: Default::default(),
            meter_template,
            entries: EntryPlans::default(),
            set_layouts: RwLock::default(),
            primitive_layouts: crate::flat::primitive_flat_layouts(),
            spare_stacks: Mutex::default(),
        }
    }
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }
    /// A session reading modules and resources through `resolver`.
    #[inline]
    pub fn new_session<'e, 'r>(&'e self, resolver: &'r dyn Resolver) -> SessionState<'e, 'r> {
        SessionState {
            engine: self,
            resolver,
            loaded: SessionModules::new(&self.modules, &self.config, resolver),
            globals: Globals::default(),
            depth_cache: FxHashMap::default(),
            flat: FlatSession::default(),
            compiled: match self.config.executor {
                ExecutorKind::Interpreter => None,
                ExecutorKind::Jit | ExecutorKind::Auto => self.compiled.as_ref().map(|f| f.new_session()),
            },
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
    /// Layouts of the return values and of the `&mut` parameters (to decode them).
    pub return_layouts: Vec<Layout>,
    pub mutref_layouts: Vec<Layout>,
}

#[derive(Debug)]
pub(crate) struct GlobalMeta {
    pub address: AccountAddress,
    /// The resource type, interned (the slot's key) and structural (for
    /// the change set).
    pub id: TypeId,
    pub ty: &'static Type,
    pub existed: bool,
    pub dirty: bool,
    /// In the running call's journal ([`Globals::changing`]).
    pub journaled: bool,
}

/// The session's cache of global resources, keyed by (address, interned
/// resource type): a lookup hashes 36 bytes, never a structural type.
#[derive(Debug, Default)]
pub(crate) struct Globals {
    pub index: FxHashMap<(AccountAddress, TypeId), u32>,
    pub meta: Vec<GlobalMeta>,
    /// The resources' values (`None`: absent or moved out).
    pub flat: Vec<Option<FlatValue>>,
    /// Flat layouts of the resource types met, by id.
    pub layouts: FxHashMap<TypeId, Arc<movejit_runtime::flat::FlatLayout>>,
    /// Recently found slots, direct-mapped by (type id, address): a hit
    /// skips hashing the 36-byte key. Hints are checked against `meta`, so
    /// a stale one (after a failed call truncated the slots) only misses.
    hints: [u32; GLOBAL_HINTS],
    /// The running flat call's undo journal: each slot that existed when
    /// the call began and that it changed, as it was before (value and
    /// `dirty`), copied at the first change. A failed call restores these
    /// and drops the slots it loaded; nothing is copied up front.
    journal: Vec<(u32, Option<FlatValue>, bool)>,
    /// Slots that existed when the running flat call began (0 outside one).
    call_start: usize,
}

const GLOBAL_HINTS: usize = 16;

impl Globals {
    /// The slot of resource `ty` at `address` when the session has loaded it.
    #[inline]
    pub fn find(&mut self, address: &AccountAddress, ty: TypeId) -> Option<usize> {
        let h = (ty.0 as usize ^ address.0[31] as usize) % GLOBAL_HINTS;
        let s = self.hints[h] as usize;
        if self.meta.get(s).is_some_and(|m| m.id == ty && m.address == *address) {
            return Some(s);
        }
        let s = *self.index.get(&(*address, ty))?;
        self.hints[h] = s;
        Some(s as usize)
    }

    /// The running call is about to change slot `s` (a mutable borrow, a
    /// move out or in; the slot exists): journals it on its first change,
    /// then marks it written.
    #[inline]
    pub fn changing(&mut self, s: usize) {
        let Some(meta) = self.meta.get_mut(s) else { return };
        if s < self.call_start && !meta.journaled {
            meta.journaled = true;
            let value = self.flat.get(s).and_then(|v| v.as_ref().map(FlatValue::copy));
            self.journal.push((s as u32, value, meta.dirty));
        }
        meta.dirty = true;
    }

    /// A flat call begins: what it changes from now on is journaled.
    pub(crate) fn begin_call(&mut self) {
        self.end_call();
        self.call_start = self.meta.len();
    }

    /// The running call succeeded: its changes stay.
    pub(crate) fn end_call(&mut self) {
        for (s, _, _) in self.journal.drain(..) {
            if let Some(m) = self.meta.get_mut(s as usize) {
                m.journaled = false;
            }
        }
        self.call_start = 0;
    }

    /// The running call failed: it changes nothing.
    pub(crate) fn roll_back(&mut self) {
        for (s, value, dirty) in std::mem::take(&mut self.journal) {
            let s = s as usize;
            if let (Some(m), Some(v)) = (self.meta.get_mut(s), self.flat.get_mut(s)) {
                *v = value;
                m.dirty = dirty;
                m.journaled = false;
            }
        }
        let n = self.call_start;
        self.meta.truncate(n);
        self.flat.truncate(n);
        self.index.retain(|_, slot| (*slot as usize) < n);
        self.call_start = 0;
    }
}

/// The interpreter's state of one session (a sequence of calls over one
/// resolver): the boundary that movejit-engine's `Session` drives and the
/// flat interpreter (`flat/`) runs against. It holds the loaded module set
/// (borrowed from a warm set until the session loads beyond it), the
/// global-storage cache with the running call's undo journal, the flat
/// interpreter's per-session caches and the session's compiled code. What
/// sessions share (the warm index, entry plans, prepared instances,
/// layouts) is the [`EngineState`]'s; gas is the caller's meter and native
/// state the running call's, both passed per call.
pub struct SessionState<'e, 'r> {
    pub(crate) engine: &'e EngineState,
    pub(crate) resolver: &'r dyn Resolver,
    /// The session's loaded modules (the loader's).
    pub(crate) loaded: SessionModules<'e, 'r>,
    pub(crate) globals: Globals,
    /// Value depth of types already measured.
    pub(crate) depth_cache: FxHashMap<Type, usize>,
    /// Compiled code consulted at calls (executors `Jit` / `Auto`).
    pub(crate) compiled: Option<Box<dyn CompiledCode + 'e>>,
    /// Call-site caches and layouts of the flat interpreter.
    pub(crate) flat: FlatSession<'e>,
}

/// The session's loaded modules, their hashes and warm set number, for
/// compiling callees.
pub(crate) struct LoadedModules<'a>(
    pub &'a FxHashMap<ModuleId, Arc<LoadedModule>>,
    pub &'a FxHashMap<ModuleId, [u8; 32]>,
    pub Option<u64>,
);

impl ModuleSource for LoadedModules<'_> {
    fn module(&self, id: &ModuleId) -> Option<&movejit_format::CompiledModule> {
        self.0.get(id).map(|m| &m.module)
    }

    fn module_hash(&self, id: &ModuleId) -> Option<[u8; 32]> {
        self.1.get(id).copied()
    }

    fn module_set_id(&self) -> Option<u64> {
        self.2
    }

    fn shared_module(&self, id: &ModuleId) -> Option<movejit_runtime::compiled::SharedModule> {
        self.0.get(id).map(|m| m.clone() as movejit_runtime::compiled::SharedModule)
    }
}

impl<'e, 'r> SessionState<'e, 'r> {
    /// Compiled vs interpreted counts (`None` when no compiled code is attached).
    pub fn compiled_stats(&self) -> Option<CompiledStats> {
        // Instances compiled code had interpreted count as interpreted.
        let nested = self.flat.nested_count();
        self.compiled
            .as_ref()
            .map(|c| c.stats())
            .map(|s| CompiledStats { interpreted_functions: s.interpreted_functions + nested, ..s })
    }

    pub fn flavour(&self) -> StatusFlavour {
        self.engine.config.flavour
    }

    /// The configuration of the session's engine.
    pub fn config(&self) -> &'e EngineConfig {
        &self.engine.config
    }

    /// Loads (decodes, links, verifies) a module and its dependencies.
    pub fn load_module(&mut self, id: &ModuleId) -> VmResult<Arc<LoadedModule>> {
        self.loaded.load_module(id)
    }

    /// What the verifier links `module` against
    /// ([`SessionModules::linking_context`]).
    pub fn linking_context(
        &self,
        module: &movejit_format::CompiledModule,
        deps: &[Arc<LoadedModule>],
        stage: movejit_loader::Stage,
    ) -> (Vec<Arc<LoadedModule>>, Vec<movejit_format::CompiledModule>) {
        self.loaded.linking_context(module, deps, stage)
    }

    /// Loads and checks a caller-given type argument
    /// ([`SessionModules::load_type`]).
    pub fn load_type(&mut self, t: &Type) -> VmResult<()> {
        self.loaded.load_type(t)
    }

    /// Resolves `module::name` to a loaded function definition.
    pub(crate) fn resolve_function(&mut self, module: &ModuleId, name: &str) -> VmResult<(Arc<LoadedModule>, u16)> {
        self.loaded.resolve_function(module, name)
    }

    /// Runs an Aptos script: decode, load its dependencies, verify, then call
    /// its `main`. The script runs as a module `0x0::<SELF>` with one public
    /// function `main` (locations of its errors name that module).
    pub fn execute_script(
        &mut self,
        bytes: &[u8],
        ty_args: &[Type],
        args: &[Vec<u8>],
        gas: &mut GasMeter,
    ) -> Result<ExecutionResult, VmError> {
        let script =
            movejit_format::decode_script(bytes).map_err(|e| VmError::new(e.status).with_message(e.message))?;
        let mut deps = Vec::new();
        for h in &script.module_handles {
            let a = *script.address_identifiers.get(h.address.idx()).ok_or_else(|| VmError::invariant("address"))?;
            let n = script.identifiers.get(h.name.idx()).ok_or_else(|| VmError::invariant("identifier"))?;
            deps.push(self.load_module(&ModuleId::new(a, n))?);
        }
        let dep_refs: Vec<_> = deps.iter().map(|d| &d.module).collect();
        movejit_verifier::verify_script(&script, &dep_refs, &verifier_config(self.flavour()))
            .map_err(|e| VmError::new(e.status).with_message(e.message))?;
        let module = script_as_module(script);
        let loaded = Arc::new(LoadedModule::new(module, &self.engine.config.natives)?);
        let id = loaded.id.clone();
        // Every script is module `0x0::<SELF>`: its bytes tell them apart.
        self.loaded.add_unstored(loaded, movejit_runtime::module_hash(bytes));
        let r = self.execute_function(&id, "main", ty_args, args, gas);
        self.loaded.remove(&id);
        r
    }

    /// The parameter and return types of `module::name<ty_args>` (loading
    /// and verifying the module first).
    pub fn function_signature(
        &mut self,
        module: &ModuleId,
        name: &str,
        ty_args: &[Type],
    ) -> VmResult<(Vec<Type>, Vec<Type>)> {
        let (m, _, fh) = self.resolve_instantiation(module, name, ty_args)?;
        Ok((m.sig_types(fh.parameters, ty_args)?, m.sig_types(fh.return_, ty_args)?))
    }

    /// Resolves `module::name<ty_args>` as the Move VM loads an entry
    /// function: the function, then each type argument ([`Self::load_type`]),
    /// then their count and the function's constraints.
    fn resolve_instantiation(
        &mut self,
        module: &ModuleId,
        name: &str,
        ty_args: &[Type],
    ) -> VmResult<(Arc<LoadedModule>, u16, movejit_format::FunctionHandle)> {
        let (m, def) = self.resolve_function(module, name)?;
        let fh = m
            .module
            .function_defs
            .get(def as usize)
            .and_then(|f| m.module.function_handles.get(f.function.idx()))
            .ok_or_else(|| VmError::invariant("function handle"))?
            .clone();
        for t in ty_args {
            self.load_type(t)?;
        }
        if fh.type_parameters.len() != ty_args.len() {
            return Err(VmError::new(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH));
        }
        for (t, constraint) in ty_args.iter().zip(&fh.type_parameters) {
            if !self.abilities_of(t)?.contains(*constraint) {
                let mut e = VmError::new(StatusCode::CONSTRAINT_NOT_SATISFIED);
                e.location = Some(ErrorLocation {
                    module: m.id.long_string(),
                    function_name: name.to_string(),
                    function_index: def,
                    code_offset: 0,
                });
                return Err(e);
            }
        }
        Ok((m, def, fh))
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
        // Aptos charges loading the entry function's module first (before
        // its verification and the argument checks).
        if let Some(a) = gas.aptos_meter_mut() {
            if let Some(bytes) = self.resolver.get_module(module) {
                a.charge_module(module, bytes.len() as u64).map_err(VmError::new)?;
            }
        }
        let fresh = self.loaded.is_empty();
        if let Some(plan) = self.entry_plan(module, name, ty_args, fresh) {
            return self.execute_planned(plan, name, ty_args, args, gas);
        }
        let (m, def, fh) = self.resolve_instantiation(module, name, ty_args)?;
        let params = m.sig_types(fh.parameters, ty_args)?;
        let returns = m.sig_types(fh.return_, ty_args)?;
        if params.len() != args.len() {
            return Err(VmError::new(StatusCode::NUMBER_OF_ARGUMENTS_MISMATCH));
        }
        self.check_compiles(&m, def, name, ty_args, gas, None)?;
        // The call's memory budget (nested runs share it); flat arguments
        // count.
        let _memory = movejit_runtime::memory::MemoryScope::enter(self.engine.config.limits.max_memory);
        // Each argument is decoded once, straight into flat values.
        let mut flat_args = Vec::with_capacity(args.len());
        let mut arg_layouts = Vec::with_capacity(args.len());
        for (t, bytes) in params.iter().zip(args) {
            let inner = match t {
                Type::Reference(t) | Type::MutableReference(t) => t,
                t => t,
            };
            // No argument nests deeper than code could build a value
            // (VecPack / Pack check the same depth).
            if self.type_value_depth(inner)? > self.engine.config.limits.max_value_depth {
                return Err(VmError::new(StatusCode::VM_MAX_VALUE_DEPTH_REACHED)
                    .with_message(format!("argument of type {inner} nests too deep")));
            }
            // The serialized layout's limits decide what deserializes.
            self.layout_of(inner).map_err(|_| VmError::bad_argument())?;
            let aptos = self.flavour() == StatusFlavour::Aptos;
            let l = self.flat_layout(inner).map_err(|_| VmError::bad_argument())?;
            arg_layouts.push(l.clone());
            let v = if aptos { flat_bcs::deserialize_arg(bytes, l) } else { flat_bcs::deserialize(bytes, l) };
            flat_args.push(v.map_err(|_| VmError::bad_argument())?);
        }
        // Every check passed: later sessions over the same warm module
        // set skip them (checked against the set the session has now:
        // loading the type arguments may have added modules).
        if let Some(set) = self.loaded.set_id() {
            let key = (set, Arc::as_ptr(&m) as usize, def);
            let plan = EntryPlan {
                module: m.clone(),
                def,
                params: params.clone(),
                returns: returns.clone(),
                arg_layouts,
                direct: Default::default(),
                compiled: Default::default(),
            };
            let added = self.engine.entries.add(key, ty_args, plan);
            // What the next sessions' calls take from the start (so their
            // first call is as short as the later ones): this thread's memo
            // and the compiled code's slot.
            if let Some(at) = added.filter(|_| fresh) {
                self.remember_entry(module, name, ty_args, set, at);
            }
            if let Some(plan) = added.and_then(|at| self.engine.entries.plans.get(at)) {
                let _ = self.check_compiles(&m, def, name, ty_args, gas, Some(&plan.compiled));
            }
        }
        let key = self.loaded.set_id().map(|set| (set, Arc::as_ptr(&m) as usize, def));
        let r = self.execute_flat(m, def, ty_args, &params, &returns, flat_args, gas, None);
        // The next session's call of the plan may take the direct path.
        if let (Ok(done), Some(plan)) = (&r, key.and_then(|k| self.engine.entries.find(&k, ty_args))) {
            self.record_direct_entry(plan, done);
        }
        r
    }

    /// The plan of entry function `module::name<ty_args>` when an earlier
    /// session over the same warm module set made one.
    fn entry_plan(&mut self, module: &ModuleId, name: &str, ty_args: &[Type], fresh: bool) -> Option<&'e EntryPlan> {
        if fresh {
            if let Some(plan) = self.remembered_plan(module, name, ty_args) {
                return Some(plan);
            }
        }
        // Only a module already loaded or in a warm set: loading anew (and
        // its errors) is the full path's.
        if !self.loaded.modules().contains_key(module) && !self.loaded.take_warm(module) {
            return None;
        }
        let set = self.loaded.set_id()?;
        let m = self.loaded.get(module)?;
        let def = *m.functions.get(name)?;
        let at = self.engine.entries.find_index(&(set, Arc::as_ptr(m) as usize, def), ty_args)?;
        if fresh {
            self.remember_entry(module, name, ty_args, set, at);
        }
        self.engine.entries.plans.get(at)
    }

    /// Remembers (this thread) that a fresh session's call of
    /// `module::name<ty_args>` took warm set `set` (of `module`) and plan
    /// `plan`.
    fn remember_entry(&self, module: &ModuleId, name: &str, ty_args: &[Type], set: u64, plan: usize) {
        let warm = self.engine.modules.warm_index(module);
        if let Some(set_index) = warm.filter(|i| self.engine.modules.warm_set(*i).is_some_and(|s| s.id() == set)) {
            EntryMemo::remember(self.engine.serial, set_index, plan, module, name, ty_args);
        }
    }

    /// The plan this thread found last for `module::name<ty_args>` on this
    /// engine, with its warm set taken, when the session's store has that
    /// set's versions: no lock, no hashing of names.
    fn remembered_plan(&mut self, module: &ModuleId, name: &str, ty_args: &[Type]) -> Option<&'e EntryPlan> {
        let (set_index, plan) = EntryMemo::find(self.engine.serial, module, name, ty_args)?;
        let set = self.engine.modules.warm_set(set_index)?;
        if !self.loaded.adopt_warm(set, module) {
            return None;
        }
        self.engine.entries.plans.get(plan)
    }

    /// `execute_function` over a plan: what is left of the full path
    /// (argument count, the JIT's compile, decoding, the call) in its order.
    fn execute_planned(
        &mut self,
        plan: &'e EntryPlan,
        name: &str,
        ty_args: &[Type],
        args: &[Vec<u8>],
        gas: &mut GasMeter,
    ) -> Result<ExecutionResult, VmError> {
        if plan.params.len() != args.len() {
            return Err(VmError::new(StatusCode::NUMBER_OF_ARGUMENTS_MISMATCH));
        }
        self.check_compiles(&plan.module, plan.def, name, ty_args, gas, Some(&plan.compiled))?;
        let _memory = movejit_runtime::memory::MemoryScope::enter(self.engine.config.limits.max_memory);
        let aptos = self.flavour() == StatusFlavour::Aptos;
        let flat_args = match self.run_direct_entry(plan, ty_args, args, aptos, gas) {
            Ok(done) => return done,
            Err(Some(decoded)) => decoded,
            Err(None) => {
                let mut flat_args = Vec::with_capacity(args.len());
                for (l, bytes) in plan.arg_layouts.iter().zip(args) {
                    let v = if aptos {
                        flat_bcs::deserialize_arg(bytes, l.clone())
                    } else {
                        flat_bcs::deserialize(bytes, l.clone())
                    };
                    flat_args.push(v.map_err(|_| VmError::bad_argument())?);
                }
                flat_args
            }
        };
        let known = plan.direct.get().map(|d| &d.layouts);
        let r = self.execute_flat(
            plan.module.clone(),
            plan.def,
            ty_args,
            &plan.params,
            &plan.returns,
            flat_args,
            gas,
            known,
        );
        if let Ok(done) = &r {
            self.record_direct_entry(plan, done);
        }
        r
    }

    /// Executor `Jit`: the function and everything it reaches must compile
    /// (refused before anything runs). A native entry function has no
    /// bytecode to compile: it runs as native code under every executor.
    /// Under Aptos's schedule code is compiled at calls and what it cannot
    /// charge runs interpreted (jit-abi.md 5.1): nothing is refused.
    /// Compiling comes before the call's memory budget opens: what the code
    /// keeps alive (constants) is not the call's.
    fn check_compiles(
        &mut self,
        m: &Arc<LoadedModule>,
        def: u16,
        name: &str,
        ty_args: &[Type],
        gas: &GasMeter,
        slot: Option<&movejit_runtime::compiled::EntrySlot>,
    ) -> VmResult<()> {
        let native_entry = m.module.function_defs.get(def as usize).is_some_and(|f| f.code.is_none());
        if self.engine.config.executor != ExecutorKind::Jit || native_entry || gas.is_aptos() {
            return Ok(());
        }
        let modules = LoadedModules(self.loaded.modules(), self.loaded.hashes(), self.loaded.set_id());
        let r = match (self.compiled.as_mut(), slot) {
            (Some(c), Some(slot)) => c.compile_entry(&modules, &m.id, def, ty_args, slot),
            (Some(c), None) => c.compile(&modules, &m.id, def, ty_args),
            (None, _) => Err("no JIT attached to this engine".to_string()),
        };
        r.map_err(|why| {
            VmError::new(StatusCode::FEATURE_NOT_ENABLED)
                .with_message(format!("{JIT_NOT_COMPILED}{}::{name}: {why}", m.id))
        })
    }

    /// The flat interpreter's `execute_function` (arguments checked and
    /// decoded above).
    /// `known`: the result layouts an earlier run of the same plan found.
    #[allow(clippy::too_many_arguments)]
    fn execute_flat(
        &mut self,
        m: Arc<LoadedModule>,
        def: u16,
        ty_args: &[Type],
        params: &[Type],
        returns: &[Type],
        arg_values: Vec<FlatValue>,
        gas: &mut GasMeter,
        known: Option<&crate::flat::direct::ResultLayouts>,
    ) -> Result<ExecutionResult, VmError> {
        let inner = |t: &Type| match t {
            Type::Reference(t) | Type::MutableReference(t) => (**t).clone(),
            t => t.clone(),
        };
        self.globals.begin_call();
        let mut interp = FlatInterp::new(self, gas);
        let r = interp.run_entry(m, def, ty_args.to_vec(), params, arg_values, returns);
        drop(interp);
        let (rets, roots) = match r {
            Ok(x) => {
                self.globals.end_call();
                x
            }
            Err(e) => {
                // A failed call changes nothing.
                self.globals.roll_back();
                return Err(e);
            }
        };
        let (mut returns_bcs, mut mutrefs) = (Vec::with_capacity(rets.len()), Vec::new());
        let (mut return_layouts, mut mutref_layouts) = (Vec::new(), Vec::new());
        for (v, t) in rets.iter().zip(returns) {
            if known.is_none() {
                let it = inner(t);
                let l = self.layout_of(&it).map_err(|e| match self.flavour() {
                    // Sui: "entry point functions cannot have non-serializable return types".
                    StatusFlavour::Sui => VmError::new(StatusCode::VERIFICATION_ERROR).with_message(e.to_string()),
                    StatusFlavour::Aptos => e,
                })?;
                return_layouts.push(l);
            }
            // (A returned reference comes back as a copy of its target.) The
            // Move VM reports any failure here, a closure over a private
            // function included, as this one invariant violation.
            returns_bcs
                .push(flat_bcs::serialize(v).map_err(|_| VmError::invariant("failed to serialize return values"))?);
        }
        for (i, t) in params.iter().enumerate() {
            if let Type::MutableReference(it) = t {
                if known.is_none() {
                    mutref_layouts.push(self.layout_of(it)?);
                }
                let v = roots.get(i).ok_or_else(|| VmError::invariant("argument frame"))?;
                mutrefs.push((i, flat_bcs::serialize(v)?));
            }
        }
        let (return_layouts, mutref_layouts) = match known {
            Some(known) => (known.returns.clone(), known.mutrefs.clone()),
            None => (return_layouts, mutref_layouts),
        };
        Ok(ExecutionResult { returns: returns_bcs, mutrefs, gas_used: gas.used(), return_layouts, mutref_layouts })
    }

    /// The resource writes of everything executed so far.
    pub fn finish(self) -> VmResult<ChangeSet> {
        let mut cs = ChangeSet::default();
        for (i, meta) in self.globals.meta.iter().enumerate() {
            if !meta.dirty {
                continue;
            }
            match self.globals.flat.get(i).and_then(|v| v.as_ref()) {
                Some(v) => {
                    cs.resources.insert((meta.address, meta.ty.clone()), WriteOp::Write(flat_bcs::serialize(v)?));
                }
                None if meta.existed => {
                    cs.resources.insert((meta.address, meta.ty.clone()), WriteOp::Delete);
                }
                None => {}
            }
        }
        Ok(cs)
    }
    /// The abilities of a runtime type.
    pub(crate) fn abilities_of(&self, t: &Type) -> VmResult<AbilitySet> {
        self.loaded.abilities_of(t)
    }

    /// The value depth of a type, uncached (for preparing flat code).
    pub(crate) fn type_value_depth_shared(&self, t: &Type) -> VmResult<usize> {
        if let Some(d) = self.depth_cache.get(t) {
            return Ok(*d);
        }
        resolve::value_depth(self, t, self.engine.config.limits.max_value_depth)
    }

    /// A layout without the layout-node budget (flat values of any size).
    pub(crate) fn layout_unbounded(&self, t: &Type) -> VmResult<Layout> {
        // Flat layouts of any verified type are built (values are bounded
        // by the value-depth checks); the bound only stops runaway nesting.
        resolve::layout(self, t, LayoutLimits { max_depth: crate::flat::MAX_FLAT_DEPTH, max_nodes: None })
    }

    /// The value depth of a type (a primitive is 1; a struct 1 + its deepest field).
    pub(crate) fn type_value_depth(&mut self, t: &Type) -> VmResult<usize> {
        if let Some(d) = self.depth_cache.get(t) {
            return Ok(*d);
        }
        let d = resolve::value_depth(self, t, self.engine.config.limits.max_value_depth)?;
        self.depth_cache.insert(t.clone(), d);
        Ok(d)
    }
}

impl DatatypeSource for SessionState<'_, '_> {
    fn datatype_fields(&self, id: &DatatypeId, args: &[Type]) -> VmResult<Option<DatatypeFields>> {
        self.loaded.datatype_fields(id, args)
    }
}

impl TypeInfo for SessionState<'_, '_> {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        let limits = &self.engine.config.limits;
        resolve::layout(self, ty, LayoutLimits { max_depth: limits.max_type_depth, max_nodes: limits.max_layout_nodes })
    }
    fn layout_modules(&self, ty: &Type) -> VmResult<Arc<[(ModuleId, u64)]>> {
        self.layout_modules_cached(ty)
    }
    /// The session's value when it has a slot for the resource (what a
    /// new transaction would load), else storage's.
    fn resource_probe(&self, address: AccountAddress, ty: &Type) -> VmResult<movejit_runtime::natives::ResourceProbe> {
        let id = TypeTable::shared().intern(ty)?;
        let slot = self.globals.index.get(&(address, id)).map(|&s| s as usize);
        let (exists, bytes) = match slot {
            Some(s) => match self.globals.flat.get(s) {
                Some(Some(v)) => (true, movejit_runtime::flat::bcs::serialize(v)?.len()),
                _ => (false, 0),
            },
            None => self.resolver.get_resource(&address, ty).map_or((false, 0), |b| (true, b.len())),
        };
        Ok(movejit_runtime::natives::ResourceProbe { exists, ty: id, slot, bytes: bytes as u64 })
    }
    fn struct_field_types(&self, ty: &Type) -> VmResult<Option<Vec<Type>>> {
        let Type::Datatype(id, args) = ty else { return Ok(None) };
        let fields = self.datatype_fields(id, args)?;
        Ok(fields.filter(|f| !f.is_enum).and_then(|f| f.variants.into_iter().next()))
    }
    fn module_size(&self, id: &ModuleId) -> VmResult<Option<u64>> {
        Ok(self.loaded.module_size(id))
    }
    /// Loaded resources answer from the session's globals, others from
    /// storage.
    fn resource_exists(&self, address: AccountAddress, ty: &Type) -> VmResult<bool> {
        // A type never interned has no slot in any session.
        let slot = TypeTable::shared().lookup(ty).and_then(|id| self.globals.index.get(&(address, id)));
        match slot {
            Some(&slot) => Ok(self.globals.flat.get(slot as usize).is_some_and(|v| v.is_some())),
            None => Ok(self.resolver.get_resource(&address, ty).is_some()),
        }
    }
}

/// A script as a module `0x0::<SELF>` whose only function is `main`.
fn script_as_module(s: movejit_format::CompiledScript) -> movejit_format::CompiledModule {
    use movejit_format::*;
    let mut m = CompiledModule {
        version: s.version,
        flavour: s.flavour,
        module_handles: s.module_handles,
        struct_handles: s.struct_handles,
        function_handles: s.function_handles,
        function_instantiations: s.function_instantiations,
        signatures: s.signatures,
        identifiers: s.identifiers,
        address_identifiers: s.address_identifiers,
        constant_pool: s.constant_pool,
        metadata: s.metadata,
        ..Default::default()
    };
    let address = AddressIdentifierIndex(m.address_identifiers.len() as u16);
    m.address_identifiers.push(AccountAddress::ZERO);
    let name = IdentifierIndex(m.identifiers.len() as u16);
    m.identifiers.push("<SELF>".into());
    m.self_module_handle_idx = ModuleHandleIndex(m.module_handles.len() as u16);
    m.module_handles.push(ModuleHandle { address, name });
    let main = IdentifierIndex(m.identifiers.len() as u16);
    m.identifiers.push("main".into());
    let ret = SignatureIndex(m.signatures.len() as u16);
    m.signatures.push(Signature(Vec::new()));
    let handle = FunctionHandleIndex(m.function_handles.len() as u16);
    m.function_handles.push(FunctionHandle {
        module: m.self_module_handle_idx,
        name: main,
        parameters: s.parameters,
        return_: ret,
        type_parameters: s.type_parameters,
        access_specifiers: None,
        attributes: Vec::new(),
    });
    m.function_defs.push(FunctionDefinition {
        function: handle,
        visibility: Visibility::Public,
        is_entry: true,
        acquires_global_resources: Vec::new(),
        code: Some(s.code),
    });
    m
}
