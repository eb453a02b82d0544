//! Metered execution: the JIT and the reference interpreter, both on the
//! runtime's default cost table, must agree on status, error location and
//! gas used for every scalar conformance case, with a budget that suffices
//! and with budgets that run out at many different points (inside blocks,
//! at calls, after an instruction that aborts first).

use movejit_engine::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId};
use movejit_engine::{Engine, EngineConfig};
use movejit_format::{decode_module, AccountAddress, StatusCode};
use movejit_jit::{CompileError, ExecError, JitConfig, JitEngine};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn conformance_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos")
}

/// (status, location (module name, function, offset), gas used)
type Observed = (StatusCode, Option<(String, u16, u16)>, u64);

#[test]
fn gas_used_and_out_of_gas_locations_match_the_interpreter() {
    let dir = conformance_dir();
    let text = std::fs::read_to_string(dir.join("cases.jsonl")).expect("cases.jsonl");
    let programs = ["int_ops", "uint_ops", "casts", "flow", "recursion"];
    let interp = Engine::new(EngineConfig::aptos());
    let mut jits: BTreeMap<Vec<String>, (JitEngine, InMemoryStorage)> = BTreeMap::new();
    let (mut compared, mut out_of_gas, mut failures) = (0usize, 0usize, Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        if !programs.contains(&case["program"].as_str().unwrap()) || !case["type_args"].as_array().unwrap().is_empty() {
            continue;
        }
        let id = case["id"].as_str().unwrap().to_string();
        let modules: Vec<String> =
            case["modules"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().into()).collect();
        let (jit, storage) = jits.entry(modules.clone()).or_insert_with(|| {
            let config = JitConfig { cost: Some(CostTable::default()), ..JitConfig::default() };
            let mut jit = JitEngine::new(config).unwrap();
            let mut storage = InMemoryStorage::default();
            for m in &modules {
                let bytes = std::fs::read(dir.join(m)).unwrap();
                let module = decode_module(&bytes).unwrap();
                storage.publish(ModuleId::new(*module.address(), module.name()), bytes);
                jit.add_module(module).unwrap();
            }
            (jit, storage)
        });
        let func = case["function"].as_str().unwrap();
        let parts: Vec<&str> = func.split("::").collect();
        let addr = AccountAddress::parse(parts[0]).unwrap();
        let midx = jit.module_index(&addr, parts[1]).unwrap();
        let key = jit.instance_key(midx, parts[2], &[]).unwrap();
        let args: Vec<Vec<u8>> =
            case["args"].as_array().unwrap().iter().map(|a| hex::decode(a.as_str().unwrap()).unwrap()).collect();

        let run_interp = |budget: u64| -> Observed {
            let mut session = interp.new_session(storage);
            let mut gas = GasMeter::new(CostTable::default(), budget);
            let r = session.execute_function(&ModuleId::new(addr, parts[1]), parts[2], &[], &args, &mut gas);
            match r {
                Ok(_) => (StatusCode::EXECUTED, None, gas.used()),
                Err(e) => {
                    let loc = e
                        .location
                        .map(|l| (l.module.rsplit("::").next().unwrap().to_string(), l.function_index, l.code_offset));
                    (e.status, loc, gas.used())
                }
            }
        };
        let mut run_jit = |budget: u64| -> Option<Observed> {
            match jit.execute(&key, &args, Some(budget)) {
                Err(ExecError::Compile(CompileError::Unsupported(_))) => None,
                Err(e) => panic!("{id}: {e}"),
                Ok(o) => {
                    let loc = o
                        .location
                        .map(|l| (jit.module(l.module).unwrap().name().to_string(), l.function, l.code_offset));
                    Some((o.status, loc, budget - o.gas_left.unwrap()))
                }
            }
        };
        let Some(full) = run_jit(1 << 40) else { continue };
        let want = run_interp(1 << 40);
        let mut budgets = vec![0, 1, 5, 10, 11, 12, 23, 31];
        let used = want.2;
        budgets.extend([used / 3, used / 2, used.saturating_sub(1), used.saturating_sub(2), used]);
        budgets.sort();
        budgets.dedup();
        let mut check = |budget: u64, got: Observed, want: Observed| {
            compared += 1;
            if want.0 == StatusCode::OUT_OF_GAS {
                out_of_gas += 1;
            }
            if got != want {
                failures.push(format!("{id} budget {budget}: jit {got:?} interp {want:?}"));
            }
        };
        check(1 << 40, full, want);
        for b in budgets {
            let got = run_jit(b).unwrap();
            check(b, got, run_interp(b));
        }
    }
    println!("{compared} metered runs compared ({out_of_gas} out of gas), {} differ", failures.len());
    for f in failures.iter().take(40) {
        println!("  {f}");
    }
    assert!(compared > 5000 && out_of_gas > 1000, "too few runs compared");
    assert!(failures.is_empty());
}
