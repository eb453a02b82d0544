//! `shared/conformance/aptos`: the modules behind 2,441 calls on the real
//! Aptos VM. Modules of cases the VM ran must verify; the four cases the VM
//! refused with UNEXPECTED_VERIFIER_ERROR (a verification failure at load
//! time) must be rejected at the same function and code offset.

mod common;

use common::*;
use movejit_verifier::{verify_module, Location, VerifierConfig};
use std::collections::BTreeMap;

#[test]
fn aptos_conformance_modules_agree() {
    let root = shared_dir().join("conformance/aptos");
    let text = std::fs::read_to_string(root.join("cases.jsonl")).expect("cases.jsonl");
    // Module set (publish order) -> expected verifier outcome of its last module.
    let mut sets: BTreeMap<Vec<String>, Option<(u16, u16)>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: serde_json::Value = serde_json::from_str(line).expect("json");
        let mods: Vec<String> =
            case["modules"].as_array().into_iter().flatten().filter_map(|m| m.as_str()).map(String::from).collect();
        let expect = &case["expect"];
        let reject = (expect["status"].as_str() == Some("UNEXPECTED_VERIFIER_ERROR")).then(|| {
            (expect["function_index"].as_u64().unwrap_or(0) as u16, expect["code_offset"].as_u64().unwrap_or(0) as u16)
        });
        sets.insert(mods, reject);
    }
    let config = VerifierConfig::aptos();
    let (mut agree, mut rejected) = (0, 0);
    for (mods, reject) in &sets {
        let loaded: Vec<_> = mods.iter().map(|p| load(&root.join(p))).collect();
        let deps: Vec<_> = loaded.iter().collect();
        let mut outcome = None;
        for m in &loaded {
            if let Err(e) = verify_module(m, &deps, &config) {
                outcome = Some(e);
                break;
            }
        }
        match (reject, outcome) {
            (None, None) => agree += 1,
            (Some((f, off)), Some(e)) => {
                assert_eq!(e.location, Location::Function { index: *f, code_offset: Some(*off) }, "{mods:?}: {e}");
                agree += 1;
                rejected += 1;
            }
            (r, o) => panic!("{mods:?}: expected {r:?}, got {o:?}"),
        }
    }
    eprintln!("aptos conformance: {agree}/{} module sets agree ({rejected} rejected as the VM did)", sets.len());
}
