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

use crate::context::ExecContext;
use crate::engine::{InstanceKey, JitEngine};
use crate::error::CompileError;
use crate::kind::Kind;
use cranelift_jit::JITModule;
use movejit_format::{StatusCode, StatusFlavour};
use std::sync::mpsc;

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
    pub abort_code: Option<u64>,
    pub location: Option<Location>,
    /// BCS of each return value (`EXECUTED` only).
    pub returns: Vec<Vec<u8>>,
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

impl JitEngine {
    /// Compiles (if needed) and runs `key` with BCS arguments. A metered
    /// engine runs with `gas` units (unlimited when `None`).
    pub fn execute(&mut self, key: &InstanceKey, args: &[Vec<u8>], gas: Option<u64>) -> Result<Outcome, ExecError> {
        let entry = self.entry_address(key)?;
        let (params, rets) = self.instance_signature(key)?;
        let per_frame = self.config.cost.as_ref().map(|c| c.per_frame);
        let gas = per_frame.map(|_| gas.unwrap_or(u64::MAX));
        let arg_buf = match marshal_args(&params, args) {
            Ok(buf) => buf,
            Err(status) => return Ok(Outcome::failed(status, gas)),
        };
        // The entry frame costs `per_frame`, charged before any instruction;
        // running out here has no location (no frame exists yet).
        let gas = match (gas, per_frame) {
            (Some(g), Some(pf)) if g < pf => return Ok(Outcome::failed(StatusCode::OUT_OF_GAS, Some(0))),
            (Some(g), Some(pf)) => Some(g - pf),
            _ => None,
        };
        let ctx = ExecContext {
            depth: 1,
            max_depth: self.config.max_call_depth,
            max_stack: self.config.max_operand_stack,
            gas_left: gas.unwrap_or(u64::MAX),
            ..ExecContext::default()
        };
        self.run_entry(entry, &rets, &arg_buf, ctx, gas.is_some())
    }

    /// Runs a compiled entry on the executor thread with `ctx` as its
    /// starting state and turns the context's final state into an outcome.
    fn run_entry(
        &mut self,
        entry: usize,
        rets: &[Kind],
        arg_buf: &[[u8; 32]],
        mut ctx: ExecContext,
        metered: bool,
    ) -> Result<Outcome, ExecError> {
        let mut ret_buf = vec![[0u8; 32]; rets.len()];
        if self.executor.is_none() {
            self.executor = Some(Executor::start(self.config.stack_size)?);
        }
        let executor = self.executor.as_ref().ok_or_else(|| ExecError::Thread("no executor".into()))?;
        let job = Job {
            entry,
            ctx: &mut ctx as *mut ExecContext as usize,
            args: arg_buf.as_ptr() as usize,
            rets: ret_buf.as_mut_ptr() as usize,
        };
        // `run` blocks until the job is done, so every address in `job`
        // stays valid (and exclusively the executor's) while it runs.
        let failed_flag = executor.run(job)?;
        let gas_left = metered.then_some(ctx.gas_left);
        if failed_flag == 0 {
            let returns = ret_buf.iter().zip(rets).map(|(slot, k)| slot[..k.bytes()].to_vec()).collect();
            return Ok(Outcome { status: StatusCode::EXECUTED, abort_code: None, location: None, returns, gas_left });
        }
        let status = StatusCode::from_number(ctx.status, StatusFlavour::Aptos)
            .unwrap_or(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR);
        Ok(Outcome {
            status,
            abort_code: (status == StatusCode::ABORTED).then_some(ctx.abort_code),
            location: Some(Location {
                module: ctx.module,
                function: ctx.function as u16,
                code_offset: ctx.code_offset as u16,
            }),
            returns: Vec::new(),
            gas_left,
        })
    }
}

impl Outcome {
    /// A call that failed before any instruction ran (no location).
    fn failed(status: StatusCode, gas_left: Option<u64>) -> Outcome {
        Outcome { status, abort_code: None, location: None, returns: Vec::new(), gas_left }
    }
}

/// Lays BCS scalar arguments into one 32-byte little-endian slot each, as
/// the entry trampoline reads them.
fn marshal_args(params: &[Kind], args: &[Vec<u8>]) -> Result<Vec<[u8; 32]>, StatusCode> {
    if args.len() != params.len() {
        return Err(StatusCode::NUMBER_OF_ARGUMENTS_MISMATCH);
    }
    let mut arg_buf = vec![[0u8; 32]; params.len()];
    for ((slot, bytes), k) in arg_buf.iter_mut().zip(args).zip(params) {
        if bytes.len() != k.bytes() || (*k == Kind::Bool && bytes[0] > 1) {
            return Err(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT);
        }
        slot[..bytes.len()].copy_from_slice(bytes);
    }
    Ok(arg_buf)
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

impl JitEngine {
    /// Runs `key` as a callee of interpreted code: like
    /// [`execute`](JitEngine::execute) but the frame is already charged and
    /// depth, operand-stack base and gas start from `state`. Arguments and
    /// returns are little-endian scalar bytes (BCS).
    pub fn execute_nested(&mut self, key: &InstanceKey, args: &[Vec<u8>], state: NestedState) -> Result<Outcome, ExecError> {
        let entry = self.entry_address(key)?;
        let (params, rets) = self.instance_signature(key)?;
        let metered = self.config.cost.is_some();
        let gas = if metered { Some(state.gas_left.unwrap_or(u64::MAX)) } else { None };
        let arg_buf = match marshal_args(&params, args) {
            Ok(buf) => buf,
            Err(status) => return Ok(Outcome::failed(status, gas)),
        };
        let ctx = ExecContext {
            depth: state.depth,
            max_depth: self.config.max_call_depth,
            stack_base: state.stack_base,
            max_stack: self.config.max_operand_stack,
            gas_left: gas.unwrap_or(u64::MAX),
            ..ExecContext::default()
        };
        self.run_entry(entry, &rets, &arg_buf, ctx, metered)
    }
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
                    // rets buffers hold one 32-byte slot per value.
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
