//! Typed errors of the assembler and the disassembler.

use std::fmt;

/// A position in `.masm` text: 1-based line and column (columns count bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// What went wrong while assembling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsmErrorKind {
    /// The text does not follow the grammar (bad token, unexpected token).
    Syntax,
    /// A name (module, struct, function, field, variant, local, label, type
    /// parameter) that is not declared.
    Unresolved,
    /// A name declared twice.
    Duplicate,
    /// A number or constant out of range for its type, or a wrong operand.
    Operand,
    /// An instruction, table or feature the chosen version/flavour lacks.
    Unsupported,
    /// A table grew past the format's 16-bit index limit.
    Limit,
}

/// An assembler error with its position in the source text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {message}")]
pub struct AsmError {
    pub kind: AsmErrorKind,
    pub pos: Pos,
    pub message: String,
}

impl AsmError {
    pub fn new(kind: AsmErrorKind, pos: Pos, message: impl Into<String>) -> Self {
        AsmError { kind, pos, message: message.into() }
    }
}

pub type AsmResult<T> = Result<T, AsmError>;

/// The disassembler met a module it cannot print (an index out of its table,
/// a branch to nowhere); decoded and bounds-checked modules never cause it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot disassemble: {0}")]
pub struct DisasmError(pub String);
