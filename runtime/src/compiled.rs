//! The seam between the flat interpreter and compiled code (mixed
//! execution).
//!
//! The interpreter knows nothing of the JIT: at every call of a Move
//! function it asks a [`CompiledCode`] whether that instance runs compiled.
//! If so it hands over its own argument and result slots (flat memory, the
//! layouts compiled code uses too: no conversion), the state the callee
//! inherits — call depth, operand-stack values held by suspended frames,
//! gas left — and the session ([`SessionHost`]: loaded modules, types, the
//! global-storage cache) with the natives' state of the execution, and gets
//! back success or the error, exactly as its own frame would have produced
//! them. An implementation lives in a crate that depends on both executors
//! (movejit-engine).
//!
//! The other direction: compiled code calls a function it could not compile
//! (or a closure whose target it does not have) through the session's
//! [`Interpreter`]: the same slots ([`SeamSlot`]) and call state, run by a
//! nested interpreter over the same session and native state.

// No unsafe code; only the `unsafe fn`s declared below (whose callers
// promise the `flat::mem` contract), each allowed where it is declared.
#![deny(unsafe_code)]

use crate::flat::native_bridge::NativeSession;
use crate::flat::{Addr, FlatLayout};
use crate::gas::aptos::AptosMeter;
use crate::natives::TypeInfo;
use crate::{AccountAddress, ModuleId, Type, TypeId, VmError, VmResult};
use movejit_format::{CompiledModule, Opcode};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// What a compiled callee inherits from the interpreter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallState {
    /// Active frames including the callee's own (the interpreter has already
    /// checked the depth limit and charged the frame).
    pub depth: u64,
    /// Operand-stack values held by the suspended frames.
    pub stack_base: u64,
    /// Gas units left; `None` when unmetered. Under the Aptos schedule
    /// (`aptos`): the fuel compiled code may spend (`AptosMeter::fuel`).
    pub gas_left: Option<u64>,
    /// The call is metered by the built-in Aptos schedule: compiled code
    /// charges its prices and may return `gas_left` below zero (wrapped)
    /// when a charge did not fit; the interpreter's meter settles it.
    pub aptos: bool,
    /// The address of the Aptos meter (`gas::aptos::AptosMeter`) compiled
    /// code charges in place: memory, module loads, instantiations
    /// (`ExecContext::aptos_meter`; 0: none).
    pub aptos_meter: u64,
}

/// One argument or result at the seam: the address compiled code receives
/// and the interpreter's layout of the slot.
///
/// * a value argument: its slot, holding the value (consumed by the call:
///   afterwards the slot holds no live value);
/// * a reference argument (`layout` a reference layout): the address the
///   reference holds, i.e. its target, which compiled code uses as is;
/// * a result: the slot the result is written to (a reference result
///   receives an address).
///
/// The layout is borrowed from whoever made the slot (a plan, a call
/// site, a value): making and dropping slots touches no reference count
/// (issue 14 item 9).
///
/// A slot can only be made by [`SeamSlot::new`], an `unsafe fn`: whoever
/// makes one promises what is above, so code that receives slots (compiled
/// code, the interpreter, [`crate::flat::closure_shims::closures_in`]) may
/// read and write through them.
///
/// Safe code cannot make one from an address; only unsafe code, which
/// promises the contract:
///
/// ```
/// use movejit_runtime::compiled::SeamSlot;
/// use movejit_runtime::flat::{Addr, FlatLayout};
/// /// # Safety
/// /// `a` is a live slot of `l`.
/// unsafe fn slot(a: Addr, l: &std::sync::Arc<FlatLayout>) -> SeamSlot<'_> {
///     unsafe { SeamSlot::new(a, l) }
/// }
/// ```
///
/// ```compile_fail
/// use movejit_runtime::compiled::SeamSlot;
/// use movejit_runtime::flat::{Addr, FlatLayout};
/// fn forge(l: &std::sync::Arc<FlatLayout>) -> SeamSlot<'_> {
///     SeamSlot { addr: Addr::from_raw(std::ptr::null_mut()), layout: l }
/// }
/// ```
///
/// ```compile_fail
/// use movejit_runtime::compiled::SeamSlot;
/// use movejit_runtime::flat::{Addr, FlatLayout};
/// fn forge(l: &std::sync::Arc<FlatLayout>) -> SeamSlot<'_> {
///     SeamSlot::new(Addr::from_raw(std::ptr::null_mut()), l)
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SeamSlot<'a> {
    addr: Addr,
    layout: &'a Arc<FlatLayout>,
}

