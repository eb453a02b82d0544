//! The host-stack guard: with an executor stack too small for the allowed
//! call depth, deep recursion stops with a status instead of overflowing
//! the host stack; with the default stack the same call runs to the
//! interpreter's limits.

use movejit_format::{decode_module, AccountAddress, StatusCode};
use movejit_jit::{JitConfig, JitEngine};
use std::path::PathBuf;

fn run_depth(config: JitConfig, n: u64) -> StatusCode {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos/modules/recursion");
    let mut e = JitEngine::new(config).unwrap();
    let m = e.add_module(decode_module(&std::fs::read(dir.join("recursion.mv")).unwrap()).unwrap()).unwrap();
    assert_eq!(e.module_index(&AccountAddress::from_u64(0xcafe), "recursion"), Some(m));
    let key = e.instance_key(m, "depth", &[]).unwrap();
    e.execute(&key, &[n.to_le_bytes().to_vec()], None).unwrap().status
}

#[test]
fn guard_stops_recursion_before_the_host_stack_ends() {
    // 1 MiB of the stack is reserved for helpers: ~64 KiB left for frames.
    let tiny = JitConfig { stack_size: (1 << 20) + (64 << 10), ..JitConfig::default() };
    assert_eq!(run_depth(tiny, 1024), StatusCode::EXECUTION_STACK_OVERFLOW);
    assert_eq!(run_depth(JitConfig::default(), 1024), StatusCode::EXECUTED);
    assert_eq!(run_depth(JitConfig::default(), 1025), StatusCode::CALL_STACK_OVERFLOW);
}
