//! The Move binary format: an exact model of compiled Move modules and Aptos
//! scripts in both flavours (Aptos bytecode v5–v10, Sui v5–v7), with the
//! decoder, bounds checker and serializer.
//!
//! This crate knows bytes and tables only. It assumes nothing about the input
//! (every malformed byte string gives a typed [`FormatError`], never a panic)
//! and knows nothing of execution. The opcode table in [`opcodes`] is the one
//! source of truth for instruction bytes, versions and mnemonics.
//!
//! * [`decode_module`] / [`decode_script`]: bytes → model, followed by the
//!   bounds check ([`bounds`]). Statuses are those of the real deserializers
//!   (Aptos `move-binary-format`, and Sui's for Sui-only parts).
//! * [`serialize_module`] / [`serialize_script`]: model → bytes, laid out
//!   exactly like the real serializers (every corpus module round-trips).
//!
//! Flavour comes from the version word: `<= 6` is an unflavoured v5/v6 module
//! ([`Flavour::Common`], decoded by the Aptos rules where the two differ),
//! `0x0A......` Aptos v7–v10, `0x05000007` Sui v7. Policies this crate
//! applies: bytes after the module are `TRAILING_BYTES` (Sui) or `MALFORMED`
//! (Aptos and v5/v6, where the real Aptos deserializer would ignore them);
//! Sui v7 modules may not carry metadata (Sui mainnet rule). Sui's
//! protocol-configured table row caps and its deprecation of global-storage
//! opcodes and `acquires` lists are publishing policy and are not checked
//! here.

#![forbid(unsafe_code)]

pub mod cfg;
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
pub use decode::{decode_module, decode_script, is_valid_identifier, version_and_flavour};
pub use serialize::{serialize_module, serialize_script};
