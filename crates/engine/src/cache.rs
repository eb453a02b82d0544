//! The engine's code cache: compiled code shared by every session and
//! thread of one engine.
//!
//! Code is keyed by [`CodeKey`]: the *link hash* of the function's module
//! (SHA-256 over the module's content hash and the link hashes of its
//! dependencies, so a module republished with other bytes — or linked
//! against a republished dependency — never finds old code), the function
//! definition, the type arguments and the link hashes of the modules those
//! name; metered and unmetered code live in two caches.
//!
//! Running takes no lock (see [`movejit_jit::SharedEngine`]); a look-up
//! takes the cache's lock briefly, never for the length of a compile: code
//! generation holds only its generation's JIT engine. With background
//! compiler threads (`JitOptions::compile_threads`, executor `Auto`), an
//! instance past the threshold is queued ([`CodeCache::request`]) and its
//! calls are interpreted until its code is ready. Code lives in *generations*: JIT engines
//! whose modules have one version per name (cross-module calls and closure
//! targets are resolved by name). A compile goes to the first generation
//! whose modules agree with the session's versions; a conflicting
//! (republished) module opens a new one. At most [`MAX_GENERATIONS`] live:
//! opening one more evicts the least recently used generation (its code
//! leaves the cache and is unmapped once no session holds an entry to it;
//! calls needing it again compile anew). All code is unmapped when the
//! engine (and the last session holding an entry) drops. Not yet: evicting
//! single modules (the interpreter's module cache never evicts).

use movejit_format::CompiledModule;
use movejit_jit::{InstanceKey, JitConfig, SharedEngine, SharedEntry};
use movejit_loader::LoadedModule;
use movejit_runtime::compiled::ModuleSource;
use movejit_runtime::compiled::SharedModule;
use movejit_runtime::fxhash::FxHashMap;
use movejit_runtime::JitOptions;
use movejit_runtime::NativeRegistry;
use movejit_runtime::{ModuleId, Type};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::{Duration, Instant};

/// Generations (JIT engines) alive in one cache: each reserves its own
/// code arena, so republishing modules without end cannot exhaust memory.
pub const MAX_GENERATIONS: usize = 8;

pub type Hash = [u8; 32];

/// What compiled code is cached by (module doc).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CodeKey {
    pub link: Hash,
    pub fdef: u16,
    pub type_args: Vec<Type>,
    /// Link hashes of the modules the type arguments name.
    pub type_links: Vec<Hash>,
}

/// Engine-wide counters of a code cache (`movejit run --stats`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Instances whose code is ready (each compiled once, whatever the
    /// number of sessions and threads running it).
    pub compiled: usize,
    /// Compile attempts (successful or not; with their callees).
    pub compiles: usize,
    /// Instances that do not compile (interpreted).
    pub not_compiled: usize,
    /// Of those: over `max_code_len` or `max_ir_insts`.
    pub over_limit: usize,
    /// Instances not compiled because the compile budget was spent.
    pub over_budget: usize,
    /// Calls interpreted while their instance was below the threshold.
    pub below_threshold: usize,
    /// Instances queued for the background compiler threads.
    pub queued: usize,
    /// Look-ups that found their instance queued or compiling in the
    /// background (later calls of the session, and of sessions that find
    /// the instance's hint, are interpreted without one).
    pub waiting: usize,
    /// Look-ups that found code compiled earlier (by this or another
    /// session).
    pub shared_hits: usize,
    /// JIT engines alive (one more per conflicting module version).
    pub generations: usize,
    /// JIT engines evicted (least recently used, to open a new one).
    pub evicted: usize,
    pub compile_time: Duration,
    /// Machine-code bytes of all generations.
    pub code_bytes: u64,
    /// Bytecode instructions of the functions compiled in all generations
    /// (`code_bytes / code_instructions`: bytes per instruction).
    pub code_instructions: u64,
}

impl CacheStats {
    pub fn add(&mut self, o: &CacheStats) {
        self.compiled += o.compiled;
        self.compiles += o.compiles;
        self.not_compiled += o.not_compiled;
        self.over_limit += o.over_limit;
        self.over_budget += o.over_budget;
        self.below_threshold += o.below_threshold;
        self.queued += o.queued;
        self.waiting += o.waiting;
        self.shared_hits += o.shared_hits;
        self.generations += o.generations;
        self.evicted += o.evicted;
        self.compile_time += o.compile_time;
        self.code_bytes += o.code_bytes;
        self.code_instructions += o.code_instructions;
    }
}

