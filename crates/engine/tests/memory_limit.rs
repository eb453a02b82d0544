//! The memory budget (`Limits::max_memory`): unmetered programs that grow
//! values forever end with `MEMORY_LIMIT_EXCEEDED`, located at the
//! instruction that asked for the memory, identically on the interpreter,
//! compiled code and mixed execution; a program that fits the budget
//! exactly succeeds; a failed run frees everything it held.

use movejit_engine::runtime::flat::live_allocations;
use movejit_engine::runtime::{memory, AccountAddress, CostTable, GasMeter, InMemoryStorage, ModuleId, StatusCode};
use movejit_engine::{new_engine, EngineConfig, ExecutorKind};

/// The budget of every run here.
const LIMIT: u64 = 1 << 20;
/// Bytes of a vector header; a `vector<u64>` of `n` elements holds
/// `HEADER + 8n` bytes at most.
const HEADER: u64 = 24;

const SOURCE: &str = "version 9
module 0xcafe::mem
use 0x1::bcs
    fun to_bytes<T0>(l0: &T0): vector<u8>

struct S has copy + drop
  a: u64
  b: vector<u64>

struct T has drop
  b: vector<u64>
  a: u64

public fun endless()
    local v: vector<u64>
    vec_pack <u64>, 0
    st_loc v
L0: mut_borrow_loc v
    ld_u64 7
    vec_push_back <u64>
    branch L0

public fun fill(n: u64): u64
    local v: vector<u64>
    local i: u64
    vec_pack <u64>, 0
    st_loc v
    ld_u64 0
    st_loc i
L0: copy_loc i
    copy_loc n
    lt
    br_false L1
    mut_borrow_loc v
    copy_loc i
    vec_push_back <u64>
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: borrow_loc v
    vec_len <u64>
    ret

public fun nested()
    local inner: vector<u64>
    local outer: vector<vector<u64>>
    ld_u64 1
    ld_u64 2
    ld_u64 3
    vec_pack <u64>, 3
    st_loc inner
    vec_pack <vector<u64>>, 0
    st_loc outer
L0: mut_borrow_loc outer
    copy_loc inner
    vec_push_back <vector<u64>>
    branch L0

public fun structs()
    local s: S
    local all: vector<S>
    ld_u64 5
    ld_u64 1
    ld_u64 2
    vec_pack <u64>, 2
    pack S
    st_loc s
    vec_pack <S>, 0
    st_loc all
L0: mut_borrow_loc all
    copy_loc s
    vec_push_back <S>
    branch L0

public fun copy_big(n: u64)
    local big: vector<u64>
    copy_loc n
    call fill_vec
    st_loc big
    copy_loc big
    pop
    ret

public fun read_big(n: u64)
    local big: vector<u64>
    copy_loc n
    call fill_vec
    st_loc big
    borrow_loc big
    read_ref
    pop
    ret

public fun copy_nested(n: u64)
    local v: vector<vector<u64>>
    vec_pack <vector<u64>>, 0
    st_loc v
L0: copy_loc n
    ld_u64 0
    eq
    br_true L1
    mut_borrow_loc v
    ld_u64 1
    ld_u64 2
    ld_u64 3
    vec_pack <u64>, 3
    vec_push_back <vector<u64>>
    move_loc n
    ld_u64 1
    sub
    st_loc n
    branch L0
L1: copy_loc v
    pop
    ret

public fun native_growth()
    local big: vector<u64>
    local all: vector<vector<u8>>
    ld_u64 64
    call fill_vec
    st_loc big
    vec_pack <vector<u8>>, 0
    st_loc all
L0: mut_borrow_loc all
    borrow_loc big
    call bcs::to_bytes<vector<u64>>
    vec_push_back <vector<u8>>
    branch L0

fun fill_vec(n: u64): vector<u64>
    local v: vector<u64>
    vec_pack <u64>, 0
    st_loc v
L0: copy_loc n
    ld_u64 0
    eq
    br_true L1
    mut_borrow_loc v
    copy_loc n
    vec_push_back <u64>
    move_loc n
    ld_u64 1
    sub
    st_loc n
    branch L0
L1: move_loc v
    ret

public fun overflow_over_vec(x: u64): T
    ld_u64 1
    ld_u64 2
    vec_pack <u64>, 2
    ld_u64 18446744073709551615
    copy_loc x
    add
    pack T
    ret

public fun div_over_vec(x: u64): T
    ld_u64 1
    vec_pack <u64>, 1
    ld_u64 10
    copy_loc x
    div
    pack T
    ret

