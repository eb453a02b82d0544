//! decode → disassemble → assemble over every real module in the shared
//! corpus: the assembled module must be equivalent (same definitions,
//! signatures and code once indices are resolved) to the decoded one, and
//! must survive serialize → decode unchanged.

use movejit_format::{decode_module, decode_script, serialize_module, serialize_script};
use movejit_masm::normalize::{first_difference, normalize_module, normalize_script, NModule};
use movejit_masm::{assemble, disassemble_module, disassemble_script, Assembled};
use std::path::{Path, PathBuf};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

fn mv_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            mv_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "mv") {
            out.push(p);
        }
    }
}

/// One module or script through the whole round trip.
fn round_trip(bytes: &[u8]) -> Result<(), String> {
    let (original, text) = match decode_module(bytes) {
        Ok(m) => (normalize_module(&m)?, disassemble_module(&m).map_err(|e| e.to_string())?),
        Err(module_err) => match decode_script(bytes) {
            Ok(s) => (normalize_script(&s)?, disassemble_script(&s).map_err(|e| e.to_string())?),
            Err(_) => return Err(format!("does not decode: {module_err}")),
        },
    };
    let assembled =
        assemble(&text).map_err(|e| format!("assemble: {e}\n--- text ---\n{}", excerpt(&text, e.pos.line)))?;
    let (again, reserialized): (NModule, Result<NModule, String>) = match &assembled {
        Assembled::Module(m) => {
            let bytes = serialize_module(m);
            let back = decode_module(&bytes).map_err(|e| format!("re-decode: {e}")).and_then(|m| normalize_module(&m));
            (normalize_module(m)?, back)
        }
        Assembled::Script(s) => {
            let bytes = serialize_script(s);
            let back = decode_script(&bytes).map_err(|e| format!("re-decode: {e}")).and_then(|s| normalize_script(&s));
            (normalize_script(s)?, back)
        }
    };
    if let Some(d) = first_difference(&original, &again) {
        return Err(format!("not equivalent after assembling: {d}"));
    }
    let reserialized = reserialized?;
    if let Some(d) = first_difference(&original, &reserialized) {
        return Err(format!("not equivalent after serialize+decode: {d}"));
    }
    Ok(())
}

fn excerpt(text: &str, line: u32) -> String {
    let line = line as usize;
    text.lines().enumerate().skip(line.saturating_sub(4)).take(7).map(|(i, l)| format!("{:5} {l}\n", i + 1)).collect()
}

const FOLDERS: &[&str] = &[
    "corpus/aptos",
    "corpus/aptos-workloads",
    "corpus/aptos-calibration",
    "corpus/sui",
    "corpus/versions",
    "bench/modules",
    "bench/modules_sui",
    "conformance/aptos/modules",
];

/// Modules the real verifiers reject (duplicate or missing handles, bad
/// jump tables, ...): the round trip is attempted on every one that decodes;
/// every one must stay equivalent too (duplicates, empty bodies and odd
/// instantiations included).
#[test]
fn verifier_suite_modules_round_trip_or_fail_cleanly() {
    let mut summary = String::new();
    for folder in ["verifier/aptos/modules", "verifier/sui"] {
        let mut files = vec![];
        mv_files(&shared().join(folder), &mut files);
        assert!(!files.is_empty(), "no modules under {folder}");
        let (mut decoded, mut ok) = (0, 0);
        let mut fails = vec![];
        for f in &files {
            let bytes = std::fs::read(f).expect("readable");
            if decode_module(&bytes).is_err() && decode_script(&bytes).is_err() {
                continue;
            }
            decoded += 1;
            match round_trip(&bytes) {
                Ok(()) => ok += 1,
                Err(e) => fails.push(format!("{}: {}", f.display(), e.lines().next().unwrap_or(""))),
            }
        }
        summary.push_str(&format!("{folder}: {ok}/{decoded} decodable modules equivalent ({} files)\n", files.len()));
        for f in fails.iter().take(15) {
            summary.push_str(&format!("  not equivalent: {f}\n"));
        }
        assert!(decoded > 0, "nothing decoded under {folder}");
        assert_eq!(ok, decoded, "{summary}");
    }
    println!("{summary}");
}

#[test]
fn every_corpus_module_round_trips_through_masm() {
    let mut failures = vec![];
    let mut summary = String::new();
    for folder in FOLDERS {
        let mut files = vec![];
        mv_files(&shared().join(folder), &mut files);
        assert!(!files.is_empty(), "no modules under {folder}");
        let mut ok = 0;
        for f in &files {
            let bytes = std::fs::read(f).expect("corpus file readable");
            match round_trip(&bytes) {
                Ok(()) => ok += 1,
                Err(e) => failures.push(format!("{}: {e}", f.display())),
            }
        }
        summary.push_str(&format!("{folder}: {ok}/{} equivalent\n", files.len()));
    }
    println!("{summary}");
    for f in failures.iter().take(10) {
        println!("FAIL {f}\n");
    }
    assert!(failures.is_empty(), "{} modules failed the round trip\n{summary}", failures.len());
}
