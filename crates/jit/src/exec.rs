//! Running compiled code: argument passing, the execution thread, results.
//!
//! Host stack: executions run on the engine's executor thread, started on
//! first use with a known stack (`JitConfig::stack_size`, 256 MiB by
//! default: reserved address space, touched lazily). Its lowest usable address plus a 1 MiB margin for
//! helpers is stored in `ExecContext::stack_limit`; every compiled function
//! compares its stack pointer against it on entry and fails with
//! `EXECUTION_STACK_OVERFLOW` instead of overflowing. With the call-depth
//! limit of 1,025 frames the guard needs frames averaging over 250 KiB to
//! fire, which no Move function has, so results stay those of the
//! interpreter; the guard only makes the impossible case safe.

#![allow(unsafe_code)]

use crate::engine::{InstanceKey, JitEngine};
use crate::error::{CompileError, CompileResult};
use crate::lower::SUI_VARIANT_TAG_MISMATCH;
use crate::ty::Ty;
use cranelift_jit::JITModule;
use movejit_format::{StatusCode, StatusFlavour};
use movejit_runtime::flat::native_bridge::NativeSession;
use movejit_runtime::flat::shims::NativeHost;
use movejit_runtime::flat::{bcs as flat_bcs, ExecContext, FlatLayout, FlatValue};
use std::sync::mpsc;
use std::sync::Arc;

const HELPER_MARGIN: u64 = 1 << 20;

/// Where an error was raised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub module: u32,
    pub function: u16,
    pub code_offset: u16,
}

/// The result of one execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub status: StatusCode,
    /// The abort code of `ABORTED`, or the sub-status of another error
    /// (`VECTOR_OPERATION_ERROR`).
    pub abort_code: Option<u64>,
    /// The message of an `AbortMsg`.
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
    #[error("could not start the execution thread: {0}")]
    Thread(String),
}

/// Constants compiled code copies from: deserialized once, never written,
/// freed with the engine.
#[derive(Default)]
pub(crate) struct ConstPool(Vec<FlatValue>);

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
}

/// A flat argument of one parameter: the value (for a reference parameter,
/// the value it refers to, which the host keeps and reads back).
pub type FlatArgs = Vec<FlatValue>;

/// The result of a run over flat values.
pub struct FlatOutcome {
    pub status: StatusCode,
    pub abort_code: Option<u64>,
    /// The message of an `AbortMsg`.
    pub message: Option<String>,
    pub location: Option<Location>,
    /// The results (`EXECUTED` only).
    pub returns: Vec<FlatValue>,
    /// The values behind the reference parameters, in parameter order.
    pub refs: Vec<FlatValue>,
    pub gas_left: Option<u64>,
}

impl JitEngine {
    /// Compiles (if needed) and runs `key` with BCS arguments (a reference
    /// parameter takes the BCS of its target). A metered engine runs with
    /// `gas` units (unlimited when `None`).
    pub fn execute(&mut self, key: &InstanceKey, args: &[Vec<u8>], gas: Option<u64>) -> Result<Outcome, ExecError> {
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
                Ty::S(k) => self.layout_of(&kind_type(*k))?,
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
        let state = NestedState { depth: 1, stack_base: 0, gas_left: gas };
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
    pub fn execute_flat(&mut self, key: &InstanceKey, args: FlatArgs, state: NestedState) -> Result<FlatOutcome, ExecError> {
        let entry = self.entry_address(key)?;
        let (params, rets) = self.instance_signature(key)?;
        self.compile_closure_args(&args.iter().map(|v| (movejit_runtime::flat::Addr::of_value(v), v.layout().clone())).collect::<Vec<_>>())?;
        let metered = self.config.cost.is_some();
        let gas = if metered { Some(state.gas_left.unwrap_or(u64::MAX)) } else { None };
        if args.len() != params.len() {
            return Err(ExecError::Compile(CompileError::Malformed("argument count".into())));
        }
        let mut ret_vals = Vec::with_capacity(rets.len());
        for t in &rets {
            let l = match t {
                Ty::S(k) => self.layout_of(&kind_type(*k))?,
                Ty::M(l) => l.clone(),
                Ty::R(_) => return Err(ExecError::Compile(CompileError::Unsupported("reference result at the boundary".into()))),
            };
            ret_vals.push(FlatValue::zeroed(l));
        }
        let arg_ptrs: Vec<u64> = args.iter().map(|v| v.as_ptr() as u64).collect();
        let ret_ptrs: Vec<u64> = ret_vals.iter().map(|v| v.as_ptr() as u64).collect();
        let ctx = ExecContext {
            depth: state.depth,
            max_depth: self.config.max_call_depth,
            stack_base: state.stack_base,
            max_stack: self.config.max_operand_stack,
            gas_left: gas.unwrap_or(u64::MAX),
            max_vector_len: self.config.limits.max_vector_len,
            ..ExecContext::default()
        };
        let (flag, ctx, message) = self.run_entry(entry, &arg_ptrs, &ret_ptrs, ctx)?;
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
            return Ok(FlatOutcome { status: StatusCode::EXECUTED, abort_code: None, message: None, location: None, returns: ret_vals, refs, gas_left });
        }
        // Results were never written on failure: nothing to drop but zeros.
        let status = if ctx.status == SUI_VARIANT_TAG_MISMATCH {
            StatusCode::VARIANT_TAG_MISMATCH
        } else {
            StatusCode::from_number(ctx.status, StatusFlavour::Aptos).unwrap_or(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR)
        };
        let has_code = status == StatusCode::ABORTED || ctx.flags & ExecContext::HAS_SUB_STATUS != 0;
        Ok(FlatOutcome {
            status,
            abort_code: has_code.then_some(ctx.abort_code),
            message: if status == StatusCode::ABORTED { message } else { None },
            location: Some(Location { module: ctx.module, function: ctx.function as u16, code_offset: ctx.code_offset as u16 }),
            returns: Vec::new(),
            refs,
            gas_left,
        })
    }

