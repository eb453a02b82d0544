//! shared/corpus/invalid: each file name starts with the status the real
//! toolchain gave. Decoding statuses must be reproduced by the decoder;
//! any other status (a verifier one) means the module must decode fine.

mod common;

use movejit_format::{decode_module, StatusCode, StatusFlavour};
use movejit_status::StatusType;

#[test]
fn invalid_corpus_statuses() {
    let files = common::mv_files(&common::shared_dir().join("corpus/invalid"));
    assert!(!files.is_empty());
    let (mut rejected, mut left_to_verifier) = (0, 0);
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy();
        let status_name = name.split("__").next().unwrap();
        let status = StatusCode::from_name(status_name).unwrap_or_else(|| panic!("{name}: unknown status"));
        let result = decode_module(&std::fs::read(path).unwrap());
        if status.status_type(StatusFlavour::Aptos) == StatusType::Deserialization {
            let e = result.expect_err(&name);
            assert_eq!(e.status, status, "{name}: {e}");
            rejected += 1;
        } else {
            result.unwrap_or_else(|e| panic!("{name} should decode (its {status} is a verifier status): {e}"));
            left_to_verifier += 1;
        }
    }
    println!(
        "invalid corpus: {rejected} rejected with the expected status, {left_to_verifier} decode (verifier cases)"
    );
}