impl<'a> SeamSlot<'a> {
    /// A slot at `addr` of layout `layout`.
    ///
    /// # Safety
    /// `addr` is as described for [`SeamSlot`] (a live slot of `layout`, or
    /// for a reference layout the live target of the reference, or a result
    /// slot holding no live value) for as long as the slot is used (the
    /// `flat::mem` contract).
    #[allow(unsafe_code)]
    #[inline(always)]
    pub unsafe fn new(addr: Addr, layout: &'a Arc<FlatLayout>) -> Self {
        SeamSlot { addr, layout }
    }

    #[inline(always)]
    pub fn addr(&self) -> Addr {
        self.addr
    }

    #[inline(always)]
    pub fn layout(&self) -> &'a Arc<FlatLayout> {
        self.layout
    }
}

/// The answer of [`CompiledCode::call`].
#[derive(Debug)]
pub enum CompiledCall {
    /// The instance is not compiled: interpret it (nothing was touched).
    NotCompiled,
    /// It ran compiled and returned (results written to their slots).
    Returned { gas_left: Option<u64> },
    /// It ran compiled and failed (status, abort code and location set as
    /// the interpreter would; `OUT_OF_GAS` leaves no gas). The arguments
    /// are consumed; nothing was written to the result slots.
    Failed { error: VmError, gas_left: Option<u64> },
}

/// The modules the interpreter has loaded, for compiling callees.
pub trait ModuleSource {
    fn module(&self, id: &ModuleId) -> Option<&CompiledModule>;

    /// SHA-256 of the bytes module `id` was loaded from, when the source
    /// knows it (compiled code is cached by module content; `None`: the
    /// cache hashes the module's serialized form).
    fn module_hash(&self, id: &ModuleId) -> Option<[u8; 32]> {
        let _ = id;
        None
    }

    /// A number naming exactly the modules this source holds (ids and
    /// contents), when it holds one of the engine's warm module sets
    /// unchanged: sources with the same number hold the same modules, and
    /// no number is reused while the process runs, so what follows from the
    /// modules alone (link hashes) may be memoized by it. `None`: no such
    /// promise.
    fn module_set_id(&self) -> Option<u64> {
        None
    }

    /// Module `id` as a shared handle a background compile may keep after
    /// the session ends. `None`: the source cannot share it (the compile
    /// then takes a copy).
    fn shared_module(&self, id: &ModuleId) -> Option<SharedModule> {
        let _ = id;
        None
    }
}

/// A module kept by a background compile ([`ModuleSource::shared_module`]):
/// the loader's `Arc<LoadedModule>` (`movejit-loader`, which depends on this
/// crate), which the code cache takes back with `Arc::downcast`.
pub type SharedModule = Arc<dyn std::any::Any + Send + Sync>;

