//! Bytes → model. (Stub: the decoder is being written.)

use crate::{CompiledModule, CompiledScript, FormatError, FormatResult, StatusCode};

/// Decodes a module of either flavour and checks every index against its
/// table (bounds check included).
pub fn decode_module(bytes: &[u8]) -> FormatResult<CompiledModule> {
    let _ = bytes;
    Err(FormatError::new(StatusCode::MALFORMED, 0, "module", "decoder not written yet"))
}

/// Decodes an Aptos script and bounds-checks it.
pub fn decode_script(bytes: &[u8]) -> FormatResult<CompiledScript> {
    let _ = bytes;
    Err(FormatError::new(StatusCode::MALFORMED, 0, "script", "decoder not written yet"))
}
