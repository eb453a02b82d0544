//! Why a function could not be compiled.

#![forbid(unsafe_code)]

/// A compile-time failure. Compiling never panics on bad input: code the JIT
/// does not handle yet, and code that breaks what the verifier guarantees,
/// are both reported here (the engine then interprets or rejects).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// Valid Move the JIT does not lower yet (phase 1: non-scalar values).
    #[error("not supported by the JIT yet: {0}")]
    Unsupported(String),
    /// Code that violates a verifier guarantee (stack height, types, indices).
    #[error("malformed or unverified code: {0}")]
    Malformed(String),
    /// A call to a module or function the engine does not know.
    #[error("unknown function: {0}")]
    UnknownFunction(String),
    /// Cranelift rejected the generated IR or failed to emit code.
    #[error("code generation failed: {0}")]
    Codegen(String),
}

pub type CompileResult<T> = Result<T, CompileError>;