public fun native_base(n: u64): T
    local big: vector<u64>
    local bytes: vector<u8>
    copy_loc n
    call fill_vec
    st_loc big
    ld_u64 3
    vec_pack <u64>, 1
    borrow_loc big
    call bcs::to_bytes<vector<u64>>
    st_loc bytes
    borrow_loc bytes
    vec_len <u8>
    pack T
    ret

fun vec_len_of(v: vector<u64>): u64
    borrow_loc v
    vec_len <u64>
    ret

public fun call_over_vec(n: u64): T
    ld_u64 1
    vec_pack <u64>, 1
    copy_loc n
    call fill_vec
    call vec_len_of
    pack T
    ret

public fun native_big(n: u64)
    local big: vector<u64>
    local all: vector<u8>
    copy_loc n
    call fill_vec
    st_loc big
    vec_pack <u8>, 0
    st_loc all
L0: borrow_loc big
    call bcs::to_bytes<vector<u64>>
    st_loc all
    branch L0
";

fn storage() -> InMemoryStorage {
    let dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos/modules/stdlib3p");
    let mut st = InMemoryStorage::default();
    st.publish(ModuleId::new(AccountAddress::from_u64(1), "bcs"), std::fs::read(dir.join("bcs.mv")).expect("bcs.mv"));
    movejit_testkit::masm::publish_masm(&mut st, SOURCE);
    st
}

/// What a run gives: its returns, or the status with the failing function
/// and code offset.
type Outcome = Result<Vec<Vec<u8>>, (StatusCode, Option<(String, u64)>)>;

/// Runs `f(args)` metered (a budget no case reaches): its outcome and the
/// gas it used, which every executor must agree on, failure point included.
fn run(st: &InMemoryStorage, kind: ExecutorKind, f: &str, args: &[u64]) -> (Outcome, u64) {
    run_with(st, kind, f, args, u64::MAX / 2)
}

/// [`run`] with a gas budget of `budget`.
fn run_with(st: &InMemoryStorage, kind: ExecutorKind, f: &str, args: &[u64], budget: u64) -> (Outcome, u64) {
    let mut config = EngineConfig { executor: kind, ..EngineConfig::aptos() };
    config.limits.max_memory = LIMIT;
    let engine = new_engine(config);
    let mut session = engine.new_session(st);
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.to_le_bytes().to_vec()).collect();
    let mut gas = GasMeter::new(CostTable::default(), budget);
    let r = session.execute_function(&ModuleId::new(AccountAddress::from_u64(0xcafe), "mem"), f, &[], &args, &mut gas);
    let outcome =
        r.map(|o| o.returns).map_err(|e| (e.status, e.location.map(|l| (l.function_name, l.code_offset as u64))));
    (outcome, gas.used())
}

const EXECUTORS: [ExecutorKind; 3] = [ExecutorKind::Interpreter, ExecutorKind::Jit, ExecutorKind::Auto];

/// Runs `f(args)` on every executor: all must agree, free
/// everything they allocated and give back every byte they charged.
fn on_all(st: &InMemoryStorage, f: &str, args: &[u64]) -> Outcome {
    on_all_with(st, f, args, u64::MAX / 2)
}

/// [`on_all`] with a gas budget of `budget`.
fn on_all_with(st: &InMemoryStorage, f: &str, args: &[u64], budget: u64) -> Outcome {
    let mut first: Option<(Outcome, u64)> = None;
    for kind in EXECUTORS {
        let (blocks, bytes) = (live_allocations(), memory::used());
        let r = run_with(st, kind, f, args, budget);
        assert_eq!(live_allocations(), blocks, "{f}{args:?} on {kind:?} leaked");
        assert_eq!(memory::used(), bytes, "{f}{args:?} on {kind:?}: charged bytes not given back");
        match &first {
            None => first = Some(r),
            Some(want) => assert_eq!(&r, want, "{f}{args:?}: {kind:?} differs from the interpreter (outcome, gas)"),
        }
    }
    first.expect("ran").0
}

fn exceeded_at(f: &str, offset: u64) -> Outcome {
    Err((StatusCode::MEMORY_LIMIT_EXCEEDED, Some((f.to_string(), offset))))
}

