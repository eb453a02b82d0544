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
pub use exec::{ExecError, Location, Outcome};
pub use gas::CostTable;
pub use kind::Kind;

// Wide values are handed to helpers as little-endian bytes.
#[cfg(not(target_endian = "little"))]
compile_error!("movejit-jit supports little-endian hosts only");
