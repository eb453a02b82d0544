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

/// The `.masm` lines of `for i in 0..n { body }`: local `i` counts from 0
/// to local `n` (both u64; `i` must be declared), `body` is run with an
/// empty stack each time, and the code goes on at label `L1`. Uses labels
/// `L0` and `L1`.
pub fn counted_loop(i: &str, n: &str, body: &str) -> String {
    format!(
        "    ld_u64 0
    st_loc {i}
L0: copy_loc {i}
    copy_loc {n}
    lt
    br_false L1
{body}
    move_loc {i}
    ld_u64 1
    add
    st_loc {i}
    branch L0
L1:"
    )
}
