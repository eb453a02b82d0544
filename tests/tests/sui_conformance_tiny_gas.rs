//! The Sui conformance replay (`shared/conformance/sui`: Sui's own VM test
//! suites) through the differential harness: every call task runs on the
//! interpreter and on executor `jit` (or `auto` where `jit` refuses) with the
//! Sui flavour, full budget then tiny budgets; every run must be identical.
//! Publishing follows the replay rules (genesis one module at a time from
//! 0x1, then each test's bundles; a failed publish changes nothing), checked
//! by the engine's own `publish_bundle`. Every call also runs once on
//! executor `auto` (the default) with the full budget: identical too. Agreement with the real Sui VM's
//! results is the interpreter's conformance test; here the status of each
//! call is counted against it for the report.

use movejit_diff::{run_both_with, Case, Executor, JitVerdict, Options, Prepared};
use movejit_engine::{Engine, EngineConfig};
use movejit_format::{decode_module, AccountAddress, CompiledModule, StatusCode, StatusFlavour};
use movejit_runtime::{InMemoryStorage, Type};
use movejit_tests::shared_dir;
use serde_json::Value as Json;

fn strs(j: &Json) -> Vec<String> {
    j.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
}

/// Tiny-gas budgets per call: fewer off x86-64, where CI runs this under qemu.
const GAS_POINTS: u64 = if cfg!(target_arch = "x86_64") { 4 } else { 1 };

#[test]
fn sui_conformance_calls_agree_under_tiny_gas() {
    let dir = shared_dir().join("conformance/sui");
    let read = |p: &str| std::fs::read(dir.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    let engine = Engine::new(EngineConfig::sui());
    // Published modules, in publish order: (bytes, decoded).
    let publish = |store: &mut InMemoryStorage,
                   published: &mut Vec<CompiledModule>,
                   bundle: Vec<Vec<u8>>,
                   sender: AccountAddress| {
        let mut s = engine.new_session(store);
        let ids = s.publish_bundle(&bundle, sender)?;
        drop(s);
        for (id, b) in ids {
            published.push(decode_module(&b).expect("published module decodes"));
            store.publish(id, b);
        }
        Ok::<(), movejit_runtime::VmError>(())
    };
    let genesis: Json =
        serde_json::from_str(&std::fs::read_to_string(dir.join("genesis/genesis.json")).expect("genesis"))
            .expect("json");
    let (mut base, mut base_modules) = (InMemoryStorage::default(), Vec::new());
    for m in strs(&genesis["modules"]) {
        publish(&mut base, &mut base_modules, vec![read(&m)], AccountAddress::from_u64(1)).expect("genesis publishes");
    }

    let text = std::fs::read_to_string(dir.join("tests.jsonl")).expect("tests.jsonl");
    let mut auto_same = 0;
    let (mut calls, mut on_jit, mut mixed, mut interp_only, mut runs, mut oog, mut as_sui) = (0, 0, 0, 0, 0, 0, 0);
    let mut divergences = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let t: Json = serde_json::from_str(line).expect("test json");
        let (mut store, mut published) = (base.clone(), base_modules.clone());
        for task in t["tasks"].as_array().cloned().unwrap_or_default() {
            let action = task["vm_action"].as_str().unwrap_or("none");
            let sender = task["sender"].as_str().and_then(AccountAddress::parse).unwrap_or_default();
            if action == "publish" || action == "publish_and_call" {
                let bundle: Vec<Vec<u8>> = strs(&task["modules"]).iter().map(|p| read(p)).collect();
                if publish(&mut store, &mut published, bundle, sender).is_err() {
                    continue;
                }
            }
            if action != "call" && action != "publish_and_call" {
                continue;
            }
            let f = task["function"].as_str().unwrap_or("");
            let mut parts = f.rsplitn(3, "::");
            let (Some(name), Some(module), Some(addr)) =
                (parts.next(), parts.next(), parts.next().and_then(AccountAddress::parse))
            else {
                continue;
            };
            let Some(type_args) =
                strs(&task["type_args_resolved"]).iter().map(|s| Type::parse_tag(s)).collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let args = strs(&task["call_args_bcs_hex"]).iter().map(|h| hex::decode(h).expect("hex")).collect();
            let case = Case {
                name: format!("{}#{}", t["id"].as_str().unwrap_or(""), task["index"]),
                flavour: StatusFlavour::Sui,
                modules: published.clone(),
                address: addr,
                module: module.to_string(),
                function: name.to_string(),
                type_args,
                args,
            };
            let full_budget = task["gas_budget"].as_u64().unwrap_or(1 << 40);
            let opts = Options { full_budget, gas_points: GAS_POINTS, assume_verified: true, ..Options::default() };
            calls += 1;
            match run_both_with(&case, &opts) {
                Err(d) => divergences.push(format!("{} ({}): {d}", case.name, case.describe())),
                Ok(c) => {
                    runs += c.runs;
                    oog += c.out_of_gas;
                    match c.jit {
                        JitVerdict::Agreed => on_jit += 1,
                        JitVerdict::Mixed(_) => mixed += 1,
                        JitVerdict::Unsupported(_) | JitVerdict::Rejected(_) => interp_only += 1,
                    }
                    let e = &task["expect"];
                    let want_ok = e["ok"].as_bool().unwrap_or(false);
                    let got_ok = c.outcome.status == StatusCode::EXECUTED;
                    let same =
                        got_ok == want_ok && (want_ok || Some(c.outcome.status.name()) == e["major_status"].as_str());
                    as_sui += usize::from(same);
                    // `auto` is the default executor: identical on every call,
                    // whether or not `jit` compiles it whole.
                    match Prepared::new(Executor::Auto, &case).run(full_budget) {
                        Ok(a) if c.outcome.first_difference(&a).is_none() => auto_same += 1,
                        other => divergences.push(format!("{} on auto: {other:?} vs interp {}", case.name, c.outcome)),
                    }
                }
            }
        }
    }
    println!(
        "{calls} Sui calls: compared on jit {on_jit}, on auto {mixed}, interpreter only {interp_only}; {runs} executions ({oog} out of gas); status as the real Sui VM in {as_sui}; auto identical on {auto_same}"
    );
    for d in divergences.iter().take(20) {
        println!("DIVERGENCE {d}");
    }
    assert!(calls > 300, "only {calls} calls");
    assert!(on_jit + mixed > 50, "too few calls compared on compiled code");
    assert!(divergences.is_empty(), "{} divergences", divergences.len());
}
