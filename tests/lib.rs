//! movejit-tests: executor tests that span crates. Every case here runs on
//! both executors through movejit-diff's harness (full budget and tiny-gas
//! reruns); the test files live in `tests/`.
//!
//! This library only loads shared reference data into [`movejit_diff::Case`]s.

#![forbid(unsafe_code)]

pub mod opcode_table;

use movejit_diff::Case;
use movejit_format::{decode_module, AccountAddress, StatusFlavour};
use movejit_runtime::Type;
use std::path::PathBuf;

/// `/work/shared`, seen from the workspace root (`../shared`).
pub fn shared_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// The Aptos conformance cases (`shared/conformance/aptos/cases.jsonl`) as
/// diff cases, with their family; cases whose files or type arguments
/// cannot be read are returned as errors (id, reason).
/// (family, case) pairs, and (id, reason) of cases that could not be read.
pub type LoadedCases = (Vec<(String, Case)>, Vec<(String, String)>);

pub fn aptos_conformance_cases() -> LoadedCases {
    let dir = shared_dir().join("conformance/aptos");
    let text = std::fs::read_to_string(dir.join("cases.jsonl")).unwrap_or_default();
    let (mut cases, mut bad) = (Vec::new(), Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(j) = serde_json::from_str::<serde_json::Value>(line) else {
            bad.push((line.chars().take(40).collect(), "json".into()));
            continue;
        };
        let id = j["id"].as_str().unwrap_or_default().to_string();
        let strs = |k: &str| -> Vec<String> {
            j[k].as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
        };
        match case_of(
            &dir,
            &id,
            &strs("modules"),
            j["function"].as_str().unwrap_or_default(),
            &strs("type_args"),
            &strs("args"),
        ) {
            Ok(c) => cases.push((j["family"].as_str().unwrap_or_default().to_string(), c)),
            Err(e) => bad.push((id, e)),
        }
    }
    (cases, bad)
}

fn case_of(
    dir: &std::path::Path,
    id: &str,
    modules: &[String],
    function: &str,
    type_args: &[String],
    args: &[String],
) -> Result<Case, String> {
    let mut ms = Vec::new();
    for m in modules {
        let bytes = std::fs::read(dir.join(m)).map_err(|e| format!("{m}: {e}"))?;
        ms.push(decode_module(&bytes).map_err(|e| format!("{m}: {}", e.message))?);
    }
    let parts: Vec<&str> = function.split("::").collect();
    let [addr, module, name] = parts[..] else { return Err(format!("function {function}")) };
    let address = AccountAddress::parse(addr).ok_or_else(|| format!("address {addr}"))?;
    let type_args = type_args
        .iter()
        .map(|t| Type::parse_tag(t).ok_or_else(|| format!("type {t}")))
        .collect::<Result<Vec<_>, _>>()?;
    let args = args.iter().map(|a| hex::decode(a).map_err(|e| e.to_string())).collect::<Result<Vec<_>, _>>()?;
    Ok(Case {
        name: id.to_string(),
        flavour: StatusFlavour::Aptos,
        modules: ms,
        address,
        module: module.to_string(),
        function: name.to_string(),
        type_args,
        args,
    })
}

/// One Aptos conformance case by id.
pub fn aptos_case(id: &str) -> Case {
    let (cases, _) = aptos_conformance_cases();
    match cases.into_iter().find(|(_, c)| c.name == id) {
        Some((_, c)) => c,
        None => panic!("no conformance case {id}"),
    }
}
