//! The flat interpreter (jit-abi.md 1.3–3): the same semantics as the tree
//! interpreter (`crate::interpreter`), over the one flat representation the
//! JIT shares. Each function instance is prepared once per engine
//! ([`prepare`]: stack types, frame layout, ops with resolved offsets and
//! layouts) and run by a plain loop ([`exec`]) over frames on a stack that
//! never moves, references being addresses. Natives are reached through
//! `movejit_runtime::flat::native_bridge::call_native` (a ported native's
//! flat form on the slots, else the tree-value bridge); compiled
//! code through the seam (`movejit_runtime::compiled`), which hands it this
//! interpreter's own slots.

pub(crate) mod direct;
pub(crate) mod exec;
pub(crate) mod prepare;
mod seam;

use crate::engine::SessionState;
use crate::fxhash::FxHashMap;
use movejit_loader::LoadedModule;
use movejit_runtime::flat::FlatLayout;
use movejit_runtime::natives::TypeInfo;
use movejit_runtime::{
    AccountAddress, FunctionId, FunctionIndex, Layout, ModuleId, NativeFunction, StatusCode, Type, TypeId, TypeTable,
    VmError, VmResult,
};
use prepare::{CallSite, Prepared};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// What a call reaches. Both kinds live as long as the engine (in its
/// [`PreparedTable`]), so copying a callee touches no shared counter.
#[derive(Clone, Copy)]
pub(crate) enum Callee<'e> {
    Move(Instance<'e>),
    Native(&'e NativeCallee),
}

/// A prepared function as one session uses it: `local` numbers it in the
/// session's instance table (where its call sites' callees are kept).
#[derive(Clone, Copy)]
pub(crate) struct Instance<'e> {
    pub p: &'e Prepared,
    pub local: u32,
}

/// A native function definition, as calls reach it.
pub(crate) struct NativeCallee {
    /// `None` when the registry has no such native (an error when called).
    pub f: Option<NativeFunction>,
    pub module: Arc<LoadedModule>,
    pub def: u16,
    pub fast: Option<VecNative>,
}

/// (module, function definition, type arguments): the engine-wide key of
/// a prepared instance (the module by the address of its loaded form).
pub(crate) type PreparedKey = (usize, u16, Vec<Type>);

/// The engine's prepared functions and native callees, shared by all its
/// sessions and threads. Append-only while the engine lives, so a session
/// holds plain `&'e` references to its entries: the locks are taken only
/// when a session first meets a function, never per call.
#[derive(Default)]
pub(crate) struct PreparedTable {
    prepared: boxcar::Vec<Prepared>,
    natives: boxcar::Vec<NativeCallee>,
    /// Instances by key: each candidate records the modules it was
    /// prepared against ([`Prepared::links`]) and is used only where they
    /// are the same (a few link variants per instance at most).
    prepared_by_key: RwLock<HashMap<PreparedKey, Vec<usize>>>,
    /// Native callees by (module, definition).
    natives_by_key: RwLock<HashMap<(usize, u16), usize>>,
    /// Instances by warm module set: (set, module, definition) → (type
    /// arguments, instance). Sessions over one set have the same modules,
    /// hence the same links: they skip computing and comparing them.
    by_set: crate::engine::WarmIndex,
    /// Call sites resolved by warm module set: (set, prepared function,
    /// pc) → the function the site names (no name look-ups per session).
    sites_by_set: SitesBySet,
}

/// (warm set, prepared function, pc) → the function its call site names.
type SitesBySet = RwLock<FxHashMap<(u64, usize, u32), (Arc<LoadedModule>, u16)>>;

impl PreparedTable {
    /// The instance of `key` prepared against `links`, if any.
    fn find(&self, key: &PreparedKey, links: &[(ModuleId, usize)]) -> Option<usize> {
        let by_key = self.prepared_by_key.read().ok()?;
        by_key.get(key)?.iter().copied().find(|&i| self.prepared.get(i).is_some_and(|p| p.links == links))
    }

    /// Adds `p` (prepared for `key`); the entry stays while the engine lives.
    fn add(&self, key: PreparedKey, p: Prepared) -> usize {
        let i = self.prepared.push(p);
        if let Ok(mut by_key) = self.prepared_by_key.write() {
            by_key.entry(key).or_default().push(i);
        }
        i
    }

