//! Running compiled code: argument passing, the execution stack, results.
//!
//! Host stack: executions run on a stack of the engine's own
//! (`JitConfig::stack_size`, 256 MiB by default: reserved address space
//! with a guard page below it, touched lazily), switched to on the calling
//! thread for the length of the run (`psm::on_stack`), so natives see the
//! caller's thread (its installed native extensions) and no thread hand-off
//! is paid per call. The stack's lowest usable address plus a 1 MiB margin
//! for helpers is stored in `ExecContext::stack_limit`; every compiled
//! function compares its stack pointer against it on entry and fails with
//! `EXECUTION_STACK_OVERFLOW` instead of overflowing. With the call-depth
//! limit of 1,025 frames the guard needs frames averaging over 250 KiB to
//! fire, which no Move function has, so results stay those of the
//! interpreter; the guard only makes the impossible case safe. Compiled
//! code calls interpreted code only through the session's interpreter
//! (`closure_shims::call_interpreted`), which never re-enters compiled
//! code, so runs do not nest.
//!
//! Inside an interpreter session ([`JitEngine::execute_in_session`]) the
//! arguments and results are the interpreter's own flat slots, and
//! `ExecContext::host` points to a [`Host`] that reaches the session's
//! global storage and native state.
//!
//! Runs by many threads at once: [`SharedEngine`] (`exec/shared.rs`) keeps
//! a `JitEngine` behind a lock only compiling takes; its runs read
//! snapshots of the engine's native sites and each take
//! an execution stack of their own from a pool.

#![allow(unsafe_code)]

mod shared;

pub use shared::{RunTables, SharedEngine, SharedEntry};

use crate::engine::{InstanceKey, JitConfig, JitEngine};
use crate::error::{CompileError, CompileResult};
use crate::lower::SUI_VARIANT_TAG_MISMATCH;
use crate::ty::Ty;
use cranelift_jit::JITModule;
use movejit_format::{StatusCode, StatusFlavour};
use movejit_runtime::compiled::{SeamSlot, SessionHost};
use movejit_runtime::flat::host::{Host, SessionTypes};
use movejit_runtime::flat::native_bridge::NativeSession;
use movejit_runtime::flat::shims::{NativeHost, NativeSite};
use movejit_runtime::flat::{bcs as flat_bcs, ExecContext, FlatLayout, FlatValue, Shape};
use movejit_runtime::natives::TypeInfo;
use std::sync::Arc;

const HELPER_MARGIN: u64 = 1 << 20;

/// Where an error was raised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub module: u32,
    pub function: u16,
    pub code_offset: u16,
}

impl Location {
    /// `function` and `code_offset` of a location naming a module only
    /// (Aptos's location of an error making a callee's frame).
    pub const MODULE_ONLY: u16 = u16::MAX;
    /// `module` of such a location whose module is the frame below the
    /// run's entry: the interpreter's, which it fills in.
    pub const BELOW_ENTRY: u32 = u32::MAX;
}

/// The result of one execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub status: StatusCode,
    /// The abort code of `ABORTED`, or the sub-status of another error
    /// (`VECTOR_OPERATION_ERROR`).
    pub abort_code: Option<u64>,
    /// The message the interpreter reports with this error.
    pub message: Option<String>,
    pub location: Option<Location>,
    /// BCS of each return value (`EXECUTED` only).
    pub returns: Vec<Vec<u8>>,
    /// BCS of the final value behind each reference parameter, in
    /// parameter order (`EXECUTED` only).
    pub refs: Vec<Vec<u8>>,
    /// Gas units left (metered engines); on `OUT_OF_GAS` the meter is
    /// exhausted and callers report all gas as used.
    pub gas_left: Option<u64>,
}

/// Why an execution could not start.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error("could not set up the execution stack: {0}")]
    Thread(String),
}

/// Constants compiled code copies from: deserialized once, never written,
/// freed with the engine; and the errors it raises whole (`fail_with`),
/// boxed so their addresses stay put while the pool grows.
#[derive(Default)]
#[allow(clippy::vec_box)]
pub(crate) struct ConstPool(
    Vec<FlatValue>,
    Vec<Box<movejit_runtime::VmError>>,
    Vec<Box<movejit_runtime::gas::aptos::AptosCallSite>>,
);