/// The session's global-storage cache over flat values, with the
/// interpreter's semantics (statuses; what is marked written for the change
/// set). A failed execution is undone by the session as a whole. Resource
/// types are interned ids ([`crate::intern`]).
pub trait GlobalStore {
    /// `exists<ty>(address)`.
    fn exists(&mut self, address: AccountAddress, ty: TypeId) -> VmResult<bool>;
    /// The address of resource `ty` at `address` (`MISSING_DATA` when
    /// absent); `mutable` marks it written.
    fn borrow(&mut self, address: AccountAddress, ty: TypeId, mutable: bool) -> VmResult<Addr>;
    /// Moves resource `ty` at `address` into the slot `dst` (`MISSING_DATA`
    /// when absent).
    ///
    /// # Safety
    /// `dst` is a live slot of the resource's layout holding no live value
    /// (the `flat::mem` contract).
    #[allow(unsafe_code)]
    unsafe fn move_from(&mut self, address: AccountAddress, ty: TypeId, dst: Addr) -> VmResult<()>;
    /// Moves the value in slot `src` into storage as resource `ty` at
    /// `address`; when one exists already the value is dropped and the
    /// call fails with `RESOURCE_ALREADY_EXISTS`.
    ///
    /// # Safety
    /// `src` is a live slot of the resource's layout holding a live value,
    /// which the call consumes (the `flat::mem` contract).
    #[allow(unsafe_code)]
    unsafe fn move_to(&mut self, address: AccountAddress, ty: TypeId, src: Addr) -> VmResult<()>;
    /// Under Aptos's schedule: what global operation `op` on resource `ty`
    /// at `address` charges `meter` where the interpreter charges it
    /// (after finding the resource, before the operation): on the
    /// transaction's first read of the resource the modules of its
    /// layout, then its I/O and memory, then `op`'s price.
    fn charge_aptos_global(
        &mut self,
        meter: &mut AptosMeter,
        address: AccountAddress,
        ty: TypeId,
        op: Opcode,
    ) -> VmResult<()>;
    /// Drops the value of resource `ty` in slot `src` (a `move_to` that
    /// failed before it ran consumes its value too).
    ///
    /// # Safety
    /// `src` is a live slot of the resource's layout holding a live value,
    /// which the call consumes (the `flat::mem` contract).
    #[allow(unsafe_code)]
    unsafe fn drop_resource(&mut self, ty: TypeId, src: Addr) -> VmResult<()>;
}

/// Which function an [`InterpretedCall`] runs.
#[derive(Clone, Copy, Debug)]
pub enum InterpretedFunction {
    /// A function definition by index, entered by compiled code that has
    /// already done the interpreter's call checks (depth, frame charge):
    /// the nested run starts in the callee's frame.
    Entered(u16),
    /// A function by index (the target of a closure; `module` is its
    /// module): the nested run does
    /// what the interpreter's `CallClosure` does first (depth check and
    /// frame charge for a Move function, `native_base` for a native, the
    /// results' stack check after a native).
    Called(crate::functions::FunctionIndex),
}

/// A call compiled code hands to the interpreter.
pub struct InterpretedCall<'a> {
    pub module: &'a ModuleId,
    pub function: InterpretedFunction,
    pub ty_args: &'a [Type],
    /// One per parameter, in parameter order (see [`SeamSlot`]); consumed,
    /// also when the call fails.
    pub args: &'a [SeamSlot<'a>],
    /// One per result (written on success only).
    pub rets: &'a [SeamSlot<'a>],
    /// For [`InterpretedFunction::Entered`]: `depth` counts the callee's
    /// frame and `stack_base` the values its callers hold. For
    /// [`InterpretedFunction::Called`]: `depth` counts the calling frame
    /// only and `stack_base` includes the values it holds below the
    /// arguments.
    pub state: CallState,
}

/// What an [`InterpretedCall`] did: `Err` holds the interpreter's error;
/// its `location` is `None` when it was raised by the call itself (the
/// calling instruction's error: depth, frame charge, a native), else the
/// interpreted instruction that failed. `gas_left` as [`CallState`].
pub struct Interpreted {
    pub result: VmResult<()>,
    pub gas_left: Option<u64>,
    /// Under Aptos's schedule: the call itself failed making the callee's
    /// frame (its module's loading, its locals' types), which Aptos locates
    /// at the module of the frame below the calling one. (An error with
    /// a location naming no module was raised making a frame for a call
    /// of the callee run at the bottom of the nested run: Aptos locates it
    /// at the calling frame's module.)
    pub at_load: bool,
}

/// The session's interpreter, for calls compiled code cannot make itself.
/// While compiled code runs the session's [`CompiledCode`] is lent to it,
/// so everything the nested run calls is interpreted.
pub trait Interpreter {
    fn interpret(&mut self, natives: &mut NativeSession, call: InterpretedCall<'_>) -> Interpreted;
}

/// The interpreter session compiled code runs against.
pub trait SessionHost: ModuleSource + TypeInfo + GlobalStore + Interpreter {}

impl<T: ModuleSource + TypeInfo + GlobalStore + Interpreter> SessionHost for T {}

/// Counters for `--stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompiledStats {
    /// Distinct function instances that ran compiled.
    pub compiled_functions: usize,
    /// Of those, the instances run from code an earlier session left in
    /// their hint ([`CompiledHint`]), without a code cache look-up.
    pub from_hint: usize,
    /// Distinct function instances the interpreter ran.
    pub interpreted_functions: usize,
    /// Instances compiled (including callees compiled with them).
    pub instances_compiled: usize,
    pub compile_time: Duration,
}

