//! `shared/corpus/invalid`: each file is rejected with the status its name
//! starts with (`STATUS__name.mv`). MALFORMED ones fail in the decoder; the
//! v5 loop case fails in our control-flow pass, with the v5 stdlib as deps.

mod common;

use common::*;
use movejit_format::decode_module;
use movejit_verifier::{verify_module, VerifierConfig};

#[test]
fn invalid_corpus_rejected_with_named_status() {
    let dir = shared_dir().join("corpus/invalid");
    let files = mv_files(&dir);
    assert!(!files.is_empty());
    let deps = load_dir(&shared_dir().join("corpus/versions/v5/stdlib3p"));
    let deps: Vec<_> = deps.iter().map(|(_, m)| m).collect();
    let mut agree = 0;
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let expected = name.split("__").next().unwrap_or_default();
        let got = match decode_module(&std::fs::read(f).expect("read")) {
            Err(e) => e.status.name().to_string(),
            Ok(m) => match verify_module(&m, &deps, &VerifierConfig::aptos()) {
                Ok(()) => "ACCEPTED".to_string(),
                Err(e) => e.status.name().to_string(),
            },
        };
        assert_eq!(got, expected, "{name}");
        agree += 1;
    }
    eprintln!("invalid: {agree}/{} rejected with the named status", files.len());
}
