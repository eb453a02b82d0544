//! A session's loaded modules: borrowed from a warm set of the engine's
//! [`ModuleCache`] until the session loads beyond it, loading (decoding,
//! linking, verifying) from the session's store otherwise, and what follows
//! from the modules alone: type arguments, abilities, datatype fields.

use crate::cache::{ModuleCache, ModuleSet};
use crate::verify::{verify_linked, Stage};
use crate::LoadedModule;
use movejit_format::{decode_module, AbilitySet, CompiledModule, StatusFlavour};
use movejit_runtime::fxhash::{FxHashMap, FxHashSet};
use movejit_runtime::resolve::{DatatypeFields, DatatypeSource};
use movejit_runtime::{
    DatatypeId, EngineConfig, ModuleHash, ModuleId, Resolver, ScalarKind, StatusCode, Type, VmError, VmResult,
};
use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Sub-status of TYPE_RESOLUTION_FAILURE when a caller-given type argument
/// does not load (Move's `sub_status::type_resolution_failure`).
pub const EUSER_TYPE_LOADING_FAILURE: u64 = 1;

/// The modules one session has loaded, over one store.
pub struct SessionModules<'e, 'r> {
    cache: &'e ModuleCache,
    config: &'e EngineConfig,
    resolver: &'r dyn Resolver,
    /// Borrowed from the cache's warm set until the session loads a module
    /// the set it took lacks (copy on write).
    modules: Cow<'e, FxHashMap<ModuleId, Arc<LoadedModule>>>,
    /// SHA-256 of the bytes each loaded module came from (compiled code is
    /// cached by module content).
    hashes: Cow<'e, FxHashMap<ModuleId, ModuleHash>>,
    /// The number of the warm set `modules` is, while the session has
    /// loaded nothing else.
    set_id: Option<u64>,
}

impl<'e, 'r> SessionModules<'e, 'r> {
    /// No module loaded yet; modules come from `resolver`, through `cache`,
    /// under `config` (natives, flavour, limits).
    #[inline]
    pub fn new(cache: &'e ModuleCache, config: &'e EngineConfig, resolver: &'r dyn Resolver) -> Self {
        SessionModules {
            cache,
            config,
            resolver,
            modules: Cow::Borrowed(&cache.no_modules),
            hashes: Cow::Borrowed(&cache.no_hashes),
            set_id: None,
        }
    }

    /// The loaded modules by id.
    #[inline]
    pub fn modules(&self) -> &FxHashMap<ModuleId, Arc<LoadedModule>> {
        &self.modules
    }

    /// The content hash of each loaded module.
    #[inline]
    pub fn hashes(&self) -> &FxHashMap<ModuleId, ModuleHash> {
        &self.hashes
    }

    /// The warm set the loaded modules are, while the session has loaded
    /// nothing beyond it.
    #[inline]
    pub fn set_id(&self) -> Option<u64> {
        self.set_id
    }

    #[inline]
    pub fn get(&self, id: &ModuleId) -> Option<&Arc<LoadedModule>> {
        self.modules.get(id)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// The engine's module cache.
    pub fn cache(&self) -> &'e ModuleCache {
        self.cache
    }

    fn flavour(&self) -> StatusFlavour {
        self.config.flavour
    }

    /// Adds a module that is not in the store (a script, as `0x0::<SELF>`)
    /// with the hash of its bytes; [`Self::remove`] takes it out again.
    pub fn add_unstored(&mut self, m: Arc<LoadedModule>, hash: ModuleHash) {
        self.set_id = None;
        self.hashes.to_mut().insert(m.id.clone(), hash);
        self.modules.to_mut().insert(m.id.clone(), m);
    }

    pub fn remove(&mut self, id: &ModuleId) {
        self.modules.to_mut().remove(id);
        self.hashes.to_mut().remove(id);
    }

