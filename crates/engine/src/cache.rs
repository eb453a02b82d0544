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
//! Compiling takes the cache's lock; running does not (see
//! [`movejit_jit::SharedEngine`]). Code lives in *generations*: JIT engines
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
use movejit_interp::JitOptions;
use movejit_jit::{InstanceKey, JitConfig, SharedEngine, SharedEntry};
use movejit_runtime::compiled::ModuleSource;
use movejit_runtime::{ModuleId, Type};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
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
}

/// Compiled code ready to run, with its generation.
pub struct Ready {
    pub entry: SharedEntry,
    pub gen: Arc<Gen>,
}

/// The answer of a look-up.
pub enum Lookup {
    Ready(Arc<Ready>),
    /// Does not compile (why).
    Never(String),
    /// Interpret this call (below the threshold).
    Later,
    /// Compile it ([`CodeCache::compile`]).
    Compile,
}

struct GenState {
    gen: Arc<Gen>,
    /// Modules it knows: content hash and number.
    names: HashMap<ModuleId, (Hash, u32)>,
    /// The code generator panicked: nothing more compiles here.
    broken: bool,
    /// When it was last chosen or its code found (`State::clock`).
    used: u64,
}

#[derive(Default)]
struct State {
    gens: Vec<GenState>,
    code: HashMap<CodeKey, Result<Arc<Ready>, String>>,
    calls: HashMap<CodeKey, u32>,
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
    config: JitConfig,
    options: JitOptions,
    state: Mutex<State>,
}

fn is_limit(why: &str) -> bool {
    why.contains(" instructions (limit ")
}

impl CodeCache {
    pub fn new(config: JitConfig, options: JitOptions) -> CodeCache {
        CodeCache { config, options, state: Mutex::new(State::default()) }
    }

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
        let mut st = self.state();
        if let Some(v) = st.code.get(key) {
            return v.clone();
        }
        let gen = match st.gen_for(&self.config, src, modules) {
            Ok(g) => g,
            Err(why) => {
                st.record(key.clone(), Err(why.clone()));
                return Err(why);
            }
        };
        if self.options.eager && !st.eager_done.contains(&key.link) {
            st.eager_done.insert(key.link);
            for (k, fdef) in eager {
                if !st.code.contains_key(k) {
                    let v = st.compile_in(gen, &self.options, module, *fdef, &[], spent);
                    st.record(k.clone(), v);
                }
            }
            if let Some(v) = st.code.get(key) {
                return v.clone();
            }
        }
        let v = st.compile_in(gen, &self.options, module, key.fdef, type_args, spent);
        st.record(key.clone(), v.clone());
        v
    }

    /// Makes the modules of `modules` known to `gen` when their versions
    /// agree with it (closure targets a run is given); `false`: they do not.
    pub fn admit(&self, gen: &Arc<Gen>, src: &dyn ModuleSource, modules: &ModuleSet) -> bool {
        let mut st = self.state();
        let Some(i) = st.gens.iter().position(|g| Arc::ptr_eq(&g.gen, gen)) else { return false };
        st.consistent(i, modules) && st.add_modules(i, src, modules).is_ok()
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
        !g.broken && modules.iter().all(|(id, h)| g.names.get(id).is_none_or(|(have, _)| have == h))
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
                let gen = Arc::new(Gen { engine, ids: RwLock::new(Vec::new()) });
                self.gens.push(GenState { gen, names: HashMap::new(), broken: false, used: 0 });
                self.gens.len() - 1
            }
        };
        self.clock += 1;
        self.gens[i].used = self.clock;
        self.add_modules(i, src, modules)?;
        Ok(i)
    }

    fn add_modules(&mut self, gen: usize, src: &dyn ModuleSource, modules: &ModuleSet) -> Result<(), String> {
        let g = &mut self.gens[gen];
        for (id, h) in modules {
            if g.names.contains_key(id) {
                continue;
            }
            // A module the session has not loaded: its use fails to compile.
            let Some(m) = src.module(id) else { continue };
            let copy = m.clone();
            let num =
                g.gen.engine.with(|jit| jit.add_module(copy)).map_err(|e| e.to_string())?.map_err(|e| e.to_string())?;
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

    /// Compiles one instance in generation `gen` (its modules added).
    fn compile_in(
        &mut self,
        gen: usize,
        options: &JitOptions,
        module: &ModuleId,
        fdef: u16,
        type_args: &[Type],
        spent: &mut Duration,
    ) -> Result<Arc<Ready>, String> {
        // The budget holds during the compile too: what is left of it is
        // the compile's deadline (`JitEngine::compile_until`).
        let mut deadline = None;
        if let Some(budget) = options.compile_budget {
            if self.stats.compile_time >= budget {
                self.stats.over_budget += 1;
                return Err(format!("compile budget of {budget:?} spent"));
            }
            deadline = Some(budget - self.stats.compile_time);
        }
        let g = &mut self.gens[gen];
        let num = g.names.get(module).map(|(_, n)| *n).ok_or_else(|| format!("module {module} not loaded"))?;
        let key = InstanceKey { module: num, fdef, type_args: type_args.to_vec() };
        let start = Instant::now();
        let deadline = deadline.map(|left| start + left);
        // Code (and the constants it keeps) belongs to the cache, not to the
        // call that happened to trigger the compile.
        let r = movejit_runtime::memory::outside_budget(|| {
            g.gen.engine.with(|jit| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match deadline {
                    Some(d) => jit.compile_until(&key, d),
                    None => jit.compile(&key),
                }))
            })
        });
        let took = start.elapsed();
        self.stats.compile_time += took;
        self.stats.compiles += 1;
        *spent += took;
        let g = &mut self.gens[gen];
        match r {
            Err(e) => Err(e.to_string()),
            Ok(Err(_)) => {
                // The engine's state after a panic is unknown: code already
                // finalized keeps running, nothing more compiles here.
                g.broken = true;
                Err("code generator panicked".to_string())
            }
            Ok(Ok(Err(e))) => Err(e.to_string()),
            Ok(Ok(Ok(()))) => {
                let entry = g.gen.engine.entry(&key).map_err(|e| e.to_string())?;
                Ok(Arc::new(Ready { entry, gen: g.gen.clone() }))
            }
        }
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