// SAFETY: the pool only owns its values' heap blocks (FlatValue is plain
// owned memory); compiled code reads them through shared copies only.
unsafe impl Send for ConstPool {}

impl ConstPool {
    /// Deserializes a constant; returns the address of its flat value.
    pub(crate) fn add(&mut self, layout: &Arc<FlatLayout>, bytes: &[u8]) -> CompileResult<u64> {
        let v = flat_bcs::deserialize(bytes, layout.clone())
            .map_err(|e| CompileError::Unsupported(format!("constant does not deserialize: {e}")))?;
        let p = v.as_ptr() as u64;
        self.0.push(v);
        Ok(p)
    }

    /// Keeps an Aptos call site for the `aptos_call` helper; its address.
    pub(crate) fn add_call_site(&mut self, site: movejit_runtime::gas::aptos::AptosCallSite) -> u64 {
        let site = Box::new(site);
        let p = &*site as *const movejit_runtime::gas::aptos::AptosCallSite as u64;
        self.2.push(site);
        p
    }

    /// Keeps `e` for the `fail_with` helper; its address.
    pub(crate) fn add_error(&mut self, e: movejit_runtime::VmError) -> u64 {
        let e = Box::new(e);
        let p = &*e as *const movejit_runtime::VmError as u64;
        self.1.push(e);
        p
    }
}

/// A compiled instance prepared for runs inside a session
/// ([`JitEngine::session_entry`]): its entry trampoline and signature.
#[derive(Clone, Debug)]
pub struct SessionEntry {
    entry: usize,
    params: Arc<[Ty]>,
    rets: Arc<[Ty]>,
    /// Some parameter may hold a function value (targets compiled per run).
    closures: bool,
}

/// A flat argument of one parameter: the value (for a reference parameter,
/// the value it refers to, which the host keeps and reads back).
pub type FlatArgs = Vec<FlatValue>;

/// The result of a run over flat values.
pub struct FlatOutcome {
    pub status: StatusCode,
    pub abort_code: Option<u64>,
    /// The message the interpreter reports with this error.
    pub message: Option<String>,
    pub location: Option<Location>,
    /// The results (`EXECUTED` only).
    pub returns: Vec<FlatValue>,
    /// The values behind the reference parameters, in parameter order.
    pub refs: Vec<FlatValue>,
    pub gas_left: Option<u64>,
    /// The error as the interpreter raised it, when the failure happened in
    /// a callee compiled code had interpreted (its location is inside
    /// interpreted code, which `location` cannot name). Boxed: outcomes
    /// are moved by value on every run.
    pub interpreted: Option<Box<movejit_runtime::VmError>>,
    /// `STRUCT_VARIANT_MISMATCH`: the variant the failing instruction found
    /// (its message follows from it and the location:
    /// `VmError::variant_mismatch`).
    pub variant_found: Option<u16>,
}

impl JitEngine {
    /// The context a run starts with: the inherited depth, stack base and
    /// gas, and this engine's limits.
    fn entry_context(&self, state: &NestedState, gas: Option<u64>) -> ExecContext {
        entry_context(&self.config, state, gas)
    }

