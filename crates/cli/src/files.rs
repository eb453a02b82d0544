//! Expanding command-line paths: files as given, folders walked for `.mv` files.

use std::path::{Path, PathBuf};

/// Every `.mv` file named by `paths`: files as given, folders searched
/// recursively, in a stable (sorted) order.
pub fn expand_mv_paths(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "mv") {
            out.push(p);
        }
    }
    Ok(())
}