/// One JIT engine of the cache and the module number → id map its errors
/// are reported with.
pub struct Gen {
    pub engine: Arc<SharedEngine>,
    pub ids: RwLock<Vec<ModuleId>>,
    /// The code generator panicked: nothing more compiles here.
    broken: AtomicBool,
}

/// Compiled code ready to run, with its generation.
pub struct Ready {
    pub entry: SharedEntry,
    pub gen: Arc<Gen>,
}

/// Where a background compile leaves its answer: the code, or `None` when
/// the instance does not compile. Sessions keep it and test it at each call
/// (one atomic load) until it is set.
pub type Slot = Arc<SlotCell>;

/// The cell a [`Slot`] shares.
pub type SlotCell = OnceLock<Option<Arc<Ready>>>;

/// The answer of a look-up.
pub enum Lookup {
    Ready(Arc<Ready>),
    /// Does not compile (why).
    Never(String),
    /// Interpret this call (below the threshold).
    Later,
    /// Interpret this call: a compiler thread has it ([`CodeCache::request`]).
    Pending(Slot),
    /// Compile it ([`CodeCache::compile`]).
    Compile,
}

struct GenState {
    gen: Arc<Gen>,
    /// Modules it knows: content hash and number.
    names: HashMap<ModuleId, (Hash, u32)>,
    /// When it was last chosen or its code found (`State::clock`).
    used: u64,
}

#[derive(Default)]
struct State {
    gens: Vec<GenState>,
    code: HashMap<CodeKey, Result<Arc<Ready>, String>>,
    calls: HashMap<CodeKey, u32>,
    /// Queued for, or compiling on, the background threads.
    pending: HashMap<CodeKey, Slot>,
    /// Link hashes of the modules compiled eagerly.
    eager_done: HashSet<Hash>,
    stats: CacheStats,
    clock: u64,
}

/// The modules a compile needs, with their content hashes (the session's
/// versions), closed over dependencies.
pub type ModuleSet = Vec<(ModuleId, Hash)>;

/// Metered or unmetered code of one engine.
pub struct CodeCache {
    inner: Arc<Inner>,
}

/// What a [`CodeCache`] shares with its background compiler threads.
pub struct Inner {
    config: JitConfig,
    options: JitOptions,
    state: Mutex<State>,
    /// The background compiler threads' queue, opened at the first
    /// request; dropping the cache closes it, which ends the threads.
    queue: Mutex<Option<mpsc::Sender<Job>>>,
}

/// A background compile: everything it needs, owned.
struct Job {
    key: CodeKey,
    module: ModuleId,
    type_args: Vec<Type>,
    modules: Arc<ModuleSet>,
    sources: Sources,
    slot: Slot,
}

/// The session's loaded modules of a module set, owned by background
/// compiles (shared by the requests of one session that need the same set).
pub type Sources = Arc<FxHashMap<ModuleId, Arc<LoadedModule>>>;

/// Module `id` as the loader loaded it for `src`: shared when `src` can
/// share it, else loaded anew from its copy (natives bound from `natives`).
fn loaded(src: &dyn ModuleSource, id: &ModuleId, natives: &NativeRegistry) -> Option<Arc<LoadedModule>> {
    src.shared_module(id)
        .and_then(|m| m.downcast::<LoadedModule>().ok())
        .or_else(|| LoadedModule::new(src.module(id)?.clone(), natives).ok().map(Arc::new))
}

/// `modules` as `src` has them.
pub fn sources(src: &dyn ModuleSource, modules: &ModuleSet, natives: &NativeRegistry) -> Sources {
    let mut out = FxHashMap::with_capacity_and_hasher(modules.len(), Default::default());
    out.extend(modules.iter().filter_map(|(id, _)| Some((id.clone(), loaded(src, id, natives)?))));
    Arc::new(out)
}

/// The modules of a [`Job`], as a module source.
struct JobModules<'a>(&'a FxHashMap<ModuleId, Arc<LoadedModule>>);

impl ModuleSource for JobModules<'_> {
    fn module(&self, id: &ModuleId) -> Option<&CompiledModule> {
        self.0.get(id).map(|m| &m.module)
    }

    fn shared_module(&self, id: &ModuleId) -> Option<SharedModule> {
        self.0.get(id).map(|m| m.clone() as SharedModule)
    }
}

/// Stack of a background compiler thread (code generation recurses over
/// nested expressions).
const COMPILER_STACK: usize = 64 << 20;

fn is_limit(why: &str) -> bool {
    why.contains(" instructions (limit ")
}

impl CodeCache {
    pub fn new(config: JitConfig, options: JitOptions) -> CodeCache {
        let inner = Inner { config, options, state: Mutex::new(State::default()), queue: Mutex::new(None) };
        CodeCache { inner: Arc::new(inner) }
    }