    /// Compiles (if needed) and runs `key` with BCS arguments (a reference
    /// parameter takes the BCS of its target). A metered engine runs with
    /// `gas` units (unlimited when `None`).
    pub fn execute(&mut self, key: &InstanceKey, args: &[Vec<u8>], gas: Option<u64>) -> Result<Outcome, ExecError> {
        // A run outside a session has the memory budget of one call.
        let _memory = movejit_runtime::memory::MemoryScope::enter(self.config.limits.max_memory);
        self.entry_address(key)?;
        let (params, _) = self.instance_signature(key)?;
        let per_frame = self.config.cost.as_ref().map(|c| c.per_frame);
        let gas = per_frame.map(|_| gas.unwrap_or(u64::MAX));
        if args.len() != params.len() {
            return Ok(Outcome::failed(StatusCode::NUMBER_OF_ARGUMENTS_MISMATCH, gas));
        }
        let mut flat = Vec::with_capacity(args.len());
        for (bytes, t) in args.iter().zip(&params) {
            let l = match t {
                Ty::S(k) => self.layout_of(&k.to_type())?,
                Ty::M(l) | Ty::R(l) => l.clone(),
            };
            match flat_bcs::deserialize_arg(bytes, l) {
                Ok(v) => flat.push(v),
                Err(_) => return Ok(Outcome::failed(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT, gas)),
            }
        }
        // The entry frame costs `per_frame`, charged before any instruction;
        // running out here has no location (no frame exists yet).
        let gas = match (gas, per_frame) {
            (Some(g), Some(pf)) if g < pf => return Ok(Outcome::failed(StatusCode::OUT_OF_GAS, Some(0))),
            (Some(g), Some(pf)) => Some(g - pf),
            _ => None,
        };
        let state = NestedState { depth: 1, stack_base: 0, gas_left: gas, aptos_meter: 0 };
        let out = self.execute_flat(key, flat, state)?;
        let ser = |vs: &[FlatValue]| vs.iter().map(|v| flat_bcs::serialize(v).unwrap_or_default()).collect();
        // A result the VM cannot serialize (a closure over a private
        // function) is its invariant violation, without location.
        if out.returns.iter().chain(&out.refs).any(|v| flat_bcs::serialize(v).is_err()) {
            return Ok(Outcome::failed(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR, out.gas_left));
        }
        Ok(Outcome {
            status: out.status,
            abort_code: out.abort_code,
            message: out.message,
            location: out.location,
            returns: ser(&out.returns),
            refs: ser(&out.refs),
            gas_left: out.gas_left,
        })
    }

    /// Runs `key` from the given state (`state.depth` counts the callee's
    /// frame, already charged) with one flat value per parameter (for a
    /// reference parameter, its target). In-memory arguments are consumed.
    pub fn execute_flat(
        &mut self,
        key: &InstanceKey,
        args: FlatArgs,
        state: NestedState,
    ) -> Result<FlatOutcome, ExecError> {
        let entry = self.entry_address(key)?;
        let (params, rets) = self.instance_signature(key)?;
        // SAFETY: each slot is an owned argument value's, live for the call.
        let slots: Vec<SeamSlot> = args
            .iter()
            .map(|v| unsafe { SeamSlot::new(movejit_runtime::flat::Addr::of_value(v), v.layout()) })
            .collect();
        self.compile_closure_args(&slots)?;
        let metered = self.config.cost.is_some();
        let gas = if metered { Some(state.gas_left.unwrap_or(u64::MAX)) } else { None };
        if args.len() != params.len() {
            return Err(ExecError::Compile(CompileError::Malformed("argument count".into())));
        }
        let mut ret_vals = Vec::with_capacity(rets.len());
        for t in &rets {
            let l = match t {
                Ty::S(k) => self.layout_of(&k.to_type())?,
                Ty::M(l) => l.clone(),
                Ty::R(_) => {
                    return Err(ExecError::Compile(CompileError::Unsupported(
                        "reference result at the boundary".into(),
                    )))
                }
            };
            ret_vals.push(FlatValue::zeroed(l));
        }
        let arg_ptrs: Vec<u64> = args.iter().map(|v| v.as_ptr() as u64).collect();
        let ret_ptrs: Vec<u64> = ret_vals.iter().map(|v| v.as_ptr() as u64).collect();
        let ctx = self.entry_context(&state, gas);
        let (flag, mut ctx) = self.run_entry(entry, &arg_ptrs, &ret_ptrs, ctx, None)?;
        // Compiled code owns in-memory arguments (it moved or dropped them);
        // the values behind references stay the host's.
        let mut refs = Vec::new();
        for (v, t) in args.into_iter().zip(&params) {
            match t {
                Ty::R(_) => refs.push(v),
                Ty::M(_) => v.forget_moved(),
                Ty::S(_) => drop(v),
            }
        }
        let gas_left = metered.then_some(ctx.gas_left);
        if flag != 0 && ctx.status == movejit_runtime::flat::closure_shims::CLOSURE_NOT_COMPILED {
            return Err(ExecError::Compile(self.compile_closure_misses()));
        }
        if flag == 0 {
            return Ok(FlatOutcome {
                status: StatusCode::EXECUTED,
                abort_code: None,
                message: None,
                location: None,
                returns: ret_vals,
                refs,
                gas_left,
                interpreted: None,
                variant_found: None,
            });
        }
        // Results were never written on failure: nothing to drop but zeros.
        Ok(FlatOutcome { refs, ..failure(&mut ctx, gas_left) })
    }

