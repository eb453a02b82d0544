//! Every Aptos conformance case on both executors: full budget, then
//! tiny budgets running out at ~24 points of the gas the case used. Cases
//! executor `jit` does not compile whole are compared on `auto` (mixed
//! execution) when part of them compiles; the rest run on the interpreter
//! only and are counted, not compared.

use movejit_diff::{run_both_with, JitVerdict, Options};
use movejit_tests::aptos_conformance_cases;
use std::collections::BTreeMap;

/// Tiny-gas budgets per case: fewer off x86-64, where CI runs this under qemu.
const GAS_POINTS: u64 = if cfg!(target_arch = "x86_64") { 24 } else { 3 };

#[test]
fn aptos_conformance_cases_agree_under_tiny_gas() {
    let (cases, bad) = aptos_conformance_cases();
    assert!(bad.is_empty(), "unreadable cases: {bad:?}");
    assert!(cases.len() > 2000, "only {} cases", cases.len());
    let opts = Options { full_budget: 50_000_000, gas_points: GAS_POINTS, ..Options::default() };
    let (mut compared, mut mixed, mut runs, mut oog) = (0u64, 0u64, 0u64, 0u64);
    let mut unsupported: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_family: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut divergences = Vec::new();
    for (family, case) in &cases {
        let e = by_family.entry(family.clone()).or_default();
        e.0 += 1;
        match run_both_with(case, &opts) {
            Ok(c) => match c.jit {
                JitVerdict::Agreed => {
                    compared += 1;
                    e.1 += 1;
                    runs += c.runs;
                    oog += c.out_of_gas;
                }
                JitVerdict::Mixed(_) => {
                    mixed += 1;
                    runs += c.runs;
                    oog += c.out_of_gas;
                }
                JitVerdict::Unsupported(r) => *unsupported.entry(r).or_default() += 1,
                // The verifier suite's hand-written bad modules: the
                // interpreter refuses them, the JIT is never given them.
                JitVerdict::Rejected(r) => *unsupported.entry(format!("module rejected: {r}")).or_default() += 1,
            },
            Err(d) => divergences.push(format!("{} ({}): {d}", case.name, case.describe())),
        }
    }
    println!(
        "{} cases; compared on JIT {compared}, on auto (partly compiled) {mixed} ({runs} executions, {oog} out of gas)",
        cases.len()
    );
    for (f, (n, c)) in &by_family {
        println!("  {f:<14} {c:>5}/{n:<5} compared");
    }
    for (r, n) in &unsupported {
        println!("  interp only {n:>5}  {r}");
    }
    for d in divergences.iter().take(20) {
        println!("DIVERGENCE {d}");
    }
    assert!(compared > 1000 && oog > 500 * GAS_POINTS, "too little compared: {compared} cases, {oog} out-of-gas runs");
    assert!(divergences.is_empty(), "{} divergences", divergences.len());
}
