//! The engine's warm module cache on every executor: sessions over stores
//! holding other versions of a module (or lacking one) never run a stale
//! version, and a warm load fails exactly as a cold one.

use movejit_engine::runtime::{AccountAddress, GasMeter, InMemoryStorage, ModuleId, StatusCode};
use movejit_engine::{new_engine, Engine, EngineConfig, ExecutorKind};

const EXECUTORS: &[ExecutorKind] = &[ExecutorKind::Interpreter, ExecutorKind::Jit, ExecutorKind::Auto];

fn publish(st: &mut InMemoryStorage, src: &str) {
    movejit_testkit::masm::publish_masm(st, src);
}

const USER: &str = "version 7\nmodule 0xcafe::user\nuse 0xcafe::dep\n    fun g(): u64\npublic fun f(): u64\n    call dep::g\n    ld_u64 1\n    add\n    ret\n";

/// `dep::g` returns `v` (when given); `user::f` returns `dep::g() + 1` (the
/// same bytes whatever `dep` holds).
fn store(v: Option<u64>) -> InMemoryStorage {
    let mut st = InMemoryStorage::default();
    if let Some(v) = v {
        publish(&mut st, &format!("version 7\nmodule 0xcafe::dep\npublic fun g(): u64\n    ld_u64 {v}\n    ret\n"));
    }
    publish(&mut st, USER);
    st
}

fn call(engine: &Engine, st: &InMemoryStorage, module: &str, f: &str) -> Result<u64, StatusCode> {
    let id = ModuleId::new(AccountAddress::from_u64(0xcafe), module);
    let mut s = engine.new_session(st);
    let r = s.execute_function(&id, f, &[], &[], &mut GasMeter::unmetered()).map_err(|e| e.status)?;
    s.finish().map_err(|e| e.status)?;
    Ok(u64::from_le_bytes(r.returns[0].clone().try_into().expect("u64")))
}

#[test]
fn warm_sessions_see_their_own_store() {
    let (v1, v2, none) = (store(Some(10)), store(Some(20)), store(None));
    for &executor in EXECUTORS {
        let config = EngineConfig { executor, ..EngineConfig::aptos() };
        let engine = new_engine(config.clone());
        let cold = |st: &InMemoryStorage| call(&new_engine(config.clone()), st, "user", "f");
        let what = format!("{executor:?}");
        for round in 0..3 {
            // (store, module, function, expected) in an order that makes
            // every warm set meet a store with another version of a member.
            let table: &[(&InMemoryStorage, &str, &str, Result<u64, StatusCode>)] = &[
                (&v1, "user", "f", Ok(11)),
                (&v2, "user", "f", Ok(21)),
                (&v1, "dep", "g", Ok(10)),
                (&none, "user", "f", cold(&none)),
                (&v2, "dep", "g", Ok(20)),
                (&v1, "user", "f", Ok(11)),
            ];
            for (st, module, f, expected) in table {
                assert_eq!(call(&engine, st, module, f), *expected, "{what}, round {round}: {module}::{f}");
            }
        }
        assert_eq!(cold(&none), Err(StatusCode::LINKER_ERROR), "{what}");
    }
}

/// Threads remember their entry calls per engine and keep JIT run stacks
/// and tables: engines outnumbering what a thread remembers, used by two
/// threads at once over stores with other versions of a member, and
/// engines dropped after one call, still run each store's own versions.
#[test]
fn many_engines_on_two_threads_run_their_stores_versions() {
    let (v1, v2) = (store(Some(10)), store(Some(20)));
    for &executor in EXECUTORS {
        let config = EngineConfig { executor, ..EngineConfig::aptos() };
        let engines: Vec<Engine> = (0..12).map(|_| new_engine(config.clone())).collect();
        std::thread::scope(|s| {
            for thread in 0..2 {
                let (engines, v1, v2, config) = (&engines, &v1, &v2, &config);
                s.spawn(move || {
                    for round in 0..4 {
                        for (i, engine) in engines.iter().enumerate() {
                            let (st, want) = if (i + round + thread) % 2 == 0 { (v1, 11) } else { (v2, 21) };
                            let what = format!("{executor:?}, thread {thread}, round {round}, engine {i}");
                            assert_eq!(call(engine, st, "user", "f"), Ok(want), "{what}");
                            assert_eq!(call(engine, st, "user", "f"), Ok(want), "{what}, again");
                            let short_lived = new_engine(config.clone());
                            assert_eq!(call(&short_lived, st, "user", "f"), Ok(want), "{what}, short-lived engine");
                        }
                    }
                });
            }
        });
    }
}