    /// Records `p` (an entry of this table) for sessions over warm set `key.0`.
    fn remember_in_set(&self, key: crate::engine::WarmKey, ty_args: &[Type], i: usize) {
        self.by_set.insert_with(key, ty_args, || i);
    }

    /// The callee of native definition `def` of `m`.
    fn native(&self, m: &Arc<LoadedModule>, def: u16) -> usize {
        let key = (Arc::as_ptr(m) as usize, def);
        if let Some(i) = self.natives_by_key.read().ok().and_then(|n| n.get(&key).copied()) {
            return i;
        }
        let mut by_key = self.natives_by_key.write().unwrap_or_else(|e| e.into_inner());
        if let Some(&i) = by_key.get(&key) {
            return i;
        }
        let f = m.natives.get(def as usize).cloned().flatten();
        let fast = if f.is_some() { VecNative::of(m, def) } else { None };
        let i = self.natives.push(NativeCallee { f, module: m.clone(), def, fast });
        by_key.insert(key, i);
        i
    }

    /// The callee a [`SiteTargets`] code names.
    fn callee_of_code(&self, code: u32) -> Option<CalleeRef<'_>> {
        let i = (code >> 1) as usize - 1;
        Some(if code & 1 == 0 {
            CalleeRef::Move(self.prepared.get(i)?)
        } else {
            CalleeRef::Native(self.natives.get(i)?)
        })
    }
}

/// A callee in the engine's [`PreparedTable`] (a session adds its own
/// instance number to a Move function's).
enum CalleeRef<'t> {
    Move(&'t Prepared),
    Native(&'t NativeCallee),
}

/// What the call sites of one prepared function reach, kept engine-wide
/// for the first warm module set that resolves one of them. Every session
/// over that set (one per transaction, on any thread) then finds a site's
/// callee with one atomic load and writes nothing shared; resolving it
/// again per session took shared locks and reference counts that two
/// threads fought over. Sessions over another set resolve as before.
/// A site's code numbers its callee in the [`PreparedTable`]:
/// `(index + 1) << 1`, with the low bit set for a native; 0 while unknown.
#[derive(Debug, Default)]
pub(crate) struct SiteTargets(std::sync::OnceLock<(u64, Box<[std::sync::atomic::AtomicU32]>)>);

impl SiteTargets {
    /// The code site `site` resolved to in warm set `set`, if known.
    #[inline]
    fn get(&self, set: u64, site: u32) -> Option<u32> {
        let (s, codes) = self.0.get()?;
        let code = codes.get(site as usize)?.load(std::sync::atomic::Ordering::Acquire);
        (*s == set && code != 0).then_some(code)
    }

    /// Records `code` for `site` (of `sites`) in warm set `set`, unless
    /// the sites are kept for another set.
    fn record(&self, set: u64, sites: u32, site: u32, code: u32) {
        let (s, codes) =
            self.0.get_or_init(|| (set, (0..sites).map(|_| std::sync::atomic::AtomicU32::new(0)).collect()));
        if let (true, Some(c)) = (*s == set, codes.get(site as usize)) {
            c.store(code, std::sync::atomic::Ordering::Release);
        }
    }

    /// The code of entry `index` of the table's Move functions (`native`:
    /// of its natives); 0 (never recorded) past what a code holds.
    fn code(index: usize, native: bool) -> u32 {
        u32::try_from(index + 1).ok().and_then(|i| i.checked_mul(2)).map_or(0, |c| c | native as u32)
    }
}

/// What one session keeps of a prepared function it ran: the callee of
/// each of its call sites, once resolved.
struct SessionInstance<'e> {
    sites: Box<[Option<Callee<'e>>]>,
}

/// The `0x1::vector` natives and the `0x1::hash` digests, which run
/// directly on flat memory with the semantics (statuses, sub-statuses, gas)
/// of the registry's stdlib ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VecNative {
    Empty,
    Length,
    Borrow,
    PushBack,
    PopBack,
    Swap,
    DestroyEmpty,
    Sha2_256,
    Sha3_256,
}