    /// Queues `key` (`module::fdef<type_args>`, needing `modules`, whose
    /// session copies `sources` gives) for the background compiler threads,
    /// unless it is known, queued or compiling. Returns at once with where
    /// the answer will be: the caller interprets meanwhile.
    pub fn request(
        &self,
        key: &CodeKey,
        module: &ModuleId,
        type_args: &[Type],
        modules: &Arc<ModuleSet>,
        sources: impl FnOnce() -> Sources,
    ) -> Slot {
        let slot = {
            let mut st = self.state();
            if let Some(done) = st.code.get(key) {
                return Arc::new(OnceLock::from(done.as_ref().ok().cloned()));
            }
            if let Some(slot) = st.pending.get(key) {
                return slot.clone();
            }
            let slot = Slot::default();
            st.pending.insert(key.clone(), slot.clone());
            st.stats.queued += 1;
            slot
        };
        let sources = sources();
        let job = Job {
            key: key.clone(),
            module: module.clone(),
            type_args: type_args.to_vec(),
            modules: modules.clone(),
            sources,
            slot: slot.clone(),
        };
        let mut queue = self.inner.queue.lock().unwrap_or_else(|p| p.into_inner());
        if queue.is_none() {
            *queue = self.start_threads();
        }
        let sent = queue.as_ref().is_some_and(|q| q.send(job).is_ok());
        if !sent {
            // No thread could start: the instance stays interpreted.
            let _ = slot.set(None);
            self.state().pending.remove(key);
        }
        slot
    }

    /// Starts the background compiler threads; `None` when none starts.
    fn start_threads(&self) -> Option<mpsc::Sender<Job>> {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let mut started = 0;
        for i in 0..self.inner.options.compile_threads.max(1) {
            let (rx, cache) = (rx.clone(), Arc::downgrade(&self.inner));
            let spawned = std::thread::Builder::new()
                .name(format!("movejit-compile-{i}"))
                .stack_size(COMPILER_STACK)
                .spawn(move || compiler_thread(&rx, &cache));
            started += usize::from(spawned.is_ok());
        }
        (started > 0).then_some(tx)
    }
}

/// A background compiler thread: compiles queued instances until the
/// cache is dropped.
fn compiler_thread(rx: &Mutex<mpsc::Receiver<Job>>, cache: &Weak<Inner>) {
    loop {
        let job = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let (Ok(job), Some(cache)) = (job, cache.upgrade()) else { return };
        let mut spent = Duration::ZERO;
        let src = JobModules(&job.sources);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            cache.compile(&src, &job.key, &job.module, &job.type_args, &job.modules, &[], &mut spent)
        }))
        .unwrap_or_else(|_| Err("code generator panicked".to_string()));
        // Recorded before the slot is set: a session that sees the slot
        // empty and looks up again finds the code.
        cache.state().pending.remove(&job.key);
        let _ = job.slot.set(r.ok());
    }
}

impl std::ops::Deref for CodeCache {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.inner
    }
}

impl Inner {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while the lock was held cannot leave the maps
        // inconsistent (each update is one insert): keep going.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached verdict of `key`, or what to do about it; counts the call
    /// towards the threshold when `threshold` > 0.
    pub fn lookup(&self, key: &CodeKey, threshold: u32) -> Lookup {
        let mut st = self.state();
        if let Some(v) = st.code.get(key) {
            let r = match v {
                Ok(r) => Lookup::Ready(r.clone()),
                Err(why) => Lookup::Never(why.clone()),
            };
            st.stats.shared_hits += 1;
            if let Lookup::Ready(r) = &r {
                st.touch(&r.gen);
            }
            return r;
        }
        if let Some(slot) = st.pending.get(key) {
            let slot = slot.clone();
            st.stats.waiting += 1;
            return Lookup::Pending(slot);
        }
        if threshold > 0 {
            let n = st.calls.entry(key.clone()).or_insert(0);
            *n = n.saturating_add(1);
            if *n <= threshold {
                st.stats.below_threshold += 1;
                return Lookup::Later;
            }
        }
        Lookup::Compile
    }