/// A call offered to compiled code: `module::fdef<ty_args>` with its slots.
pub struct SeamCall<'a> {
    pub module: &'a ModuleId,
    pub fdef: u16,
    pub ty_args: &'a [Type],
    /// One per parameter (see [`SeamSlot`]).
    pub args: &'a [SeamSlot<'a>],
    /// One per result.
    pub rets: &'a [SeamSlot<'a>],
    pub state: CallState,
    /// The instance's hint cells, shared by every session of the engine
    /// (`None`: the caller keeps none).
    pub hint: Option<&'a CompiledHint>,
}

/// What compiled code leaves with an interpreter's prepared instance, one
/// cell per meter kind (unmetered, unit, Aptos), for every later session
/// to find without a look-up: the compiled side's own record of why the
/// instance runs interpreted (it does not compile, or its code is
/// compiling). Set once; read by [`CompiledCode::interprets`].
#[derive(Default)]
pub struct CompiledHint(pub [OnceLock<Arc<dyn std::any::Any + Send + Sync>>; 3]);

impl std::fmt::Debug for CompiledHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledHint")
    }
}

/// Compiled code reachable from the interpreter, one per session.
pub trait CompiledCode: Send {
    /// Runs the call compiled if the instance (and all it can call)
    /// compiles; otherwise `NotCompiled` and the interpreter runs it. While
    /// it runs, compiled code reaches the session's globals through `host`
    /// and natives share `natives` (the interpreter's native state of this
    /// execution: a value a native parked is the same memory on both sides).
    fn call(&mut self, host: &mut dyn SessionHost, natives: &mut NativeSession, call: SeamCall<'_>) -> CompiledCall;

    /// `true` when this session already knows the instance runs
    /// interpreted for a call in `state` (it does not compile, or its code
    /// is not ready yet): the interpreter then runs it without preparing
    /// the call. `false` when unsure ([`CompiledCode::call`] decides).
    fn interprets(
        &mut self,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
        state: &CallState,
        hint: &CompiledHint,
    ) -> bool {
        let _ = (module, fdef, ty_args, state, hint);
        false
    }

    /// The interpreter found the instance hot in its loops (its loop back
    /// edges passed `JitOptions::loop_threshold`) while running a call in
    /// `state`: its code is wanted whatever its count of calls, compiled now
    /// or queued for the background threads, so that its later calls run
    /// compiled. The running call stays interpreted (no on-stack
    /// replacement).
    fn hot_loop(
        &mut self,
        modules: &dyn ModuleSource,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
        state: &CallState,
        hint: &CompiledHint,
    ) {
        let _ = (modules, module, fdef, ty_args, state, hint);
    }

    /// Compiles the instance without running it; `Err` says why it cannot
    /// be compiled.
    fn compile(
        &mut self,
        modules: &dyn ModuleSource,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
    ) -> Result<(), String>;

    /// [`CompiledCode::compile`] for an entry plan of a warm module set
    /// (`modules.module_set_id()` is its set): what the compiled code found
    /// for it goes into `slot`, which the engine keeps with the plan and
    /// hands to every later session's call of it (on any thread), so they
    /// find the code without a look-up.
    fn compile_entry(
        &mut self,
        modules: &dyn ModuleSource,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
        slot: &EntrySlot,
    ) -> Result<(), String> {
        let _ = slot;
        self.compile(modules, module, fdef, ty_args)
    }

    fn stats(&self) -> CompiledStats;
}

/// What compiled code keeps for one entry plan ([`CompiledCode::compile_entry`]):
/// set once, then read by the engine's sessions on every thread.
pub type EntrySlot = std::sync::OnceLock<Box<dyn std::any::Any + Send + Sync>>;

/// Makes the per-session [`CompiledCode`]; shared by an engine's sessions.
pub trait CompiledCodeFactory: Send + Sync {
    /// A session's compiled code borrows the factory (no reference count
    /// per session: sessions on many threads share the factory).
    fn new_session(&self) -> Box<dyn CompiledCode + '_>;
}