impl VecNative {
    fn of(m: &LoadedModule, def: u16) -> Option<VecNative> {
        if m.id.address != AccountAddress::from_u64(1) {
            return None;
        }
        if &*m.id.name == "hash" {
            return match m.function_name(def).as_str() {
                "sha2_256" => Some(VecNative::Sha2_256),
                "sha3_256" => Some(VecNative::Sha3_256),
                _ => None,
            };
        }
        if &*m.id.name != "vector" {
            return None;
        }
        Some(match m.function_name(def).as_str() {
            "empty" => VecNative::Empty,
            "length" => VecNative::Length,
            "borrow" | "borrow_mut" => VecNative::Borrow,
            "push_back" => VecNative::PushBack,
            "pop_back" => VecNative::PopBack,
            "swap" => VecNative::Swap,
            "destroy_empty" => VecNative::DestroyEmpty,
            _ => return None,
        })
    }
}

pub(crate) use movejit_runtime::flat::MAX_FLAT_DEPTH;

/// A function a closure names, resolved.
#[derive(Clone)]
pub(crate) struct ClosureTarget {
    pub module: Arc<LoadedModule>,
    pub def: u16,
    pub mutable: Arc<[bool]>,
    pub index: FunctionIndex,
    pub serializable: bool,
}

/// The callees of one call site: each instantiation's type arguments with
/// what it resolved to (and its [`SiteTargets`] code).
type SiteCallees<'e> = Vec<(Vec<Type>, Callee<'e>, u32)>;

/// The modules a layout reaches, with their sizes in bytes.
pub(crate) type LayoutModules = Arc<[(ModuleId, u64)]>;

/// Per-session caches of the flat interpreter.
#[derive(Default)]
pub(crate) struct FlatSession<'e> {
    /// Flat layouts of the types met in this session (the session's
    /// datatype definitions decide them).
    pub layouts: std::cell::RefCell<crate::fxhash::FxHashMap<Type, Arc<FlatLayout>>>,
    /// The modules (with sizes) each type's layout reaches, for Aptos's
    /// dependency charges (measured once per session per type).
    pub layout_modules: std::cell::RefCell<crate::fxhash::FxHashMap<Type, LayoutModules>>,
    /// Module → the modules its code can name (itself and its transitive
    /// dependencies) with the address of each loaded module, sorted.
    pub links: crate::fxhash::FxHashMap<usize, Arc<Vec<(ModuleId, usize)>>>,
    /// (module, function) → (type arguments, callee), for this session.
    pub callees: crate::fxhash::FxHashMap<(usize, u16), SiteCallees<'e>>,
    /// Closure targets by function index: module, definition, which
    /// parameters are `&mut`, and the non-generic callee once called.
    pub closure_targets: crate::fxhash::FxHashMap<FunctionIndex, (ClosureTarget, Option<Callee<'e>>)>,
    /// The prepared functions this session ran, by [`Instance::local`]:
    /// what each call site reaches (a dense table, read per call).
    instances: Vec<SessionInstance<'e>>,
    /// Prepared function (by address) → its [`Instance::local`].
    instance_of: crate::fxhash::FxHashMap<usize, u32>,
    /// (prepared function, pc) → the function a `PackClosure` names.
    pub closures: crate::fxhash::FxHashMap<(usize, u32), (Arc<LoadedModule>, u16)>,
    /// (prepared function, pc) → the closure target a `PackClosure` names.
    pub packs: crate::fxhash::FxHashMap<(usize, u32), ClosureTarget>,
    /// Instances compiled code handed to the interpreter (module, definition
    /// → type arguments), for the compiled / interpreted counts.
    pub nested: crate::fxhash::FxHashMap<(usize, u16), Vec<Vec<Type>>>,
    /// (module, definition) → the function, for calls compiled code hands
    /// to the interpreter.
    pub entered: crate::fxhash::FxHashMap<(usize, u16), ClosureTarget>,
    /// The frame stack of the last nested run, kept for the next (its chunks
    /// grow to 256 KiB: allocating them per call dominated short calls).
    pub nested_stack: Option<movejit_runtime::flat::mem::FrameStack>,
}

