//! Compiled code calling interpreted code (mixed execution, compiled →
//! interpreted). Functions longer than the JIT's `max_code_len` (set low
//! here) are not compiled: their compiled callers call them through
//! interpreter stubs, and closures whose targets are not compiled (read
//! from storage, or targets that do not compile) run on the interpreter.
//! Every call must give what the interpreter alone gives: results, error
//! (status, abort code, location inside the interpreted callee), gas used
//! at several budgets (some running out inside the interpreted callee),
//! and the change set; call depth is carried across the boundary
//! (`CALL_STACK_OVERFLOW` on either side of it).

use movejit_engine::runtime::{
    AccountAddress, ChangeSet, CostTable, ErrorLocation, GasMeter, InMemoryStorage, ModuleId, StatusCode,
};
use movejit_engine::JitOptions;
use movejit_engine::{engine_label, new_engine, EngineConfig, ExecutorKind};

/// Functions with more instructions than this run interpreted.
const MAX_CODE_LEN: usize = 24;

/// `call_long`, `via_ref`, `deep`, `store*` and `call_stored` are short
/// (compiled); `long`, `long_push`, `long_rec` and `add_long` are long
/// (interpreted).
const SOURCE: &str = "version 9
module 0xcafe::mixed

struct Holder has key
  f: |u64|u64 has copy + drop + store

public fun call_long(x: u64, n: u64): u64
    move_loc x
    move_loc n
    call long
    ld_u64 1
    add
    ret

fun long(x: u64, n: u64): u64
    local i: u64
    local acc: u64
    ld_u64 0
    st_loc i
    ld_u64 0
    st_loc acc
L0: copy_loc i
    copy_loc n
    lt
    br_false L1
    move_loc acc
    copy_loc i
    add
    st_loc acc
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: copy_loc x
    ld_u64 100
    gt
    br_false L2
    copy_loc x
    abort
L2: move_loc acc
    move_loc x
    add
    ret

public fun loop_long(k: u64): u64
    local i: u64
    local acc: u64
    ld_u64 0
    st_loc i
    ld_u64 0
    st_loc acc
L0: copy_loc i
    copy_loc k
    lt
    br_false L1
    move_loc acc
    ld_u64 1
    ld_u64 0
    call long
    add
    st_loc acc
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc acc
    ret

public fun via_ref(a: u64, k: u64): vector<u64>
    local v: vector<u64>
    local r: &mut u64
    copy_loc a
    move_loc a
    vec_pack <u64>, 2
    st_loc v
    mut_borrow_loc v
    move_loc k
    call long_push
    st_loc r
    ld_u64 9
    move_loc r
    write_ref
    move_loc v
    ret

fun long_push(v: &mut vector<u64>, k: u64): &mut u64
    copy_loc v
    copy_loc k
    vec_push_back <u64>
    copy_loc k
    ld_u64 1000
    gt
    br_false L0
    move_loc v
    pop
    copy_loc k
    abort
L0: copy_loc v
    freeze_ref
    vec_len <u64>
    ld_u64 3
    eq
    br_false L1
    move_loc v
    ld_u64 1
    vec_mut_borrow <u64>
    ret
L1: move_loc v
    pop
    ld_u64 2
    abort

public fun deep(n: u64, m: u64): u64
    copy_loc n
    ld_u64 0
    eq
    br_false L0
    move_loc m
    call long_rec
    ret
L0: move_loc n
    ld_u64 1
    sub
    move_loc m
    call deep
    ld_u64 1
    add
    ret

fun long_rec(m: u64): u64
    copy_loc m
    ld_u64 0
    eq
    br_false L0
    ld_u64 0
    ret
L0: ld_u64 0
    move_loc m
    ld_u64 1
    sub
    call deep
    ld_u64 1
    add
    ld_u64 2
    add
    ld_u64 3
    add
    ld_u64 4
    add
    ld_u64 6
    sub
    ld_u64 0
    add
    ld_u64 0
    add
    ret

