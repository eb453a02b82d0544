//! Mixed execution across the flat seam: an interpreted entry (too long
//! to compile) calls a compiled function many times, passing a `&mut`
//! into its own frame and reaching the session's global storage from
//! compiled code. Results, gas used (metered) and the change set must be
//! the interpreter's; prints the time of both executors.

use movejit_engine::runtime::{AccountAddress, ChangeSet, CostTable, GasMeter, InMemoryStorage, ModuleId, VmError};
use movejit_engine::{engine_label, new_engine, EngineConfig, ExecutorKind};
use std::time::Instant;

/// `drive` publishes a counter, then calls `bump` `n` times; it is longer
/// than the JIT's `max_code_len` here ([`MAX_CODE_LEN`]), so it stays
/// interpreted while `bump` runs compiled.
fn source() -> String {
    String::from(
        "version 9
module 0xcafe::seam
use 0x1::signer
    fun address_of(l0: &signer): address

struct Counter has drop + key
  n: u64

public fun drive(s: &signer, n: u64): u64 acquires Counter
    local i: u64
    local acc: u64
    copy_loc s
    ld_u64 0
    pack Counter
    move_to Counter
    ld_u64 0
    st_loc i
    ld_u64 5
    st_loc acc
L0: copy_loc i
    copy_loc n
    lt
    br_false L1
    mut_borrow_loc acc
    copy_loc s
    call signer::address_of
    call bump
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc acc
    ret

fun bump(x: &mut u64, a: address) acquires Counter
    copy_loc a
    borrow_global Counter
    borrow_field Counter, n
    read_ref
    ld_u64 1
    add
    copy_loc a
    mut_borrow_global Counter
    mut_borrow_field Counter, n
    write_ref
    copy_loc x
    read_ref
    ld_u64 3
    add
    move_loc x
    write_ref
    ret
",
    )
}

/// Functions with more instructions than this run interpreted (`drive` has
/// 23, `bump` 17).
const MAX_CODE_LEN: usize = 20;

fn storage() -> InMemoryStorage {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos/modules/stdlib3p");
    let mut st = InMemoryStorage::default();
    let signer = std::fs::read(dir.join("signer.mv")).expect("signer.mv");
    st.publish(ModuleId::new(AccountAddress::from_u64(1), "signer"), signer);
    movejit_testkit::masm::publish_masm(&mut st, &source());
    st
}

type Run = (Result<(Vec<Vec<u8>>, u64), VmError>, Option<ChangeSet>, &'static str, f64);

fn run(kind: ExecutorKind, st: &InMemoryStorage, n: u64, budget: Option<u64>) -> Run {
    let jit = movejit_engine::JitOptions { max_code_len: MAX_CODE_LEN, ..Default::default() };
    let engine = new_engine(EngineConfig { executor: kind, jit, ..EngineConfig::aptos() });
    let mut session = engine.new_session(st);
    let mut gas = match budget {
        Some(b) => GasMeter::new(CostTable::default(), b),
        None => GasMeter::unmetered(),
    };
    // A signer argument: variant 0 (an account's own signer), then the address.
    let signer = [&[0u8][..], &AccountAddress::from_u64(0xcafe).0].concat();
    let args = vec![signer, n.to_le_bytes().to_vec()];
    let t = Instant::now();
    let r = session.execute_function(
        &ModuleId::new(AccountAddress::from_u64(0xcafe), "seam"),
        "drive",
        &[],
        &args,
        &mut gas,
    );
    let dt = t.elapsed().as_secs_f64() * 1e3;
    let label = engine_label(session.compiled_stats().as_ref());
    let ok = r.is_ok();
    let r = r.map(|o| (o.returns, o.gas_used));
    let cs = if ok { session.finish().ok() } else { None };
    (r, cs, label, dt)
}

#[test]
fn interpreted_caller_compiled_callee_share_frame_and_globals() {
    let st = storage();
    let n = 20_000u64;
    let (ri, ci, _, ti) = run(ExecutorKind::Interpreter, &st, n, None);
    let (ra, ca, label, ta) = run(ExecutorKind::Auto, &st, n, None);
    let want = (5 + 3 * n).to_le_bytes().to_vec();
    assert_eq!(ri.as_ref().map(|r| r.0.clone()).ok(), Some(vec![want]));
    assert_eq!(ra.as_ref().map(|r| r.0.clone()).ok(), ri.as_ref().map(|r| r.0.clone()).ok());
    assert!(ci.is_some() && ca == ci, "change sets: {ca:?} vs {ci:?}");
    assert_eq!(label, "mixed", "drive interpreted, bump compiled");
    println!(
        "{n} interpreted-to-compiled calls: interp {ti:.1} ms, auto {ta:.1} ms ({:.2} us per call on auto)",
        ta * 1e3 / n as f64
    );
    // Metered, including budgets that run out inside the compiled callee.
    let (full, ..) = run(ExecutorKind::Interpreter, &st, 50, Some(u64::MAX / 4));
    let used = full.expect("metered run").1;
    for budget in [used, used - 1, used / 2, used / 3 + 7, 40] {
        let (ri, ci, ..) = run(ExecutorKind::Interpreter, &st, 50, Some(budget));
        let (ra, ca, ..) = run(ExecutorKind::Auto, &st, 50, Some(budget));
        let status =
            |r: &Result<(Vec<Vec<u8>>, u64), VmError>| r.as_ref().map_err(|e| (e.status, e.location.clone())).cloned();
        assert_eq!(status(&ra), status(&ri), "budget {budget}");
        assert_eq!(ca, ci, "budget {budget}");
    }
}