impl FlatSession<'_> {
    /// Notes an instance compiled code had interpreted.
    pub(crate) fn note_nested(&mut self, t: &ClosureTarget, ty_args: &[Type]) {
        let v = self.nested.entry((Arc::as_ptr(&t.module) as usize, t.def)).or_default();
        if !v.iter().any(|a| a[..] == *ty_args) {
            v.push(ty_args.to_vec());
        }
    }

    /// How many distinct instances compiled code had interpreted.
    pub(crate) fn nested_count(&self) -> usize {
        self.nested.values().map(Vec::len).sum()
    }
}

/// The primitive types, in the order of [`primitive_index`].
const PRIMITIVES: [Type; 15] = [
    Type::Bool,
    Type::U8,
    Type::U16,
    Type::U32,
    Type::U64,
    Type::U128,
    Type::U256,
    Type::I8,
    Type::I16,
    Type::I32,
    Type::I64,
    Type::I128,
    Type::I256,
    Type::Address,
    Type::Signer,
];

/// The position of a primitive type in [`PRIMITIVES`] (found without
/// hashing the type).
fn primitive_index(t: &Type) -> Option<usize> {
    Some(match t {
        Type::Bool => 0,
        Type::U8 => 1,
        Type::U16 => 2,
        Type::U32 => 3,
        Type::U64 => 4,
        Type::U128 => 5,
        Type::U256 => 6,
        Type::I8 => 7,
        Type::I16 => 8,
        Type::I32 => 9,
        Type::I64 => 10,
        Type::I128 => 11,
        Type::I256 => 12,
        Type::Address => 13,
        Type::Signer => 14,
        _ => return None,
    })
}

/// The flat layouts of the primitive types, by [`primitive_index`] (no
/// module decides them: an engine builds them once).
pub(crate) fn primitive_flat_layouts() -> Vec<Option<Arc<FlatLayout>>> {
    PRIMITIVES
        .iter()
        .map(|p| Layout::primitive(p).and_then(|l| FlatLayout::from_layout(&l, MAX_FLAT_DEPTH).ok()).map(Arc::new))
        .collect()
}

/// Layouts for the flat interpreter: the session's datatypes without the
/// layout-node budget (that budget bounds serialized layouts, not values).
struct Unbounded<'a, 'e, 'r>(&'a SessionState<'e, 'r>);

impl TypeInfo for Unbounded<'_, '_, '_> {
    fn layout_of(&self, ty: &Type) -> VmResult<Layout> {
        self.0.layout_unbounded(ty)
    }
}

impl<'e> FlatSession<'e> {
    /// `p` as this session uses it (numbered on first use).
    fn instance(&mut self, p: &'e Prepared) -> Instance<'e> {
        let key = p as *const Prepared as usize;
        let local = match self.instance_of.get(&key) {
            Some(&l) => l,
            None => {
                let l = self.instances.len() as u32;
                self.instances.push(SessionInstance { sites: vec![None; p.call_sites as usize].into_boxed_slice() });
                self.instance_of.insert(key, l);
                l
            }
        };
        Instance { p, local }
    }
}

impl<'e> SessionState<'e, '_> {
    /// The modules building `t`'s layout loads, with their sizes
    /// ([`movejit_runtime::resolve::layout_modules`], cached by the session).
    pub(crate) fn layout_modules_cached(&self, t: &Type) -> VmResult<LayoutModules> {
        if let Some(m) = self.flat.layout_modules.borrow().get(t) {
            return Ok(m.clone());
        }
        let ids = movejit_runtime::resolve::layout_modules(self, t)?;
        let m: LayoutModules = ids
            .into_iter()
            .map(|id| {
                let size = self.loaded.get(&id).map_or(0, |m| m.size);
                (id, size)
            })
            .collect();
        self.flat.layout_modules.borrow_mut().insert(t.clone(), m.clone());
        Ok(m)
    }

