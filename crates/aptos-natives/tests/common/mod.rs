//! Running real modules on the interpreter with the Aptos natives.

#![allow(dead_code)]

use movejit_interp::runtime::{GasMeter, InMemoryStorage, ModuleId, VmError};
use movejit_interp::{Engine, EngineConfig, InterpreterKind};
use std::path::{Path, PathBuf};

/// `../shared` from the workspace root.
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// Both interpreters: every test here runs on each (the natives see tree
/// values either way; the flat one reaches them through its native bridge).
pub const INTERPRETERS: [InterpreterKind; 2] = [InterpreterKind::Flat, InterpreterKind::Tree];

/// An Aptos engine with the stdlib and framework natives, registered as a
/// host does, on interpreter `kind`.
pub fn engine(kind: InterpreterKind) -> Engine {
    Engine::new(EngineConfig {
        natives: movejit_aptos_natives::aptos_registry(),
        interpreter: kind,
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
/// (unmetered) on interpreter `kind`: the BCS returns or the VM error.
pub fn run(
    kind: InterpreterKind,
    modules: &[PathBuf],
    function: &str,
    args: &[Vec<u8>],
) -> Result<Vec<Vec<u8>>, VmError> {
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
    let address = movejit_interp::runtime::AccountAddress::parse(a).expect("address");
    (ModuleId::new(address, m), n)
}
