//! Robustness: truncations and single-byte mutations of real modules must
//! give `Ok` or a typed error, never a panic; whatever decodes must survive
//! serialize → decode unchanged.

mod common;

use movejit_format::{decode_module, serialize_module};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in ["corpus/aptos", "corpus/sui", "corpus/versions", "corpus/aptos-calibration", "corpus/aptos-workloads"] {
        for p in common::mv_files(&common::shared_dir().join(dir)) {
            if !common::is_script(&p) {
                let b = std::fs::read(&p).unwrap();
                out.push((p, b));
            }
        }
    }
    out
}

#[derive(Default, Debug)]
struct Outcome {
    ok: usize,
    err: usize,
}

/// Decodes `bytes`; a panic fails the test with the input that caused it.
fn check(bytes: &[u8], what: &str, out: &mut Outcome) {
    let r = catch_unwind(AssertUnwindSafe(|| decode_module(bytes)));
    match r {
        Err(_) => panic!("decoder panicked on {what}"),
        Ok(Ok(m)) => {
            out.ok += 1;
            let again = serialize_module(&m);
            let m2 = decode_module(&again).unwrap_or_else(|e| panic!("{what}: re-decode failed: {e}"));
            assert_eq!(m, m2, "{what}: serialize/decode changed the model");
        }
        Ok(Err(e)) => {
            out.err += 1;
            assert!(e.offset <= bytes.len(), "{what}: error offset {} past {} bytes", e.offset, bytes.len());
        }
    }
}

#[test]
fn every_truncation_of_small_modules_and_a_sample_of_large_ones() {
    let mut modules = corpus();
    modules.sort_by_key(|(_, b)| b.len());
    let mut out = Outcome::default();
    // Every prefix of the 3 smallest modules of each version word (so every
    // version and both flavours, Sui v7 jump tables included).
    let mut every = 0;
    let mut per_word: std::collections::BTreeMap<[u8; 4], usize> = Default::default();
    for (p, b) in &modules {
        let word: [u8; 4] = b[4..8].try_into().unwrap();
        let seen = per_word.entry(word).or_default();
        if *seen == 3 {
            continue;
        }
        *seen += 1;
        for n in 0..b.len() {
            check(&b[..n], &format!("{} truncated to {n}", p.display()), &mut out);
            every += 1;
        }
    }
    assert_eq!(per_word.len(), 7, "v5, v6, Aptos v7..v10 and Sui v7 words: {per_word:?}");
    // 64 cut points in each of 40 modules spread over the size range.
    let mut rng = common::SplitMix(0x5EED_0001);
    let step = (modules.len() / 40).max(1);
    let mut sampled = 0;
    for (p, b) in modules.iter().step_by(step) {
        for _ in 0..64 {
            let n = rng.below(b.len());
            check(&b[..n], &format!("{} truncated to {n}", p.display()), &mut out);
            sampled += 1;
        }
    }
    println!("truncations: {every} exhaustive + {sampled} sampled; ok {}, typed errors {}", out.ok, out.err);
    // A strict prefix never decodes: the tail field is always needed.
    assert_eq!(out.ok, 0);
}

#[test]
fn seeded_single_byte_mutations_never_panic() {
    let modules = corpus();
    let mut rng = common::SplitMix(0x5EED_0002);
    let mut out = Outcome::default();
    const MUTATIONS: usize = 20_000;
    for i in 0..MUTATIONS {
        let (p, b) = &modules[rng.below(modules.len())];
        let mut m = b.clone();
        let pos = rng.below(m.len());
        let old = m[pos];
        m[pos] = match i % 4 {
            0 => old ^ (1 << rng.below(8)),
            1 => rng.next() as u8,
            2 => old.wrapping_add(1),
            _ => [0x00, 0x7F, 0x80, 0xFF][rng.below(4)],
        };
        check(&m, &format!("{} byte {pos} {old:#04x}->{:#04x}", p.display(), m[pos]), &mut out);
    }
    println!("mutations: {MUTATIONS}; still decode {}, typed errors {}", out.ok, out.err);
    assert_eq!(out.ok + out.err, MUTATIONS);
    assert!(out.err > MUTATIONS / 10, "mutations should mostly be caught");
}
