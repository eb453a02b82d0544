//! [`CompiledCode`] over the engine's code cache (`cache.rs`): which
//! instances run compiled and when (threshold, eager modules), running them
//! on the flat interpreter's slots inside its session, and mapping their
//! errors back.

use crate::cache::{
    imports, link_hash, serialized_hash, sources, CacheStats, CodeCache, CodeKey, Hash, Lookup, ModuleSet, Ready, Slot,
    SlotCell, Sources,
};
use movejit_format::StatusCode;
use movejit_jit::{FlatOutcome, JitConfig, Location, NestedState};
use movejit_runtime::compiled::{
    CompiledCall, CompiledCode, CompiledCodeFactory, CompiledHint, CompiledStats, EntrySlot, ModuleSource, SeamCall,
    SeamSlot, SessionHost,
};
use movejit_runtime::flat::closure_shims::closures_in;
use movejit_runtime::flat::native_bridge::NativeSession;
use movejit_runtime::fxhash::{FxHashMap, FxHashSet};
use movejit_runtime::gas::aptos::AptosPricing;
use movejit_runtime::{CostTable, ErrorLocation, ModuleId, Type, VmError};
use movejit_runtime::{EngineConfig, ExecutorKind, JitOptions};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

/// The engine's compiled code: one [`CodeCache`] per metering mode, shared
/// by every [`JitSession`] it makes.
///
/// Code for Aptos's schedule is compiled at a call under an Aptos meter
/// only (never by [`CompiledCode::compile`]): an instance its lowering
/// refuses runs interpreted under every executor.
pub struct JitFactory {
    shared: Shared,
    /// Calls interpreted before compiling (0 for executor `Jit`).
    threshold: u32,
    eager: bool,
    /// Compiles go to background threads (executor `Auto` with
    /// `compile_threads` > 0).
    background: bool,
}

/// What the factory's sessions share (borrowed by each).
struct Shared {
    metered: CodeCache,
    unmetered: CodeCache,
    /// Code charging the built-in Aptos schedule.
    aptos: CodeCache,
    links: SharedLinks,
    entries: SharedEntries,
}

/// How a call is metered, which decides the code that runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Metering {
    Unmetered = 0,
    /// The engine's unit cost table.
    Unit = 1,
    /// The built-in Aptos schedule.
    Aptos = 2,
}

impl Metering {
    fn of(state: &movejit_runtime::compiled::CallState) -> Self {
        match (state.gas_left, state.aptos) {
            (None, _) => Metering::Unmetered,
            (Some(_), false) => Metering::Unit,
            (Some(_), true) => Metering::Aptos,
        }
    }
    /// The variant's index in an entry's warm code ([`EntryCode`]), which
    /// keeps no Aptos code (compiled at calls only).
    fn warm(self) -> Option<usize> {
        (self != Metering::Aptos).then_some(self as usize)
    }
}

impl Shared {
    fn cache(&self, m: Metering) -> &CodeCache {
        match m {
            Metering::Unmetered => &self.unmetered,
            Metering::Unit => &self.metered,
            Metering::Aptos => &self.aptos,
        }
    }
}

/// Entry functions found compiled (both variants), by warm module set
/// ([`ModuleSource::module_set_id`]): a session over a set the engine has
/// seen finds its entry's code with one look-up, no link hashes and no
/// code-cache lock. Weak: code the cache evicted is looked up anew.
type SharedEntries = RwLock<FxHashMap<u64, FxHashMap<ModuleId, Vec<Arc<EntryCode>>>>>;

/// The unmetered and metered code of one entry instance.
struct EntryCode {
    /// The warm module set it was found for, and the module's content hash
    /// there.
    set: u64,
    hash: Option<Hash>,
    module: ModuleId,
    fdef: u16,
    type_args: Vec<Type>,
    code: [Weak<Ready>; 2],
}

impl JitFactory {
    /// JIT settings matching the interpreter's limits and cost table, and
    /// `config.jit`'s options.
    pub fn new(config: &EngineConfig) -> JitFactory {
        let o: &JitOptions = &config.jit;
        let base = JitConfig {
            max_call_depth: config.limits.max_call_depth as u64,
            max_operand_stack: config.limits.max_operand_stack as u64,
            limits: config.limits.clone(),
            natives: config.natives.clone(),
            session_host: true,
            max_code_len: o.max_code_len,
            max_ir_insts: o.max_ir_insts,
            baseline_above: o.baseline_above,
            // `auto` compiles while transactions wait interpreted: the quicker
            // compile and smaller code of one checked copy are worth more
            // there than the split's faster calls (`jit` keeps them).
            unchecked_copy_max_len: if config.executor == ExecutorKind::Auto {
                0
            } else {
                JitConfig::default().unchecked_copy_max_len
            },
            ..JitConfig::default()
        };
        let metered = JitConfig { cost: Some(config.costs.clone()), ..base.clone() };
        let aptos = JitConfig { cost: Some(CostTable::zero()), aptos: Some(AptosPricing::v50()), ..base.clone() };
        JitFactory {
            shared: Shared {
                metered: CodeCache::new(metered, o.clone()),
                aptos: CodeCache::new(aptos, o.clone()),
                unmetered: CodeCache::new(base, o.clone()),
                links: SharedLinks::default(),
                entries: SharedEntries::default(),
            },
            threshold: if config.executor == ExecutorKind::Jit { 0 } else { o.threshold },
            eager: o.eager,
            background: config.executor == ExecutorKind::Auto && o.compile_threads > 0,
        }
    }