    /// Loads (decodes, links, verifies) a module and its dependencies.
    pub fn load_module(&mut self, id: &ModuleId) -> VmResult<Arc<LoadedModule>> {
        if let Some(m) = self.modules.get(id) {
            return Ok(m.clone());
        }
        if self.take_warm(id) {
            if let Some(m) = self.modules.get(id) {
                return Ok(m.clone());
            }
        }
        let m = self.load_rec(id)?;
        self.remember_warm(id);
        Ok(m)
    }

    /// Takes `id` and its dependencies from the engine's warm module cache,
    /// when the session's store has the version of every member the set was
    /// loaded from (then loading them anew would give the same modules):
    /// one look-up of the store per member, no hashing, one shared lock.
    /// `true` when the session has `id` from a warm set now.
    pub fn take_warm(&mut self, id: &ModuleId) -> bool {
        match self.cache.warm_index(id).and_then(|i| self.cache.warm_sets.get(i)) {
            Some(set) => self.adopt_warm(set, id),
            None => false,
        }
    }

    /// Takes warm set `set` (of module `id`) when the session's store has
    /// the version of every member it was loaded from: `true` when the
    /// session has `id` from it now.
    pub fn adopt_warm(&mut self, set: &'e ModuleSet, id: &ModuleId) -> bool {
        let version = self.resolver.modules_version();
        if version.is_none_or(|v| set.checked_version.load(Ordering::Relaxed) != v) {
            if !set.members.iter().all(|(m, h)| self.resolver.module_hash(m).as_ref() == Some(h)) {
                return false;
            }
            if let Some(v) = version {
                set.checked_version.store(v, Ordering::Relaxed);
            }
        }
        if self.modules.is_empty() {
            self.modules = Cow::Borrowed(&set.modules);
            self.hashes = Cow::Borrowed(&set.hashes);
            self.set_id = Some(set.id);
        } else {
            self.set_id = None;
            // Modules this session loaded already came from the same store.
            let modules = self.modules.to_mut();
            let hashes = self.hashes.to_mut();
            for (mid, h) in &set.members {
                if let Some(m) = set.modules.get(mid) {
                    modules.entry(mid.clone()).or_insert_with(|| m.clone());
                    hashes.entry(mid.clone()).or_insert(*h);
                }
            }
        }
        // A set is made from the module it is found by, its first member.
        set.members.first().is_some_and(|(m, _)| m == id) || set.modules.contains_key(id)
    }

    /// Records `id`, just loaded, and its dependencies as a warm set.
    fn remember_warm(&self, id: &ModuleId) {
        let mut members: Vec<(ModuleId, ModuleHash)> = Vec::new();
        let mut modules = FxHashMap::default();
        let mut todo = vec![id.clone()];
        while let Some(mid) = todo.pop() {
            if modules.contains_key(&mid) {
                continue;
            }
            let (Some(m), Some(h)) = (self.modules.get(&mid), self.hashes.get(&mid)) else {
                return;
            };
            todo.extend(m.module.immediate_dependencies().into_iter().map(|(a, n)| ModuleId::new(a, &n)));
            members.push((mid.clone(), *h));
            modules.insert(mid, m.clone());
        }
        self.cache.remember(id, members, modules);
    }

    /// Loads `root` and, first, its dependencies, depth first. The walk
    /// keeps its own stack: a dependency chain of any length loads without
    /// host recursion (a store may hold chains longer than any limit that
    /// is checked later).
    fn load_rec(&mut self, root: &ModuleId) -> VmResult<Arc<LoadedModule>> {
        if let Some(m) = self.modules.get(root) {
            return Ok(m.clone());
        }
        let mut visiting: FxHashSet<ModuleId> = FxHashSet::default();
        visiting.insert(root.clone());
        let mut stack = vec![self.open(root)?];
        loop {
            let top = stack.last_mut().ok_or_else(|| VmError::invariant("module load stack"))?;
            if let Some(d) = top.deps.get(top.next).cloned() {
                top.next += 1;
                if self.modules.contains_key(&d) {
                    continue;
                }
                if !visiting.insert(d.clone()) {
                    return Err(VmError::new(StatusCode::CYCLIC_MODULE_DEPENDENCY).with_message(format!("{d}")));
                }
                let pending = self.open(&d)?;
                stack.push(pending);
                continue;
            }
            let done = stack.pop().ok_or_else(|| VmError::invariant("module load stack"))?;
            visiting.remove(&done.id);
            let loaded = self.finish(done)?;
            if stack.is_empty() {
                return Ok(loaded);
            }
        }
    }