    /// Compiles `key` (`module::fdef<type_args>`, needing `modules`) unless
    /// another session did meanwhile; with `eager`, first every
    /// non-generic function of the module (`eager` lists their keys and
    /// definitions). Returns the code, or why it does not compile.
    #[allow(clippy::too_many_arguments)]
    pub fn compile(
        &self,
        src: &dyn ModuleSource,
        key: &CodeKey,
        module: &ModuleId,
        type_args: &[Type],
        modules: &ModuleSet,
        eager: &[(CodeKey, u16)],
        spent: &mut Duration,
    ) -> Result<Arc<Ready>, String> {
        let (gen, do_eager) = {
            let mut st = self.state();
            if let Some(v) = st.code.get(key) {
                return v.clone();
            }
            let gen = match st.gen_for(&self.config, src, modules) {
                Ok(i) => st.gens[i].gen.clone(),
                Err(why) => {
                    st.record(key.clone(), Err(why.clone()));
                    return Err(why);
                }
            };
            let do_eager = self.options.eager && st.eager_done.insert(key.link);
            (gen, do_eager)
        };
        if do_eager {
            for (k, fdef) in eager {
                if !self.state().code.contains_key(k) {
                    let v = self.compile_in(&gen, module, *fdef, &[], spent);
                    self.state().record(k.clone(), v);
                }
            }
            if let Some(v) = self.state().code.get(key) {
                return v.clone();
            }
        }
        let v = self.compile_in(&gen, module, key.fdef, type_args, spent);
        self.state().record(key.clone(), v.clone());
        v
    }

    /// Compiles one instance in generation `gen` (its modules added),
    /// holding only the generation's JIT engine, not the cache's lock.
    fn compile_in(
        &self,
        gen: &Arc<Gen>,
        module: &ModuleId,
        fdef: u16,
        type_args: &[Type],
        spent: &mut Duration,
    ) -> Result<Arc<Ready>, String> {
        // The budget holds during the compile too: what is left of it is
        // the compile's deadline (`JitEngine::compile_until`).
        let mut deadline = None;
        if let Some(budget) = self.options.compile_budget {
            let mut st = self.state();
            if st.stats.compile_time >= budget {
                st.stats.over_budget += 1;
                return Err(format!("compile budget of {budget:?} spent"));
            }
            deadline = Some(budget - st.stats.compile_time);
        }
        if gen.broken.load(Ordering::Relaxed) {
            return Err("code generator panicked".to_string());
        }
        let num = gen
            .ids
            .read()
            .ok()
            .and_then(|ids| ids.iter().position(|id| id == module))
            .ok_or_else(|| format!("module {module} not loaded"))?;
        let key = InstanceKey { module: num as u32, fdef, type_args: type_args.to_vec() };
        let start = Instant::now();
        let deadline = deadline.map(|left| start + left);
        // Code (and the constants it keeps) belongs to the cache, not to the
        // call that happened to trigger the compile.
        let r = movejit_runtime::memory::outside_budget(|| {
            gen.engine.with(|jit| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match deadline {
                    Some(d) => jit.compile_until(&key, d),
                    None => jit.compile(&key),
                }))
            })
        });
        let took = start.elapsed();
        {
            let mut st = self.state();
            st.stats.compile_time += took;
            st.stats.compiles += 1;
        }
        *spent += took;
        match r {
            Err(e) => Err(e.to_string()),
            Ok(Err(_)) => {
                // The engine's state after a panic is unknown: code already
                // finalized keeps running, nothing more compiles here.
                gen.broken.store(true, Ordering::Relaxed);
                Err("code generator panicked".to_string())
            }
            Ok(Ok(Err(e))) => Err(e.to_string()),
            Ok(Ok(Ok(()))) => {
                let entry = gen.engine.entry(&key).map_err(|e| e.to_string())?;
                Ok(Arc::new(Ready { entry, gen: gen.clone() }))
            }
        }
    }

    /// Makes the modules of `modules` known to `gen` when their versions
    /// agree with it (closure targets a run is given); `false`: they do not.
    pub fn admit(&self, gen: &Arc<Gen>, src: &dyn ModuleSource, modules: &ModuleSet) -> bool {
        let mut st = self.state();
        let Some(i) = st.gens.iter().position(|g| Arc::ptr_eq(&g.gen, gen)) else { return false };
        st.consistent(i, modules) && st.add_modules(i, src, modules, &self.config.natives).is_ok()
    }

    /// The natives modules a session cannot share are loaded with.
    pub fn natives(&self) -> &NativeRegistry {
        &self.config.natives
    }

    pub fn stats(&self) -> CacheStats {
        let st = self.state();
        let mut s = st.stats.clone();
        s.generations = st.gens.len();
        s.code_bytes = st.gens.iter().map(|g| g.gen.engine.code_size()).sum();
        s.code_instructions = st.gens.iter().map(|g| g.gen.engine.code_instructions()).sum();
        s
    }
}