    /// Counters of both caches together.
    pub fn stats(&self) -> CacheStats {
        let mut s = self.shared.metered.stats();
        s.add(&self.shared.unmetered.stats());
        s.add(&self.shared.aptos.stats());
        s
    }
}

impl CompiledCodeFactory for JitFactory {
    fn new_session(&self) -> Box<dyn CompiledCode + '_> {
        Box::new(JitSession {
            shared: &self.shared,
            threshold: self.threshold,
            eager: self.eager,
            background: self.background,
            hashes: FxHashMap::default(),
            interpreted: FxHashSet::default(),
            hot: FxHashMap::default(),
            warm_entry: None,
            closures: FxHashMap::default(),
            imports: FxHashMap::default(),
            hint_ran: SmallVec::new(),
            stats: CompiledStats::default(),
        })
    }
}

/// Why [`JitSession::obtain`] gives no code.
enum NoCode {
    /// It does not compile (why).
    Never(String),
    /// Below the threshold: interpret this call, ask again next time.
    Later,
    /// A compiler thread has it: interpret calls until the slot is set.
    Pending(Slot),
}

/// A session's known instance (its fast path).
struct Hot {
    fdef: u16,
    type_args: Vec<Type>,
    metering: Metering,
    /// The module's content hash when it was looked up (a session may
    /// replace a module: every script is `0x0::<SELF>`).
    hash: Option<Hash>,
    /// The code, or `None` when it does not compile.
    code: Option<Arc<Ready>>,
    /// Counted (compiled and ran, or not compilable) in the session's
    /// stats; `false` for code [`CompiledCode::compile`] found before any
    /// call ran it.
    counted: bool,
    /// Compiling on a background thread (`code` is `None` meanwhile).
    pending: Option<Slot>,
}

impl Hot {
    /// Takes the background compile's answer once it is there; `true`
    /// while the instance runs interpreted.
    fn interpreted(&mut self) -> bool {
        if let (None, Some(done)) = (&self.code, self.pending.as_ref().and_then(|p| p.get())) {
            self.code = done.clone();
            self.pending = None;
        }
        self.code.is_none()
    }
}

/// The entry instance a session took from [`Shared::entries`] (a warm
/// set's entry found compiled by an earlier session): kept apart from
/// `hot` so that a short session records it without allocating.
struct WarmEntry {
    entry: Arc<EntryCode>,
    /// The module's content hash when it was taken (as [`Hot::hash`]).
    hash: Option<Hash>,
    /// Unmetered and metered code, each taken from the entry's weak
    /// handle at its first call in the session (`None`: not yet): a short
    /// session takes only the variant it runs.
    code: [Option<Arc<Ready>>; 2],
    /// Ran compiled in this session (counted in its stats).
    counted: bool,
}

impl WarmEntry {
    /// Takes variant `v`'s code from the entry when not taken yet (stays
    /// `None` when the cache has dropped it: the call looks it up anew).
    fn take_code(&mut self, v: usize) {
        if self.code[v].is_none() {
            self.code[v] = self.entry.code[v].upgrade();
        }
    }

    fn is(&self, module: &ModuleId, fdef: u16, ty_args: &[Type], hash: Option<Hash>) -> bool {
        let e = &*self.entry;
        e.fdef == fdef && self.hash == hash && e.module == *module && e.type_args[..] == *ty_args
    }
}

/// Link hashes shared by the sessions of one engine: by warm module set
/// number ([`ModuleSource::module_set_id`]), (content hash, link hash) per
/// module, so a session over a warm set hashes no links. Grows by one set
/// per module version loaded (as the engine's module cache does).
type SharedLinks = RwLock<HashMap<u64, HashMap<ModuleId, (Hash, Hash)>>>;

/// The JIT side of one interpreter session.
pub struct JitSession<'f> {
    shared: &'f Shared,
    threshold: u32,
    eager: bool,
    background: bool,
    /// Content and link hash per module, as this session sees it.
    hashes: FxHashMap<ModuleId, (Hash, Hash)>,
    interpreted: FxHashSet<(ModuleId, u16, Vec<Type>)>,
    /// Per-call fast path: module → instances found compiled or not
    /// compilable, found without allocating.
    hot: FxHashMap<ModuleId, Vec<Hot>>,
    /// The session's entry, when taken from a warm set (its fast path).
    warm_entry: Option<WarmEntry>,
    /// Import closures found, by root module: a session's first calls of
    /// many functions of few modules do not walk the imports again.
    closures: FxHashMap<ModuleId, Closure>,
    /// Each module's imports, with the content hash they were read from:
    /// import closures of many roots read a module's handles once.
    imports: FxHashMap<ModuleId, (Hash, Arc<[ModuleId]>)>,
    /// Code run from hints ([`HintCode`]), by address: counted among the
    /// instances the session ran compiled (inline: a session's first run
    /// from a hint does not allocate).
    hint_ran: SmallVec<[usize; 4]>,
    stats: CompiledStats,
}