    /// The flat layout of `t` (cached by the session).
    pub(crate) fn flat_layout(&self, t: &Type) -> VmResult<Arc<FlatLayout>> {
        if let Some(l) = primitive_index(t).and_then(|i| self.engine.primitive_layouts.get(i)?.clone()) {
            return Ok(l);
        }
        if let Some(l) = self.flat.layouts.borrow().get(t) {
            return Ok(l.clone());
        }
        let set = self.loaded.set_id();
        let shared = set.and_then(|set| {
            let layouts = self.engine.set_layouts.read().ok()?;
            layouts.get(&set)?.get(t).cloned()
        });
        let l = match shared {
            Some(l) => l,
            None => {
                let l = Arc::new(match t {
                    Type::Reference(inner) | Type::MutableReference(inner) => {
                        FlatLayout::reference(self.flat_layout(inner)?)
                    }
                    t => FlatLayout::from_layout(&Unbounded(self).layout_of(t)?, MAX_FLAT_DEPTH)?,
                });
                if let (Some(set), Ok(mut layouts)) = (set, self.engine.set_layouts.write()) {
                    layouts.entry(set).or_default().insert(t.clone(), l.clone());
                }
                l
            }
        };
        self.flat.layouts.borrow_mut().insert(t.clone(), l.clone());
        Ok(l)
    }

    /// The modules `m`'s code can name, as loaded in this session.
    fn module_links(&mut self, m: &Arc<LoadedModule>) -> VmResult<Arc<Vec<(ModuleId, usize)>>> {
        let key = Arc::as_ptr(m) as usize;
        if let Some(l) = self.flat.links.get(&key) {
            return Ok(l.clone());
        }
        let mut seen: Vec<(ModuleId, usize)> = vec![(m.id.clone(), key)];
        let mut todo: Vec<Arc<LoadedModule>> = vec![m.clone()];
        while let Some(x) = todo.pop() {
            for (a, n) in x.module.immediate_dependencies() {
                let id = ModuleId::new(a, &n);
                if seen.iter().any(|(s, _)| *s == id) {
                    continue;
                }
                let d = self.load_module(&id)?;
                seen.push((id, Arc::as_ptr(&d) as usize));
                todo.push(d);
            }
        }
        seen.sort();
        let l = Arc::new(seen);
        self.flat.links.insert(key, l.clone());
        Ok(l)
    }

