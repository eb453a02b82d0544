//! Running real modules on every executor with the Aptos natives.

#![allow(dead_code)]

pub mod framework;

use movejit_engine::runtime::{GasMeter, InMemoryStorage, ModuleId, VmError};
use movejit_engine::{new_engine, Engine, EngineConfig, ExecutorKind};
use std::path::{Path, PathBuf};

/// `../shared` from the workspace root.
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// The executors every test here runs on, by label, the reference (the
/// interpreter) first. `Jit` refuses a call that does not compile
/// (`JIT_NOT_COMPILED`), so a test passing on it shows the code compiled.
pub const EXECUTORS: [(&str, ExecutorKind); 3] =
    [("interp", ExecutorKind::Interpreter), ("jit", ExecutorKind::Jit), ("auto", ExecutorKind::Auto)];

/// An Aptos engine with the stdlib and framework natives, registered as a
/// host does, on executor `kind`.
pub fn engine(kind: ExecutorKind) -> Engine {
    new_engine(EngineConfig {
        natives: movejit_aptos_natives::aptos_registry(),
        executor: kind,
        ..EngineConfig::aptos()
    })
}

/// A store holding `modules` (file paths).
pub fn storage(modules: &[PathBuf]) -> InMemoryStorage {
    let mut s = InMemoryStorage::default();
    for p in modules {
        let bytes = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let m = movejit_format::decode_module(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
        s.publish(ModuleId::new(*m.address(), m.name()), bytes);
    }
    s
}

/// Calls `0xADDR::module::function` with BCS args in a fresh session
/// (unmetered) on executor `kind`: the BCS returns or the VM error.
pub fn run(kind: ExecutorKind, modules: &[PathBuf], function: &str, args: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, VmError> {
    let store = storage(modules);
    call(&engine(kind), &store, function, args)
}

pub fn call(
    engine: &Engine,
    store: &InMemoryStorage,
    function: &str,
    args: &[Vec<u8>],
) -> Result<Vec<Vec<u8>>, VmError> {
    let (module, name) = split(function);
    let mut session = engine.new_session(store);
    let mut gas = GasMeter::unmetered();
    session.execute_function(&module, name, &[], args, &mut gas).map(|r| r.returns)
}

/// `0xADDR::module::function` → (module id, function name).
pub fn split(f: &str) -> (ModuleId, &str) {
    let mut parts = f.split("::");
    let (a, m, n) = (parts.next().expect("address"), parts.next().expect("module"), parts.next().expect("function"));
    let address = movejit_engine::runtime::AccountAddress::parse(a).expect("address");
    (ModuleId::new(address, m), n)
}