/// What a [`CompiledHint`] cell holds: the code cache's slot for the
/// instance (empty while it compiles, `None` inside when it does not
/// compile), and the warm module set of the session that left it. A later
/// session over that same set runs code found in the slot straight away: the
/// set fixes every module's version, so it is the code a look-up would find.
struct HintCode {
    set: Option<u64>,
    slot: Slot,
}

/// A module's import closure as a session found it.
struct Closure {
    /// The warm set it was found over: while the session has that set,
    /// it is current without comparing hashes.
    set: Option<u64>,
    modules: Arc<ModuleSet>,
    /// Its modules for background compiles, once one needed them.
    sources: Option<Sources>,
}

/// Where computing a module's link hash starts ([`JitSession::link_start`]).
enum LinkStart {
    Known(Hash),
    /// Not in the session's source.
    Missing,
    Open(PendingLink),
}

/// A module whose link hash waits for its imports' ([`JitSession::link`]).
struct PendingLink {
    id: ModuleId,
    own: Hash,
    imports: Vec<ModuleId>,
    /// The link hashes of `imports` so far, in order.
    deps: Vec<Hash>,
}

impl JitSession<'_> {
    /// Both variants of an entry's code, found by an earlier session over
    /// warm set `set` and still in the cache.
    fn shared_entry(
        &self,
        set: u64,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
    ) -> Option<(Arc<EntryCode>, [Arc<Ready>; 2])> {
        let entries = self.shared.entries.read().ok()?;
        let e = entries.get(&set)?.get(module)?.iter().find(|e| e.fdef == fdef && e.type_args[..] == *ty_args)?;
        let code = [e.code[0].upgrade()?, e.code[1].upgrade()?];
        Some((e.clone(), code))
    }

    /// How many instances ran compiled in this session: those whose known
    /// entry was counted with code (once per instance, whatever the
    /// variants and module versions that ran).
    fn compiled_ran(&self) -> usize {
        let mut ran: FxHashSet<(&ModuleId, u16, &[Type])> = FxHashSet::default();
        if let Some(w) = self.warm_entry.as_ref().filter(|w| w.counted) {
            ran.insert((&w.entry.module, w.entry.fdef, &w.entry.type_args));
        }
        let mut hot_code = Vec::new();
        for (m, hots) in &self.hot {
            for h in hots.iter().filter(|h| h.counted && h.code.is_some()) {
                ran.insert((m, h.fdef, &h.type_args));
                hot_code.extend(h.code.as_ref().map(|r| Arc::as_ptr(r) as usize));
            }
        }
        ran.len() + self.hint_ran.iter().filter(|p| !hot_code.contains(p)).count()
    }

    /// Records a known instance of `module` (its id copied only for the
    /// session's first instance of the module).
    fn add_hot(&mut self, module: &ModuleId, hot: Hot) {
        match self.hot.get_mut(module) {
            Some(v) => v.push(hot),
            None => {
                self.hot.insert(module.clone(), vec![hot]);
            }
        }
    }

    fn not_compiled(&mut self, id: &ModuleId, fdef: u16, ty_args: &[Type]) -> CompiledCall {
        self.interpreted.insert((id.clone(), fdef, ty_args.to_vec()));
        CompiledCall::NotCompiled
    }

    /// The content hash of `id` as the session has it.
    fn own_hash(&self, src: &dyn ModuleSource, id: &ModuleId) -> Option<Hash> {
        if let Some(h) = src.module_hash(id) {
            return Some(h);
        }
        // Without one from the source: the module's serialized form, once.
        match self.hashes.get(id) {
            Some((h, _)) => Some(*h),
            None => src.module(id).map(serialized_hash),
        }
    }

    /// The link hash of `id` (see `cache.rs`); `None` when not loaded. A
    /// module's comes after its imports', computed with a stack of its own:
    /// import chains of any length take no host recursion.
    fn link(&mut self, src: &dyn ModuleSource, id: &ModuleId) -> Option<Hash> {
        let mut stack = match self.link_start(src, id) {
            LinkStart::Known(l) => return Some(l),
            LinkStart::Missing => return None,
            LinkStart::Open(p) => vec![p],
        };
        let mut open: FxHashSet<ModuleId> = FxHashSet::default();
        open.insert(id.clone());
        loop {
            let top = stack.last_mut()?;
            if let Some(d) = top.imports.get(top.deps.len()).cloned() {
                // A dependency the session lacks (or, in no verified set,
                // a cycle) counts by name.
                let by_name = || link_hash(&[0; 32], &mut [name_hash(&d)]);
                if open.contains(&d) {
                    top.deps.push(by_name());
                    continue;
                }
                match self.link_start(src, &d) {
                    LinkStart::Known(l) => top.deps.push(l),
                    LinkStart::Missing => top.deps.push(by_name()),
                    LinkStart::Open(p) => {
                        open.insert(d);
                        stack.push(p);
                    }
                }
                continue;
            }
            let mut done = stack.pop()?;
            open.remove(&done.id);
            let l = link_hash(&done.own, &mut done.deps);
            self.hashes.insert(done.id.clone(), (done.own, l));
            if let (Some(set), Ok(mut shared)) = (src.module_set_id(), self.shared.links.write()) {
                shared.entry(set).or_default().insert(done.id, (done.own, l));
            }
            match stack.last_mut() {
                Some(parent) => parent.deps.push(l),
                None => return Some(l),
            }
        }
    }

    /// `id`'s link hash when the session or the engine knows it for the
    /// module's current content, else what computing it needs.
    fn link_start(&mut self, src: &dyn ModuleSource, id: &ModuleId) -> LinkStart {
        let Some(own) = self.own_hash(src, id) else { return LinkStart::Missing };
        if let Some((h, l)) = self.hashes.get(id) {
            if *h == own {
                return LinkStart::Known(*l);
            }
        }
        if let Some(set) = src.module_set_id() {
            let shared = self.shared.links.read().ok().and_then(|m| m.get(&set).and_then(|s| s.get(id)).copied());
            if let Some((h, l)) = shared.filter(|(h, _)| *h == own) {
                self.hashes.insert(id.clone(), (h, l));
                return LinkStart::Known(l);
            }
        }
        match src.module(id) {
            Some(m) => {
                LinkStart::Open(PendingLink { id: id.clone(), own, imports: imports(m).collect(), deps: Vec::new() })
            }
            None => LinkStart::Missing,
        }
    }

    /// `roots` and everything they import, with content hashes: the union
    /// of the roots' memoized closures (a generic instance's set is asked
    /// for at each new instantiation; walking the imports again each time
    /// cost ~80k instructions per instance on clob's first call).
    fn module_set(&mut self, src: &dyn ModuleSource, roots: &[ModuleId]) -> ModuleSet {
        let mut out: ModuleSet = Vec::new();
        let mut seen: FxHashSet<ModuleId> = FxHashSet::default();
        for root in roots {
            for (id, h) in self.closure(src, root).iter() {
                if seen.insert(id.clone()) {
                    out.push((id.clone(), *h));
                }
            }
        }
        out
    }

    /// [`Self::module_set`], and whether every module in it was found.
    fn closure_of(&mut self, src: &dyn ModuleSource, roots: &[ModuleId]) -> (ModuleSet, bool) {
        let mut out: ModuleSet = Vec::new();
        let mut seen: FxHashSet<ModuleId> = FxHashSet::default();
        let mut todo: Vec<ModuleId> = roots.to_vec();
        let mut complete = true;
        while let Some(id) = todo.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            let (Some(h), Some(m)) = (self.own_hash(src, &id), src.module(&id)) else {
                complete = false;
                continue;
            };
            let deps = match self.imports.get(&id).filter(|(read, _)| *read == h) {
                Some((_, deps)) => deps.clone(),
                None => {
                    let deps: Arc<[ModuleId]> = imports(m).collect();
                    self.imports.insert(id.clone(), (h, deps.clone()));
                    deps
                }
            };
            todo.extend(deps.iter().filter(|d| !seen.contains(*d)).cloned());
            out.push((id, h));
        }
        (out, complete)
    }

    /// The import closure of `module` (memoized per session while its
    /// modules keep the versions they had).
    fn closure(&mut self, src: &dyn ModuleSource, module: &ModuleId) -> Arc<ModuleSet> {
        let set = src.module_set_id();
        let known = self.closures.get(module).filter(|c| {
            (set.is_some() && c.set == set) || c.modules.iter().all(|(id, h)| src.module_hash(id) == Some(*h))
        });
        if let Some(c) = known {
            return c.modules.clone();
        }
        let (modules, complete) = self.closure_of(src, std::slice::from_ref(module));
        let modules = Arc::new(modules);
        // Kept when the source's hashes can tell whether it is current.
        if complete && modules.iter().all(|(id, h)| src.module_hash(id) == Some(*h)) {
            self.closures.insert(module.clone(), Closure { set, modules: modules.clone(), sources: None });
        } else {
            self.closures.remove(module);
        }
        modules
    }

    fn code_key(
        &mut self,
        src: &dyn ModuleSource,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
    ) -> Option<(CodeKey, Vec<ModuleId>)> {
        let link = self.link(src, module)?;
        let mut named = Vec::new();
        for t in ty_args {
            type_modules(t, &mut named);
        }
        named.sort();
        named.dedup();
        let mut type_links = Vec::new();
        for m in &named {
            type_links.push(self.link(src, m).unwrap_or_else(|| name_hash(m)));
        }
        Some((CodeKey { link, fdef, type_args: ty_args.to_vec(), type_links }, named))
    }

    /// The code of `module::fdef<ty_args>`: cached, compiled now, or not
    /// (yet).
    fn obtain(
        &mut self,
        src: &dyn ModuleSource,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
        metering: Metering,
        threshold: u32,
    ) -> Result<Arc<Ready>, NoCode> {
        let (key, named) = self
            .code_key(src, module, fdef, ty_args)
            .ok_or_else(|| NoCode::Never(format!("module {module} not loaded")))?;
        let cache = self.shared.cache(metering);
        match cache.lookup(&key, threshold) {
            Lookup::Ready(r) => return Ok(r),
            Lookup::Never(why) => return Err(NoCode::Never(why)),
            Lookup::Later => return Err(NoCode::Later),
            Lookup::Pending(slot) => return Err(NoCode::Pending(slot)),
            Lookup::Compile => {}
        }
        let modules = if named.is_empty() {
            self.closure(src, module)
        } else {
            let mut roots = vec![module.clone()];
            roots.extend(named);
            Arc::new(self.module_set(src, &roots))
        };
        if self.background {
            // Interpret this call; the code comes from a compiler thread
            // (the session's copies of a closure's modules made once).
            let memo = self.closures.get_mut(module).filter(|c| Arc::ptr_eq(&c.modules, &modules));
            let natives = cache.natives();
            let sources = || match memo {
                Some(c) => c.sources.get_or_insert_with(|| sources(src, &c.modules, natives)).clone(),
                None => sources(src, &modules, natives),
            };
            return Err(NoCode::Pending(cache.request(&key, module, ty_args, &modules, sources)));
        }
        let eager = if self.eager { self.eager_keys(src, module, &key) } else { Vec::new() };
        let mut spent = Duration::ZERO;
        let r = cache.compile(src, &key, module, ty_args, &modules, &eager, &mut spent);
        self.stats.compile_time += spent;
        if r.is_ok() {
            self.stats.instances_compiled += 1;
        }
        r.map_err(NoCode::Never)
    }

    /// Keys of the module's non-generic functions with code.
    fn eager_keys(&self, src: &dyn ModuleSource, module: &ModuleId, key: &CodeKey) -> Vec<(CodeKey, u16)> {
        let Some(m) = src.module(module) else { return Vec::new() };
        let mut out = Vec::new();
        for (i, f) in m.function_defs.iter().enumerate() {
            let generic = m.function_handles.get(f.function.idx()).is_none_or(|h| !h.type_parameters.is_empty());
            if f.code.is_none() || generic {
                continue;
            }
            let Ok(fdef) = u16::try_from(i) else { break };
            out.push((CodeKey { link: key.link, fdef, type_args: Vec::new(), type_links: Vec::new() }, fdef));
        }
        out
    }

    /// Closures among the arguments may name modules the code's generation
    /// does not know yet: they must be the session's versions there too.
    fn admit_closure_modules(
        &mut self,
        host: &dyn SessionHost,
        ready: &Ready,
        args: &[SeamSlot],
        metering: Metering,
    ) -> bool {
        let mut found = Vec::new();
        for s in args {
            closures_in(s, &mut found);
        }
        if found.is_empty() {
            return true;
        }
        let roots: Vec<ModuleId> = found.into_iter().map(|(f, _)| f.module).collect();
        let modules = self.module_set(host, &roots);
        self.shared.cache(metering).admit(&ready.gen, host, &modules)
    }

    /// The answer for a compiled run that started with `gas_in`.
    fn finished(
        source: &dyn ModuleSource,
        ready: &Ready,
        out: &FlatOutcome,
        gas_in: Option<u64>,
        aptos: bool,
    ) -> CompiledCall {
        // Running out of gas leaves none, as in the interpreter's meter
        // (Aptos's meter settles what the failed charge asked for).
        let gas_left = if out.status == StatusCode::OUT_OF_GAS && !aptos { gas_in.map(|_| 0) } else { out.gas_left };
        if out.status != StatusCode::EXECUTED {
            return CompiledCall::Failed { error: Self::error_of(source, ready, out), gas_left };
        }
        CompiledCall::Returned { gas_left }
    }

    /// The interpreter's error for a failed compiled run.
    fn error_of(source: &dyn ModuleSource, ready: &Ready, out: &FlatOutcome) -> VmError {
        // Raised in a callee compiled code had interpreted: as it was.
        if let Some(e) = &out.interpreted {
            return (**e).clone();
        }
        let mut e = VmError::new(out.status);
        if let Some(code) = out.abort_code {
            e = e.with_sub_status(code);
        }
        if let Some(m) = &out.message {
            e = e.with_message(m.clone());
        }
        // Aptos's location of an error making a frame: a module only (the
        // interpreter's marks: no function name; an empty module when it
        // is the frame below the run's entry, which the interpreter knows).
        let module_only = out.location.as_ref().is_some_and(|l| l.function == Location::MODULE_ONLY);
        if module_only {
            let loc = out.location.as_ref().filter(|l| l.module != Location::BELOW_ENTRY);
            let id = loc.and_then(|l| ready.gen.ids.read().ok().and_then(|ids| ids.get(l.module as usize).cloned()));
            e.location = Some(ErrorLocation {
                module: id.map(|id| id.long_string()).unwrap_or_default(),
                function_name: String::new(),
                function_index: 0,
                code_offset: 0,
            });
        } else if let Some(loc) = &out.location {
            let id = ready.gen.ids.read().ok().and_then(|ids| ids.get(loc.module as usize).cloned());
            if let Some(id) = id {
                let module = source.module(&id);
                // A variant mismatch's message names the variants the
                // instruction there takes and the one it found.
                let instr = |m: &movejit_format::CompiledModule| {
                    let code = m.function_defs.get(loc.function as usize)?.code.as_ref()?;
                    code.code.get(loc.code_offset as usize).cloned()
                };
                if let (Some(found), Some(m)) = (out.variant_found, module) {
                    if let Some(i) = instr(m) {
                        e = VmError::variant_mismatch(m, &i, found);
                    }
                }
                let name = module.map(|m| movejit_loader::function_name(m, loc.function)).unwrap_or_default();
                e.location = Some(ErrorLocation {
                    module: id.long_string(),
                    function_name: name,
                    function_index: loc.function,
                    code_offset: loc.code_offset,
                });
            }
        }
        e
    }
}

