//! Byte-mutated corpus modules: whatever decodes must disassemble and
//! reassemble without a panic (errors are fine); the outcome counts are
//! printed.

use movejit_format::decode_module;
use movejit_masm::normalize::{first_difference, normalize_module};
use movejit_masm::{assemble, disassemble_module, Assembled};
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

#[test]
fn mutated_modules_never_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let mut all = vec![];
    for d in ["corpus/versions", "corpus/sui/sui-framework", "corpus/aptos/MoveStdlib", "bench/modules"] {
        files(&root.join(d), &mut all);
    }
    assert!(!all.is_empty());
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut decoded, mut disasm_err, mut asm_err, mut equivalent, mut differ) = (0, 0, 0, 0, 0);
    for path in all.iter().step_by(3) {
        let bytes = std::fs::read(path).expect("readable");
        for _ in 0..60 {
            let mut mutant = bytes.clone();
            for _ in 0..1 + next() % 3 {
                let i = (next() as usize) % mutant.len();
                mutant[i] = next() as u8;
            }
            let Ok(m) = decode_module(&mutant) else { continue };
            decoded += 1;
            let Ok(text) = disassemble_module(&m) else {
                disasm_err += 1;
                continue;
            };
            match assemble(&text) {
                Ok(Assembled::Module(again)) => match (normalize_module(&m), normalize_module(&again)) {
                    (Ok(a), Ok(b)) if first_difference(&a, &b).is_none() => equivalent += 1,
                    (a, b) => {
                        differ += 1;
                        if let (Ok(a), Ok(b)) = (a, b) {
                            if let Ok(dir) = std::env::var("MASM_MUTANT_DUMP") {
                                let _ = std::fs::write(format!("{dir}/differs_{decoded}.mv"), &mutant);
                            }
                            println!(
                                "differs: {}: {:?}",
                                path.display(),
                                first_difference(&a, &b).map(|d| d.chars().take(300).collect::<String>())
                            );
                        }
                    }
                },
                Ok(Assembled::Script(_)) => differ += 1,
                Err(e) => {
                    asm_err += 1;
                    if let Ok(dir) = std::env::var("MASM_MUTANT_DUMP") {
                        let _ = std::fs::write(format!("{dir}/asm_error_{decoded}.mv"), &mutant);
                    }
                    println!("assembly error: {}: {e}", path.display());
                }
            }
        }
    }
    println!(
        "mutants decoded: {decoded}; disassembly errors: {disasm_err}; assembly errors: {asm_err}; \
         equivalent: {equivalent}; different: {differ}"
    );
    assert!(decoded > 100, "too few decodable mutants to mean anything");
}