    /// Runs `key` inside an interpreter session on the interpreter's own
    /// slots (see [`SeamSlot`]: value arguments are consumed, reference
    /// arguments are their targets, results are written to their slots on
    /// success), from `state`. Global storage goes to `host`; natives share
    /// `natives` and see `host`'s types and resources. `Err` when the
    /// instance does not compile or the slots do not fit its signature:
    /// then nothing was touched. The outcome has no values (`returns` and
    /// `refs` are empty).
    pub fn execute_in_session(
        &mut self,
        key: &InstanceKey,
        args: &[SeamSlot],
        rets: &[SeamSlot],
        state: NestedState,
        host: &mut dyn SessionHost,
        natives: &mut NativeSession,
    ) -> Result<FlatOutcome, ExecError> {
        let e = self.session_entry(key)?;
        self.run_in_session(&e, args, rets, state, host, natives)
    }

    /// Compiles `key` (if needed) into a handle for repeated
    /// [`run_in_session`](Self::run_in_session) calls, which skip the
    /// per-call look-ups. Valid as long as this engine lives.
    pub fn session_entry(&mut self, key: &InstanceKey) -> Result<SessionEntry, ExecError> {
        let entry = self.entry_address(key)?;
        let (params, rets) = self.instance_signature(key)?;
        let closures = params.iter().any(|t| match t {
            Ty::M(l) | Ty::R(l) => movejit_runtime::flat::closure_shims::may_hold_closure(l),
            Ty::S(_) => false,
        });
        Ok(SessionEntry { entry, params: params.into(), rets: rets.into(), closures })
    }

    /// [`execute_in_session`](Self::execute_in_session) of an instance
    /// prepared by [`session_entry`](Self::session_entry) on this engine.
    pub fn run_in_session(
        &mut self,
        e: &SessionEntry,
        args: &[SeamSlot],
        rets: &[SeamSlot],
        state: NestedState,
        host: &mut dyn SessionHost,
        natives: &mut NativeSession,
    ) -> Result<FlatOutcome, ExecError> {
        check_slots(e, args, rets)?;
        if e.closures {
            self.compile_closure_args(args)?;
        }
        if self.executor.is_none() {
            self.executor = Some(Executor::start(self.config.stack_size)?);
        }
        let executor = self.executor.as_ref().ok_or_else(|| ExecError::Thread("no executor".into()))?;
        let tables = Tables { config: &self.config, sites: &self.native_sites };
        let (out, missed) = run_session_entry(&tables, executor, e, args, rets, state, host, natives)?;
        if missed {
            // The slots were consumed: the run cannot be redone here. It
            // fails (UNKNOWN_INVARIANT_VIOLATION_ERROR); the target is
            // compiled for the next run. Unreachable while closures reach
            // compiled code only packed by it or as arguments.
            let _ = self.compile_closure_misses();
        }
        Ok(out)
    }

    /// Runs a compiled entry on the execution stack with `ctx` as its
    /// starting state (inside `session` when given); returns the failure
    /// flag and the final context.
    fn run_entry(
        &mut self,
        entry: usize,
        args: &[u64],
        rets: &[u64],
        mut ctx: ExecContext,
        session: Option<(&mut dyn SessionHost, &mut NativeSession)>,
    ) -> Result<(u32, ExecContext), ExecError> {
        if self.executor.is_none() {
            self.executor = Some(Executor::start(self.config.stack_size)?);
        }
        let executor = self.executor.as_ref().ok_or_else(|| ExecError::Thread("no executor".into()))?;
        let own_types = self.types();
        let tables = Tables { config: &self.config, sites: &self.native_sites };
        let flag = run_on(&tables, executor, Some(&own_types), entry, args, rets, &mut ctx, session)?;
        Ok((flag, ctx))
    }
}

/// What a run reads from its engine besides the code: limits and cost
/// table, native call sites.
struct Tables<'a> {
    config: &'a JitConfig,
    sites: &'a [NativeSite],
}

