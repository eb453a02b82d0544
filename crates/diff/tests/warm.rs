//! A warm engine lends one JIT session to consecutive interpreter sessions:
//! the function compiles once however many sessions call it, while sessions
//! alive at the same time each get their own.

use movejit_diff::warm::warm_engine;
use movejit_engine::{EngineConfig, ExecutorKind};
use movejit_format::{serialize_module, AccountAddress};
use movejit_masm::{assemble_with, AsmOptions, Assembled};
use movejit_runtime::{GasMeter, InMemoryStorage, ModuleId};

const SRC: &str = "
module 0xcafe::w
public fun twice(x: u64): u64
    copy_loc x
    move_loc x
    add
    ret
";

#[test]
fn consecutive_sessions_share_compiled_code() {
    let Ok(Assembled::Module(m)) = assemble_with(SRC, AsmOptions { default_version: None, deps: &[] }) else { panic!("assembles") };
    let mut store = InMemoryStorage::default();
    let id = ModuleId::new(AccountAddress::from_u64(0xcafe), "w");
    store.publish(id.clone(), serialize_module(&m));
    let engine = warm_engine(EngineConfig { executor: ExecutorKind::Jit, ..EngineConfig::aptos() });
    let arg = 21u64.to_le_bytes().to_vec();
    let mut compiled = Vec::new();
    for _ in 0..5 {
        let mut s = engine.new_session(&store);
        let r = s.execute_function(&id, "twice", &[], std::slice::from_ref(&arg), &mut GasMeter::unmetered()).expect("runs");
        assert_eq!(r.returns, vec![42u64.to_le_bytes().to_vec()]);
        compiled.push(s.compiled_stats().expect("jit attached").instances_compiled);
    }
    // Executor `jit` compiles the metered and the unmetered variant on the
    // first call; later sessions reuse them.
    assert!(compiled[0] > 0);
    assert!(compiled.iter().all(|c| *c == compiled[0]), "{compiled:?}");

    // Two sessions at once: the second gets a fresh JIT session.
    let a = engine.new_session(&store);
    let mut b = engine.new_session(&store);
    b.execute_function(&id, "twice", &[], std::slice::from_ref(&arg), &mut GasMeter::unmetered()).expect("runs");
    assert_eq!(a.compiled_stats().expect("jit").instances_compiled, compiled[0]);
    assert_eq!(b.compiled_stats().expect("jit").instances_compiled, compiled[0], "compiled afresh");
}
