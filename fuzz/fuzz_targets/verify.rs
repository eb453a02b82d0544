//! Fuzz target `verify`: a (mutated) module either verifies or is rejected
//! with a typed status, under both flavours' rules, and never panics or
//! hangs (libFuzzer's -timeout catches hangs). Seed it with the real
//! modules so mutations start from valid bytecode:
//!
//!     cargo +nightly fuzz run verify fuzz/corpus/verify ../shared/corpus/aptos ../shared/corpus/sui

#![no_main]

use libfuzzer_sys::fuzz_target;
use movejit_format::{decode_module, decode_script, StatusCode};
use movejit_verifier::{verify_module, verify_script, VerifierConfig};

fuzz_target!(|data: &[u8]| {
    for config in [VerifierConfig::aptos(), VerifierConfig::sui(), VerifierConfig::sui_protocol()] {
        if let Ok(m) = decode_module(data) {
            if let Err(e) = verify_module(&m, &[], &config) {
                // The verifier's panic guard reports a caught panic this way.
                assert!(e.status != StatusCode::VERIFIER_INVARIANT_VIOLATION, "verifier bug: {e}");
            }
        }
        if let Ok(s) = decode_script(data) {
            if let Err(e) = verify_script(&s, &[], &config) {
                assert!(e.status != StatusCode::VERIFIER_INVARIANT_VIOLATION, "verifier bug: {e}");
            }
        }
    }
});
