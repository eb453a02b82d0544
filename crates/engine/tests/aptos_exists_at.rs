//! `0x1::object::exists_at` under Aptos's v50 schedule, as Aptos's native
//! charges it: its base on every call and, on the transaction's first load
//! of the resource (into the data cache), `per_item_loaded` plus
//! `per_byte_loaded` × its bytes (0 when absent). A global operation on a
//! resource the native loaded reads nothing (no I/O gas, no memory), as in
//! Aptos's data cache. Every executor agrees.

use movejit_engine::runtime::gas::aptos::AptosPricing;
use movejit_engine::runtime::{AccountAddress, DatatypeId, GasMeter, InMemoryStorage, ModuleId, Type};
use movejit_engine::{new_engine, EngineConfig, ExecutorKind};
use std::sync::Arc;

const SOURCE: &str = "version 9
module 0x1::object

struct R has key
  v: u64

native fun exists_at<T: key>(a: address): bool

public fun probe_two(a: address, b: address): bool
    move_loc a
    call exists_at<R>
    pop
    move_loc b
    call exists_at<R>
    ret

public fun probe_then_read(a: address): u64 acquires R
    copy_loc a
    call exists_at<R>
    pop
    move_loc a
    borrow_global R
    borrow_field R, v
    read_ref
    ret

public fun nothing_then_read(a: address): u64 acquires R
    copy_loc a
    pop
    move_loc a
    borrow_global R
    borrow_field R, v
    read_ref
    ret
";

const PER_ITEM: u64 = 14700;
const PER_BYTE: u64 = 1830;

/// Storage with the module and an `R` of 8 bytes at 0xa (none at 0xb).
fn storage() -> InMemoryStorage {
    let m = movejit_testkit::masm::assemble_module(SOURCE);
    let mut st = InMemoryStorage::default();
    movejit_testkit::masm::publish(&mut st, &m);
    let r = Type::Datatype(
        Arc::new(DatatypeId { address: AccountAddress::from_u64(1), module: "object".into(), name: "R".into() }),
        vec![],
    );
    st.resources.insert((AccountAddress::from_u64(0xa), r), 7u64.to_le_bytes().to_vec());
    st
}

/// (execution gas, I/O gas, peak memory) of `f(addresses)`, the same on
/// every executor.
fn run(st: &InMemoryStorage, f: &str, addresses: &[u64]) -> (u64, u64, u64) {
    let args: Vec<Vec<u8>> = addresses.iter().map(|a| AccountAddress::from_u64(*a).0.to_vec()).collect();
    let module = ModuleId::new(AccountAddress::from_u64(1), "object");
    let mut seen = None;
    for kind in [ExecutorKind::Interpreter, ExecutorKind::Jit, ExecutorKind::Auto] {
        let config = EngineConfig { natives: movejit_aptos_natives::aptos_registry(), ..EngineConfig::aptos() };
        let engine = new_engine(EngineConfig { executor: kind, ..config });
        let mut session = engine.new_session(st);
        let mut gas = GasMeter::aptos(AptosPricing::v50(), 1 << 40);
        let r = session.execute_function(&module, f, &[], &args, &mut gas);
        assert!(r.is_ok(), "{f}{addresses:?} on {kind:?}: {r:?}");
        let a = gas.aptos_meter().expect("an Aptos meter");
        let got = (a.algebra.execution_used(), a.algebra.io_used(), a.memory_used());
        assert_eq!(*seen.get_or_insert(got), got, "{f}{addresses:?}: {kind:?} differs from the interpreter");
    }
    seen.expect("three runs")
}

#[test]
fn exists_at_charges_its_first_load_and_leaves_nothing_to_read() {
    let st = storage();
    let (a, b) = (0xa, 0xb);
    // The same instructions: the second probe of 0xa loads nothing; of
    // 0xb (absent) it loads one item of 0 bytes; 0xb first, then 0xa,
    // loads both, 0xa's 8 bytes included.
    let (same, _, _) = run(&st, "probe_two", &[a, a]);
    let (other, _, _) = run(&st, "probe_two", &[a, b]);
    let (absent_first, _, _) = run(&st, "probe_two", &[b, b]);
    assert_eq!(other - same, PER_ITEM);
    assert_eq!(same - absent_first, PER_BYTE * 8);
    // Read after the native loaded it: no I/O and no memory for the read;
    // the same read alone pays both.
    let (_, io, memory) = run(&st, "probe_then_read", &[a]);
    assert_eq!((io, memory), (0, 0));
    let (_, io, memory) = run(&st, "nothing_then_read", &[a]);
    assert!(io > 0 && memory > 0, "io {io}, memory {memory}");
}
