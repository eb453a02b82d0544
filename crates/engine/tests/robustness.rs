//! Robustness on real code: every function of the shared corpus (Aptos and
//! Sui framework packages) whose parameters are plain values is called with
//! fixed arguments under a gas budget, on every executor. Every call must
//! end in a result or a typed VM error: never a panic, never a hang; every
//! executor gives what the interpreter gives (status, abort code, location,
//! results, gas); a second run gives the same again, also out of gas
//! midway; and every heap block a run allocates is freed.

use movejit_engine::runtime::flat::live_allocations;
use movejit_engine::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId, StatusCode};
use movejit_engine::{new_engine, Engine, EngineConfig, ExecutorKind};
use movejit_format::{AccountAddress, Flavour, SignatureToken as S};
use movejit_testkit::shared_dir;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The executors compared, the reference (the interpreter) first.
const EXECUTORS: [ExecutorKind; 3] = [ExecutorKind::Interpreter, ExecutorKind::Jit, ExecutorKind::Auto];

fn arg_for(t: &S, sui: bool) -> Option<Vec<u8>> {
    let t = match t {
        S::Reference(i) | S::MutableReference(i) => i,
        t => t,
    };
    Some(match t {
        S::Bool => vec![1],
        S::U8 => vec![7],
        S::U16 => 7u16.to_le_bytes().to_vec(),
        S::U32 => 7u32.to_le_bytes().to_vec(),
        S::U64 => 7u64.to_le_bytes().to_vec(),
        S::U128 => 7u128.to_le_bytes().to_vec(),
        S::U256 => {
            let mut v = vec![7];
            v.resize(32, 0);
            v
        }
        S::Address => AccountAddress::from_u64(0xcafe).0.to_vec(),
        S::Signer => {
            let mut v = if sui { vec![] } else { vec![0] };
            v.extend_from_slice(&AccountAddress::from_u64(0xcafe).0);
            v
        }
        S::Vector(e) if **e == S::U8 => vec![3, 1, 2, 3],
        S::Vector(e) if **e == S::U64 => {
            let mut v = vec![2];
            v.extend_from_slice(&5u64.to_le_bytes());
            v.extend_from_slice(&9u64.to_le_bytes());
            v
        }
        _ => return None,
    })
}

