//! The property the `decode` fuzz target checks, as a library function so
//! it also runs as a plain test over the shared corpus (tests/corpus.rs).
//!
//! For any input: decoding (module or script) returns a typed result and
//! never panics; when it succeeds, serializing and decoding again gives the
//! same model, and serializing that gives the same bytes.

#![forbid(unsafe_code)]

use movejit_format::{decode_module, decode_script, serialize_module, serialize_script};

pub fn check_decode(data: &[u8]) {
    if let Ok(m) = decode_module(data) {
        let bytes = serialize_module(&m);
        let again = decode_module(&bytes).expect("a serialized module decodes");
        assert_eq!(m, again, "decode(serialize(m)) != m");
        assert_eq!(serialize_module(&again), bytes, "serialization is not stable");
    }
    if let Ok(s) = decode_script(data) {
        let bytes = serialize_script(&s);
        let again = decode_script(&bytes).expect("a serialized script decodes");
        assert_eq!(s, again, "decode(serialize(s)) != s");
    }
}
