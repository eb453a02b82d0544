//! Assembling with compiled dependencies instead of import declarations
//! (move-asm's way): strip the declarations under every `use` from the
//! disassembly of each Aptos framework module and assemble it with the whole
//! framework as dependencies; the result must be equivalent to the original.

use movejit_format::{decode_module, CompiledModule};
use movejit_masm::normalize::{first_difference, normalize_module};
use movejit_masm::{assemble_with, disassemble_module, AsmOptions, Assembled};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "mv") {
            out.push(p);
        }
    }
}

/// The text without the indented declaration lines under `use` lines.
fn strip_imports(text: &str) -> String {
    let mut out = String::new();
    let mut in_use = false;
    for line in text.lines() {
        if line.starts_with("use ") {
            in_use = true;
        } else if !line.starts_with(' ') {
            in_use = false;
        } else if in_use {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn framework_assembles_against_its_dependencies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/aptos");
    let mut paths = vec![];
    files(&root, &mut paths);
    let modules: Vec<CompiledModule> =
        paths.iter().map(|p| decode_module(&std::fs::read(p).expect("readable")).expect("decodes")).collect();
    assert!(modules.len() > 100);
    let options = AsmOptions { default_version: None, deps: &modules };
    let mut failures = vec![];
    for (path, m) in paths.iter().zip(&modules) {
        let text = strip_imports(&disassemble_module(m).expect("disassembles"));
        let result = match assemble_with(&text, options) {
            Ok(Assembled::Module(again)) => {
                first_difference(&normalize_module(m).unwrap(), &normalize_module(&again).unwrap())
            }
            Ok(Assembled::Script(_)) => Some("assembled a script".into()),
            Err(e) => Some(format!("assemble: {e}")),
        };
        if let Some(d) = result {
            failures.push(format!("{}: {}", path.display(), d.chars().take(300).collect::<String>()));
        }
    }
    println!(
        "{} of {} framework modules equivalent when imports come from dependencies",
        modules.len() - failures.len(),
        modules.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
