//! The interpreter's executor table (every Aptos oracle case) on the
//! engine's `auto` and `jit` executors: results must be identical to the
//! interpreter's and to the expected results; metered reruns compare gas
//! used and the `OUT_OF_GAS` location too.

use movejit_engine::runtime::{CostTable, GasMeter, StatusCode};
use movejit_engine::{engine_label, new_engine, Engine, EngineConfig, ExecutorKind, JIT_NOT_COMPILED};
use movejit_testkit::*;

fn engine(kind: ExecutorKind) -> Engine {
    new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() })
}

struct On(Engine, &'static str);

impl CaseExecutor for On {
    fn name(&self) -> &'static str {
        self.1
    }
    fn run(&self, case: &Case) -> Result<Outcome, String> {
        run_on_interp(&self.0, case)
    }
}

fn not_compiled(o: &Outcome) -> bool {
    o.status == StatusCode::FEATURE_NOT_ENABLED.name()
        && o.message.as_deref().is_some_and(|m| m.starts_with(JIT_NOT_COMPILED))
}

#[test]
fn auto_and_jit_match_interpreter_and_oracle() {
    let cases = load_aptos_cases();
    assert!(cases.len() >= 2000, "expected the full case file, got {}", cases.len());
    let interp = On(engine(ExecutorKind::Interpreter), "interp");
    let auto = On(engine(ExecutorKind::Auto), "auto");
    let jit = On(engine(ExecutorKind::Jit), "jit");
    let (mut auto_agree, mut jit_compiled, mut jit_not) = (0, 0, 0);
    let mut bad = Vec::new();
    for case in &cases {
        let i = interp.run(case);
        let a = auto.run(case);
        match &a {
            Ok(out) if Ok(out) == i.as_ref() && compare(case, out).is_empty() => auto_agree += 1,
            _ => bad.push(format!("auto {}: {a:?} vs interp {i:?}", case.id)),
        }
        match jit.run(case) {
            Ok(out) if not_compiled(&out) => jit_not += 1,
            Ok(out) if Ok(&out) == i.as_ref() && compare(case, &out).is_empty() => jit_compiled += 1,
            j => bad.push(format!("jit {}: {j:?} vs interp {i:?}", case.id)),
        }
    }
    eprintln!(
        "auto agrees {auto_agree}/{}; jit compiled {jit_compiled} cases (identical), not compiled {jit_not}",
        cases.len()
    );
    for b in bad.iter().take(40) {
        eprintln!("DIFF {b}");
    }
    assert!(bad.is_empty(), "{} differences", bad.len());
    assert!(jit_compiled > 0, "the JIT compiled no case");
}

/// One metered run: (outcome, gas used, engine label).
fn run_metered(engine: &Engine, case: &Case, budget: u64) -> Result<(Outcome, u64, &'static str), String> {
    let call = case.call()?;
    let mut session = engine.new_session(&call.storage);
    let mut gas = GasMeter::new(CostTable::default(), budget);
    let r = session.execute_function(&call.module, &call.function, &call.ty_args, &call.args, &mut gas);
    let label = engine_label(session.compiled_stats().as_ref());
    Ok((outcome_of(r), gas.used(), label))
}

#[test]
fn metered_gas_identical() {
    // Full budget, then budgets cutting each run short at several points.
    let cases = load_aptos_cases();
    let interp = engine(ExecutorKind::Interpreter);
    let auto = engine(ExecutorKind::Auto);
    let (mut runs, mut compiled_runs, mut mixed_runs) = (0, 0, 0);
    let mut bad = Vec::new();
    for case in &cases {
        let Ok((_, full, _)) = run_metered(&interp, case, u64::MAX / 4) else { continue };
        let mut budgets = vec![u64::MAX / 4, full];
        for d in [1, 2, 3, 7] {
            budgets.push(full.saturating_sub(d));
            budgets.push(full / d);
        }
        for b in budgets {
            let i = run_metered(&interp, case, b);
            let a = run_metered(&auto, case, b);
            runs += 1;
            match (&i, &a) {
                (Ok((io, ig, _)), Ok((ao, ag, label))) if io == ao && ig == ag => {
                    if *label != "interp" {
                        compiled_runs += 1;
                    }
                    if *label == "mixed" {
                        mixed_runs += 1;
                    }
                }
                _ => bad.push(format!("{} budget {b}: interp {i:?} auto {a:?}", case.id)),
            }
        }
    }
    eprintln!(
        "metered: {runs} runs identical gas/outcome checks, {compiled_runs} ran (partly) compiled, {mixed_runs} mixed"
    );
    for b in bad.iter().take(40) {
        eprintln!("DIFF {b}");
    }
    assert!(bad.is_empty(), "{} differences", bad.len());
    assert!(compiled_runs > 0);
    // Every case's entry and callees compile now (closures read from
    // storage included); mixed runs are exercised by `mixed_calls.rs` and
    // `seam_mixed.rs`, which keep functions interpreted on purpose.
}
