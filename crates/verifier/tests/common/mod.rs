//! Helpers shared by the verifier tests: where the shared data lives, how
//! to load modules, and how to pick each module's dependencies.
#![allow(dead_code)]

use movejit_format::{decode_module, CompiledModule};
use movejit_verifier::{verify_module, VerifierConfig, VerifyError};
use std::path::{Path, PathBuf};

/// `/work/shared`, as `<workspace root>/../shared`.
pub fn shared_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().and_then(Path::parent).expect("workspace root above crates/verifier");
    root.join("..").join("shared")
}

/// Every `.mv` file under `dir`, sorted, recursively.
pub fn mv_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "mv") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

pub fn is_script(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "scripts")
}

pub fn load(path: &Path) -> CompiledModule {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    decode_module(&bytes).unwrap_or_else(|e| panic!("decode {}: {e}", path.display()))
}

/// Loads every module (not script) under `dir`.
pub fn load_dir(dir: &Path) -> Vec<(PathBuf, CompiledModule)> {
    mv_files(dir)
        .into_iter()
        .filter(|p| !is_script(p))
        .map(|p| {
            let m = load(&p);
            (p, m)
        })
        .collect()
}

/// Verifies each module against all the others; returns the failures.
pub fn verify_all(mods: &[(PathBuf, CompiledModule)], config: &VerifierConfig) -> Vec<(PathBuf, VerifyError)> {
    let deps: Vec<&CompiledModule> = mods.iter().map(|(_, m)| m).collect();
    mods.iter().filter_map(|(p, m)| verify_module(m, &deps, config).err().map(|e| (p.clone(), e))).collect()
}