    /// Fetches module `id` (the engine's cached copy, else decoded) and
    /// names the dependencies to load before it.
    fn open(&mut self, id: &ModuleId) -> VmResult<PendingModule> {
        let bytes = self
            .resolver
            .get_module(id)
            .ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR).with_message(format!("module {id} not found")))?;
        let key = self.resolver.module_hash(id).unwrap_or_else(|| movejit_runtime::module_hash(&bytes));
        let (form, deps) = match self.cache.cached(&key) {
            Some(m) => {
                let deps = m.module.immediate_dependencies();
                (PendingForm::Cached(m), deps)
            }
            None => {
                let module = decode_module(&bytes)
                    .map_err(|e| VmError::new(e.status).with_message(format!("{id}: {}", e.message)))?;
                let deps = module.immediate_dependencies();
                (PendingForm::Decoded(Box::new(module), bytes.len() as u64), deps)
            }
        };
        let deps = deps.into_iter().map(|(a, n)| ModuleId::new(a, &n)).collect();
        Ok(PendingModule { id: id.clone(), key, form, deps, next: 0 })
    }

    /// Links and verifies `p` (a decoded module) against its loaded
    /// dependencies, and adds it to the session.
    fn finish(&mut self, p: PendingModule) -> VmResult<Arc<LoadedModule>> {
        let loaded = match p.form {
            PendingForm::Cached(m) => m,
            PendingForm::Decoded(module, size) => {
                let deps = p
                    .deps
                    .iter()
                    .map(|d| self.modules.get(d).cloned().ok_or_else(|| VmError::invariant("dependency not loaded")))
                    .collect::<VmResult<Vec<_>>>()?;
                let (closure, friends) = self.linking_context(&module, &deps, Stage::Load);
                verify_linked(&module, &p.id, &closure, &friends, self.flavour(), Stage::Load)?;
                let mut m = LoadedModule::new(*module, &self.config.natives)?;
                m.size = size;
                let m = Arc::new(m);
                if m.id != p.id {
                    return Err(VmError::new(StatusCode::LINKER_ERROR).with_message("module id mismatch"));
                }
                self.cache.insert(p.key, m.clone());
                m
            }
        };
        self.set_id = None;
        self.modules.to_mut().insert(p.id.clone(), loaded.clone());
        self.hashes.to_mut().insert(p.id, p.key);
        Ok(loaded)
    }

    /// What the verifier links `module` against at `stage`: its dependencies
    /// with their transitive closure (already loaded), and, when publishing,
    /// its friends, decoded but not loaded (friends usually depend on the
    /// module, and only their existence is checked). Loading does not check
    /// that friends exist, so nothing else of them can change its verdict:
    /// it gets none (decoding them cost more than verifying clob's modules'
    /// code).
    pub fn linking_context(
        &self,
        module: &CompiledModule,
        deps: &[Arc<LoadedModule>],
        stage: Stage,
    ) -> (Vec<Arc<LoadedModule>>, Vec<CompiledModule>) {
        let mut closure: Vec<Arc<LoadedModule>> = Vec::new();
        let mut seen: FxHashSet<ModuleId> = FxHashSet::default();
        let mut todo: Vec<Arc<LoadedModule>> = deps.to_vec();
        while let Some(d) = todo.pop() {
            if !seen.insert(d.id.clone()) {
                continue;
            }
            for (a, n) in d.module.immediate_dependencies() {
                if let Some(m) = self.modules.get(&ModuleId::new(a, &n)) {
                    todo.push(m.clone());
                }
            }
            closure.push(d);
        }
        let mut friends = Vec::new();
        if stage == Stage::Load {
            return (closure, friends);
        }
        for f in &module.friend_decls {
            let (Some(a), Some(n)) =
                (module.address_identifiers.get(f.address.idx()), module.identifiers.get(f.name.idx()))
            else {
                continue;
            };
            let fid = ModuleId::new(*a, n);
            if seen.contains(&fid) {
                continue;
            }
            if let Some(m) = self.modules.get(&fid) {
                friends.push(m.module.clone());
            } else if let Some(bytes) = self.resolver.get_module(&fid) {
                if let Ok(m) = decode_module(&bytes) {
                    friends.push(m);
                }
            }
        }
        (closure, friends)
    }

    /// Resolves `module::name` to a loaded function definition.
    pub fn resolve_function(&mut self, module: &ModuleId, name: &str) -> VmResult<(Arc<LoadedModule>, u16)> {
        let m = self.load_module(module)?;
        let def = *m.functions.get(name).ok_or_else(|| {
            VmError::new(StatusCode::FUNCTION_RESOLUTION_FAILURE).with_message(format!("{module}::{name}"))
        })?;
        Ok((m, def))
    }

    /// Loads and checks a caller-given type argument the way the Move VM
    /// turns a type tag into a runtime type, before anything runs: every
    /// datatype's module loads (LINKER_ERROR) and declares it
    /// (TYPE_RESOLUTION_FAILURE), gets as many type arguments as it declares
    /// (NUMBER_OF_TYPE_ARGUMENTS_MISMATCH) and they meet its constraints
    /// (CONSTRAINT_NOT_SATISFIED); size and depth stay within
    /// `Limits::max_type_arg_nodes` and `Limits::max_type_arg_depth`
    /// (TOO_MANY_TYPE_NODES, VM_MAX_TYPE_DEPTH_REACHED). What no type tag
    /// can express (a reference outside a function type's parameters or
    /// results, a type parameter) is TYPE_RESOLUTION_FAILURE, with the Move
    /// VM's sub-status for a user type argument
    /// ([`EUSER_TYPE_LOADING_FAILURE`]).
    pub fn load_type(&mut self, t: &Type) -> VmResult<()> {
        let mut nodes = 0;
        self.check_type_arg(t, &mut nodes, 1).map_err(|e| {
            if e.status == StatusCode::TYPE_RESOLUTION_FAILURE {
                e.with_sub_status(EUSER_TYPE_LOADING_FAILURE)
            } else {
                e
            }
        })
    }

    fn check_type_arg(&mut self, t: &Type, nodes: &mut usize, depth: usize) -> VmResult<()> {
        let limits = &self.config.limits;
        if limits.max_type_arg_nodes.is_some_and(|max| *nodes >= max) {
            return Err(VmError::new(StatusCode::TOO_MANY_TYPE_NODES).with_message(format!("type argument {t}")));
        }
        if depth > limits.max_type_arg_depth {
            return Err(VmError::new(StatusCode::VM_MAX_TYPE_DEPTH_REACHED).with_message(format!("type argument {t}")));
        }
        *nodes += 1;
        match t {
            Type::Vector(e) => self.check_type_arg(e, nodes, depth + 1),
            Type::Datatype(id, args) => {
                let mid = ModuleId { address: id.address, name: id.module.clone() };
                let m = self.load_module(&mid)?;
                let params = m
                    .datatypes
                    .contains_key(&*id.name)
                    .then(|| m.handle_ids.iter().position(|h| **h == **id))
                    .flatten()
                    .and_then(|i| m.module.struct_handles.get(i))
                    .map(|h| h.type_parameters.clone())
                    .ok_or_else(|| VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE).with_message(format!("{t}")))?;
                for a in args {
                    self.check_type_arg(a, nodes, depth + 1)?;
                }
                if params.len() != args.len() {
                    return Err(VmError::new(StatusCode::NUMBER_OF_TYPE_ARGUMENTS_MISMATCH).with_message(format!(
                        "{}::{}::{} takes {} type argument(s), {} given",
                        id.address.to_hex_short(),
                        id.module,
                        id.name,
                        params.len(),
                        args.len()
                    )));
                }
                for (a, p) in args.iter().zip(&params) {
                    if !self.abilities_of(a)?.contains(p.constraints) {
                        return Err(
                            VmError::new(StatusCode::CONSTRAINT_NOT_SATISFIED).with_message(format!("{a} in {t}"))
                        );
                    }
                }
                Ok(())
            }
            // A function type's parameters and results may be references
            // (one level deeper, as Aptos counts them).
            Type::Function(p, r, _) => p.iter().chain(r).try_for_each(|a| match a {
                Type::Reference(e) | Type::MutableReference(e) => self.check_type_arg(e, nodes, depth + 2),
                a => self.check_type_arg(a, nodes, depth + 1),
            }),
            Type::Reference(_) | Type::MutableReference(_) | Type::TyParam(_) => {
                Err(VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE)
                    .with_message(format!("{t} is not a type argument")))
            }
            _ => Ok(()),
        }
    }

    /// The abilities of a runtime type (its datatypes' modules loaded).
    pub fn abilities_of(&self, t: &Type) -> VmResult<AbilitySet> {
        Ok(match t {
            t if ScalarKind::of_type(t).is_some() => AbilitySet::PRIMITIVES,
            Type::Signer => AbilitySet::SIGNER,
            Type::Reference(_) | Type::MutableReference(_) => AbilitySet::REFERENCES,
            Type::Vector(e) => AbilitySet::VECTOR.intersect(self.abilities_of(e)?),
            Type::Function(_, _, ab) => *ab,
            Type::TyParam(_) => AbilitySet::EMPTY,
            Type::Datatype(id, args) => {
                let mid = ModuleId { address: id.address, name: id.module.clone() };
                let m = self.modules.get(&mid).ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR))?;
                let h = m
                    .handle_ids
                    .iter()
                    .position(|h| **h == **id)
                    .and_then(|i| m.module.struct_handles.get(i))
                    .ok_or_else(|| VmError::new(StatusCode::TYPE_RESOLUTION_FAILURE))?;
                let declared = h.abilities;
                // Abilities of a generic datatype: declared ones, each kept
                // only if every non-phantom argument has the matching one
                // (key requires store).
                let mut ab = declared;
                for (a, p) in args.iter().zip(&h.type_parameters) {
                    if p.is_phantom {
                        continue;
                    }
                    let aa = self.abilities_of(a)?;
                    let mut keep = 0u8;
                    if aa.has_copy() {
                        keep |= AbilitySet::COPY;
                    }
                    if aa.has_drop() {
                        keep |= AbilitySet::DROP;
                    }
                    if aa.has_store() {
                        keep |= AbilitySet::STORE | AbilitySet::KEY;
                    }
                    ab = ab.intersect(AbilitySet(keep));
                }
                ab
            }
            // Every scalar is matched above.
            t => return Err(VmError::invariant(format!("type {t} has no abilities"))),
        })
    }

    /// Size in bytes of module `id`: the loaded one's, else the store's.
    pub fn module_size(&self, id: &ModuleId) -> Option<u64> {
        self.modules.get(id).map(|m| m.size).or_else(|| self.resolver.get_module(id).map(|b| b.len() as u64))
    }
}

impl DatatypeSource for SessionModules<'_, '_> {
    fn datatype_fields(&self, id: &DatatypeId, args: &[Type]) -> VmResult<Option<DatatypeFields>> {
        let mid = ModuleId { address: id.address, name: id.module.clone() };
        let m = self.modules.get(&mid).ok_or_else(|| VmError::new(StatusCode::LINKER_ERROR))?;
        m.datatype_fields(&id.name, args)
    }
}

/// A module [`SessionModules::load_rec`] has fetched and whose
/// dependencies it is loading.
struct PendingModule {
    id: ModuleId,
    key: ModuleHash,
    form: PendingForm,
    deps: Vec<ModuleId>,
    /// The next of `deps` to load.
    next: usize,
}

enum PendingForm {
    /// Verified before, by this engine.
    Cached(Arc<LoadedModule>),
    /// Decoded; verified once its dependencies are loaded. Its size in bytes.
    Decoded(Box<CompiledModule>, u64),
}
