//! Tiny-gas reruns over the reference benchmarks (`shared/bench`): every
//! benchmark, and its Sui build where the manifest has one, at its smallest
//! size (the reference sizes take seconds per run in a debug build; `movejit
//! diff --suite ../shared/bench --size reference` runs those in release).
//! Each runs with a full budget (its result must be the manifest's), then
//! with budgets running out at evenly spaced points of the gas it used, on
//! the interpreter and on executor `jit` (or `auto` where `jit` refuses):
//! every run must be identical, `OUT_OF_GAS` location and gas used included.

use movejit_benches::manifest::Suite;
use movejit_diff::{run_both_with, JitVerdict, Options};
use movejit_format::StatusCode;
use movejit_tests::shared_dir;

/// Budgets per benchmark: none off x86-64 (full runs only), where CI runs
/// this under qemu.
const GAS_POINTS: u64 = if cfg!(target_arch = "x86_64") { 2 } else { 0 };

#[test]
fn bench_suite_agrees_under_tiny_gas() {
    let suite = Suite::load(&shared_dir().join("bench")).expect("shared/bench manifest");
    let opts = Options { full_budget: 1 << 40, gas_points: GAS_POINTS, ..Options::default() };
    let (mut on_jit, mut mixed, mut interp_only, mut runs, mut oog) = (0, 0, 0, 0, 0);
    let (mut problems, mut not_runnable) = (Vec::new(), Vec::new());
    let benches = suite.benchmarks.iter().flat_map(|b| b.with_sui_variant());
    for b in benches {
        let program = suite.program(&b, b.smallest_case()).unwrap_or_else(|e| panic!("{}: {e}", b.name));
        let case = program.diff_case(&b.name).unwrap_or_else(|e| panic!("{}: {e}", b.name));
        let c = match run_both_with(&case, &opts) {
            Ok(c) => c,
            Err(d) => {
                problems.push(format!("DIVERGENCE {}: {d}", b.name));
                continue;
            }
        };
        // A native the runtime does not provide yet.
        if c.outcome.status == StatusCode::MISSING_DEPENDENCY {
            not_runnable.push(b.name.clone());
            continue;
        }
        if c.outcome.status != StatusCode::EXECUTED || c.outcome.returns != program.expect {
            problems.push(format!("{}: wrong result {} (expected {:?})", b.name, c.outcome, program.expect));
        }
        let how = match &c.jit {
            JitVerdict::Agreed => {
                on_jit += 1;
                "jit".to_string()
            }
            JitVerdict::Mixed(r) => {
                mixed += 1;
                format!("auto (jit: {r})")
            }
            JitVerdict::Unsupported(r) | JitVerdict::Rejected(r) => {
                interp_only += 1;
                format!("interp only ({r})")
            }
        };
        runs += c.runs;
        oog += c.out_of_gas;
        println!("{:<22} gas {:>10}  {:>3} runs  {how}", b.name, c.outcome.gas_used, c.runs);
    }
    println!(
        "compared on jit {on_jit}, on auto {mixed}, interpreter only {interp_only}; {runs} executions ({oog} out of gas); not runnable here: {not_runnable:?}"
    );
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(on_jit + mixed >= 10, "too few benchmarks compared on compiled code");
    assert!(not_runnable.is_empty(), "{not_runnable:?}");
}