#[test]
fn corpus_functions_never_panic_and_agree_on_every_executor() {
    let root = shared_dir().join("corpus");
    for (flavour_dir, sui) in [("aptos", false), ("sui", true)] {
        let mut storage = InMemoryStorage::default();
        let mut modules = Vec::new();
        for pkg in std::fs::read_dir(root.join(flavour_dir)).expect("corpus dir") {
            let pkg = pkg.expect("entry").path();
            for f in std::fs::read_dir(&pkg).into_iter().flatten().flatten() {
                let p = f.path();
                let Ok(bytes) = std::fs::read(&p) else { continue };
                let Ok(m) = movejit_format::decode_module(&bytes) else { continue };
                let id = ModuleId::new(*m.address(), m.name());
                if storage.modules().contains_key(&id) {
                    continue;
                }
                storage.publish(id.clone(), bytes);
                modules.push((id, m));
            }
        }
        let config = if sui { EngineConfig::sui() } else { EngineConfig::aptos() };
        // One engine per executor for the whole corpus, as a host keeps one.
        let engines: Vec<(ExecutorKind, Engine)> = EXECUTORS
            .iter()
            .map(|&executor| (executor, new_engine(EngineConfig { executor, ..config.clone() })))
            .collect();
        let mut statuses: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut calls = 0;
        let mut differ = Vec::new();
        let mut leaks = Vec::new();
        for (id, m) in &modules {
            assert_eq!(m.flavour == Flavour::Sui, sui && m.flavour != Flavour::Common || m.flavour == Flavour::Sui);
            for (i, fd) in m.function_defs.iter().enumerate() {
                let fh = &m.function_handles[fd.function.idx()];
                if !fh.type_parameters.is_empty() || fd.is_native() {
                    continue;
                }
                let params = &m.signatures[fh.parameters.idx()].0;
                let Some(args) = params.iter().map(|t| arg_for(t, sui)).collect::<Option<Vec<_>>>() else { continue };
                let name = m.function_name(movejit_format::FunctionDefinitionIndex(i as u16)).to_string();
                // No panic; everything observable (status, abort code,
                // location, results, gas) is summarised for comparison.
                let run = |engine: &Engine, budget: u64| {
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        let mut session = engine.new_session(&storage);
                        let mut gas = GasMeter::new(CostTable::default(), budget);
                        let r = session.execute_function(id, &name, &[], &args, &mut gas);
                        (r, gas.used())
                    }));
                    let (r, gas) = r.unwrap_or_else(|_| panic!("{id}::{name} panicked"));
                    let summary = match &r {
                        Ok(x) => format!("ok {:?} {:?} gas {}", x.returns, x.mutrefs, x.gas_used),
                        Err(e) => format!("{} {:?} {:?} gas {gas}", e.status.name(), e.sub_status, e.location),
                    };
                    (r, summary)
                };
                let mut reference: Option<String> = None;
                for (executor, engine) in &engines {
                    let (r, first) = run(engine, 200_000);
                    match &reference {
                        None => {
                            let s = match r {
                                Ok(_) => "EXECUTED",
                                Err(e) => {
                                    assert_ne!(e.status, StatusCode::UNKNOWN_STATUS, "{id}::{name}");
                                    e.status.name()
                                }
                            };
                            *statuses.entry(s).or_default() += 1;
                            reference = Some(first.clone());
                        }
                        Some(want) if *want != first => {
                            differ.push(format!("{id}::{name}: {executor:?} {first} / interpreter {want}"))
                        }
                        Some(_) => {}
                    }
                    // Again (the first run prepared or compiled the code and
                    // its constants, which the engine keeps), also out of
                    // gas midway: the same result, and every heap block it
                    // allocates is freed.
                    for budget in [200_000, 700] {
                        let live = live_allocations();
                        let (_, again) = run(engine, budget);
                        let leaked = live_allocations() - live;
                        if leaked != 0 || (budget == 200_000 && again != first) {
                            leaks.push(format!(
                                "{id}::{name} on {executor:?} (gas {budget}): {leaked} blocks ({again})"
                            ));
                        }
                    }
                }
                calls += 1;
            }
        }
        for d in differ.iter().take(40) {
            eprintln!("DIFFER {d}");
        }
        assert!(differ.is_empty(), "{} calls differ from the interpreter", differ.len());
        assert!(
            leaks.is_empty(),
            "{} calls leak or differ on a second run: {:?}",
            leaks.len(),
            &leaks[..leaks.len().min(20)]
        );
        eprintln!("{flavour_dir}: {calls} calls: {statuses:?}");
        assert!(calls > 100, "the corpus should give many callable functions");
    }
}

/// A dependency chain far longer than any limit (each module uses the
/// next), loaded by a call on a thread with a small stack: the loader walks
/// it without host recursion, so every executor answers instead of
/// overflowing the stack.
#[test]
fn a_long_dependency_chain_loads_on_a_small_stack() {
    const CHAIN: usize = 1500;
    let mut st = InMemoryStorage::default();
    for k in 0..CHAIN {
        let uses = if k + 1 < CHAIN {
            format!(
                "use 0xcafe::m{next}\n    fun f(): u64\n\nfun g(): u64\n    call m{next}::f\n    ret\n\n",
                next = k + 1
            )
        } else {
            String::new()
        };
        let src = format!("version 7\nmodule 0xcafe::m{k}\n{uses}public fun f(): u64\n    ld_u64 {k}\n    ret\n");
        movejit_testkit::masm::publish_masm(&mut st, &src);
    }
    let m0 = ModuleId::new(AccountAddress::from_u64(0xcafe), "m0");
    let run = move || {
        [ExecutorKind::Interpreter, ExecutorKind::Jit, ExecutorKind::Auto].map(|kind| {
            let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
            let mut session = engine.new_session(&st);
            let mut gas = GasMeter::new(CostTable::default(), 1_000_000);
            session.execute_function(&m0, "f", &[], &[], &mut gas).map(|r| r.returns).map_err(|e| e.status)
        })
    };
    let results =
        std::thread::Builder::new().stack_size(256 << 10).spawn(run).expect("a thread").join().expect("no panic");
    for r in results {
        assert_eq!(r, Ok(vec![0u64.to_le_bytes().to_vec()]));
    }
}
