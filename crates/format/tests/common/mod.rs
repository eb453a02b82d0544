//! Helpers shared by the format tests: where the shared corpus lives and
//! how to list its modules.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `/work/shared` seen from the workspace root (`<root>/../shared`).
pub fn shared_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().and_then(Path::parent).expect("workspace root above crates/format");
    root.join("..").join("shared")
}

/// Every `.mv` file under `dir`, sorted, recursively.
pub fn mv_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
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

/// Scripts are stored under a `scripts/` folder in the corpus.
pub fn is_script(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "scripts")
}

/// Small deterministic PRNG (SplitMix64) for mutation tests.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