/// The context a run starts with: the inherited depth, stack base and gas,
/// and the engine's limits.
fn entry_context(config: &JitConfig, state: &NestedState, gas: Option<u64>) -> ExecContext {
    ExecContext {
        depth: state.depth,
        max_depth: config.max_call_depth,
        stack_base: state.stack_base,
        max_stack: config.max_operand_stack,
        gas_left: gas.unwrap_or(u64::MAX),
        max_vector_len: config.limits.max_vector_len,
        aptos_meter: state.aptos_meter,
        ..ExecContext::default()
    }
}

/// `Err` unless the slots fit the entry's signature (then nothing ran).
fn check_slots(e: &SessionEntry, args: &[SeamSlot], rets: &[SeamSlot]) -> Result<(), ExecError> {
    let (params, ret_tys) = (&e.params, &e.rets);
    let fits = |t: &Ty, s: &SeamSlot| match (t, &s.layout().shape) {
        (Ty::R(l), Shape::Reference(target)) => l.size == target.size && l.align == target.align,
        (_, Shape::Reference(_)) | (Ty::R(_), _) => false,
        (Ty::S(k), _) => crate::ty::kind_of_layout(s.layout()) == Some(*k),
        (Ty::M(l), _) => l.size == s.layout().size && l.align == s.layout().align,
    };
    if params.len() != args.len()
        || ret_tys.len() != rets.len()
        || !params.iter().zip(args).chain(ret_tys.iter().zip(rets)).all(|(t, s)| fits(t, s))
    {
        return Err(ExecError::Compile(CompileError::Unsupported("slots do not fit the compiled signature".into())));
    }
    Ok(())
}

/// Runs a session entry whose slots were checked and whose closure
/// arguments' targets were compiled; the flag says a closure call met a
/// target the engine had not compiled (`CLOSURE_NOT_COMPILED`: the caller
/// compiles the engine's recorded misses).
#[allow(clippy::too_many_arguments)]
fn run_session_entry(
    tables: &Tables<'_>,
    executor: &Executor,
    e: &SessionEntry,
    args: &[SeamSlot],
    rets: &[SeamSlot],
    state: NestedState,
    host: &mut dyn SessionHost,
    natives: &mut NativeSession,
) -> Result<(FlatOutcome, bool), ExecError> {
    let metered = tables.config.cost.is_some();
    let gas = if metered { Some(state.gas_left.unwrap_or(u64::MAX)) } else { None };
    // One pointer per argument then per result (on the stack when few).
    let mut small = [0u64; 16];
    let mut large = Vec::new();
    let n = args.len() + rets.len();
    let ptrs: &mut [u64] = if n <= small.len() {
        &mut small[..n]
    } else {
        large.resize(n, 0);
        &mut large
    };
    for (p, s) in ptrs.iter_mut().zip(args.iter().chain(rets)) {
        *p = s.addr().to_raw() as u64;
    }
    let (arg_ptrs, ret_ptrs) = ptrs.split_at(args.len());
    let mut ctx = entry_context(tables.config, &state, gas);
    let flag = run_on(tables, executor, None, e.entry, arg_ptrs, ret_ptrs, &mut ctx, Some((host, natives)))?;
    let gas_left = metered.then_some(ctx.gas_left);
    let missed = flag != 0 && ctx.status == movejit_runtime::flat::closure_shims::CLOSURE_NOT_COMPILED;
    if flag == 0 {
        let out = FlatOutcome {
            status: StatusCode::EXECUTED,
            abort_code: None,
            message: None,
            location: None,
            returns: Vec::new(),
            refs: Vec::new(),
            gas_left,
            interpreted: None,
            variant_found: None,
        };
        return Ok((out, false));
    }
    Ok((failure(&mut ctx, gas_left), missed))
}

