//! Sui's bytecode-verifier suite (`shared/verifier/sui`): every publish task
//! replayed against a fresh store seeded with the suite's genesis modules.
//! Outcome must match: accepted, or rejected with the same major status.
//! Known disagreements are listed with reasons; the test fails on any other
//! disagreement and on a listed case that starts to agree.

mod common;

use common::*;
use movejit_format::{decode_module, AccountAddress, CompiledModule};
use movejit_verifier::{dependencies::module_id, verify_module, NativeTable, VerifierConfig};
use std::collections::BTreeMap;

/// (test id, task index, why we differ).
const KNOWN_DISAGREEMENTS: &[(&str, usize, &str)] = &[];

type Store = BTreeMap<(AccountAddress, String), CompiledModule>;

/// Publishes `paths` as one bundle; Ok(new modules) or the first status.
fn publish(
    store: &Store,
    paths: &[std::path::PathBuf],
    sender: Option<AccountAddress>,
    config: &VerifierConfig,
) -> Result<Vec<CompiledModule>, String> {
    let mut bundle = Vec::new();
    for p in paths {
        let bytes = std::fs::read(p).map_err(|e| format!("read: {e}"))?;
        bundle.push(decode_module(&bytes).map_err(|e| e.status.name().to_string())?);
    }
    if let Some(s) = sender {
        if bundle.iter().any(|m| module_id(m).map(|id| id.0) != Some(s)) {
            return Err("MODULE_ADDRESS_DOES_NOT_MATCH_SENDER".into());
        }
    }
    let mut names = std::collections::BTreeSet::new();
    if !bundle.iter().all(|m| names.insert(module_id(m))) {
        return Err("DUPLICATE_MODULE_NAME".into());
    }
    for (i, m) in bundle.iter().enumerate() {
        // Earlier bundle members, then the store.
        let mut deps: Vec<&CompiledModule> = bundle[..i].iter().collect();
        deps.extend(store.values());
        verify_module(m, &deps, config).map_err(|e| e.status.name().to_string())?;
    }
    Ok(bundle)
}

#[test]
fn sui_suite_publishes_agree() {
    replay("verifier/sui", KNOWN_DISAGREEMENTS);
}

/// The Sui VM suites in `conformance/sui` publish modules too; every publish
/// outcome there must match as well.
#[test]
fn sui_conformance_publishes_agree() {
    replay("conformance/sui", KNOWN_CONFORMANCE_DISAGREEMENTS);
}

/// (test id, task index, why we differ) for `conformance/sui`.
const KNOWN_CONFORMANCE_DISAGREEMENTS: &[(&str, usize, &str)] = &[];

fn replay(rel: &str, known_list: &[(&str, usize, &str)]) {
    let root = shared_dir().join(rel);
    let genesis: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("genesis/genesis.json")).expect("genesis"))
            .expect("json");
    let mut base = Store::new();
    for p in genesis["modules"].as_array().expect("modules") {
        let m = load(&root.join(p.as_str().expect("path")));
        let id = module_id(&m).expect("id");
        base.insert(id, m);
    }
    // The reference VM's native table is move-stdlib-natives at 0x1: the
    // natives the genesis stdlib declares. A module defining any other
    // native is refused at publish (MISSING_DEPENDENCY).
    let natives: NativeTable = base
        .values()
        .flat_map(|m| {
            m.function_defs.iter().filter(|f| f.code.is_none()).map(move |f| {
                (*m.address(), m.name().to_string(), m.identifier_at(m.function_handle_at(f.function).name).to_string())
            })
        })
        .collect();
    assert!(natives.len() > 20, "genesis declares the stdlib natives");
    let config = VerifierConfig { known_natives: Some(std::sync::Arc::new(natives)), ..VerifierConfig::sui() };
    let text = std::fs::read_to_string(root.join("tests.jsonl")).expect("tests.jsonl");
    let (mut agree, mut total) = (0, 0);
    let mut unexpected = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let test: serde_json::Value = serde_json::from_str(line).expect("json");
        let id = test["id"].as_str().unwrap_or_default().to_string();
        let mut store = base.clone();
        for task in test["tasks"].as_array().into_iter().flatten() {
            let action = task["vm_action"].as_str().unwrap_or_default();
            if action != "publish" && action != "publish_and_call" {
                continue;
            }
            let index = task["index"].as_u64().unwrap_or(0) as usize;
            let paths: Vec<_> = task["modules"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_str())
                .map(|p| root.join(p))
                .collect();
            let sender = task["sender"].as_str().and_then(AccountAddress::parse);
            let expect = &task["expect"];
            let expected = if expect["ok"].as_bool() == Some(true) || expect["stage"].as_str() != Some("publish") {
                "ACCEPTED".to_string()
            } else {
                expect["major_status"].as_str().unwrap_or("?").to_string()
            };
            let got = match publish(&store, &paths, sender, &config) {
                Ok(mods) => {
                    for m in mods {
                        if let Some(id) = module_id(&m) {
                            store.insert(id, m);
                        }
                    }
                    "ACCEPTED".to_string()
                }
                Err(s) => s,
            };
            total += 1;
            let known = known_list.iter().any(|(t, i, _)| *t == id && *i == index);
            if got == expected {
                agree += 1;
                if known {
                    unexpected.push(format!("{id} task {index}: now agrees; remove from KNOWN_DISAGREEMENTS"));
                }
            } else if !known {
                unexpected.push(format!("{id} task {index}: expected {expected}, got {got}"));
            }
        }
    }
    eprintln!("{rel}: {agree}/{total} publish tasks agree");
    for u in &unexpected {
        eprintln!("{u}");
    }
    assert!(unexpected.is_empty(), "{} unexpected outcomes", unexpected.len());
}
