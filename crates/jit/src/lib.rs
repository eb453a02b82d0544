//! The movejit Cranelift JIT: lowers verified Move function instantiations
//! from stack bytecode to SSA Cranelift IR and runs them as native code.
//!
//! Assumes its input passed the bytecode verifier (stack heights and types
//! at every offset, empty operand stack at block boundaries) but checks
//! every such assumption it relies on while lowering and reports a typed
//! [`CompileError`] instead of panicking.
//!
//! What compiles: every value with a flat layout (jit-abi.md 1.3): scalars
//! in registers, structs, enums and vectors in frame memory, references as
//! pointers; locals, fields, variants, vectors, equality, constants,
//! generic calls with any type arguments (each instantiation compiled
//! separately), `Abort`/`AbortMsg`, closures (`lower/closure.rs`), and, inside
//! an interpreter session (`JitConfig::session_host`), global storage
//! (`lower/global.rs`) and every registered native. The runtime's
//! [`ExecContext`] and the `extern "C"` shims of its helper table do what
//! the IR does not inline (wide integer division, vector growth, copy, drop,
//! equality, natives). Inside a session a callee that does not compile
//! (too long, unsupported) does not stop its callers: it becomes an
//! interpreter stub (`engine/interp_stub.rs`) that runs it on the session's
//! interpreter, closures whose targets compiled code does not have (read
//! from storage, returned by natives) are called through the interpreter
//! too, and a call of a native no registry provides fails as the
//! interpreter's (`MISSING_DEPENDENCY`). Standalone engines cannot
//! interpret: there such instances do not compile.
//!
//! # Protocol of compiled code
//!
//! * Calling convention: see [`lower`](crate::lower) (the host's C
//!   convention; scalars as SSA lanes, in-memory values by address,
//!   in-memory results through destination pointers). Calls between
//!   compiled functions are direct `call`s in Move's argument order. An
//!   entry trampoline `extern "C" fn(ctx, args, rets) -> u32` takes one
//!   pointer per argument and result, each to a slot of its flat layout.
//! * Errors: the failing site stores status (Aptos number), abort code or
//!   sub-status and location (engine module number, function definition
//!   index, bytecode offset) in [`ExecContext`] and returns `failed = 1`;
//!   a runtime shim records status and sub-status itself and the calling
//!   site adds the location. Every call site tests the flag and returns at
//!   once. Nothing panics across compiled frames.
//! * Limits: `ExecContext::depth` counts active frames; a call when it equals
//!   `max_depth` (1,025) is `CALL_STACK_OVERFLOW` at the call instruction.
//!   `stack_base` counts operand-stack values held by suspended callers; a
//!   push making the shared stack exceed `max_stack` (1,024) is
//!   `EXECUTION_STACK_OVERFLOW` at the pushing instruction, exactly as in the
//!   interpreter. Host stack: see [`exec`](crate::JitEngine::execute).
//! * Gas: see [`gas`].

#![deny(unsafe_code)]

mod cfg;
mod engine;
pub mod error;
mod exec;
pub mod gas;
pub mod helpers;
pub mod kind;
mod lower;
pub mod ty;
pub mod types;

pub use engine::{
    Emit, InstanceKey, JitConfig, JitEngine, BASELINE_ABOVE, BASELINE_IR_FACTOR, EST_COMPILE_NS_PER_INSTR, MAX_IR_INSTS,
};
pub use error::{CompileError, CompileResult};
pub use exec::{
    ExecError, FlatArgs, FlatOutcome, Location, NestedState, Outcome, RunTables, SessionEntry, SharedEngine,
    SharedEntry,
};
pub use gas::CostTable;
pub use kind::Kind;
pub use movejit_runtime::flat::ExecContext;
pub use ty::Ty;

// Wide values are handed to helpers as little-endian bytes.
#[cfg(not(target_endian = "little"))]
compile_error!("movejit-jit supports little-endian hosts only");
