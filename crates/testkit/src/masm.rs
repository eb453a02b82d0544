//! Modules written as `.masm` text, for tests that need a small module of
//! their own.

use movejit_engine::runtime::{InMemoryStorage, ModuleId};
use movejit_format::CompiledModule;

/// `source` assembled into a module (panics on text that does not
/// assemble to one module).
pub fn assemble_module(source: &str) -> CompiledModule {
    match movejit_masm::assemble(source) {
        Ok(movejit_masm::Assembled::Module(m)) => m,
        Ok(_) => panic!("expected a module, got a script"),
        Err(e) => panic!("assemble: {e}"),
    }
}

/// Publishes `m` into `st` under its own address and name.
pub fn publish(st: &mut InMemoryStorage, m: &CompiledModule) {
    st.publish(ModuleId::new(*m.address(), m.name()), movejit_format::serialize_module(m));
}

/// `source`'s module assembled and published into `st`; the module.
pub fn publish_masm(st: &mut InMemoryStorage, source: &str) -> CompiledModule {
    let m = assemble_module(source);
    publish(st, &m);
    m
}

/// A storage holding only `source`'s module.
pub fn storage_with(source: &str) -> InMemoryStorage {
    let mut st = InMemoryStorage::default();
    publish_masm(&mut st, source);
    st
}