    /// What preparing `m`'s function for `ty_args` depends on: the modules
    /// `m` and the datatypes of `ty_args` can name.
    fn links_of(&mut self, m: &Arc<LoadedModule>, ty_args: &[Type]) -> VmResult<Vec<(ModuleId, usize)>> {
        let mut out: Vec<(ModuleId, usize)> = (*self.module_links(m)?).clone();
        let mut todo: Vec<&Type> = ty_args.iter().collect();
        while let Some(t) = todo.pop() {
            match t {
                Type::Vector(e) | Type::Reference(e) | Type::MutableReference(e) => todo.push(e),
                Type::Function(p, r, _) => todo.extend(p.iter().chain(r)),
                Type::Datatype(id, args) => {
                    todo.extend(args.iter());
                    let dm = self.load_module(&ModuleId { address: id.address, name: id.module.clone() })?;
                    for l in self.module_links(&dm)?.iter() {
                        if !out.contains(l) {
                            out.push(l.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        out.sort();
        Ok(out)
    }

    /// `module::def<ty_args>`, prepared (natives are called as they are).
    pub(crate) fn flat_callee(
        &mut self,
        m: &Arc<LoadedModule>,
        def: u16,
        ty_args: Arc<Vec<Type>>,
    ) -> VmResult<Callee<'e>> {
        Ok(self.flat_callee_coded(m, def, &ty_args)?.0)
    }

    /// [`Self::flat_callee`], with the callee's [`SiteTargets`] code.
    fn flat_callee_coded(
        &mut self,
        m: &Arc<LoadedModule>,
        def: u16,
        ty_args: &Arc<Vec<Type>>,
    ) -> VmResult<(Callee<'e>, u32)> {
        let info = *m.fn_info.get(def as usize).ok_or_else(|| VmError::invariant("function definition"))?;
        let table = &self.engine.prepared;
        if info.is_native {
            let i = table.native(m, def);
            return Ok((Callee::Native(&table.natives[i]), SiteTargets::code(i, true)));
        }
        let key = (Arc::as_ptr(m) as usize, def);
        if let Some(c) = self.flat.callees.get(&key).and_then(|v| v.iter().find(|(t, ..)| *t == **ty_args)) {
            return Ok((c.1, c.2));
        }
        let known = self.loaded.set_id().and_then(|set| table.by_set.find(&(set, key.0, def), ty_args));
        let (p, i) = match known.and_then(|i| Some((table.prepared.get(i)?, i))) {
            Some(found) => found,
            None => {
                let links = self.links_of(m, ty_args)?;
                let ekey = (key.0, def, (**ty_args).clone());
                let i = match table.find(&ekey, &links) {
                    Some(i) => i,
                    None => table.add(ekey, prepare::prepare(self, m, def, ty_args.clone(), links)?),
                };
                // (The set as it is now: the links may have loaded modules.)
                if let Some(set) = self.loaded.set_id() {
                    table.remember_in_set((set, key.0, def), ty_args, i);
                }
                (&table.prepared[i], i)
            }
        };
        let targs = (**ty_args).clone();
        let c = Callee::Move(self.flat.instance(p));
        let code = SiteTargets::code(i, false);
        self.flat.callees.entry(key).or_default().push((targs, c, code));
        Ok((c, code))
    }

    /// The function a closure value names.
    pub(crate) fn closure_target(&mut self, f: FunctionIndex) -> VmResult<ClosureTarget> {
        if let Some((t, _)) = self.flat.closure_targets.get(&f) {
            return Ok(t.clone());
        }
        let name = movejit_runtime::functions::name(f).ok_or_else(|| VmError::invariant("closure function index"))?;
        let (module, def) = self.resolve_function(&name.module, &name.name)?;
        let t = self.make_target(module, def)?;
        self.flat.closure_targets.insert(f, (t.clone(), None));
        Ok(t)
    }

    /// What calling closure function `f` with `ty_args` reaches, and which
    /// of its parameters are `&mut` (a non-generic callee is kept with the
    /// target: one lookup by index per call).
    pub(crate) fn closure_callee(&mut self, f: FunctionIndex, ty_args: &[Type]) -> VmResult<(Callee<'e>, Arc<[bool]>)> {
        if let Some((t, Some(c))) = self.flat.closure_targets.get(&f) {
            if ty_args.is_empty() {
                return Ok((*c, t.mutable.clone()));
            }
        }
        let t = self.closure_target(f)?;
        let c = self.flat_callee(&t.module, t.def, Arc::new(ty_args.to_vec()))?;
        if ty_args.is_empty() {
            if let Some(e) = self.flat.closure_targets.get_mut(&f) {
                e.1 = Some(c);
            }
        }
        Ok((c, t.mutable))
    }

    pub(crate) fn make_target(&self, module: Arc<LoadedModule>, def: u16) -> VmResult<ClosureTarget> {
        let m = &module.module;
        let fh = m
            .function_defs
            .get(def as usize)
            .and_then(|f| m.function_handles.get(f.function.idx()))
            .ok_or_else(|| VmError::invariant("closure target"))?;
        let mutable = m
            .signatures
            .get(fh.parameters.idx())
            .map(|s| s.0.iter().map(|t| matches!(t, movejit_format::SignatureToken::MutableReference(_))).collect())
            .unwrap_or_default();
        let index = movejit_runtime::functions::intern(&FunctionId {
            module: module.id.clone(),
            name: module.function_name(def).into(),
        });
        let serializable = module.is_persistent(def);
        Ok(ClosureTarget { module, def, mutable, index, serializable })
    }

    /// The function the `PackClosure` at `pc` of `p` names (cached per session).
    pub(crate) fn pack_target(
        &mut self,
        p: &Prepared,
        pc: usize,
        h: movejit_format::FunctionHandleIndex,
    ) -> VmResult<ClosureTarget> {
        let key = (p as *const Prepared as usize, pc as u32);
        if let Some(t) = self.flat.packs.get(&key) {
            return Ok(t.clone());
        }
        let (module, def) = self.flat_site_function(p, pc, h)?;
        let t = self.make_target(module, def)?;
        self.flat.packs.insert(key, t.clone());
        Ok(t)
    }

    /// What `site` (the call instruction at `pc`) of `caller` reaches: read
    /// from the session's instance table, resolved on first use.
    #[inline]
    pub(crate) fn flat_site_callee(
        &mut self,
        caller: Instance<'e>,
        site: &CallSite,
        pc: usize,
    ) -> VmResult<Callee<'e>> {
        match self.flat.instances.get(caller.local as usize).and_then(|i| i.sites.get(site.index as usize)) {
            Some(Some(c)) => Ok(*c),
            _ => self.resolve_site(caller, site, pc),
        }
    }

    #[cold]
    fn resolve_site(&mut self, caller: Instance<'e>, site: &CallSite, pc: usize) -> VmResult<Callee<'e>> {
        let set = self.loaded.set_id();
        let known = set.and_then(|set| caller.p.site_targets.get(set, site.index));
        let c = match known.and_then(|code| self.engine.prepared.callee_of_code(code)) {
            Some(CalleeRef::Move(p)) => Callee::Move(self.flat.instance(p)),
            Some(CalleeRef::Native(n)) => Callee::Native(n),
            None => {
                let (tm, tdef) = self.flat_site_function(caller.p, pc, site.handle)?;
                let (c, code) = self.flat_callee_coded(&tm, tdef, &site.ty_args)?;
                if let (Some(set), true) = (set, code != 0) {
                    caller.p.site_targets.record(set, caller.p.call_sites, site.index, code);
                }
                c
            }
        };
        let slot = self
            .flat
            .instances
            .get_mut(caller.local as usize)
            .and_then(|i| i.sites.get_mut(site.index as usize))
            .ok_or_else(|| VmError::invariant("call site"))?;
        *slot = Some(c);
        Ok(c)
    }

    /// The function handle `h` of `p`'s module, resolved (cached per session).
    pub(crate) fn flat_site_function(
        &mut self,
        p: &Prepared,
        pc: usize,
        h: movejit_format::FunctionHandleIndex,
    ) -> VmResult<(Arc<LoadedModule>, u16)> {
        let key = (p as *const Prepared as usize, pc as u32);
        if let Some(t) = self.flat.closures.get(&key) {
            return Ok(t.clone());
        }
        let sites = &self.engine.prepared.sites_by_set;
        let shared = self.loaded.set_id().and_then(|set| sites.read().ok()?.get(&(set, key.0, key.1)).cloned());
        if let Some(t) = shared {
            self.flat.closures.insert(key, t.clone());
            return Ok(t);
        }
        let m = &p.module;
        let (module, name) = movejit_runtime::resolve::function_target(&m.module, h)?;
        let t = self.resolve_function(&module, name)?;
        if let (Some(set), Ok(mut sites)) = (self.loaded.set_id(), self.engine.prepared.sites_by_set.write()) {
            sites.insert((set, key.0, key.1), t.clone());
        }
        self.flat.closures.insert(key, t.clone());
        Ok(t)
    }

    /// The slot of resource `ty` at `address` in the flat global cache,
    /// loading it from the resolver on first use (the structural type is
    /// looked up only then).
    #[inline]
    pub(crate) fn flat_global_slot(&mut self, address: AccountAddress, ty: TypeId) -> VmResult<usize> {
        match self.globals.find(&address, ty) {
            Some(s) => Ok(s),
            None => self.load_flat_global(address, ty),
        }
    }

    /// [`Self::flat_global_slot`] on first use (out of line: the hot path
    /// stays a few instructions).
    #[cold]
    #[inline(never)]
    fn load_flat_global(&mut self, address: AccountAddress, ty: TypeId) -> VmResult<usize> {
        let t = TypeTable::shared().get(ty)?;
        let value = match self.resolver.get_resource(&address, t) {
            Some(bytes) => {
                let l = self.global_layout(ty)?;
                Some(
                    movejit_runtime::flat::bcs::deserialize(&bytes, l)
                        .map_err(|_| VmError::new(StatusCode::FAILED_TO_DESERIALIZE_RESOURCE))?,
                )
            }
            None => None,
        };
        let slot = self.globals.meta.len();
        self.globals.meta.push(crate::engine::GlobalMeta {
            address,
            id: ty,
            ty: t,
            existed: value.is_some(),
            dirty: false,
            journaled: false,
        });
        self.globals.flat.push(value);
        self.globals.index.insert((address, ty), slot as u32);
        Ok(slot)
    }

    /// The flat layout of resource type `ty` (cached by id).
    pub(crate) fn global_layout(&mut self, ty: TypeId) -> VmResult<Arc<FlatLayout>> {
        if let Some(l) = self.globals.layouts.get(&ty) {
            return Ok(l.clone());
        }
        let l = self.flat_layout(TypeTable::shared().get(ty)?)?;
        self.globals.layouts.insert(ty, l.clone());
        Ok(l)
    }
}
