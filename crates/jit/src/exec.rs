//! Running compiled code: argument passing, the execution thread, results.
//!
//! Host stack: executions run on a fresh thread with a known stack
//! (`JitConfig::stack_size`, 256 MiB by default: reserved address space,
//! touched lazily). Its lowest usable address plus a 1 MiB margin for
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
        let failed = |status| Outcome { status, abort_code: None, location: None, returns: Vec::new(), gas_left: gas };
        if args.len() != params.len() {
            return Ok(failed(StatusCode::NUMBER_OF_ARGUMENTS_MISMATCH));
        }
        let mut arg_buf = vec![[0u8; 32]; params.len()];
        for ((slot, bytes), k) in arg_buf.iter_mut().zip(args).zip(&params) {
            if bytes.len() != k.bytes() || (*k == Kind::Bool && bytes[0] > 1) {
                return Ok(failed(StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT));
            }
            slot[..bytes.len()].copy_from_slice(bytes);
        }
        // The entry frame costs `per_frame`, charged before any instruction;
        // running out here has no location (no frame exists yet).
        let gas = match (gas, per_frame) {
            (Some(g), Some(pf)) if g < pf => {
                return Ok(Outcome { gas_left: Some(0), ..failed(StatusCode::OUT_OF_GAS) });
            }
            (Some(g), Some(pf)) => Some(g - pf),
            _ => None,
        };
        let mut ret_buf = vec![[0u8; 32]; rets.len()];
        let mut ctx = ExecContext {
            depth: 1,
            max_depth: self.config.max_call_depth,
            max_stack: self.config.max_operand_stack,
            gas_left: gas.unwrap_or(u64::MAX),
            ..ExecContext::default()
        };
        let stack_size = self.config.stack_size;
        let failed_flag = std::thread::scope(|s| {
            std::thread::Builder::new()
                .name("movejit-exec".into())
                .stack_size(stack_size)
                .spawn_scoped(s, || {
                    let marker = 0u8;
                    let top = std::hint::black_box(&marker) as *const u8 as u64;
                    ctx.stack_limit = top.saturating_sub(stack_size as u64).saturating_add(HELPER_MARGIN);
                    // SAFETY: `entry` is the finalized address of a trampoline
                    // with exactly this signature, owned by `self`'s JIT
                    // module, which outlives this scoped thread. `ctx` is a
                    // valid exclusive ExecContext; `arg_buf` / `ret_buf` hold
                    // one 32-byte slot per parameter / return, as the
                    // trampoline reads and writes them.
                    unsafe {
                        let f: extern "C" fn(*mut ExecContext, *const u8, *mut u8) -> u32 =
                            std::mem::transmute::<usize, _>(entry);
                        f(&mut ctx, arg_buf.as_ptr().cast(), ret_buf.as_mut_ptr().cast())
                    }
                })
                .map_err(|e| ExecError::Thread(e.to_string()))?
                .join()
                .map_err(|_| ExecError::Thread("execution thread panicked".into()))
        })?;
        let gas_left = gas.map(|_| ctx.gas_left);
        if failed_flag == 0 {
            let returns = ret_buf.iter().zip(&rets).map(|(slot, k)| slot[..k.bytes()].to_vec()).collect();
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

/// Releases the code memory of a JIT module.
pub(crate) fn free_code(jit: JITModule) {
    // SAFETY: called only from `JitEngine::drop`; executions run on scoped
    // threads that finished before `execute` returned, and no function
    // pointer into the module escapes the engine.
    unsafe { jit.free_memory() };
}