impl State {
    fn record(&mut self, key: CodeKey, v: Result<Arc<Ready>, String>) {
        if self.code.contains_key(&key) {
            // Compiled twice by two threads at once: the first answer stays.
            return;
        }
        if let Ok(r) = &v {
            if !self.gens.iter().any(|g| Arc::ptr_eq(&g.gen, &r.gen)) {
                // Its generation was evicted while it compiled: the code
                // runs for the caller, the cache does not keep it.
                self.calls.remove(&key);
                return;
            }
        }
        match &v {
            Ok(_) => self.stats.compiled += 1,
            Err(why) => {
                self.stats.not_compiled += 1;
                if is_limit(why) {
                    self.stats.over_limit += 1;
                } else if why.contains("compile budget: ") {
                    self.stats.over_budget += 1;
                }
            }
        }
        self.calls.remove(&key);
        self.code.insert(key, v);
    }

    fn touch(&mut self, gen: &Arc<Gen>) {
        self.clock += 1;
        let now = self.clock;
        if let Some(g) = self.gens.iter_mut().find(|g| Arc::ptr_eq(&g.gen, gen)) {
            g.used = now;
        }
    }

    /// Drops the least recently used generation from the cache.
    fn evict(&mut self) {
        let Some(i) = (0..self.gens.len()).min_by_key(|i| self.gens[*i].used) else { return };
        let old = self.gens.remove(i).gen;
        self.code.retain(|_, v| !matches!(v, Ok(r) if Arc::ptr_eq(&r.gen, &old)));
        // Its modules may be compiled eagerly again elsewhere.
        self.eager_done.clear();
        self.stats.evicted += 1;
    }

    fn consistent(&self, gen: usize, modules: &ModuleSet) -> bool {
        let g = &self.gens[gen];
        !g.gen.broken.load(Ordering::Relaxed)
            && modules.iter().all(|(id, h)| g.names.get(id).is_none_or(|(have, _)| have == h))
    }

    /// The first generation agreeing with `modules` (a new one when none
    /// does), with the modules added.
    fn gen_for(&mut self, config: &JitConfig, src: &dyn ModuleSource, modules: &ModuleSet) -> Result<usize, String> {
        let i = match (0..self.gens.len()).find(|i| self.consistent(*i, modules)) {
            Some(i) => i,
            None => {
                if self.gens.len() >= MAX_GENERATIONS {
                    self.evict();
                }
                let engine = SharedEngine::new(config.clone()).map_err(|e| e.to_string())?;
                let gen = Arc::new(Gen { engine, ids: RwLock::new(Vec::new()), broken: AtomicBool::new(false) });
                self.gens.push(GenState { gen, names: HashMap::new(), used: 0 });
                self.gens.len() - 1
            }
        };
        self.clock += 1;
        self.gens[i].used = self.clock;
        self.add_modules(i, src, modules, &config.natives)?;
        Ok(i)
    }

    fn add_modules(
        &mut self,
        gen: usize,
        src: &dyn ModuleSource,
        modules: &ModuleSet,
        natives: &NativeRegistry,
    ) -> Result<(), String> {
        let g = &mut self.gens[gen];
        for (id, h) in modules {
            if g.names.contains_key(id) {
                continue;
            }
            // A module the session has not loaded: its use fails to compile.
            let Some(m) = loaded(src, id, natives) else { continue };
            let num =
                g.gen.engine.with(|jit| jit.add_loaded(m)).map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
            g.names.insert(id.clone(), (*h, num));
            if let Ok(mut ids) = g.gen.ids.write() {
                if ids.len() <= num as usize {
                    ids.resize(num as usize + 1, id.clone());
                }
                ids[num as usize] = id.clone();
            }
        }
        Ok(())
    }
}

/// The modules module `m` imports (itself excluded).
pub fn imports(m: &CompiledModule) -> impl Iterator<Item = ModuleId> + '_ {
    m.module_handles.iter().enumerate().filter(move |(i, _)| *i != m.self_module_handle_idx.idx()).filter_map(
        move |(_, h)| {
            let a = m.address_identifiers.get(h.address.idx())?;
            let n = m.identifiers.get(h.name.idx())?;
            Some(ModuleId::new(*a, n))
        },
    )
}

/// The content hash of a module without a known one: SHA-256 of its
/// serialized form.
pub fn serialized_hash(m: &CompiledModule) -> Hash {
    Sha256::digest(movejit_format::serialize_module(m)).into()
}

/// A link hash: own content hash, then the dependencies' link hashes in
/// sorted order.
pub fn link_hash(own: &Hash, deps: &mut [Hash]) -> Hash {
    deps.sort_unstable();
    let mut h = Sha256::new();
    h.update(own);
    for d in deps.iter() {
        h.update(d);
    }
    h.finalize().into()
}
