//! Runs the Aptos conformance cases of the scalar families under the JIT and
//! compares status, abort code, location and returns with what the real
//! Aptos VM gave (`../shared/conformance/aptos/cases.jsonl`).
//!
//! A case whose function (or a callee) uses values the JIT does not lower
//! yet is counted as "not compiled" and reported; every case that compiles
//! must match exactly.

use movejit_format::{decode_module, AccountAddress, StatusCode};
use movejit_jit::{CompileError, ExecError, JitConfig, JitEngine};
use movejit_runtime::Type;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn conformance_dir() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join("../shared/conformance/aptos")
}

#[derive(Default, Debug)]
struct Tally {
    passed: usize,
    not_compiled: usize,
    failed: Vec<String>,
}

/// Runs every case of `programs`; returns per-family tallies.
fn run_programs(programs: &[&str], config: &JitConfig) -> BTreeMap<String, Tally> {
    let dir = conformance_dir();
    let text = std::fs::read_to_string(dir.join("cases.jsonl")).expect("cases.jsonl readable");
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut engines: BTreeMap<Vec<String>, JitEngine> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).expect("valid JSON case");
        let program = case["program"].as_str().unwrap_or_default();
        if !programs.contains(&program) {
            continue;
        }
        let id = case["id"].as_str().unwrap_or_default().to_string();
        let tally = tallies.entry(program.to_string()).or_default();
        let modules: Vec<String> =
            case["modules"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
        let engine = engines.entry(modules.clone()).or_insert_with(|| {
            let mut e = JitEngine::new(config.clone()).expect("engine");
            for m in &modules {
                let bytes = std::fs::read(dir.join(m)).expect("module file");
                let module = decode_module(&bytes).expect("module decodes");
                e.add_module(module).expect("module added");
            }
            e
        });
        let func = case["function"].as_str().unwrap();
        let mut parts = func.split("::");
        let (addr, mname, fname) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let addr = AccountAddress::parse(addr).unwrap();
        let midx = engine.module_index(&addr, mname).expect("called module published");
        let mut targs = Vec::new();
        let mut scalar_targs = true;
        for t in case["type_args"].as_array().unwrap() {
            match Type::parse_tag(t.as_str().unwrap()) {
                Some(k) => targs.push(k),
                None => scalar_targs = false,
            }
        }
        if !scalar_targs {
            tally.not_compiled += 1;
            continue;
        }
        let key = engine.instance_key(midx, fname, &targs).expect("function exists");
        let args: Vec<Vec<u8>> =
            case["args"].as_array().unwrap().iter().map(|a| hex::decode(a.as_str().unwrap()).unwrap()).collect();
        let out = match engine.execute(&key, &args, None) {
            Ok(o) => o,
            Err(ExecError::Compile(CompileError::Unsupported(_))) => {
                tally.not_compiled += 1;
                continue;
            }
            Err(e) => {
                tally.failed.push(format!("{id}: {e}"));
                continue;
            }
        };
        let expect = &case["expect"];
        let want_status = StatusCode::from_name(expect["status"].as_str().unwrap()).unwrap();
        let mut problems = Vec::new();
        if out.status != want_status {
            problems.push(format!("status {:?} != {:?}", out.status, want_status));
        }
        if let Some(code) = expect.get("abort_code").and_then(|c| c.as_u64()) {
            if out.abort_code != Some(code) {
                problems.push(format!("abort code {:?} != {code}", out.abort_code));
            }
        }
        if let Some(loc) = expect.get("location").and_then(|l| l.as_str()) {
            let got = out.location.as_ref().map(|l| {
                let m = engine.module(l.module).unwrap();
                (format!("{}::{}", m.address().to_hex_short(), m.name()), l.function as u64, l.code_offset as u64)
            });
            let want = (
                loc.to_string(),
                expect["function_index"].as_u64().unwrap_or(u64::MAX),
                expect["code_offset"].as_u64().unwrap_or(u64::MAX),
            );
            if got.as_ref() != Some(&want) {
                problems.push(format!("location {got:?} != {want:?}"));
            }
        }
        if want_status == StatusCode::EXECUTED {
            let want: Vec<String> =
                expect["returns"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
            let got: Vec<String> = out.returns.iter().map(hex::encode).collect();
            if got != want {
                problems.push(format!("returns {got:?} != {want:?}"));
            }
        }
        if problems.is_empty() {
            tally.passed += 1;
        } else {
            tally.failed.push(format!("{id}: {}", problems.join("; ")));
        }
    }
    tallies
}

#[test]
fn scalar_families_match_the_aptos_vm() {
    let programs = ["int_ops", "uint_ops", "casts", "flow", "recursion"];
    // Both code tiers (`JitConfig::baseline_above`).
    for (tier, baseline_above) in [("optimizing", usize::MAX), ("baseline", 0)] {
        let config = JitConfig { baseline_above, ..JitConfig::default() };
        let tallies = run_programs(&programs, &config);
        check_tallies(tier, &programs, &tallies);
    }
}

fn check_tallies(tier: &str, programs: &[&str], tallies: &BTreeMap<String, Tally>) {
    let mut failures = Vec::new();
    for (program, t) in tallies {
        println!(
            "{tier} tier, {program}: {} passed, {} not compiled (non-scalar values), {} failed",
            t.passed,
            t.not_compiled,
            t.failed.len()
        );
        for f in &t.failed {
            println!("  FAIL {f}");
        }
        failures.extend(t.failed.iter().cloned());
        assert!(t.passed > 0, "{program}: no case ran");
    }
    assert_eq!(tallies.len(), programs.len(), "every program has cases");
    assert!(failures.is_empty(), "{tier} tier: {} cases differ from the Aptos VM", failures.len());
}

/// Why cases are not compiled, by reason (run with `--ignored --nocapture`).
#[test]
#[ignore = "survey for humans"]
fn why_not_compiled() {
    let dir = conformance_dir();
    let text = std::fs::read_to_string(dir.join("cases.jsonl")).expect("cases.jsonl readable");
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut engines: BTreeMap<Vec<String>, JitEngine> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).expect("valid JSON case");
        let modules: Vec<String> =
            case["modules"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
        let engine = engines.entry(modules.clone()).or_insert_with(|| {
            let mut e = JitEngine::new(JitConfig::default()).expect("engine");
            for m in &modules {
                let module = decode_module(&std::fs::read(dir.join(m)).expect("module file")).expect("decodes");
                e.add_module(module).expect("module added");
            }
            e
        });
        let func = case["function"].as_str().unwrap();
        let mut parts = func.split("::");
        let (addr, mname, fname) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let Some(midx) = engine.module_index(&AccountAddress::parse(addr).unwrap(), mname) else { continue };
        let targs: Option<Vec<Type>> =
            case["type_args"].as_array().unwrap().iter().map(|t| Type::parse_tag(t.as_str().unwrap())).collect();
        let Some(targs) = targs else { continue };
        let Ok(key) = engine.instance_key(midx, fname, &targs) else { continue };
        if let Err(e) = engine.compile(&key) {
            let r = e.to_string();
            let r = r.split(" of type").next().unwrap_or(&r).chars().take(70).collect::<String>();
            *reasons.entry(r).or_default() += 1;
        }
    }
    for (r, n) in &reasons {
        println!("{n:5}  {r}");
    }
}
