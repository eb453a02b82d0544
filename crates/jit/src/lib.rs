//! The movejit Cranelift JIT: lowers verified Move function instantiations
//! from stack bytecode to SSA Cranelift IR and runs them as native code.
//!
//! Assumes its input passed the bytecode verifier (stack heights and types
//! at every offset, empty operand stack at block boundaries) but checks
//! every such assumption it relies on while lowering and reports a typed
//! [`CompileError`] instead of panicking.
//!
//! Phase 1 (this state): booleans and integers of every width and sign,
//! locals, control flow, aborts, constants and direct calls between
//! compiled functions (generic ones instantiated with scalar types). The
//! execution protocol (status, abort code and location recorded in an
//! [`ExecContext`], call-depth and operand-stack limits counted exactly like
//! the interpreter, a host-stack guard, block-level gas charging with exact
//! fallback) is in place. Structs, references, vectors, globals, enums,
//! closures and natives wait for the runtime's value layouts and helper
//! table (phase 2); until then the wide-integer helpers live in
//! [`helpers`].
//!
//! # Protocol of compiled code (phase 1)
//!
//! * Calling convention: the host's C convention with Cranelift's implicit
//!   return area for many results. A Move function becomes
//!   `(ctx: *mut ExecContext, args' lanes...) -> (failed: i8, returns' lanes...)`;
//!   lanes: one SSA value for `bool` (i8, 0/1) and integers up to 128
//!   bits, four little-endian `i64` limbs for 256-bit integers. Calls
//!   between compiled functions are direct `call`s in Move's argument order.
//!   An entry trampoline `extern "C" fn(ctx, args, rets) -> u32` reads and
//!   writes one 32-byte little-endian slot per value.
//! * Errors: the failing site stores status (Aptos number), abort code and
//!   location (engine module number, function definition index, bytecode
//!   offset) in [`ExecContext`] and returns `failed = 1`; every call site
//!   tests the flag and returns at once. Helpers report errors as a status
//!   word, never by unwinding. Nothing panics across compiled frames.
//! * Limits: `ExecContext::depth` counts active frames; a call when it equals
//!   `max_depth` (1,025) is `CALL_STACK_OVERFLOW` at the call instruction.
//!   `stack_base` counts operand-stack values held by suspended callers; a
//!   push making the shared stack exceed `max_stack` (1,024) is
//!   `EXECUTION_STACK_OVERFLOW` at the pushing instruction, exactly as in the
//!   interpreter. Host stack: see [`exec`](crate::JitEngine::execute).
//! * Gas: see [`gas`].

#![deny(unsafe_code)]

mod cfg;
pub mod context;
mod engine;
pub mod error;
mod exec;
pub mod gas;
pub mod helpers;
pub mod kind;
mod lower;

pub use context::ExecContext;
pub use engine::{Emit, InstanceKey, JitConfig, JitEngine};
pub use error::{CompileError, CompileResult};
pub use exec::{ExecError, Location, NestedState, Outcome};
pub use gas::CostTable;
pub use kind::Kind;

// Wide values are handed to helpers as little-endian bytes.
#[cfg(not(target_endian = "little"))]
compile_error!("movejit-jit supports little-endian hosts only");