#[test]
fn failures_with_owned_values_on_the_operand_stack_free_them() {
    let st = storage();
    let t = |b: &[u64], a: u64| {
        let mut out = vec![b.len() as u8];
        b.iter().for_each(|x| out.extend(x.to_le_bytes()));
        out.extend(a.to_le_bytes());
        Ok(vec![out])
    };
    let failed = |f: &str, s, offset| Err((s, Some((f.to_string(), offset))));
    let cases: &[(&str, &[u64], Outcome)] = &[
        ("overflow_over_vec", &[0], t(&[1, 2], u64::MAX)),
        ("overflow_over_vec", &[1], failed("overflow_over_vec", StatusCode::ARITHMETIC_ERROR, 5)),
        ("div_over_vec", &[5], t(&[1], 2)),
        ("div_over_vec", &[0], failed("div_over_vec", StatusCode::ARITHMETIC_ERROR, 4)),
        ("native_base", &[3], t(&[3], 25)),
        ("call_over_vec", &[3], t(&[1], 3)),
    ];
    for (f, args, want) in cases {
        assert_eq!(&on_all(&st, f, args), want, "{f}{args:?}");
    }
    // Out of gas at every point: a native call's own charge (its
    // arguments are operands then), a call's frame charge (its arguments
    // are in flight), inside a callee (the caller's operands stay): nothing
    // leaks, and every executor stops at the same place.
    for f in ["native_base", "call_over_vec"] {
        let full = run(&st, ExecutorKind::Interpreter, f, &[3]).1;
        for budget in 0..full {
            let got = on_all_with(&st, f, &[3], budget);
            assert!(matches!(&got, Err((StatusCode::OUT_OF_GAS, _))), "{f} with budget {budget}: {got:?}");
        }
    }
}

#[test]
fn endless_growth_is_a_status_at_the_growing_instruction() {
    let st = storage();
    // Largest `fill` that fits: the budget less the header, in u64s.
    let fits = (LIMIT - HEADER) / 8;
    let cases: &[(&str, &[u64], Outcome)] = &[
        ("endless", &[], exceeded_at("endless", 4)),
        ("fill", &[1000], Ok(vec![1000u64.to_le_bytes().to_vec()])),
        ("fill", &[fits], Ok(vec![fits.to_le_bytes().to_vec()])),
        ("fill", &[fits + 1], exceeded_at("fill", 10)),
        // The small vector comes first, so the copy fits and the push fails
        // only once the outer buffer cannot grow: its exact offset follows
        // from the accounting, the same on every executor (checked below).
        ("nested", &[], Err((StatusCode::MEMORY_LIMIT_EXCEEDED, None))),
        ("structs", &[], Err((StatusCode::MEMORY_LIMIT_EXCEEDED, None))),
        // A copy of a vector holding half the budget: the copy fails.
        ("copy_big", &[fits / 2], exceeded_at("copy_big", 3)),
        ("read_big", &[fits / 2], exceeded_at("read_big", 4)),
        ("copy_big", &[fits / 4], Ok(vec![])),
        // A copy that runs out half-way through the inner vectors: what it
        // copied is freed, the rest never shared (the leak and balance
        // checks of `on_all`).
        ("copy_nested", &[9000], exceeded_at("copy_nested", 17)),
        ("copy_nested", &[1000], Ok(vec![])),
        // Native results pushed until the budget is spent.
        ("native_growth", &[], Err((StatusCode::MEMORY_LIMIT_EXCEEDED, None))),
        // A native result that does not fit: the call fails.
        ("native_big", &[fits / 2], exceeded_at("native_big", 6)),
    ];
    for (f, args, want) in cases {
        let got = on_all(&st, f, args);
        match (want, &got) {
            (Err((s, None)), Err((g, Some((gf, _))))) => assert!(s == g && gf == f, "{f}: {got:?}"),
            _ => assert_eq!(&got, want, "{f}{args:?}"),
        }
    }
}

#[test]
fn growth_locations() {
    // Where the budget runs out in the loops whose failing instruction the
    // accounting decides: one of the instructions that allocate.
    let st = storage();
    for (f, allowed) in [("nested", &[8u64, 9][..]), ("structs", &[9, 10]), ("native_growth", &[7, 8])] {
        match on_all(&st, f, &[]) {
            Err((StatusCode::MEMORY_LIMIT_EXCEEDED, Some((g, off)))) if g == f => {
                assert!(allowed.contains(&off), "{f} failed at {off}")
            }
            r => panic!("{f}: {r:?}"),
        }
    }
}

#[test]
fn a_budget_renews_for_every_call() {
    // Within one session, each call has the whole budget again.
    let st = storage();
    let mut config = EngineConfig { executor: ExecutorKind::Auto, ..EngineConfig::aptos() };
    config.limits.max_memory = LIMIT;
    let engine = new_engine(config);
    let mut session = engine.new_session(&st);
    let n = (LIMIT - HEADER) / 8;
    for _ in 0..3 {
        let r = session.execute_function(
            &ModuleId::new(AccountAddress::from_u64(0xcafe), "mem"),
            "fill",
            &[],
            &[n.to_le_bytes().to_vec()],
            &mut GasMeter::unmetered(),
        );
        assert_eq!(r.map(|o| o.returns).ok(), Some(vec![n.to_le_bytes().to_vec()]));
    }
}
