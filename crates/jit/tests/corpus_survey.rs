//! Every non-generic function of the real module corpus goes through the
//! compiler: it must compile or be reported as not supported yet; real,
//! verified code must never be called malformed or break code generation.
//! Prints functions compiled / total and compile time per corpus set.

use movejit_format::{decode_module, FunctionDefinitionIndex};
use movejit_jit::{CompileError, JitConfig, JitEngine};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn mv_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        // Older versions of the same modules (history/) would shadow the
        // current ones and mix incompatible signatures.
        if p.is_dir() && p.file_name().is_some_and(|n| n != "history") {
            mv_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "mv") {
            out.push(p);
        }
    }
}

#[test]
fn corpus_functions_compile_or_are_reported_unsupported() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let mut problems = Vec::new();
    // (set surveyed, sets it depends on)
    let sets: [(&str, &[&str]); 4] =
        [("aptos", &[]), ("aptos-workloads", &["aptos"]), ("aptos-calibration", &["aptos"]), ("sui", &[])];
    for (set, deps) in sets {
        let mut e = JitEngine::new(JitConfig::default()).unwrap();
        for dep in deps {
            let mut files = Vec::new();
            mv_files(&corpus.join(dep), &mut files);
            for f in &files {
                if let Ok(m) = decode_module(&std::fs::read(f).unwrap()) {
                    e.add_module(m).unwrap();
                }
            }
        }
        let mut files = Vec::new();
        mv_files(&corpus.join(set), &mut files);
        let mut modules = Vec::new();
        for f in &files {
            let Ok(m) = decode_module(&std::fs::read(f).unwrap()) else { continue };
            let idx = e.add_module(m.clone()).unwrap();
            modules.push((idx, m));
        }
        let (mut total, mut compiled, mut generic) = (0usize, 0usize, 0usize);
        let start = Instant::now();
        for (idx, m) in &modules {
            for (i, fd) in m.function_defs.iter().enumerate() {
                let handle = &m.function_handles[fd.function.idx()];
                if !handle.type_parameters.is_empty() {
                    generic += 1;
                    continue;
                }
                total += 1;
                let name = m.function_name(FunctionDefinitionIndex(i as u16)).to_string();
                let key = e.instance_key(*idx, &name, &[]).unwrap();
                match e.compile(&key) {
                    Ok(()) => compiled += 1,
                    Err(CompileError::Unsupported(_)) => {}
                    Err(err) => problems.push(format!("{set} {}::{name}: {err}", m.name())),
                }
            }
        }
        println!(
            "{set}: {} modules, {compiled} / {total} non-generic functions compiled ({generic} generic skipped), {:.0} ms",
            modules.len(),
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    for p in problems.iter().take(30) {
        println!("  PROBLEM {p}");
    }
    assert!(problems.is_empty(), "{} functions failed for reasons other than unsupported features", problems.len());
}
