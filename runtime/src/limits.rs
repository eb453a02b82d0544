//! Execution limits, with the Move VM's defaults.

/// The default of [`Limits::max_memory`]: 1 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;

/// Limits both executors enforce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Nested frames that may run (the next call is `CALL_STACK_OVERFLOW`).
    pub max_call_depth: usize,
    /// Operand-stack values across all frames (`EXECUTION_STACK_OVERFLOW`).
    pub max_operand_stack: usize,
    /// Nesting of values (`VM_MAX_VALUE_DEPTH_REACHED`).
    pub max_value_depth: usize,
    /// Nesting of types (`VM_MAX_TYPE_DEPTH_REACHED`).
    pub max_type_depth: usize,
    /// Depth of one caller-given type argument, counted as Aptos's type
    /// builder does (a primitive is 1; `VM_MAX_TYPE_DEPTH_REACHED`).
    pub max_type_arg_depth: usize,
    /// Nodes of one caller-given type argument (`TOO_MANY_TYPE_NODES`);
    /// `None`: unbounded.
    pub max_type_arg_nodes: Option<usize>,
    /// Elements in one vector (`VECTOR_OPERATION_ERROR`, sub-status 4).
    pub max_vector_len: u64,
    /// Bytes of an `AbortMsg` message.
    pub max_abort_message: usize,
    /// Bytes of value memory (vector buffers and headers) one top-level
    /// call may add to what was live when it started
    /// (`MEMORY_LIMIT_EXCEEDED`); see `crate::memory`. A bound on the host
    /// process, not a Move VM limit: metered runs will take theirs from the
    /// gas schedule's memory quota.
    pub max_memory: u64,
    /// Type nodes visited to build one value layout (`VM_MAX_TYPE_NODES_REACHED`);
    /// Sui bounds this (512), Aptos not here.
    pub max_layout_nodes: Option<usize>,
}

impl Limits {
    /// Sui's runtime limits.
    pub fn sui() -> Self {
        // Type arguments: only the runtime's general type depth bound.
        Limits {
            max_layout_nodes: Some(512),
            max_vector_len: 1 << 20,
            max_type_arg_depth: 256,
            max_type_arg_nodes: None,
            ..Limits::default()
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_call_depth: 1025,
            max_operand_stack: 1024,
            max_value_depth: 128,
            max_type_depth: 256,
            // Aptos's production type builder (gas schedule max_ty_depth / max_ty_size).
            max_type_arg_depth: 20,
            max_type_arg_nodes: Some(128),
            max_vector_len: u64::MAX >> 2,
            max_abort_message: 1024,
            max_layout_nodes: None,
            max_memory: DEFAULT_MAX_MEMORY,
        }
    }
}
