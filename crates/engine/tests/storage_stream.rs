//! Sessions in a row over one storage, each change set applied before the
//! next, on every executor: a resource written, read, borrowed mutably and
//! deleted in later sessions than the one that made it. The conformance
//! cases start from empty storage and run one call each, so only this
//! kind of test sees whether a mutable borrow of a resource that already
//! existed lands in the change set.

use movejit_engine::runtime::{AccountAddress, ChangeSet, CostTable, GasMeter, InMemoryStorage, ModuleId};
use movejit_engine::{new_engine, EngineConfig, ExecutorKind};
use movejit_testkit::masm::storage_with;

const MODULE: &str = "version 7
module 0xcafe::counter
struct C has key
  n: u64

struct G<T> has key
  v: T

entry public fun start(s: &signer)
    copy_loc s
    ld_u64 0
    pack C
    move_to C
    move_loc s
    ld_u64 100
    pack G<u64>
    move_to G<u64>
    ret

entry public fun bump(a: address) acquires C, G
    copy_loc a
    borrow_global C
    borrow_field C, n
    read_ref
    ld_u64 1
    add
    copy_loc a
    mut_borrow_global C
    mut_borrow_field C, n
    write_ref
    copy_loc a
    borrow_global G<u64>
    borrow_field G<u64>, v
    read_ref
    ld_u64 2
    add
    move_loc a
    mut_borrow_global G<u64>
    mut_borrow_field G<u64>, v
    write_ref
    ret

entry public fun take(a: address) acquires C
    move_loc a
    move_from C
    unpack C
    pop
    ret

public fun read(a: address): (bool, u64) acquires G
    copy_loc a
    exists C
    move_loc a
    borrow_global G<u64>
    borrow_field G<u64>, v
    read_ref
    ret
";

/// What each session of the stream returned and changed.
type Trace = Vec<(String, Result<Vec<Vec<u8>>, String>, ChangeSet)>;

fn run_stream(kind: ExecutorKind) -> (Trace, InMemoryStorage) {
    let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
    let mut storage = storage_with(MODULE);
    let cafe = AccountAddress::from_u64(0xcafe);
    let counter = ModuleId::new(cafe, "counter");
    let signer = [&[0u8][..], &cafe.0].concat();
    let address = cafe.0.to_vec();
    let mut calls = vec![("start", signer)];
    calls.extend((0..5).map(|_| ("bump", address.clone())));
    calls.extend([("read", address.clone()), ("take", address.clone()), ("read", address)]);
    let mut trace = Vec::new();
    for (function, arg) in calls {
        let mut session = engine.new_session(&storage);
        let mut gas = GasMeter::new(CostTable::default(), 1_000_000);
        let r = session.execute_function(&counter, function, &[], &[arg], &mut gas);
        let returns = r.map(|r| r.returns).map_err(|e| format!("{e:?}"));
        let changes = session.finish().expect("a session's change set");
        storage.apply(&changes);
        trace.push((function.to_string(), returns, changes));
    }
    (trace, storage)
}

#[test]
fn later_sessions_see_and_change_earlier_writes_on_every_executor() {
    let (want, want_storage) = run_stream(ExecutorKind::Interpreter);
    // The interpreter's stream itself: five bumps of C.n and of G.v, then C deleted.
    let read = |i: usize| want[i].1.clone();
    assert!(want.iter().filter(|t| t.0 != "read").all(|t| t.1 == Ok(vec![])), "{want:?}");
    assert_eq!(read(6), Ok(vec![vec![1], 110u64.to_le_bytes().to_vec()]));
    assert_eq!(read(8), Ok(vec![vec![0], 110u64.to_le_bytes().to_vec()]));
    assert!(want[1..6].iter().all(|(_, _, c)| c.resources.len() == 2), "every bump writes C and G");
    assert_eq!(want_storage.resources.len(), 1, "only G is left");
    for kind in [ExecutorKind::Jit, ExecutorKind::Auto] {
        let (got, got_storage) = run_stream(kind);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w, "{kind:?}: session {} differs", w.0);
        }
        assert_eq!(got_storage.resources, want_storage.resources, "{kind:?}: final storage");
    }
}
