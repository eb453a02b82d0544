//! Move assembly text (`.masm`, the format of Aptos move-asm): disassembler
//! and assembler for both flavours.
//!
//! - [`disassemble_module`] / [`disassemble_script`]: model → text in which
//!   every table index is a name (see the crate README for the syntax and the
//!   extensions over move-asm: version/flavour directives, imported handle
//!   declarations, `native struct`, `const`, `metadata`, `access`, Sui enums
//!   and `variant_switch` jump tables).
//! - [`assemble`]: text → [`Assembled`] module or script; every error is an
//!   [`AsmError`] with a line:column position.
//! - [`normalize`]: a name-resolved view used to check that two modules are
//!   equivalent regardless of table order.
//!
//! Assumes nothing about its input: malformed text gives an error, and a
//! model whose indices do not resolve gives a [`DisasmError`], never a panic.

#![forbid(unsafe_code)]

mod asm;
pub mod ast;
mod disasm;
pub mod error;
mod lexer;
pub mod normalize;
mod parser;
pub mod value;

pub use asm::{assemble, assemble_with, AsmOptions, Assembled};
pub use disasm::{disassemble_module, disassemble_script};
pub use error::{AsmError, AsmErrorKind, AsmResult, DisasmError, Pos};
pub use parser::parse;
