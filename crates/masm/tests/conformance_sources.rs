//! The hand-written `.masm` programs of the Aptos conformance set, assembled
//! here, must be equivalent to the modules Aptos's own assembler made from
//! them (conformance/aptos/modules).

use movejit_format::decode_module;
use movejit_masm::normalize::{first_difference, normalize_module};
use movejit_masm::{assemble, Assembled};
use std::path::{Path, PathBuf};

fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos")
}

fn find_mv(dir: &Path, file: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(found) = find_mv(&p, file) {
                return Some(found);
            }
        } else if p.file_name().is_some_and(|n| n == file) {
            return Some(p);
        }
    }
    None
}

#[test]
fn aptos_masm_sources_assemble_to_the_real_modules() {
    let mut sources: Vec<PathBuf> = std::fs::read_dir(conformance().join("sources"))
        .expect("sources folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "masm"))
        .collect();
    sources.sort();
    assert!(sources.len() >= 5, "expected the conformance .masm sources");
    let mut checked = 0;
    for src in &sources {
        let text = std::fs::read_to_string(src).expect("readable");
        let Assembled::Module(ours) = assemble(&text).unwrap_or_else(|e| panic!("{}: {e}", src.display())) else {
            panic!("{}: expected a module", src.display());
        };
        let stem = src.file_stem().and_then(|s| s.to_str()).expect("utf-8 name");
        let mv = find_mv(&conformance().join("modules"), &format!("{stem}.mv"))
            .unwrap_or_else(|| panic!("no compiled module for {stem}"));
        let real = decode_module(&std::fs::read(&mv).expect("readable")).expect("real module decodes");
        let (a, b) = (normalize_module(&real).expect("resolves"), normalize_module(&ours).expect("resolves"));
        if let Some(d) = first_difference(&a, &b) {
            panic!("{stem}: assembled module differs from Aptos's: {d}");
        }
        checked += 1;
    }
    println!("{checked} conformance .masm sources equivalent to Aptos's assembler output");
}