public fun store(s: &signer, k: u64)
    move_loc s
    move_loc k
    pack_closure add_long, 1
    pack Holder
    move_to Holder
    ret

public fun store_short(s: &signer, k: u64)
    move_loc s
    move_loc k
    pack_closure add_short, 1
    pack Holder
    move_to Holder
    ret

public fun call_stored(a: address, x: u64): u64 acquires Holder
    move_loc x
    move_loc a
    borrow_global Holder
    borrow_field Holder, f
    read_ref
    call_closure <|u64|u64>
    ret

public fun apply_short(k: u64, x: u64): u64
    local f: |u64|u64 has copy + drop + store
    move_loc k
    pack_closure add_short, 1
    st_loc f
    move_loc x
    copy_loc f
    call_closure <|u64|u64>
    ret

public fun apply_calling(k: u64, x: u64): u64
    local f: |u64|u64 has copy + drop + store
    move_loc k
    pack_closure add_rec, 1
    st_loc f
    move_loc x
    copy_loc f
    call_closure <|u64|u64>
    ret

#[persistent] public fun add_rec(k: u64, x: u64): u64
    move_loc k
    call rec
    move_loc x
    add
    ret

public fun rec(n: u64): u64
    copy_loc n
    ld_u64 0
    eq
    br_false L0
    ld_u64 0
    ret
L0: move_loc n
    ld_u64 1
    sub
    call rec
    ld_u64 1
    add
    ret

#[persistent] public fun add_short(k: u64, x: u64): u64
    move_loc k
    move_loc x
    add
    ret

#[persistent] public fun add_long(k: u64, x: u64): u64
    copy_loc x
    ld_u64 1000
    gt
    br_false L0
    copy_loc k
    abort
L0: move_loc k
    move_loc x
    add
    ld_u64 1
    add
    ld_u64 2
    add
    ld_u64 3
    add
    ld_u64 4
    add
    ld_u64 5
    add
    ld_u64 6
    add
    ld_u64 7
    add
    ld_u64 28
    sub
    ret
";

fn storage() -> InMemoryStorage {
    let m = movejit_testkit::masm::assemble_module(SOURCE);
    let lens: Vec<usize> = m.function_defs.iter().map(|f| f.code.as_ref().map_or(0, |c| c.code.len())).collect();
    // The split the test relies on: short functions compile, long ones don't.
    for (name, long) in [
        ("call_long", false),
        ("loop_long", false),
        ("long", true),
        ("via_ref", false),
        ("long_push", true),
        ("deep", false),
        ("long_rec", true),
        ("add_long", true),
    ] {
        let i = m
            .function_defs
            .iter()
            .position(|f| m.identifiers[m.function_handles[f.function.idx()].name.idx()] == name)
            .expect("function");
        assert_eq!(lens[i] > MAX_CODE_LEN, long, "{name}: {} instructions", lens[i]);
    }
    let mut st = InMemoryStorage::default();
    movejit_testkit::masm::publish(&mut st, &m);
    st
}

fn u64_arg(x: u64) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

fn signer_arg() -> Vec<u8> {
    // Variant 0 (an account's own signer), then the address.
    [&[0u8][..], &AccountAddress::from_u64(0xcafe).0].concat()
}

/// What a call observably did.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Returned(Vec<Vec<u8>>),
    /// Status, abort code / sub-status, location, message.
    Failed(StatusCode, Option<u64>, Option<ErrorLocation>, Option<String>),
}

