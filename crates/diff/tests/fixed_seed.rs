//! A fixed-seed budget of generated programs on both executors: no
//! divergence, few verifier rejections, and the generator reaching every
//! opcode family. Small enough for the test profile (`cargo test -p
//! movejit-diff`); the CLI runs the large budgets.

use movejit_diff::driver::Stats;
use movejit_diff::Options;

#[test]
fn fixed_seed_budget_has_no_divergence() {
    let mut stats = Stats::default();
    let opts = Options { full_budget: 1_000_000, gas_points: 6, ..Options::default() };
    for i in 0..48 {
        stats.run_generated(7, i, &opts);
    }
    println!("{}", stats.summary());
    for f in &stats.divergences {
        println!("DIVERGENCE {} ({}): {}", f.name, f.case.describe(), f.divergence);
    }
    assert!(stats.divergences.is_empty(), "{} divergences", stats.divergences.len());
    assert_eq!(stats.rejected_total(), 0, "verifier/assembler rejections: {:?}", stats.rejected);
    assert!(stats.compared > 60, "only {} cases compared on the JIT", stats.compared);
    assert!(stats.out_of_gas > 200, "only {} tiny-gas runs ran out of gas", stats.out_of_gas);
}

/// The same kind of budget under Aptos's production schedule: every
/// executor charges Aptos's gas (instructions, calls, value sizes, memory
/// quota, module loads) identically, so runs out of gas at the same charge.
#[test]
fn fixed_seed_budget_under_aptos_gas_has_no_divergence() {
    use movejit_diff::Schedule;
    let mut stats = Stats::default();
    let full_budget = movejit_engine::runtime::gas::aptos::AptosPricing::v50().limits.to_internal(2_000_000);
    let opts = Options { full_budget, gas_points: 6, schedule: Schedule::Aptos, ..Options::default() };
    for i in 0..32 {
        stats.run_generated(17, i, &opts);
    }
    println!("{}", stats.summary());
    for f in &stats.divergences {
        println!("DIVERGENCE {} ({}): {}", f.name, f.case.describe(), f.divergence);
    }
    assert!(stats.divergences.is_empty(), "{} divergences", stats.divergences.len());
    assert!(stats.compared > 40, "only {} cases compared on the JIT", stats.compared);
    assert!(stats.out_of_gas > 100, "only {} tiny-gas runs ran out of gas", stats.out_of_gas);
}

/// Every generated opcode family appears in a modest stream (generation and
/// verification only: no execution, so it is quick).
#[test]
fn generator_reaches_every_family() {
    use movejit_diff::coverage::Coverage;
    use movejit_diff::driver::program_at;
    use movejit_diff::gen;
    use movejit_diff::rng::Rng;
    let mut cov = Coverage::default();
    let mut rejected = 0;
    for i in 0..600u64 {
        let mut rng = Rng::new(11u64.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i);
        let p = program_at(&mut rng, i);
        match gen::build(&p, "cov") {
            Ok(cases) => cov.add_module(cases[0].modules.last().expect("module")),
            Err(_) => rejected += 1,
        }
    }
    println!("{}", cov.table());
    assert_eq!(rejected, 0);
    let missing: Vec<&str> = cov.missing().iter().map(|o| o.name()).collect();
    // Each family (aptos and sui enums, closures, globals, ...) must be present.
    let families: std::collections::BTreeSet<&str> =
        cov.counts.keys().map(|o| movejit_diff::coverage::family(*o)).collect();
    assert_eq!(families.len(), 17, "families reached: {families:?}; missing opcodes {missing:?}");
}

/// The minimizer keeps what its predicate needs: here "still assembles,
/// verifies and aborts with the same code" on a generated program that
/// aborts, so the result is a much smaller module with the same outcome.
#[test]
fn shrink_keeps_the_property() {
    use movejit_diff::driver::program_at;
    use movejit_diff::gen;
    use movejit_diff::minimize::shrink;
    use movejit_diff::rng::Rng;
    use movejit_diff::{run_both_with, Outcome};
    let opts = Options { full_budget: 1_000_000, gas_points: 0, assume_verified: true, ..Options::default() };
    let outcome = |p: &gen::Program| -> Option<Outcome> {
        let cases = gen::build(p, "t").ok()?;
        run_both_with(&cases[0], &opts).ok().map(|c| c.outcome)
    };
    let mut found = None;
    for i in 0..400u64 {
        if i % 4 == 3 {
            continue;
        }
        let mut rng = Rng::new(5u64.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i);
        let mut p = program_at(&mut rng, i);
        p.calls.truncate(1);
        if let Some(o) = outcome(&p) {
            if o.status == movejit_format::StatusCode::ABORTED && p.units.last().unwrap().lines().count() > 40 {
                found = Some((p, o));
                break;
            }
        }
    }
    let (p, want) = found.expect("an aborting generated program");
    let text = p.units.last().unwrap().clone();
    let small = shrink(&text, "f0", |t| {
        let mut q = p.clone();
        *q.units.last_mut().unwrap() = t.to_string();
        outcome(&q).is_some_and(|o| o.status == want.status && o.abort_code == want.abort_code)
    });
    println!("{} -> {} lines:\n{small}", text.lines().count(), small.lines().count());
    assert!(small.lines().count() * 2 < text.lines().count(), "did not shrink");
    let mut q = p.clone();
    *q.units.last_mut().unwrap() = small;
    let got = outcome(&q).expect("minimized program runs");
    assert_eq!((got.status, got.abort_code), (want.status, want.abort_code));
}

/// A fixed-seed stream of single-instruction programs (edge operands,
/// parameters or constants), each checked against both executors and
/// against Move's result computed by `IntOp::eval` (a shared bug is a
/// divergence with field "oracle").
#[test]
fn single_instructions_match_moves_rules() {
    use movejit_diff::gen::single;
    use movejit_diff::rng::Rng;
    let mut stats = Stats::default();
    let opts = Options { full_budget: 1_000_000, gas_points: 0, assume_verified: true, ..Options::default() };
    let mut with_oracle = 0;
    for i in 0..400u64 {
        let mut rng = Rng::new(13u64.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i);
        let p = single::generate(&mut rng);
        with_oracle += usize::from(p.expect.is_some());
        stats.run_program(&p, &format!("single #{i}"), &opts);
    }
    for f in &stats.divergences {
        println!("DIVERGENCE {} ({}): {}", f.name, f.case.describe(), f.divergence);
    }
    assert!(stats.divergences.is_empty(), "{} divergences", stats.divergences.len());
    assert_eq!(stats.rejected_total(), 0, "rejections: {:?}", stats.rejected);
    assert!(with_oracle > 250, "only {with_oracle} of 400 programs had an expected result");
    let errors = stats.statuses.get("ARITHMETIC_ERROR").copied().unwrap_or(0);
    assert!(errors > 40 && errors < 300, "{errors} arithmetic errors: operands are not at the edges");
}
