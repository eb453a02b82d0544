//! `movejit compile --emit clif|asm` support: the library returns the CLIF
//! text and the disassembly of one instantiation.

use movejit_format::{decode_module, AccountAddress};
use movejit_jit::{Emit, JitConfig, JitEngine};
use std::path::PathBuf;

fn engine_with(program: &str, files: &[&str]) -> JitEngine {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos/modules").join(program);
    let mut e = JitEngine::new(JitConfig::default()).unwrap();
    for f in files {
        e.add_module(decode_module(&std::fs::read(dir.join(f)).unwrap()).unwrap()).unwrap();
    }
    e
}

#[test]
fn clif_and_asm_of_a_checked_add() {
    let mut e = engine_with("int_ops", &["int_ops.mv"]);
    let m = e.module_index(&AccountAddress::from_u64(0xcafe), "int_ops").unwrap();
    let key = e.instance_key(m, "add_i8", &[]).unwrap();
    let clif = e.dump(&key, Emit::Clif).unwrap();
    assert!(clif.contains("sadd_overflow"), "{clif}");
    assert!(clif.contains("get_stack_pointer"), "{clif}");
    let asm = e.dump(&key, Emit::Asm).unwrap();
    assert!(!asm.trim().is_empty());
    // Dumping leaves the engine usable: the function still runs.
    let out = e.execute(&key, &[vec![100], vec![27]], None).unwrap();
    assert_eq!(out.returns, vec![vec![127]]);
}

#[test]
fn u256_arithmetic_calls_the_wide_helper() {
    let mut e = engine_with("uint_ops", &["uint_ops.mv"]);
    let m = e.module_index(&AccountAddress::from_u64(0xcafe), "uint_ops").unwrap();
    let key = e.instance_key(m, "mul_u256", &[]).unwrap();
    let clif = e.dump(&key, Emit::Clif).unwrap();
    assert!(clif.contains("call fn"), "{clif}");
}

#[test]
fn unsupported_code_is_a_typed_error() {
    // Global storage is not compiled by a standalone engine.
    let mut e = engine_with("closures", &["closures.mv"]);
    let m = e.module_index(&AccountAddress::from_u64(0xcafe), "closures").unwrap();
    let key = e.instance_key(m, "store_closure", &[]).unwrap();
    assert!(matches!(e.dump(&key, Emit::Clif), Err(movejit_jit::CompileError::Unsupported(_))));
    assert!(e.compile(&key).is_err());
}

#[test]
#[ignore = "prints a dump for humans"]
fn print_fib() {
    let mut e = engine_with("recursion", &["recursion.mv"]);
    let m = e.module_index(&AccountAddress::from_u64(0xcafe), "recursion").unwrap();
    let key = e.instance_key(m, "fib", &[]).unwrap();
    println!("{}", e.dump(&key, Emit::Clif).unwrap());
    println!("{}", e.dump(&key, Emit::Asm).unwrap());
}
