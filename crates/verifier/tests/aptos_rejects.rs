//! The Aptos reject suite (`shared/verifier/aptos/rejects.jsonl`): modules
//! the real Aptos VM refused to publish. We must reject each with the same
//! major status. Cases we knowingly disagree on are listed in
//! `KNOWN_DISAGREEMENTS` with the reason; the test fails if any other case
//! disagrees (a regression) or if a listed case starts agreeing (so the
//! list stays honest).

mod common;

use common::*;
use movejit_format::{decode_module, CompiledModule, StatusCode};
use movejit_verifier::VerifierConfig;
use std::collections::BTreeMap;

/// (case id, what we give instead, why).
const KNOWN_DISAGREEMENTS: &[(&str, &str)] = &[];

/// What our pipeline says about publishing `modules` on top of `deps`:
/// None if accepted, else the first status.
fn publish(deps: &[CompiledModule], modules: &[CompiledModule], config: &VerifierConfig) -> Option<StatusCode> {
    let deps: Vec<&CompiledModule> = deps.iter().collect();
    let modules: Vec<&CompiledModule> = modules.iter().collect();
    movejit_verifier::publish::publish(&deps, &modules, config).err().map(|e| e.status)
}

#[test]
fn aptos_rejects_agree() {
    let root = shared_dir().join("verifier/aptos");
    let text = std::fs::read_to_string(root.join("rejects.jsonl")).expect("rejects.jsonl");
    let config = VerifierConfig::aptos();
    let (mut agree, mut total) = (0, 0);
    let mut unexpected = Vec::new();
    let mut by_status: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: serde_json::Value = serde_json::from_str(line).expect("json");
        let id = case["id"].as_str().unwrap_or_default().to_string();
        let expect = case["expect_status"].as_str().unwrap_or_default().to_string();
        let paths = |k: &str| -> Vec<std::path::PathBuf> {
            case[k].as_array().into_iter().flatten().filter_map(|p| p.as_str()).map(|p| root.join(p)).collect()
        };
        total += 1;
        let mut got: Option<String> = None;
        let mut deps = Vec::new();
        for p in paths("deps") {
            deps.push(load(&p));
        }
        let mut modules = Vec::new();
        for p in paths("modules") {
            match decode_module(&std::fs::read(&p).expect("read")) {
                Ok(m) => modules.push(m),
                Err(e) => {
                    got = Some(e.status.name().to_string());
                    break;
                }
            }
        }
        if got.is_none() {
            got = publish(&deps, &modules, &config).map(|s| s.name().to_string());
        }
        let got = got.unwrap_or_else(|| "ACCEPTED".to_string());
        let e = by_status.entry(expect.clone()).or_default();
        e.1 += 1;
        let known = KNOWN_DISAGREEMENTS.iter().any(|(k, _)| *k == id);
        if got == expect {
            agree += 1;
            e.0 += 1;
            if known {
                unexpected.push(format!("{id}: now agrees ({expect}); remove it from KNOWN_DISAGREEMENTS"));
            }
        } else if !known {
            unexpected.push(format!("{id}: expected {expect}, got {got}"));
        }
    }
    eprintln!("aptos rejects: {agree}/{total} agree");
    for (s, (a, t)) in &by_status {
        if a != t {
            eprintln!("  {s}: {a}/{t}");
        }
    }
    for u in &unexpected {
        eprintln!("{u}");
    }
    assert!(unexpected.is_empty(), "{} unexpected outcomes", unexpected.len());
}