/// A stand-in hash for a module known by name only.
fn name_hash(id: &ModuleId) -> Hash {
    use sha2::Digest;
    sha2::Sha256::digest(id.long_string().as_bytes()).into()
}

/// The modules of the datatypes `t` names.
fn type_modules(t: &Type, out: &mut Vec<ModuleId>) {
    match t {
        Type::Datatype(d, args) => {
            out.push(ModuleId::new(d.address, &d.module));
            args.iter().for_each(|a| type_modules(a, out));
        }
        Type::Vector(t) | Type::Reference(t) | Type::MutableReference(t) => type_modules(t, out),
        Type::Function(p, r, _) => p.iter().chain(r).for_each(|a| type_modules(a, out)),
        _ => {}
    }
}

impl CompiledCode for JitSession<'_> {
    fn interprets(
        &mut self,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
        state: &movejit_runtime::compiled::CallState,
        hint: &CompiledHint,
    ) -> bool {
        let metering = Metering::of(state);
        // What an earlier session found: not compilable, or compiling.
        if let Some(h) = hint.0[metering as usize].get().and_then(|h| h.downcast_ref::<HintCode>()) {
            if h.slot.get().is_none_or(|code| code.is_none()) {
                return true;
            }
        }
        // The module's hash is not compared: for a version the session
        // replaced, interpreting is still right.
        let Some(h) = self.hot.get_mut(module).and_then(|v| {
            v.iter_mut().find(|h| h.counted && h.fdef == fdef && h.metering == metering && h.type_args[..] == *ty_args)
        }) else {
            return false;
        };
        h.interpreted()
    }

    fn call(&mut self, host: &mut dyn SessionHost, natives: &mut NativeSession, call: SeamCall<'_>) -> CompiledCall {
        let SeamCall { module, fdef, ty_args, args, rets, state, hint } = call;
        let metering = Metering::of(&state);
        let aptos = state.aptos;
        let nested = NestedState {
            depth: state.depth,
            stack_base: state.stack_base,
            gas_left: state.gas_left,
            aptos_meter: state.aptos_meter,
        };
        // Fastest path: the session's entry taken from a warm set (not under
        // Aptos's schedule, whose code warm sets do not hold). While the
        // session has exactly that set, the module is the entry's version
        // (no look-up of its hash).
        let warm = metering.warm();
        let set = host.module_set_id();
        let entry = self.warm_entry.as_mut().filter(|w| {
            let e = &*w.entry;
            warm.is_some()
                && e.fdef == fdef
                && e.module == *module
                && e.type_args[..] == *ty_args
                && (set == Some(e.set) || w.hash == host.module_hash(module))
        });
        if let (Some(w), Some(v)) = (entry, warm) {
            w.take_code(v);
            if let Some(ready) = w.code[v].as_ref().filter(|r| !r.entry.takes_closures()) {
                return match ready.entry.run(args, rets, nested, host, natives) {
                    Ok(out) => {
                        w.counted = true;
                        Self::finished(&*host, ready, &out, state.gas_left, aptos)
                    }
                    // Nothing ran: the interpreter can still run it.
                    Err(_) => self.not_compiled(module, fdef, ty_args),
                };
            }
        }
        // Next: code an earlier session over the same warm set left in the
        // instance's hint (compiled in the background since): no look-up.
        let hinted = hint.and_then(|h| h.0[metering as usize].get()).and_then(|c| c.downcast_ref::<HintCode>());
        if let Some(ready) = hinted
            .filter(|c| set.is_some() && c.set == set)
            .and_then(|c| c.slot.get()?.as_ref())
            .filter(|r| !r.entry.takes_closures())
        {
            return match ready.entry.run(args, rets, nested, host, natives) {
                Ok(out) => {
                    let id = Arc::as_ptr(ready) as usize;
                    if !self.hint_ran.contains(&id) {
                        self.hint_ran.push(id);
                    }
                    Self::finished(&*host, ready, &out, state.gas_left, aptos)
                }
                Err(_) => self.not_compiled(module, fdef, ty_args),
            };
        }
        let hash = host.module_hash(module);
        // Fast path: an instance this session knows (and counted), run from
        // where the session keeps it (no reference count touched: threads
        // share it).
        let mut ran_not = false;
        match self.hot.get_mut(module).and_then(|v| {
            v.iter_mut().find(|h| {
                h.counted && h.fdef == fdef && h.metering == metering && h.hash == hash && h.type_args[..] == *ty_args
            })
        }) {
            Some(h) if h.code.is_none() => {
                // Compiling in the background: its code, once ready, runs
                // from the next call on.
                h.interpreted();
                return CompiledCall::NotCompiled;
            }
            Some(Hot { code: Some(ready), .. }) if !ready.entry.takes_closures() => {
                match ready.entry.run(args, rets, nested, host, natives) {
                    Ok(out) => return Self::finished(&*host, ready, &out, state.gas_left, aptos),
                    Err(_) => ran_not = true,
                }
            }
            _ => {}
        }
        if ran_not {
            // Nothing ran: the interpreter can still run it.
            return self.not_compiled(module, fdef, ty_args);
        }
        let warm_entry = self.warm_entry.as_mut().filter(|w| w.is(module, fdef, ty_args, hash));
        let warm_code = warm_entry.zip(warm).and_then(|(w, v)| {
            w.take_code(v);
            Some((w.code[v].clone()?, w.counted))
        });
        let known = match warm_code {
            Some((r, counted)) => Some((Some(r), counted)),
            None => self.hot.get(module).and_then(|v| {
                v.iter()
                    .find(|h| h.fdef == fdef && h.metering == metering && h.hash == hash && h.type_args[..] == *ty_args)
                    .map(|h| (h.code.clone(), h.counted))
            }),
        };
        let first = !matches!(known, Some((_, true)));
        let ready = match known {
            Some((Some(r), _)) => r,
            Some((None, _)) => return CompiledCall::NotCompiled,
            None => match self.obtain(&*host, module, fdef, ty_args, metering, self.threshold) {
                Ok(r) => r,
                Err(NoCode::Never(_)) => {
                    if let Some(h) = hint {
                        let never = HintCode { set, slot: Arc::new(SlotCell::from(None)) };
                        let _ = h.0[metering as usize].set(Arc::new(never));
                    }
                    let hot = Hot {
                        fdef,
                        type_args: ty_args.to_vec(),
                        metering,
                        hash,
                        code: None,
                        counted: true,
                        pending: None,
                    };
                    self.add_hot(module, hot);
                    return self.not_compiled(module, fdef, ty_args);
                }
                Err(NoCode::Pending(slot)) => {
                    if let Some(h) = hint {
                        let _ = h.0[metering as usize].set(Arc::new(HintCode { set, slot: slot.clone() }));
                    }
                    let pending = Some(slot);
                    let hot =
                        Hot { fdef, type_args: ty_args.to_vec(), metering, hash, code: None, counted: true, pending };
                    self.add_hot(module, hot);
                    return self.not_compiled(module, fdef, ty_args);
                }
                Err(NoCode::Later) => return self.not_compiled(module, fdef, ty_args),
            },
        };
        if ready.entry.takes_closures() && !self.admit_closure_modules(&*host, &ready, args, metering) {
            return self.not_compiled(module, fdef, ty_args);
        }
        let out = match ready.entry.run(args, rets, nested, host, natives) {
            Ok(out) => out,
            // Nothing ran: the interpreter can still run it.
            Err(_) => return self.not_compiled(module, fdef, ty_args),
        };
        if let Some(w) = self.warm_entry.as_mut().filter(|w| warm.is_some() && w.is(module, fdef, ty_args, hash)) {
            w.counted = true;
        } else if first {
            let known = self.hot.get_mut(module).and_then(|hots| {
                hots.iter_mut()
                    .find(|h| h.fdef == fdef && h.metering == metering && h.hash == hash && h.type_args[..] == *ty_args)
            });
            match known {
                Some(h) => h.counted = true,
                None => {
                    let code = Some(ready.clone());
                    self.add_hot(
                        module,
                        Hot { fdef, type_args: ty_args.to_vec(), metering, hash, code, counted: true, pending: None },
                    )
                }
            }
        }
        Self::finished(&*host, &ready, &out, state.gas_left, aptos)
    }

    fn hot_loop(
        &mut self,
        modules: &dyn ModuleSource,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
        state: &movejit_runtime::compiled::CallState,
        hint: &CompiledHint,
    ) {
        // At threshold 0 its first call asked for the code already.
        if self.threshold == 0 {
            return;
        }
        let metering = Metering::of(state);
        let hash = modules.module_hash(module);
        let set = modules.module_set_id();
        let known = self.hot.get(module).is_some_and(|v| {
            v.iter().any(|h| h.fdef == fdef && h.metering == metering && h.hash == hash && h.type_args[..] == *ty_args)
        });
        if known {
            return;
        }
        // As a call past the threshold: the session's next call finds what
        // it got (the code, or the slot the compiler threads will fill).
        let (code, pending) = match self.obtain(modules, module, fdef, ty_args, metering, 0) {
            Ok(ready) => (Some(ready), None),
            Err(NoCode::Never(_)) => {
                let never = HintCode { set, slot: Arc::new(SlotCell::from(None)) };
                let _ = hint.0[metering as usize].set(Arc::new(never));
                (None, None)
            }
            Err(NoCode::Pending(slot)) => {
                let _ = hint.0[metering as usize].set(Arc::new(HintCode { set, slot: slot.clone() }));
                (None, Some(slot))
            }
            Err(NoCode::Later) => return,
        };
        // Code found is counted by the call that runs it; an instance
        // without code is counted as interpreted (it is running so).
        let counted = code.is_none();
        self.add_hot(module, Hot { fdef, type_args: ty_args.to_vec(), metering, hash, code, counted, pending });
    }

    fn compile(
        &mut self,
        modules: &dyn ModuleSource,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
    ) -> Result<(), String> {
        // Both variants: the gas meter of the coming call decides which runs.
        // Found code is kept for the call (one look-up of the engine's cache
        // per variant and session, or none over a warm set seen before).
        let hash = modules.module_hash(module);
        let set = modules.module_set_id();
        if self.warm_entry.as_ref().is_some_and(|w| w.is(module, fdef, ty_args, hash)) {
            return Ok(());
        }
        let known = |metering: Metering| {
            self.hot.get(module).is_some_and(|v| {
                v.iter()
                    .any(|h| h.fdef == fdef && h.metering == metering && h.hash == hash && h.type_args[..] == *ty_args)
            })
        };
        // Found by an earlier session over the same warm set: the session's
        // entry when it is its first (nothing to record again).
        let mut shared = set.and_then(|set| self.shared_entry(set, module, fdef, ty_args));
        if self.warm_entry.is_none() && !known(Metering::Unmetered) && !known(Metering::Unit) {
            if let Some((entry, code)) = shared.take() {
                self.warm_entry = Some(WarmEntry { entry, hash, code: code.map(Some), counted: false });
                return Ok(());
            }
        }
        let mut shared = shared.map(|(_, [u, m])| [Some(u), Some(m)]);
        let recording = set.is_some() && shared.is_none();
        let mut found: [Option<Arc<Ready>>; 2] = [None, None];
        for (metering, slot) in [Metering::Unmetered, Metering::Unit].into_iter().zip(&mut found) {
            let known = self.hot.get(module).and_then(|v| {
                v.iter()
                    .find(|h| h.fdef == fdef && h.metering == metering && h.hash == hash && h.type_args[..] == *ty_args)
                    .and_then(|h| h.code.as_ref())
            });
            if let Some(r) = known {
                if recording {
                    *slot = Some(r.clone());
                }
                continue;
            }
            let ready = match shared.as_mut().and_then(|s| s[metering as usize].take()) {
                Some(r) => r,
                None => self.obtain(modules, module, fdef, ty_args, metering, 0).map_err(|why| match why {
                    NoCode::Never(why) => why,
                    NoCode::Later | NoCode::Pending(_) => "not compiled yet".to_string(),
                })?,
            };
            if recording {
                *slot = Some(ready.clone());
            }
            let hot = Hot {
                fdef,
                type_args: ty_args.to_vec(),
                metering,
                hash,
                code: Some(ready),
                counted: false,
                pending: None,
            };
            self.add_hot(module, hot);
        }
        if let (true, Some(set), [Some(u), Some(m)]) = (recording, set, &found) {
            if let Ok(mut entries) = self.shared.entries.write() {
                let v = entries.entry(set).or_default().entry(module.clone()).or_default();
                if !v.iter().any(|e| e.fdef == fdef && e.type_args[..] == *ty_args) {
                    let code = [Arc::downgrade(u), Arc::downgrade(m)];
                    v.push(Arc::new(EntryCode {
                        set,
                        hash,
                        module: module.clone(),
                        fdef,
                        type_args: ty_args.to_vec(),
                        code,
                    }));
                }
            }
        }
        Ok(())
    }

    fn compile_entry(
        &mut self,
        modules: &dyn ModuleSource,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
        slot: &EntrySlot,
    ) -> Result<(), String> {
        // A plan's slot is per warm set: without one, it is `compile`.
        if modules.module_set_id().is_none() {
            return self.compile(modules, module, fdef, ty_args);
        }
        // A fresh session: the session's entry straight from the plan (as
        // `compile` takes it from `Shared::entries`, without the look-up).
        if self.warm_entry.is_none() && self.hot.is_empty() {
            if let Some(entry) = slot.get().and_then(|b| b.downcast_ref::<Arc<EntryCode>>()) {
                // Both variants alive (a load each, no count taken: the
                // session's calls take the variants they run).
                if entry.code.iter().all(|c| c.strong_count() > 0) {
                    // The plan is of this set: the module has the entry's version.
                    let hash = entry.hash;
                    self.warm_entry =
                        Some(WarmEntry { entry: entry.clone(), hash, code: [None, None], counted: false });
                    return Ok(());
                }
            }
        }
        self.compile(modules, module, fdef, ty_args)?;
        if slot.get().is_none() {
            if let Some(set) = modules.module_set_id() {
                if let Some((entry, _)) = self.shared_entry(set, module, fdef, ty_args) {
                    let _ = slot.set(Box::new(entry));
                }
            }
        }
        Ok(())
    }

    fn stats(&self) -> CompiledStats {
        CompiledStats {
            compiled_functions: self.compiled_ran(),
            from_hint: self.hint_ran.len(),
            interpreted_functions: self.interpreted.len(),
            ..self.stats.clone()
        }
    }
}