/// One session's calls: (outcome, gas used) per call, the change set of
/// the session when the last call succeeded, and the engine label.
type Run = (Vec<(Outcome, u64)>, Option<ChangeSet>, &'static str);

fn run(kind: ExecutorKind, st: &InMemoryStorage, calls: &[(&str, Vec<Vec<u8>>)], budget: Option<u64>) -> Run {
    let jit = JitOptions { max_code_len: MAX_CODE_LEN, ..JitOptions::default() };
    let engine = new_engine(EngineConfig { executor: kind, jit, ..EngineConfig::aptos() });
    let mut session = engine.new_session(st);
    let mut out = Vec::new();
    let mut ok = true;
    for (f, args) in calls {
        let mut gas = match budget {
            Some(b) => GasMeter::new(CostTable::default(), b),
            None => GasMeter::unmetered(),
        };
        let r =
            session.execute_function(&ModuleId::new(AccountAddress::from_u64(0xcafe), "mixed"), f, &[], args, &mut gas);
        ok = r.is_ok();
        let o = match r {
            Ok(r) => Outcome::Returned(r.returns),
            Err(e) => Outcome::Failed(e.status, e.sub_status, e.location, e.message),
        };
        out.push((o, gas.used()));
    }
    let label = engine_label(session.compiled_stats().as_ref());
    let cs = if ok { session.finish().ok() } else { None };
    (out, cs, label)
}

fn failed_in(o: &Outcome, status: StatusCode, function: &str) -> bool {
    matches!(o, Outcome::Failed(s, _, Some(l), _) if *s == status && l.function_name == function)
}

struct Case {
    name: &'static str,
    calls: Vec<(&'static str, Vec<Vec<u8>>)>,
    /// What the interpreter must give for the last call (the test's own
    /// premise, checked before comparing executors).
    expect: fn(&Outcome) -> bool,
    /// Compiled code calls interpreted code in this case (auto's label).
    mixed: bool,
}

fn cases() -> Vec<Case> {
    let addr = AccountAddress::from_u64(0xcafe).0.to_vec();
    vec![
        Case {
            name: "interpreted callee returns",
            calls: vec![("call_long", vec![u64_arg(5), u64_arg(10)])],
            expect: |o| *o == Outcome::Returned(vec![u64_arg(5 + 45 + 1)]),
            mixed: true,
        },
        Case {
            name: "interpreted callee aborts",
            calls: vec![("call_long", vec![u64_arg(500), u64_arg(10)])],
            expect: |o| failed_in(o, StatusCode::ABORTED, "long") && matches!(o, Outcome::Failed(_, Some(500), ..)),
            mixed: true,
        },
        Case {
            name: "reference argument and reference result across the boundary",
            calls: vec![("via_ref", vec![u64_arg(3), u64_arg(4)])],
            expect: |o| *o == Outcome::Returned(vec![[vec![3u8], u64_arg(3), u64_arg(9), u64_arg(4)].concat()]),
            mixed: true,
        },
        Case {
            name: "interpreted callee aborts holding a reference",
            calls: vec![("via_ref", vec![u64_arg(3), u64_arg(4000)])],
            expect: |o| failed_in(o, StatusCode::ABORTED, "long_push"),
            mixed: true,
        },
        Case {
            name: "recursion through the boundary",
            calls: vec![("deep", vec![u64_arg(3), u64_arg(4)])],
            expect: |o| matches!(o, Outcome::Returned(_)),
            mixed: true,
        },
        Case {
            name: "depth limit in compiled code",
            calls: vec![("deep", vec![u64_arg(1100), u64_arg(0)])],
            expect: |o| failed_in(o, StatusCode::CALL_STACK_OVERFLOW, "deep"),
            mixed: false,
        },
        Case {
            name: "last frame allowed is interpreted",
            calls: vec![("deep", vec![u64_arg(1023), u64_arg(0)])],
            expect: |o| *o == Outcome::Returned(vec![u64_arg(1023)]),
            mixed: true,
        },
        Case {
            name: "depth limit at the call of the interpreted callee",
            calls: vec![("deep", vec![u64_arg(1024), u64_arg(0)])],
            expect: |o| failed_in(o, StatusCode::CALL_STACK_OVERFLOW, "deep"),
            mixed: false,
        },
        Case {
            name: "depth limit inside interpreted code",
            calls: vec![("deep", vec![u64_arg(1000), u64_arg(30)])],
            expect: |o| matches!(o, Outcome::Failed(StatusCode::CALL_STACK_OVERFLOW, _, Some(_), _)),
            mixed: true,
        },
        Case {
            name: "closure from storage, interpreted target",
            calls: vec![("store", vec![signer_arg(), u64_arg(7)]), ("call_stored", vec![addr.clone(), u64_arg(5)])],
            expect: |o| *o == Outcome::Returned(vec![u64_arg(12)]),
            mixed: true,
        },
        Case {
            name: "closure from storage, interpreted target aborts",
            calls: vec![("store", vec![signer_arg(), u64_arg(7)]), ("call_stored", vec![addr.clone(), u64_arg(5000)])],
            expect: |o| failed_in(o, StatusCode::ABORTED, "add_long") && matches!(o, Outcome::Failed(_, Some(7), ..)),
            mixed: true,
        },
        Case {
            name: "closure from storage, compilable target",
            calls: vec![("store_short", vec![signer_arg(), u64_arg(7)]), ("call_stored", vec![addr, u64_arg(5)])],
            expect: |o| *o == Outcome::Returned(vec![u64_arg(12)]),
            mixed: false,
        },
    ]
}

#[test]
fn compiled_callers_of_interpreted_callees_match_the_interpreter() {
    let st = storage();
    let mut bad = Vec::new();
    let mut metered_runs = 0;
    for case in cases() {
        let (io, ic, _) = run(ExecutorKind::Interpreter, &st, &case.calls, None);
        let last = &io.last().expect("a call").0;
        assert!((case.expect)(last), "{}: the interpreter gives {last:?}", case.name);
        for kind in [ExecutorKind::Auto, ExecutorKind::Jit] {
            let (o, c, label) = run(kind, &st, &case.calls, None);
            if (&o, &c) != (&io, &ic) {
                bad.push(format!("{} on {kind:?}: {o:?} {c:?} vs interpreter {io:?} {ic:?}", case.name));
            }
            if kind == ExecutorKind::Auto && case.mixed && label != "mixed" {
                bad.push(format!("{}: label {label} (expected mixed)", case.name));
            }
        }
        // Metered: the full budget, then budgets running out at several
        // points (inside the interpreted callee among them).
        let (full, ..) = run(ExecutorKind::Interpreter, &st, &case.calls, Some(u64::MAX / 4));
        let used: u64 = full.iter().map(|(_, g)| *g).max().unwrap_or(0);
        let mut budgets = vec![u64::MAX / 4, used, used.saturating_sub(1), used / 2, used / 3 + 7, used * 3 / 4, 40];
        budgets.dedup();
        for b in budgets {
            let i = run(ExecutorKind::Interpreter, &st, &case.calls, Some(b));
            let a = run(ExecutorKind::Auto, &st, &case.calls, Some(b));
            metered_runs += 1;
            if (&a.0, &a.1) != (&i.0, &i.1) {
                bad.push(format!("{} budget {b}: auto {:?} vs interpreter {:?}", case.name, a.0, i.0));
            }
        }
    }
    for b in &bad {
        eprintln!("DIFF {b}");
    }
    assert!(bad.is_empty(), "{} differences", bad.len());
    assert!(metered_runs > 0);
}

/// Out of gas inside the interpreted callee: the `OUT_OF_GAS` location is
/// an instruction of `long`, with all gas used, on both executors.
#[test]
fn out_of_gas_inside_the_interpreted_callee() {
    let st = storage();
    let calls = [("call_long", vec![u64_arg(5), u64_arg(1000)])];
    let (full, ..) = run(ExecutorKind::Interpreter, &st, &calls, Some(u64::MAX / 4));
    let used = full[0].1;
    let budget = used / 2;
    let (i, ..) = run(ExecutorKind::Interpreter, &st, &calls, Some(budget));
    let (a, _, label) = run(ExecutorKind::Auto, &st, &calls, Some(budget));
    assert!(failed_in(&i[0].0, StatusCode::OUT_OF_GAS, "long"), "{i:?}");
    assert_eq!(i[0].1, budget);
    assert_eq!(a, i);
    assert_eq!(label, "mixed");
}

/// A compiled loop calling an interpreted callee many times: same result
/// as the interpreter; prints the time per compiled-to-interpreted call.
#[test]
fn many_calls_into_the_interpreter() {
    let st = storage();
    let n = 20_000u64;
    let calls = [("loop_long", vec![u64_arg(n)])];
    let t = std::time::Instant::now();
    let (i, ..) = run(ExecutorKind::Interpreter, &st, &calls, None);
    let ti = t.elapsed().as_secs_f64() * 1e3;
    let t = std::time::Instant::now();
    let (a, _, label) = run(ExecutorKind::Auto, &st, &calls, None);
    let ta = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(i[0].0, Outcome::Returned(vec![u64_arg(n)]));
    assert_eq!(a, i);
    assert_eq!(label, "mixed");
    let (mi, ..) = run(ExecutorKind::Interpreter, &st, &calls, Some(u64::MAX / 4));
    let (ma, ..) = run(ExecutorKind::Auto, &st, &calls, Some(u64::MAX / 4));
    assert_eq!(ma, mi, "metered");
    println!(
        "{n} compiled-to-interpreted calls: interp {ti:.1} ms, auto {ta:.1} ms ({:.2} us per call on auto)",
        ta * 1e3 / n as f64
    );
}

/// A call of a native no registry provides: `MISSING_DEPENDENCY` at the
/// call with the interpreter's message on every executor (compiled code
/// raises the interpreter's error whole, `fail_with`).
#[test]
fn missing_native_fails_alike_on_every_executor() {
    let src = "version 9
module 0xcafe::nat

native fun missing(x: u64): u64

public fun call_missing(x: u64): u64
    move_loc x
    call missing
    ret
";
    let m = movejit_testkit::masm::assemble_module(src);
    let id = ModuleId::new(AccountAddress::from_u64(0xcafe), "nat");
    let mut st = InMemoryStorage::default();
    st.publish(id.clone(), movejit_format::serialize_module(&m));
    let outcome = |kind| {
        let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
        let mut session = engine.new_session(&st);
        let r = session.execute_function(&id, "call_missing", &[], &[u64_arg(7)], &mut GasMeter::unmetered());
        (r.expect_err("fails"), engine_label(session.compiled_stats().as_ref()))
    };
    let (want, _) = outcome(ExecutorKind::Interpreter);
    assert_eq!(want.status, StatusCode::MISSING_DEPENDENCY);
    assert_eq!(want.message.as_deref(), Some("native 0xcafe::nat::missing not found"));
    for kind in [ExecutorKind::Auto, ExecutorKind::Jit] {
        let (got, label) = outcome(kind);
        assert_eq!(got, want, "{kind:?}");
        assert_eq!(label, "jit", "{kind:?} compiled the caller");
    }
}

/// Metered calls across the boundary and between compiled functions, under
/// the unit and Aptos schedules: compiled code passes the gas left to a
/// compiled callee and gets it back in registers, an interpreter stub hands
/// it to the interpreter and back, an interpreted caller's compiled callee
/// takes it from the context through its trampoline, and a closure's
/// adapter passes it on. At balances dense around every point where each
/// call runs out (every balance under the unit schedule), `interp`, `auto`
/// and `jit` must agree on the status, location, results and gas used.
#[test]
fn metered_calls_across_the_boundary_agree_at_every_balance() {
    use movejit_engine::runtime::gas::aptos::AptosPricing;
    use movejit_testkit::balances::{agree_at_balances, every_executor};
    let st = storage();
    let id = ModuleId::new(AccountAddress::from_u64(0xcafe), "mixed");
    let addr = AccountAddress::from_u64(0xcafe).0.to_vec();
    let pricing = AptosPricing::v50();
    let full = pricing.limits.to_internal(1_000);
    let meters: [(&str, GasMeter); 2] =
        [("unit", GasMeter::new(CostTable::default(), full)), ("aptos", GasMeter::aptos(pricing.clone(), full))];
    let jit = JitOptions { max_code_len: MAX_CODE_LEN, ..JitOptions::default() };
    let engines = every_executor(&EngineConfig { jit, ..EngineConfig::aptos() });
    // (name, a setup call made on a full balance, the call made at each
    // balance, whether Aptos's schedule runs it compiled: a call graph
    // with an interpreted function runs interpreted there): compiled →
    // compiled (`rec`; `deep` recursing into `long_rec`; a closure's
    // adapter), compiled →
    // interpreted and back (`long_rec` calls `deep`), a reference across
    // the boundary, closures to interpreted and compiled targets.
    type Call = (&'static str, Vec<Vec<u8>>);
    let cases: Vec<(&str, Option<Call>, Call, bool)> = vec![
        ("compiled recursion", None, ("rec", vec![u64_arg(7)]), true),
        ("closure packed and called", None, ("apply_short", vec![u64_arg(7), u64_arg(5)]), true),
        ("closure calling", None, ("apply_calling", vec![u64_arg(4), u64_arg(5)]), true),
        ("compiled chain", None, ("deep", vec![u64_arg(6), u64_arg(0)]), false),
        ("interpreted callee", None, ("call_long", vec![u64_arg(5), u64_arg(4)]), false),
        ("both ways", None, ("deep", vec![u64_arg(2), u64_arg(3)]), false),
        ("reference", None, ("via_ref", vec![u64_arg(3), u64_arg(4)]), false),
        (
            "closure, interpreted target",
            Some(("store", vec![signer_arg(), u64_arg(7)])),
            ("call_stored", vec![addr.clone(), u64_arg(5)]),
            false,
        ),
        (
            "closure, compiled target",
            Some(("store_short", vec![signer_arg(), u64_arg(7)])),
            ("call_stored", vec![addr.clone(), u64_arg(5)]),
            true,
        ),
    ];
    let observe = |engine: &movejit_engine::Engine, meter: &GasMeter, setup: &Option<Call>, call: &Call, b: u64| {
        let mut session = engine.new_session(&st);
        if let Some((f, args)) = setup {
            let r = session.execute_function(&id, f, &[], args, &mut meter.with_budget(full));
            assert!(r.is_ok(), "setup {f}: {r:?}");
        }
        let mut gas = meter.with_budget(b);
        let r = session.execute_function(&id, call.0, &[], &call.1, &mut gas);
        let compiled = session.compiled_stats().map_or(0, |s| s.compiled_functions);
        let o = match r {
            Ok(r) => Outcome::Returned(r.returns),
            Err(e) => Outcome::Failed(e.status, e.sub_status, e.location, e.message),
        };
        ((o, gas.used()), compiled)
    };
    let mut diffs = Vec::new();
    for (schedule, meter) in &meters {
        for (name, setup, call, aptos_compiles) in &cases {
            let ((whole, total), _) = observe(&engines[0].1, meter, setup, call, full);
            assert!(matches!(whole, Outcome::Returned(_)), "{schedule} {name}: {whole:?}");
            // Every balance when there are few, else a dense spread with
            // each point's neighbours.
            let balances: Vec<u64> = if total <= 400 {
                (0..=total + 1).collect()
            } else {
                (0..=120u64)
                    .map(|k| total.saturating_mul(k) / 120)
                    .flat_map(|b| [b.saturating_sub(1), b, b + 1])
                    .collect()
            };
            let agreement = agree_at_balances(&engines, balances, |engine, b| observe(engine, meter, setup, call, b));
            if *schedule == "unit" || *aptos_compiles {
                assert!(agreement.compiled_runs > 0, "{schedule} {name}: never ran compiled");
            }
            let ran_out = agreement
                .reference
                .iter()
                .filter(|(_, (o, _))| matches!(o, Outcome::Failed(StatusCode::OUT_OF_GAS, ..)))
                .count();
            assert!(ran_out > 0 && ran_out < agreement.reference.len(), "{schedule} {name}: {ran_out} out of gas");
            diffs.extend(agreement.diffs.into_iter().map(|d| format!("{schedule} {name}: {d}")));
        }
    }
    for d in diffs.iter().take(12) {
        eprintln!("DIFF {d}");
    }
    assert!(diffs.is_empty(), "the executors disagree in {} runs", diffs.len());
}
