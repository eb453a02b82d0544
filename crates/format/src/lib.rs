//! The Move binary format: an exact model of compiled Move modules and Aptos
//! scripts in both flavours (Aptos bytecode v5–v10, Sui v5–v7), with the
//! decoder, bounds checker and serializer.
//!
//! This crate knows bytes and tables only. It assumes nothing about the input
//! (every malformed byte string gives a typed [`FormatError`], never a panic)
//! and knows nothing of execution. The opcode table in [`opcodes`] is the one
//! source of truth for instruction bytes, versions and mnemonics.

#![forbid(unsafe_code)]

pub mod error;
pub mod model;
pub mod opcodes;

pub use error::{FormatError, FormatResult};
pub use model::*;
pub use movejit_status::{StatusCode, StatusFlavour};
pub use opcodes::Opcode;
mod binary;
pub mod bounds;
pub mod decode;
mod reader;
pub mod serialize;

pub use bounds::{check_module, check_script};
pub use decode::{decode_module, decode_script, is_valid_identifier};
pub use serialize::{serialize_module, serialize_script};