    /// Runs a compiled entry on the executor thread with `ctx` as its
    /// starting state; returns the failure flag and the final context.
    fn run_entry(&mut self, entry: usize, args: &[u64], rets: &[u64], mut ctx: ExecContext) -> Result<(u32, ExecContext, Option<String>), ExecError> {
        if self.executor.is_none() {
            self.executor = Some(Executor::start(self.config.stack_size)?);
        }
        let executor = self.executor.as_ref().ok_or_else(|| ExecError::Thread("no executor".into()))?;
        // Natives reach the engine's sites, types and cost table through
        // the context while the run lasts (`host` outlives the job).
        let types = self.types();
        let mut host = NativeHost {
            sites: &self.native_sites,
            types: &types,
            cost: self.config.cost.as_ref(),
            session: NativeSession::default(),
            unmetered: movejit_runtime::GasMeter::unmetered(),
            abort_message: None,
        };
        ctx.host = &mut host as *mut NativeHost<'_> as u64;
        let job = Job {
            entry,
            ctx: &mut ctx as *mut ExecContext as usize,
            args: args.as_ptr() as usize,
            rets: rets.as_ptr() as usize,
        };
        // `run` blocks until the job is done, so every address in `job`
        // stays valid (and exclusively the executor's) while it runs.
        let flag = executor.run(job)?;
        let message = host.abort_message.take();
        drop(host);
        ctx.host = 0;
        Ok((flag, ctx, message))
    }
}

/// The runtime type of a scalar kind.
fn kind_type(k: crate::kind::Kind) -> movejit_runtime::Type {
    use crate::kind::Kind as K;
    use movejit_runtime::Type as T;
    match k {
        K::Bool => T::Bool,
        K::U8 => T::U8,
        K::U16 => T::U16,
        K::U32 => T::U32,
        K::U64 => T::U64,
        K::U128 => T::U128,
        K::U256 => T::U256,
        K::I8 => T::I8,
        K::I16 => T::I16,
        K::I32 => T::I32,
        K::I64 => T::I64,
        K::I128 => T::I128,
        K::I256 => T::I256,
        K::Address => T::Address,
    }
}

impl Outcome {
    /// A call that failed before any instruction ran (no location).
    fn failed(status: StatusCode, gas_left: Option<u64>) -> Outcome {
        Outcome { status, abort_code: None, message: None, location: None, returns: Vec::new(), refs: Vec::new(), gas_left }
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
}

/// One call for the executor thread: the trampoline and its three
/// arguments, as addresses.
#[derive(Clone, Copy)]
struct Job {
    entry: usize,
    ctx: usize,
    args: usize,
    rets: usize,
}

/// The thread compiled code runs on: a known, large stack whose lower
/// bound (plus a margin) every compiled frame checks against.
pub(crate) struct Executor {
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<u32>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Executor {
    fn start(stack_size: usize) -> Result<Executor, ExecError> {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done) = mpsc::channel::<u32>();
        let thread = std::thread::Builder::new()
            .name("movejit-exec".into())
            .stack_size(stack_size)
            .spawn(move || {
                let marker = 0u8;
                let top = std::hint::black_box(&marker) as *const u8 as u64;
                let limit = top.saturating_sub(stack_size as u64).saturating_add(HELPER_MARGIN);
                while let Ok(job) = job_rx.recv() {
                    // SAFETY: `Executor::run` sends a job only while its
                    // caller keeps the context and both buffers alive and
                    // untouched, and waits for the answer. `job.entry` is
                    // the finalized address of an entry trampoline with
                    // exactly this signature, in a JIT module that is freed
                    // only after this thread has been joined. The args /
                    // rets arrays hold one pointer per value, each to a
                    // live slot of the value's flat layout.
                    let flag = unsafe {
                        let ctx = job.ctx as *mut ExecContext;
                        (*ctx).stack_limit = limit;
                        let f: extern "C" fn(*mut ExecContext, *const u8, *mut u8) -> u32 =
                            std::mem::transmute::<usize, _>(job.entry);
                        f(ctx, job.args as *const u8, job.rets as *mut u8)
                    };
                    if done_tx.send(flag).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| ExecError::Thread(e.to_string()))?;
        Ok(Executor { jobs: Some(jobs), done, thread: Some(thread) })
    }

    /// Runs one job and waits for its result.
    fn run(&self, job: Job) -> Result<u32, ExecError> {
        let lost = || ExecError::Thread("execution thread is gone".into());
        self.jobs.as_ref().ok_or_else(lost)?.send(job).map_err(|_| lost())?;
        self.done.recv().map_err(|_| lost())
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // Closing the job channel ends the thread's loop.
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Releases the code memory of a JIT module.
pub(crate) fn free_code(jit: JITModule) {
    // SAFETY: called only from `JitEngine::drop`, after the executor thread
    // was joined; no execution is running and no function pointer into the
    // module escapes the engine.
    unsafe { jit.free_memory() };
}
