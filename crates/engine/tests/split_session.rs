//! Split functions inside a session (`JitConfig::unchecked_copy_max_len`,
//! executor `Jit`, unmetered): the fast copy hands frames near the
//! operand-stack or call-depth limit to its checking copy, which in a
//! session is an interpreter stub. Recursions driven into both limits at
//! every depth around them must give the interpreter's status, abort code,
//! location and results, with the limit reached at more than one offset.

use movejit_engine::runtime::gas::aptos::AptosPricing;
use movejit_engine::runtime::{AccountAddress, CostTable, GasMeter, InMemoryStorage, ModuleId, StatusCode};
use movejit_engine::{new_engine, Engine, EngineConfig, ExecutorKind};
use movejit_testkit::balances::{agree_at_balances, every_executor};

/// The JIT's split test's module (recursions that hold values near the
/// limits).
const SOURCE: &str = include_str!("../../jit/tests/split.masm");

/// Status, abort code or sub-status, location (function, offset), results.
type Observed = (StatusCode, Option<u64>, Option<(u16, u16)>, Vec<Vec<u8>>);

fn observe(kind: ExecutorKind, st: &InMemoryStorage, id: &ModuleId, f: &str, n: u64) -> Observed {
    let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
    observe_on(&engine, st, id, f, n, &mut GasMeter::unmetered()).0
}

/// `f(n)` on `engine` charged to `gas`: what it observed and how many
/// function instances ran compiled.
fn observe_on(
    engine: &Engine,
    st: &InMemoryStorage,
    id: &ModuleId,
    f: &str,
    n: u64,
    gas: &mut GasMeter,
) -> (Observed, usize) {
    let mut session = engine.new_session(st);
    let args = [n.to_le_bytes().to_vec()];
    let r = session.execute_function(id, f, &[], &args, gas);
    let compiled = session.compiled_stats().map_or(0, |s| s.compiled_functions);
    let observed = match r {
        Ok(r) => (StatusCode::EXECUTED, None, None, r.returns),
        Err(e) => (e.status, e.sub_status, e.location.map(|l| (l.function_index, l.code_offset)), Vec::new()),
    };
    (observed, compiled)
}

#[test]
fn near_limit_frames_fail_as_the_interpreter() {
    let st = movejit_testkit::masm::storage_with(&format!("version 9\n{SOURCE}"));
    let id = ModuleId::new(AccountAddress::from_u64(0xcafe), "split");
    // (function, depths to run, statuses the interpreter must show).
    let cases: [(&str, std::ops::Range<u64>, &[StatusCode]); 3] = [
        ("hold2", 500..516, &[StatusCode::EXECUTED, StatusCode::EXECUTION_STACK_OVERFLOW]),
        ("hold3", 500..516, &[StatusCode::EXECUTED, StatusCode::EXECUTION_STACK_OVERFLOW]),
        ("chain", 1018..1030, &[StatusCode::EXECUTED, StatusCode::CALL_STACK_OVERFLOW]),
    ];
    let mut bad = Vec::new();
    for (f, depths, statuses) in cases {
        let mut outcomes = std::collections::BTreeSet::new();
        for n in depths.chain([0, 3, 5000]) {
            let want = observe(ExecutorKind::Interpreter, &st, &id, f, n);
            let got = observe(ExecutorKind::Jit, &st, &id, f, n);
            outcomes.insert((want.0, want.2));
            if got != want {
                bad.push(format!("{f}({n}): jit {got:?} interp {want:?}"));
            }
        }
        for s in statuses {
            assert!(outcomes.iter().any(|o| o.0 == *s), "{f}: no {s:?} in {outcomes:?}");
        }
        if f != "chain" {
            let places: std::collections::BTreeSet<_> =
                outcomes.iter().filter(|o| o.0 == StatusCode::EXECUTION_STACK_OVERFLOW).map(|o| o.1).collect();
            assert!(places.len() > 1, "{f}: overflows only at {places:?}");
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// Metered split functions (unit and Aptos schedules): the fast copy of a
/// metered function tests neither room nor depth, its entry does once, and
/// frames near a limit run the compiled checking copy. Each recursion near
/// the operand-stack or call-depth limit, at balances from well short of
/// its whole charge to past it (running out before, at and after the
/// frames near the limit), must give the interpreter's status, location,
/// results and gas used on `auto` and `jit`.
#[test]
fn metered_frames_near_the_limits_agree_at_every_balance() {
    let st = movejit_testkit::masm::storage_with(&format!("version 9\n{SOURCE}"));
    let id = ModuleId::new(AccountAddress::from_u64(0xcafe), "split");
    let pricing = AptosPricing::v50();
    let full = pricing.limits.to_internal(1_000);
    let meters: [(&str, GasMeter); 2] =
        [("unit", GasMeter::new(CostTable::default(), full)), ("aptos", GasMeter::aptos(pricing.clone(), full))];
    // (function, argument, status the interpreter shows at a full balance).
    let cases: [(&str, u64, StatusCode); 6] = [
        ("hold2", 505, StatusCode::EXECUTED),
        ("hold2", 515, StatusCode::EXECUTION_STACK_OVERFLOW),
        ("hold3", 505, StatusCode::EXECUTED),
        ("hold3", 515, StatusCode::EXECUTION_STACK_OVERFLOW),
        ("chain", 1020, StatusCode::EXECUTED),
        ("chain", 1030, StatusCode::CALL_STACK_OVERFLOW),
    ];
    let mut diffs = Vec::new();
    for (schedule, meter) in &meters {
        let engines = every_executor(&EngineConfig::aptos());
        for (f, n, status) in cases {
            let mut whole = meter.with_budget(full);
            let (want, _) = observe_on(&engines[0].1, &st, &id, f, n, &mut whole);
            assert_eq!(want.0, status, "{schedule} {f}({n})");
            let total = whole.used();
            let balances = (0..48u64).map(|k| total / 2 + total / 2 / 40 * k + k * 997 % 101);
            let agreement = agree_at_balances(&engines, balances, |engine, balance| {
                let mut gas = meter.with_budget(balance);
                let (observed, compiled) = observe_on(engine, &st, &id, f, n, &mut gas);
                ((observed, gas.used()), compiled)
            });
            assert!(agreement.compiled_runs > 0, "{schedule} {f}({n}) never ran compiled");
            let ran_out = agreement.reference.iter().filter(|(_, (o, _))| o.0 == StatusCode::OUT_OF_GAS).count();
            assert!(ran_out > 0 && ran_out < agreement.reference.len(), "{schedule} {f}({n}): {ran_out} out of gas");
            diffs.extend(agreement.diffs.into_iter().map(|d| format!("{schedule} {f}({n}) {d}")));
        }
    }
    for d in diffs.iter().take(12) {
        eprintln!("DIFF {d}");
    }
    assert!(diffs.is_empty(), "the executors disagree in {} runs", diffs.len());
}
