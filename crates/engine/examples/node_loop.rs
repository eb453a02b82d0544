//! A node-style loop over one engine: publish a package, then run a stream of
//! entry calls, each in its own session over the same storage, applying each
//! session's change set before the next. A transaction that aborts leaves the
//! storage as it was. Runs the stream on every executor and checks that they
//! end in the same state.
//!
//! `cargo run --release -p movejit-engine --example node_loop [TRANSACTIONS]`

use movejit_engine::{
    AccountAddress, CostTable, Engine, EngineConfig, ExecutorKind, GasMeter, InMemoryStorage, ModuleId, StatusCode,
};
use std::time::Instant;

/// A ledger of balances held as `Account` resources. `transfer` aborts (an
/// arithmetic error) when `from` holds less than `amount`.
const LEDGER: &str = "version 7
module 0xcafe::ledger

struct Account has key
  balance: u64

entry public fun open(s: &signer, amount: u64)
    move_loc s
    move_loc amount
    pack Account
    move_to Account
    ret

entry public fun transfer(from: address, to: address, amount: u64) acquires Account
    copy_loc from
    borrow_global Account
    borrow_field Account, balance
    read_ref
    copy_loc amount
    sub
    copy_loc from
    mut_borrow_global Account
    mut_borrow_field Account, balance
    write_ref
    copy_loc to
    borrow_global Account
    borrow_field Account, balance
    read_ref
    move_loc amount
    add
    move_loc to
    mut_borrow_global Account
    mut_borrow_field Account, balance
    write_ref
    ret

public fun balance(a: address): u64 acquires Account
    move_loc a
    borrow_global Account
    borrow_field Account, balance
    read_ref
    ret
";

const ACCOUNTS: u64 = 8;
const PUBLISHER: u64 = 0xcafe;

fn address(i: u64) -> AccountAddress {
    AccountAddress::from_u64(0x1000 + i)
}

fn signer(a: AccountAddress) -> Vec<u8> {
    // A signer argument: variant 0 (an account's own signer), then the address.
    [&[0u8][..], &a.0].concat()
}

/// Verifies and publishes the package through a session, as a node does.
fn publish(engine: &Engine, storage: &mut InMemoryStorage) -> Result<(), StatusCode> {
    let module = match movejit_masm::assemble(LEDGER) {
        Ok(movejit_masm::Assembled::Module(m)) => m,
        _ => unreachable!("the bundled module assembles"),
    };
    let bytes = movejit_format::serialize_module(&module);
    let mut session = engine.new_session(storage);
    let published = session.publish_bundle(&[bytes], AccountAddress::from_u64(PUBLISHER)).map_err(|e| e.status)?;
    session.finish().map_err(|e| e.status)?;
    for (id, bytes) in published {
        storage.publish(id, bytes);
    }
    Ok(())
}

/// Runs one transaction in its own session; its change set reaches the
/// storage only when it succeeds.
fn transaction(
    engine: &Engine,
    storage: &mut InMemoryStorage,
    gas: &GasMeter,
    function: &str,
    args: &[Vec<u8>],
) -> Result<(), StatusCode> {
    let ledger = ModuleId::new(AccountAddress::from_u64(PUBLISHER), "ledger");
    let mut session = engine.new_session(storage);
    let mut gas = gas.with_budget(1_000_000);
    session.execute_function(&ledger, function, &[], args, &mut gas).map_err(|e| e.status)?;
    let changes = session.finish().map_err(|e| e.status)?;
    storage.apply(&changes);
    Ok(())
}

fn balance(engine: &Engine, storage: &InMemoryStorage, a: AccountAddress) -> u64 {
    let ledger = ModuleId::new(AccountAddress::from_u64(PUBLISHER), "ledger");
    let mut session = engine.new_session(storage);
    let r = session
        .execute_function(&ledger, "balance", &[], &[a.0.to_vec()], &mut GasMeter::unmetered())
        .expect("every account is open");
    u64::from_le_bytes(r.returns[0].as_slice().try_into().expect("a u64"))
}

/// The whole stream on one executor: final balances and how many
/// transfers aborted.
fn run(executor: ExecutorKind, transactions: u64) -> (Vec<u64>, u64) {
    let engine = Engine::new(EngineConfig { executor, ..EngineConfig::aptos() });
    let mut storage = InMemoryStorage::default();
    publish(&engine, &mut storage).expect("the ledger verifies and publishes");
    // The cost table is built once; each transaction gets a fresh budget over it.
    let gas = GasMeter::new(CostTable::default(), 0);
    for i in 0..ACCOUNTS {
        transaction(&engine, &mut storage, &gas, "open", &[signer(address(i)), 100u64.to_le_bytes().to_vec()])
            .expect("opening an account succeeds");
    }
    let start = Instant::now();
    let mut aborted = 0;
    for t in 0..transactions {
        // A deterministic pseudo-random stream; some transfers overdraw.
        let x = t.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17);
        let (from, to, amount) = (x % ACCOUNTS, (x >> 8) % ACCOUNTS, (x >> 16) % 60);
        let args = [address(from).0.to_vec(), address(to).0.to_vec(), amount.to_le_bytes().to_vec()];
        match transaction(&engine, &mut storage, &gas, "transfer", &args) {
            Ok(()) => {}
            Err(StatusCode::ARITHMETIC_ERROR) => aborted += 1,
            Err(other) => panic!("transfer {t}: unexpected {other:?}"),
        }
    }
    let elapsed = start.elapsed();
    println!(
        "{:>11}: {transactions} transfers ({aborted} aborted) in {elapsed:.2?}, {:.0} ns per transaction",
        format!("{executor:?}"),
        elapsed.as_nanos() as f64 / transactions.max(1) as f64,
    );
    ((0..ACCOUNTS).map(|i| balance(&engine, &storage, address(i))).collect(), aborted)
}

fn main() {
    let transactions = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let reference = run(ExecutorKind::Interpreter, transactions);
    for executor in [ExecutorKind::Jit, ExecutorKind::Auto] {
        assert_eq!(run(executor, transactions), reference, "{executor:?} ends in another state than the interpreter");
    }
    assert_eq!(reference.0.iter().sum::<u64>(), 100 * ACCOUNTS, "transfers keep the total");
    println!("balances: {:?}", reference.0);
}