/// Runs a compiled entry on `executor`'s stack with `ctx` as its starting
/// state (inside `session` when given, else natives see `own_types`, which
/// must be given then); returns the failure flag, `ctx` holding the final
/// state. The context is borrowed, not moved: a short call pays no copies
/// of it.
#[allow(clippy::too_many_arguments)]
fn run_on(
    tables: &Tables<'_>,
    executor: &Executor,
    own_types: Option<&dyn TypeInfo>,
    entry: usize,
    args: &[u64],
    rets: &[u64],
    ctx: &mut ExecContext,
    session: Option<(&mut dyn SessionHost, &mut NativeSession)>,
) -> Result<u32, ExecError> {
    // Natives reach the engine's sites, the types and the cost table
    // through the context while the run lasts (`host` outlives it);
    // inside a session they use its types, resources and native state.
    let mut own_natives = None;
    let (session_ptr, natives) = match session {
        Some((h, n)) => (Some(h as *mut dyn SessionHost), n),
        None => (None, own_natives.insert(NativeSession::default())),
    };
    let session_types = session_ptr.map(SessionTypes);
    let types: &dyn TypeInfo = match (&session_types, own_types) {
        (Some(t), _) => t,
        (None, Some(t)) => t,
        (None, None) => return Err(ExecError::Thread("a run outside a session needs the engine's types".into())),
    };
    let mut host = Host {
        native: NativeHost {
            sites: tables.sites,
            types,
            cost: tables.config.cost.as_ref(),
            session: natives,
            unmetered: executor.unmetered.take().unwrap_or_else(movejit_runtime::GasMeter::unmetered),
            metered: None,
            lent_meter: 0,
        },
        session: session_ptr,
        globals: Default::default(),
    };
    ctx.host = &mut host as *mut Host<'_> as u64;
    let job = Job {
        entry,
        ctx: ctx as *mut ExecContext as usize,
        args: args.as_ptr() as usize,
        rets: rets.as_ptr() as usize,
    };
    // `run` returns when the job is done, so every address in `job`
    // stays valid (and exclusively the job's) while it runs.
    let flag = executor.run(job);
    // The Aptos meter natives borrowed goes home before anyone reads it.
    host.native.return_meter(ctx);
    // Kept for the next run: building a meter builds a cost table.
    executor.unmetered.set(Some(host.native.unmetered));
    ctx.host = 0;
    flag
}

/// The outcome of a failed run from its final context (whose interpreted
/// error it takes).
fn failure(ctx: &mut ExecContext, gas_left: Option<u64>) -> FlatOutcome {
    let status = if let Some(e) = &ctx.interpreted_error {
        e.status
    } else if ctx.status == SUI_VARIANT_TAG_MISMATCH {
        StatusCode::VARIANT_TAG_MISMATCH
    } else {
        StatusCode::from_number(ctx.status, StatusFlavour::Aptos)
            .unwrap_or(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR)
    };
    let has_code = status == StatusCode::ABORTED || ctx.flags & ExecContext::HAS_SUB_STATUS != 0;
    FlatOutcome {
        status,
        abort_code: has_code.then_some(ctx.abort_code),
        message: ctx.message().map(String::from),
        location: Some(if ctx.flags & ExecContext::AT_LOAD != 0 {
            let m = Location::MODULE_ONLY;
            Location { module: Location::BELOW_ENTRY, function: m, code_offset: m }
        } else if ctx.flags & ExecContext::MODULE_ONLY != 0 {
            Location { module: ctx.module, function: Location::MODULE_ONLY, code_offset: Location::MODULE_ONLY }
        } else {
            Location { module: ctx.module, function: ctx.function as u16, code_offset: ctx.code_offset as u16 }
        }),
        returns: Vec::new(),
        refs: Vec::new(),
        gas_left,
        interpreted: ctx.interpreted_error.take(),
        variant_found: (status == StatusCode::STRUCT_VARIANT_MISMATCH).then_some(ctx.abort_code as u16),
    }
}

impl Outcome {
    /// A call that failed before any instruction ran (no location).
    fn failed(status: StatusCode, gas_left: Option<u64>) -> Outcome {
        Outcome {
            status,
            abort_code: None,
            message: None,
            location: None,
            returns: Vec::new(),
            refs: Vec::new(),
            gas_left,
        }
    }
}

/// Where a nested execution starts: the state of the interpreter that
/// calls compiled code (mixed execution).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NestedState {
    /// Active frames including the callee's (its depth check and frame
    /// charge were done by the caller).
    pub depth: u64,
    /// Operand-stack values held by the suspended callers.
    pub stack_base: u64,
    /// Gas units left (metered engines).
    pub gas_left: Option<u64>,
    /// The Aptos meter's memory algebra compiled code feeds
    /// (`ExecContext::aptos_meter`; 0: none).
    pub aptos_meter: u64,
}

