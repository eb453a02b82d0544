//! The execution context every helper receives first: where a failing
//! helper records its error, and the limits helpers enforce. `#[repr(C)]`
//! so compiled code reads and writes it at fixed offsets
//! ([`ExecContext::OFFSETS`]). Field order extends the JIT's draft
//! (crates/jit/src/context.rs): its `_pad` word is `flags` here, and
//! `max_vector_len` is appended.

use crate::error::VmError;
use crate::limits::Limits;
use movejit_format::{StatusCode, StatusFlavour};
use std::mem::offset_of;

/// Shared state of one execution.
#[repr(C)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecContext {
    /// 0 while running or after success; otherwise the status number in
    /// Aptos numbering (`StatusCode::number(StatusFlavour::Aptos)`).
    pub status: u64,
    /// The abort code of `ABORTED`, or the sub-status of another status
    /// (`VECTOR_OPERATION_ERROR`), when `flags & HAS_SUB_STATUS`.
    pub abort_code: u64,
    /// Where the error was raised (module number, function definition
    /// index, bytecode offset); filled by the trampoline / call site.
    pub module: u32,
    pub function: u32,
    pub code_offset: u32,
    pub flags: u32,
    pub depth: u64,
    pub max_depth: u64,
    pub stack_base: u64,
    pub max_stack: u64,
    pub gas_left: u64,
    pub stack_limit: u64,
    /// Elements one vector may hold (`VECTOR_OPERATION_ERROR` sub-status 4).
    pub max_vector_len: u64,
    /// Under Aptos's schedule, written by compiled code before a global
    /// shim: the segment's charges from the operation's price on, which
    /// its charge on entry included (`flat::host::charge_global`). Read
    /// only when `aptos_meter` is set, so unmetered code never writes it.
    pub global_rest: u64,
    /// The host's [`NativeHost`](super::shims::NativeHost) for
    /// `call_native` (0: none), valid while the execution runs.
    pub host: u64,
    /// The address of the [`AptosMeter`] compiled code charges through
    /// helpers (0: none), valid while the execution runs: its memory
    /// algebra (`memory_use`, `memory_release_heap`, ...), and the module
    /// loads and instantiations of calls (`aptos_call`). Compiled code reads
    /// it only to feed a use of a constant amount, or a release, to that
    /// algebra inline (`MemoryAlgebra::OFFSETS`), as `memory_use` and
    /// `MemoryAlgebra::release_memory` would.
    ///
    /// [`AptosMeter`]: crate::gas::aptos::AptosMeter
    pub aptos_meter: u64,
    /// The error of an interpreted callee (compiled code calling the
    /// interpreter: `closure_shims::call_interpreted`), with its location
    /// inside interpreted code and its message; `status` and `abort_code`
    /// say the same without them. Compiled code never reads it (it lies
    /// after `host`, outside [`ExecContext::OFFSETS`]).
    pub interpreted_error: Option<Box<VmError>>,
    /// The message of the last error [`fail`](Self::fail) recorded, with
    /// that error's status number. Compiled code writes statuses inline and
    /// never touches it, so [`message`](Self::message) reports it only
    /// while `status` is still the one it came with.
    pub recorded_message: Option<(u64, String)>,
}

/// Field offsets, for code generators.
#[derive(Clone, Copy, Debug)]
pub struct ContextOffsets {
    pub status: usize,
    pub abort_code: usize,
    pub module: usize,
    pub function: usize,
    pub code_offset: usize,
    pub flags: usize,
    pub depth: usize,
    pub max_depth: usize,
    pub stack_base: usize,
    pub max_stack: usize,
    pub gas_left: usize,
    pub stack_limit: usize,
    pub max_vector_len: usize,
    pub global_rest: usize,
    pub host: usize,
    pub aptos_meter: usize,
}

impl ExecContext {
    /// `flags` bit: `abort_code` holds a sub-status.
    pub const HAS_SUB_STATUS: u32 = 1;
    /// `flags` bit: the error happened making a callee's frame under
    /// Aptos's schedule, which locates it at the module of the frame below
    /// the caller; set by the caller, resolved by the frame below it (its
    /// propagate path), or by the interpreter when that frame is its own.
    pub const AT_LOAD: u32 = 2;
    /// `flags` bit: the location holds a module only (an [`AT_LOAD`]
    /// error's, resolved).
    ///
    /// [`AT_LOAD`]: Self::AT_LOAD
    pub const MODULE_ONLY: u32 = 4;

    pub const OFFSETS: ContextOffsets = ContextOffsets {
        status: offset_of!(ExecContext, status),
        abort_code: offset_of!(ExecContext, abort_code),
        module: offset_of!(ExecContext, module),
        function: offset_of!(ExecContext, function),
        code_offset: offset_of!(ExecContext, code_offset),
        flags: offset_of!(ExecContext, flags),
        depth: offset_of!(ExecContext, depth),
        max_depth: offset_of!(ExecContext, max_depth),
        stack_base: offset_of!(ExecContext, stack_base),
        max_stack: offset_of!(ExecContext, max_stack),
        gas_left: offset_of!(ExecContext, gas_left),
        stack_limit: offset_of!(ExecContext, stack_limit),
        max_vector_len: offset_of!(ExecContext, max_vector_len),
        global_rest: offset_of!(ExecContext, global_rest),
        host: offset_of!(ExecContext, host),
        aptos_meter: offset_of!(ExecContext, aptos_meter),
    };

    pub fn new(limits: &Limits) -> Self {
        ExecContext {
            max_depth: limits.max_call_depth as u64,
            max_stack: limits.max_operand_stack as u64,
            max_vector_len: limits.max_vector_len,
            gas_left: u64::MAX,
            ..Default::default()
        }
    }

    /// Records `e` (message included) and returns the helper status word
    /// for it (1).
    pub fn fail(&mut self, e: &VmError) -> u32 {
        self.status = e.status.number(StatusFlavour::Aptos);
        self.recorded_message = e.message.clone().map(|m| (self.status, m));
        match e.sub_status {
            Some(s) => {
                self.abort_code = s;
                self.flags |= Self::HAS_SUB_STATUS;
            }
            None => {
                self.abort_code = 0;
                self.flags &= !Self::HAS_SUB_STATUS;
            }
        }
        1
    }

    /// The recorded error, if any (without location).
    pub fn error(&self) -> Option<VmError> {
        if self.status == 0 {
            return None;
        }
        let status = StatusCode::from_number(self.status, StatusFlavour::Aptos)
            .unwrap_or(StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR);
        let mut e = VmError::new(status);
        if self.flags & Self::HAS_SUB_STATUS != 0 {
            e.sub_status = Some(self.abort_code);
        }
        e.message = self.message().map(String::from);
        Some(e)
    }

    /// The message of the recorded error: what the helper that raised it
    /// reported, unless compiled code recorded another status since.
    pub fn message(&self) -> Option<&str> {
        match &self.recorded_message {
            Some((s, m)) if *s == self.status && self.status != 0 => Some(m),
            _ => None,
        }
    }

    /// Forgets the recorded error.
    pub fn clear(&mut self) {
        self.interpreted_error = None;
        self.recorded_message = None;
        self.status = 0;
        self.abort_code = 0;
        self.flags &= !Self::HAS_SUB_STATUS;
    }
}
