//! Cross-check against the real VMs' publish results in shared/verifier:
//! whatever our decoder (with bounds check) rejects, the real VM must have
//! rejected with the same status; whatever the real VM published must decode.

mod common;

use movejit_format::decode_module;
use std::path::Path;

fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("read jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("valid json line"))
        .collect()
}

/// Decodes `modules` (paths relative to `base`); returns the first error.
fn first_decode_error(base: &Path, modules: &[serde_json::Value]) -> Option<(String, movejit_format::FormatError)> {
    for m in modules {
        let rel = m.as_str().expect("module path");
        let bytes = std::fs::read(base.join(rel)).expect("read module");
        if let Err(e) = decode_module(&bytes) {
            return Some((rel.to_string(), e));
        }
    }
    None
}

#[derive(Default)]
struct Counts {
    cases: usize,
    decoded_ok: usize,
    rejected_same_status: usize,
}

#[test]
fn aptos_rejects_agree_with_our_decoder() {
    let base = common::shared_dir().join("verifier/aptos");
    let mut c = Counts::default();
    let mut problems = Vec::new();
    for case in json_lines(&base.join("rejects.jsonl")) {
        c.cases += 1;
        let id = case["id"].as_str().unwrap_or("?");
        let expect = case["expect_status"].as_str().expect("expect_status");
        // Dependencies were published successfully: they must decode.
        if let Some((m, e)) = first_decode_error(&base, case["deps"].as_array().expect("deps")) {
            problems.push(format!("{id}: dependency {m} was published by Aptos but we reject it: {e}"));
        }
        match first_decode_error(&base, case["modules"].as_array().expect("modules")) {
            None => c.decoded_ok += 1,
            Some((_, e)) if e.status.name() == expect => c.rejected_same_status += 1,
            Some((m, e)) => problems.push(format!("{id}: {m}: Aptos said {expect}, we say {e}")),
        }
    }
    println!(
        "aptos rejects: {} cases, {} decode (verifier's job), {} rejected by us with the VM's status",
        c.cases, c.decoded_ok, c.rejected_same_status
    );
    assert!(c.cases > 0);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn sui_verifier_suite_agrees_with_our_decoder() {
    sui_suite_agrees("verifier/sui");
}

#[test]
fn sui_vm_conformance_suite_agrees_with_our_decoder() {
    sui_suite_agrees("conformance/sui");
}

/// Both Sui folders use the same replay format (see their READMEs).
fn sui_suite_agrees(folder: &str) {
    let base = common::shared_dir().join(folder);
    let mut c = Counts::default();
    let mut problems = Vec::new();
    let mut published_ok = 0;
    for test in json_lines(&base.join("tests.jsonl")) {
        let id = test["id"].as_str().unwrap_or("?");
        for task in test["tasks"].as_array().expect("tasks") {
            if task["kind"] != "publish" {
                continue;
            }
            let Some(modules) = task["modules"].as_array() else {
                continue;
            };
            let expect = &task["expect"];
            if expect["stage"] == "compile" {
                continue;
            }
            c.cases += 1;
            let err = first_decode_error(&base, modules);
            if expect["ok"] == true {
                published_ok += 1;
                if let Some((m, e)) = err {
                    problems.push(format!("{id}: {m} published fine on Sui but we reject it: {e}"));
                }
                continue;
            }
            let status = expect["major_status"].as_str().unwrap_or("?");
            match err {
                None => c.decoded_ok += 1,
                Some((_, e)) if e.status.name() == status => c.rejected_same_status += 1,
                Some((m, e)) => problems.push(format!("{id}: {m}: Sui said {status}, we say {e}")),
            }
        }
    }
    println!(
        "{folder}: {} publishes ({} accepted by Sui, all decode), {} rejected by Sui that we decode, {} we reject with Sui's status",
        c.cases, published_ok, c.decoded_ok, c.rejected_same_status
    );
    assert!(c.cases > 0);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
