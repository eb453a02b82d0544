//! Engine API tests on real modules: sessions on parallel threads over one
//! engine, gas metering, the change set of global-storage calls, and error
//! reporting for bad calls.

use movejit_engine::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId, StatusCode, WriteOp};
use movejit_engine::{Engine, EngineConfig};
use movejit_format::AccountAddress;
use movejit_testkit::shared_dir;

fn storage_with(dirs: &[&str]) -> InMemoryStorage {
    let mut s = InMemoryStorage::default();
    for d in dirs {
        let dir = shared_dir().join("conformance/aptos/modules").join(d);
        for e in std::fs::read_dir(&dir).expect("module dir") {
            let p = e.expect("entry").path();
            let bytes = std::fs::read(&p).expect("read");
            let m = movejit_format::decode_module(&bytes).expect("decode");
            s.publish(ModuleId::new(*m.address(), m.name()), bytes);
        }
    }
    s
}

fn cafe(m: &str) -> ModuleId {
    ModuleId::new(AccountAddress::from_u64(0xcafe), m)
}

#[test]
fn sessions_run_in_parallel_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Engine>();
    let engine = Engine::new(EngineConfig::aptos());
    let storage = storage_with(&["stdlib3p", "recursion"]);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u64)
            .map(|i| {
                let (engine, storage) = (&engine, &storage);
                s.spawn(move || {
                    let n = 15 + i;
                    let mut session = engine.new_session(storage);
                    let mut gas = GasMeter::unmetered();
                    let r = session
                        .execute_function(&cafe("recursion"), "fib", &[], &[n.to_le_bytes().to_vec()], &mut gas)
                        .expect("fib runs");
                    let got = u64::from_le_bytes(r.returns[0].clone().try_into().expect("u64"));
                    let (mut a, mut b) = (0u64, 1u64);
                    for _ in 0..n {
                        (a, b) = (b, a + b);
                    }
                    assert_eq!(got, a, "fib({n})");
                })
            })
            .collect();
        for h in handles {
            h.join().expect("thread");
        }
    });
}

#[test]
fn gas_is_charged_and_exhausted_deterministically() {
    let engine = Engine::new(EngineConfig::aptos());
    let storage = storage_with(&["stdlib3p", "recursion"]);
    let run = |budget: Option<u64>| {
        let mut session = engine.new_session(&storage);
        let mut gas = match budget {
            Some(b) => GasMeter::new(CostTable::default(), b),
            None => GasMeter::unmetered(),
        };
        let r = session.execute_function(&cafe("recursion"), "fib", &[], &[20u64.to_le_bytes().to_vec()], &mut gas);
        (r, gas.used())
    };
    let (r, used) = run(Some(u64::MAX));
    assert!(r.is_ok());
    assert!(used > 0);
    let (r2, used2) = run(Some(u64::MAX));
    assert_eq!(used, used2, "same call, same gas");
    assert!(r2.is_ok());
    let (r, used_short) = run(Some(used - 1));
    let e = r.expect_err("runs out of gas");
    assert_eq!(e.status, StatusCode::OUT_OF_GAS);
    assert!(e.location.is_some(), "OUT_OF_GAS carries the location");
    assert_eq!(used_short, used - 1);
    let (r, used_none) = run(None);
    assert!(r.is_ok());
    assert_eq!(used_none, 0, "unmetered");
}

#[test]
fn change_set_records_published_resources() {
    // storage::publish-like entry: every call that succeeds in the storage
    // program and leaves a resource must show up as a write.
    let engine = Engine::new(EngineConfig::aptos());
    let storage = storage_with(&["stdlib3p", "storage"]);
    let cases = movejit_testkit::load_aptos_cases();
    let mut checked = 0;
    let mut writes = 0;
    for c in cases.iter().filter(|c| c.family == "global_storage" && c.expect["status"] == "EXECUTED") {
        let mut parts = c.function.rsplitn(3, "::");
        let f = parts.next().unwrap_or("");
        let m = parts.next().unwrap_or("");
        let args: Vec<Vec<u8>> = c.args.iter().map(|a| hex::decode(a).expect("hex")).collect();
        let ty: Vec<_> = c.type_args.iter().filter_map(|t| movejit_engine::runtime::Type::parse_tag(t)).collect();
        let mut session = engine.new_session(&storage);
        let mut gas = GasMeter::unmetered();
        session.execute_function(&cafe(m), f, &ty, &args, &mut gas).expect("executes");
        let cs = session.finish().expect("change set");
        writes += cs.resources.len();
        // Applying the change set and reading back gives the same bytes.
        let mut after = storage.clone();
        after.apply(&cs);
        for ((addr, ty), op) in &cs.resources {
            match op {
                WriteOp::Write(b) => assert_eq!(after.resources.get(&(*addr, ty.clone())), Some(b)),
                WriteOp::Delete => assert!(!after.resources.contains_key(&(*addr, ty.clone()))),
            }
        }
        checked += 1;
    }
    assert!(checked > 10);
    assert!(writes > 0, "some storage calls leave resources behind");
}

#[test]
fn bad_calls_give_typed_errors() {
    let engine = Engine::new(EngineConfig::aptos());
    let storage = storage_with(&["stdlib3p", "recursion"]);
    let mut session = engine.new_session(&storage);
    let mut gas = GasMeter::unmetered();
    let cases: &[(&str, &str, Vec<Vec<u8>>, StatusCode)] = &[
        ("nope", "f", vec![], StatusCode::LINKER_ERROR),
        ("recursion", "no_such_function", vec![], StatusCode::FUNCTION_RESOLUTION_FAILURE),
        ("recursion", "fib", vec![], StatusCode::NUMBER_OF_ARGUMENTS_MISMATCH),
        ("recursion", "fib", vec![vec![1, 2, 3]], StatusCode::FAILED_TO_DESERIALIZE_ARGUMENT),
    ];
    for (m, f, args, want) in cases {
        let e = session.execute_function(&cafe(m), f, &[], args, &mut gas).expect_err("fails");
        assert_eq!(e.status, *want, "{m}::{f}");
    }
}
