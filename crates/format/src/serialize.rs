//! Model → bytes. (Stub: the serializer is being written.)

use crate::{CompiledModule, CompiledScript};

/// Serializes a module in its flavour's encoding.
pub fn serialize_module(module: &CompiledModule) -> Vec<u8> {
    let _ = module;
    Vec::new()
}

/// Serializes an Aptos script.
pub fn serialize_script(script: &CompiledScript) -> Vec<u8> {
    let _ = script;
    Vec::new()
}
