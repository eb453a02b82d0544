//! The Sui transactional-test replay (shared/conformance/sui) on the
//! engine's `auto` and `jit` executors, task by task against the
//! interpreter and the real Sui VM's results: `auto` must agree on every
//! task; `jit` must agree on every call it compiles (the rest are refused
//! with `JIT_NOT_COMPILED`, counted by reason).

use movejit_engine::runtime::StatusCode;
use movejit_engine::{new_engine, Engine, EngineConfig, ExecutorKind, JIT_NOT_COMPILED};
use movejit_testkit::sui::{replay_sui_test, sui_genesis, sui_loose, sui_tests, SuiGot, SuiTask};
use std::collections::BTreeMap;

fn engine(kind: ExecutorKind) -> Engine {
    new_engine(EngineConfig { executor: kind, ..EngineConfig::sui() })
}

/// Why the JIT refused a call, if it did (the compile error, details cut).
fn not_compiled(g: &SuiGot) -> Option<(String, String)> {
    if g.status.as_deref() != Some(StatusCode::FEATURE_NOT_ENABLED.name()) {
        return None;
    }
    let m = g.message.as_deref()?.strip_prefix(JIT_NOT_COMPILED)?;
    // "<address>::<module>::<function>: <why>"
    let why = m.split_once(": ").map(|x| x.1).unwrap_or(m);
    let why = why.strip_prefix("not supported by the JIT yet: ").unwrap_or(why);
    Some((why.split(['(', '<']).next().unwrap_or(why).trim().to_string(), why.to_string()))
}

#[test]
fn sui_auto_and_jit_match_interpreter_and_real_vm() {
    let tests = sui_tests();
    assert!(tests.len() > 100, "expected the full test file");
    let (interp, auto, jit) =
        (engine(ExecutorKind::Interpreter), engine(ExecutorKind::Auto), engine(ExecutorKind::Jit));
    let base = sui_genesis(&interp);
    let (mut tasks, mut calls, mut auto_agree, mut auto_ran_compiled) = (0, 0, 0, 0);
    let (mut jit_compiled, mut jit_ran_mixed) = (0, 0);
    let mut jit_not: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut bad = Vec::new();
    for test in &tests {
        let i = replay_sui_test(&interp, &base, test);
        let a = replay_sui_test(&auto, &base, test);
        let j = replay_sui_test(&jit, &base, test);
        assert!(i.len() == a.len() && i.len() == j.len(), "{}: task counts differ", test["id"]);
        for ((i, a), j) in i.iter().zip(&a).zip(&j) {
            tasks += 1;
            let agrees = |x: &SuiTask| x.got == i.got && sui_loose(x);
            if agrees(a) {
                auto_agree += 1;
            } else {
                bad.push(format!("auto {}: {:?}\n    interp {:?}", a.id, a.got, i.got));
            }
            if i.action == "publish" {
                continue;
            }
            calls += 1;
            auto_ran_compiled += (a.ran_compiled > 0) as usize;
            if let Some((why, full)) = not_compiled(&j.got) {
                jit_not.entry(why).or_insert_with(|| (0, format!("{}: {full}", j.id))).0 += 1;
            } else if agrees(j) {
                jit_compiled += 1;
                jit_ran_mixed += (j.ran_interpreted > 0) as usize;
            } else {
                bad.push(format!("jit {}: {:?}\n    interp {:?}", j.id, j.got, i.got));
            }
        }
    }
    let not: usize = jit_not.values().map(|v| v.0).sum();
    eprintln!(
        "sui on the engine: {tasks} tasks ({calls} calls); auto agrees {auto_agree}/{tasks} ({auto_ran_compiled} calls ran compiled code); \
         jit compiled and agrees {jit_compiled}/{calls} ({jit_ran_mixed} of them partly interpreted), not compiled {not}"
    );
    let mut reasons: Vec<_> = jit_not.iter().collect();
    reasons.sort_by_key(|r| std::cmp::Reverse(r.1 .0));
    for (why, (n, example)) in reasons {
        eprintln!("  {n:>5}  {why}  (e.g. {example})");
    }
    for b in bad.iter().take(40) {
        eprintln!("DIFF {b}");
    }
    assert!(bad.is_empty(), "{} differences", bad.len());
    assert!(tasks > 500 && calls > 400, "expected the full test file");
    // Floors: what compiles today (coverage must not silently go down).
    assert!(jit_compiled >= 473, "jit compiled only {jit_compiled} calls");
    assert!(auto_ran_compiled >= 400, "auto ran only {auto_ran_compiled} calls compiled");
}
