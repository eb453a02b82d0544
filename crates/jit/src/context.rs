//! The execution context compiled code reads and writes.
//!
//! Every compiled function receives a pointer to one [`ExecContext`] as its
//! first argument. Errors are data, not control flow the host sees: the site
//! that fails stores its status, abort code and location here, and every
//! frame then returns with a non-zero flag up to the entry trampoline. No
//! Rust panic or unwind ever crosses a compiled frame.

#![forbid(unsafe_code)]

use std::mem::offset_of;

/// Shared state of one execution (one entry call and everything it calls).
#[repr(C)]
#[derive(Clone, Debug, Default)]
pub struct ExecContext {
    /// 0 while running or after success; otherwise the major status number
    /// (Aptos numbering, which Sui shares for every runtime status the JIT
    /// raises).
    pub status: u64,
    /// The abort code of `ABORTED`.
    pub abort_code: u64,
    /// Where the error was raised: the engine's module number, the function
    /// definition index in that module, and the bytecode offset.
    pub module: u32,
    pub function: u32,
    pub code_offset: u32,
    pub _pad: u32,
    /// Frames currently active, the entry function's included.
    pub depth: u64,
    /// Frames that may be active at once; the call that would exceed it is
    /// `CALL_STACK_OVERFLOW`.
    pub max_depth: u64,
    /// Operand-stack values held by the suspended callers of the current
    /// frame (the interpreter's one shared operand stack, counted).
    pub stack_base: u64,
    /// Operand-stack capacity; a push beyond it is `EXECUTION_STACK_OVERFLOW`.
    pub max_stack: u64,
    /// Gas units left (metered code only).
    pub gas_left: u64,
    /// The lowest host stack address a compiled frame may start below.
    pub stack_limit: u64,
}

/// Byte offsets of the fields, for the code generator.
pub(crate) mod off {
    use super::*;
    pub const STATUS: i32 = offset_of!(ExecContext, status) as i32;
    pub const ABORT_CODE: i32 = offset_of!(ExecContext, abort_code) as i32;
    pub const MODULE: i32 = offset_of!(ExecContext, module) as i32;
    pub const FUNCTION: i32 = offset_of!(ExecContext, function) as i32;
    pub const CODE_OFFSET: i32 = offset_of!(ExecContext, code_offset) as i32;
    pub const DEPTH: i32 = offset_of!(ExecContext, depth) as i32;
    pub const MAX_DEPTH: i32 = offset_of!(ExecContext, max_depth) as i32;
    pub const STACK_BASE: i32 = offset_of!(ExecContext, stack_base) as i32;
    pub const MAX_STACK: i32 = offset_of!(ExecContext, max_stack) as i32;
    pub const GAS_LEFT: i32 = offset_of!(ExecContext, gas_left) as i32;
    pub const STACK_LIMIT: i32 = offset_of!(ExecContext, stack_limit) as i32;
}
