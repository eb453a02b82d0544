//! Runs the fuzz property over every module of the shared corpus (and a few
//! derived inputs), so it is exercised even without libFuzzer/nightly:
//! `cargo test --manifest-path fuzz/Cargo.toml`.

use std::path::{Path, PathBuf};

fn mv_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            mv_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "mv") {
            out.push(p);
        }
    }
}

#[test]
fn fuzz_property_holds_on_the_shared_corpus() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    let mut files = Vec::new();
    mv_files(&shared.join("corpus"), &mut files);
    mv_files(&shared.join("bench"), &mut files);
    assert!(files.len() > 800, "shared corpus not found at {}", shared.display());
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        movejit_format_fuzz::check_decode(&bytes);
        // Halves and a flipped byte: the property must still hold.
        movejit_format_fuzz::check_decode(&bytes[..bytes.len() / 2]);
        let mut flipped = bytes.clone();
        let i = bytes.len() * 2 / 3;
        flipped[i] ^= 0x5A;
        movejit_format_fuzz::check_decode(&flipped);
    }
}
