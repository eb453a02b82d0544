//! A fixed-seed budget of generated programs on both executors: no
//! divergence, few verifier rejections, and the generator reaching every
//! opcode family. Small enough for the test profile (`cargo test -p
//! movejit-diff`); the CLI runs the large budgets.

use movejit_diff::driver::Stats;
use movejit_diff::Options;

#[test]
fn fixed_seed_budget_has_no_divergence() {
    let mut stats = Stats::default();
    let opts = Options { full_budget: 1_000_000, gas_points: 6, assume_verified: false };
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