/// One call: the trampoline and its three arguments, as addresses.
#[derive(Clone, Copy)]
struct Job {
    entry: usize,
    ctx: usize,
    args: usize,
    rets: usize,
}

/// The stack compiled code runs on: `size` usable bytes of anonymous
/// memory above a guard page, reserved on first use and released with the
/// engine; runs switch to it on the calling thread.
pub(crate) struct Executor {
    /// Lowest address of the mapping (the guard page).
    map: *mut u8,
    map_len: usize,
    /// Lowest usable address.
    base: *mut u8,
    size: usize,
    /// The stack size asked for (`JitConfig::stack_size`): stacks serve
    /// any engine asking for the same.
    asked: usize,
    /// The meter natives see in unmetered runs, between runs.
    unmetered: std::cell::Cell<Option<movejit_runtime::GasMeter>>,
}

// SAFETY: the executor owns its mapping; it is used by one run at a time
// (runs take the engine mutably), on whichever thread holds the engine.
unsafe impl Send for Executor {}

impl Executor {
    fn start(stack_size: usize) -> Result<Executor, ExecError> {
        // SAFETY: sysconf has no preconditions.
        let page =
            usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok().filter(|p| *p > 0).unwrap_or(4096);
        let size = stack_size.max(HELPER_MARGIN as usize).div_ceil(page) * page;
        let map_len = size + page;
        // SAFETY: an anonymous private mapping at an address of the
        // kernel's choice; checked for failure below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(ExecError::Thread(format!(
                "could not map a {size}-byte stack: {}",
                std::io::Error::last_os_error()
            )));
        }
        let map = map as *mut u8;
        // SAFETY: the first page lies inside the mapping just made.
        if unsafe { libc::mprotect(map as *mut libc::c_void, page, libc::PROT_NONE) } != 0 {
            let e = std::io::Error::last_os_error();
            // SAFETY: unmapping exactly the mapping made above.
            unsafe { libc::munmap(map as *mut libc::c_void, map_len) };
            return Err(ExecError::Thread(format!("could not protect the stack guard page: {e}")));
        }
        // SAFETY: `page < map_len`.
        let base = unsafe { map.add(page) };
        Ok(Executor { map, map_len, base, size, asked: stack_size, unmetered: std::cell::Cell::new(None) })
    }

    /// The size it was started with.
    pub(crate) fn stack_size(&self) -> usize {
        self.asked
    }

    /// Runs one job on the execution stack and returns its flag.
    fn run(&self, job: Job) -> Result<u32, ExecError> {
        let limit = (self.base as u64).saturating_add(HELPER_MARGIN);
        let call = move || {
            std::panic::catch_unwind(|| {
                // SAFETY: the caller of `run` keeps the context and both
                // pointer arrays alive and untouched until it returns.
                // `job.entry` is the finalized address of an entry
                // trampoline with exactly this signature, in a JIT module
                // its caller keeps alive while the job runs (the engine's
                // own executor, or a `SharedEntry` holding its engine). The args / rets arrays hold
                // one pointer per value, each to a live slot of the value's
                // flat layout (a reference argument: its target).
                unsafe {
                    let ctx = job.ctx as *mut ExecContext;
                    (*ctx).stack_limit = limit;
                    let f: extern "C" fn(*mut ExecContext, *const u8, *mut u8) -> u32 =
                        std::mem::transmute::<usize, _>(job.entry);
                    f(ctx, job.args as *const u8, job.rets as *mut u8)
                }
            })
        };
        // SAFETY: `base` is page-aligned and `size` a multiple of the page
        // size, both inside a live read-write mapping owned by `self`, which
        // no other run uses now (runs do not nest: compiled code never
        // calls back into an executor). The callback cannot unwind: panics
        // are caught inside it.
        let r = unsafe { psm::on_stack(self.base, self.size, call) };
        r.map_err(|_| ExecError::Thread("compiled code panicked".into()))
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `start`, unused once the executor goes.
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.map_len) };
    }
}

/// Releases the code memory of a JIT module.
pub(crate) fn free_code(jit: JITModule) {
    // SAFETY: called only from `JitEngine::drop`, after the executor was
    // dropped; no execution is running and no function pointer into the
    // module escapes the engine.
    unsafe { jit.free_memory() };
}
