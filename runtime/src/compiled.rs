//! The seam between the interpreter and compiled code (mixed execution).
//!
//! The interpreter knows nothing of the JIT: at every call of a Move
//! function it asks a [`CompiledCode`] whether that instance runs compiled.
//! If so it hands over the arguments (scalars) together with the state the
//! callee inherits — call depth, operand-stack values held by suspended
//! frames, gas left — and gets back the results or the error, exactly as
//! its own frame would have produced them. An implementation lives in a
//! crate that depends on both executors (movejit-engine).

#![forbid(unsafe_code)]

use crate::{ModuleId, Type, Value, VmError};
use movejit_format::CompiledModule;
use std::time::Duration;

/// What a compiled callee inherits from the interpreter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallState {
    /// Active frames including the callee's own (the interpreter has already
    /// checked the depth limit and charged the frame).
    pub depth: u64,
    /// Operand-stack values held by the suspended frames.
    pub stack_base: u64,
    /// Gas units left; `None` when unmetered.
    pub gas_left: Option<u64>,
}

/// The answer of [`CompiledCode::call`].
#[derive(Debug)]
pub enum CompiledCall {
    /// The instance is not compiled: interpret it.
    NotCompiled,
    /// It ran compiled and returned.
    Returned { values: Vec<Value>, gas_left: Option<u64> },
    /// It ran compiled and failed (status, abort code and location set as
    /// the interpreter would; `OUT_OF_GAS` leaves no gas).
    Failed { error: VmError, gas_left: Option<u64> },
}

/// The modules the interpreter has loaded, for compiling callees.
pub trait ModuleSource {
    fn module(&self, id: &ModuleId) -> Option<&CompiledModule>;
}

/// Counters for `--stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompiledStats {
    /// Distinct function instances that ran compiled.
    pub compiled_functions: usize,
    /// Distinct function instances the interpreter ran.
    pub interpreted_functions: usize,
    /// Instances compiled (including callees compiled with them).
    pub instances_compiled: usize,
    pub compile_time: Duration,
}

/// Compiled code reachable from the interpreter, one per session.
pub trait CompiledCode: Send {
    /// Runs `module::fdef<ty_args>(args)` compiled if the instance (and all
    /// it can call) compiles; otherwise `NotCompiled` and the interpreter
    /// runs it (`args` are untouched).
    fn call(
        &mut self,
        modules: &dyn ModuleSource,
        module: &ModuleId,
        fdef: u16,
        ty_args: &[Type],
        args: &[Value],
        state: CallState,
    ) -> CompiledCall;

    /// Compiles the instance without running it; `Err` says why it cannot
    /// be compiled.
    fn compile(&mut self, modules: &dyn ModuleSource, module: &ModuleId, fdef: u16, ty_args: &[Type]) -> Result<(), String>;

    fn stats(&self) -> CompiledStats;
}

/// Makes the per-session [`CompiledCode`]; shared by an engine's sessions.
pub trait CompiledCodeFactory: Send + Sync {
    fn new_session(&self) -> Box<dyn CompiledCode>;
}
