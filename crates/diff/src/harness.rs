//! Running a case on both executors and comparing, with a full gas budget
//! and then with tiny budgets that run out at many points.

#![forbid(unsafe_code)]
// A divergence carries both full outcomes; it is rare and ends the case.
#![allow(clippy::result_large_err)]

use crate::case::Case;
use crate::exec::{Executor, Prepared, RunError, Schedule};
use crate::outcome::{Divergence, Outcome};
use movejit_format::StatusCode;

/// How a case is compared.
#[derive(Clone, Debug)]
pub struct Options {
    /// The budget of the first run (programs that use it all are compared
    /// as out of gas).
    pub full_budget: u64,
    /// Tiny-gas reruns: about this many budgets spread evenly over the gas
    /// the full run used (every k-th unit), plus the edges. 0: none.
    pub gas_points: u64,
    /// Skip the verifier gate (the caller verified the modules already).
    pub assume_verified: bool,
    /// Also run the case twice with the full budget on `Auto` switching
    /// tiers inside the run ([`Prepared::tiered`], a threshold of 1 to 3
    /// calls picked from the case).
    pub tier_switch: bool,
    /// The gas schedule of Aptos-flavoured cases (Sui cases: always the
    /// unit schedule). Budgets are in the schedule's internal units.
    pub schedule: Schedule,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            full_budget: 5_000_000,
            gas_points: 12,
            assume_verified: false,
            tier_switch: true,
            schedule: Schedule::Unit,
        }
    }
}

/// The tier-switch threshold of `case`: 1 to 3, from its name and call.
fn switch_threshold(case: &Case) -> u32 {
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(&(&case.name, &case.function, &case.args), &mut h);
    1 + (std::hash::Hasher::finish(&h) % 3) as u32
}

/// Verifies every module of `case` against the case's other modules (the
/// executors' shared precondition) with the rules for modules loaded from
/// storage (a friend need not be present, as when the interpreter loads
/// them). The first failure as `STATUS: message`.
pub fn verify_case(case: &Case) -> Result<(), String> {
    let base = match case.flavour {
        movejit_format::StatusFlavour::Aptos => movejit_verifier::VerifierConfig::aptos(),
        movejit_format::StatusFlavour::Sui => movejit_verifier::VerifierConfig::sui(),
    };
    let config = movejit_verifier::VerifierConfig { check_friends_exist: false, ..base };
    for m in &case.modules {
        let deps: Vec<&movejit_format::CompiledModule> = m
            .immediate_dependencies()
            .iter()
            .filter_map(|(a, n)| case.modules.iter().find(|d| d.address() == a && d.name() == n))
            .collect();
        movejit_verifier::verify_module(m, &deps, &config)
            .map_err(|e| format!("{}: {}", e.status.name(), e.message))?;
    }
    Ok(())
}

/// What the JIT did with a case that did not diverge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JitVerdict {
    /// Executor `jit` compiled the whole call graph: same outcome on every
    /// budget.
    Agreed,
    /// Executor `jit` refused (reason) but `auto` ran part of the call graph
    /// compiled: same outcome on every budget.
    Mixed(String),
    /// Not compiled at all yet (reason); only the interpreter ran.
    Unsupported(String),
    /// A module of the case does not verify (status): the JIT's
    /// precondition fails, so only the interpreter ran (and must refuse).
    Rejected(String),
}

/// A case both executors agree on (or the JIT does not handle yet).
#[derive(Clone, Debug)]
pub struct Compared {
    /// The interpreter's outcome with the full budget.
    pub outcome: Outcome,
    pub jit: JitVerdict,
    /// Runs compared (full + reruns) and how many of them ran out of gas.
    pub runs: u64,
    pub out_of_gas: u64,
}

/// Budgets for the tiny-gas reruns of a run that used `used` units.
pub fn gas_budgets(used: u64, points: u64) -> Vec<u64> {
    if points == 0 {
        return Vec::new();
    }
    let step = (used / points).max(1);
    let mut v: Vec<u64> = (0..=points).map(|i| i * step).filter(|b| *b < used).collect();
    v.extend([1, 9, 10, 11, used.saturating_sub(1), used / 2 + 1]);
    v.retain(|b| *b < used);
    v.sort_unstable();
    v.dedup();
    v
}

fn compare(
    executor: &'static str,
    budget: u64,
    interp: Outcome,
    other: Result<Outcome, RunError>,
) -> Result<Outcome, Divergence> {
    match other {
        Ok(j) => match interp.first_difference(&j) {
            None => Ok(interp),
            Some(field) => Err(Divergence { budget, field, executor, interp, jit: Ok(j) }),
        },
        Err(RunError::Failed(e)) | Err(RunError::Unsupported(e)) => {
            Err(Divergence { budget, field: "run", executor, interp, jit: Err(e) })
        }
    }
}

fn interp_failed(budget: u64, e: RunError) -> Divergence {
    Divergence { budget, field: "interp run", executor: "interp", interp: setup_failure(), jit: Err(format!("{e:?}")) }
}

/// Runs `case` on the interpreter and on executor `jit` (or, where `jit`
/// refuses, on `auto`: mixed execution, the callees that compile run
/// compiled) with the full budget and
/// every tiny budget, comparing everything observable.
pub fn run_both_with(case: &Case, opts: &Options) -> Result<Compared, Divergence> {
    let prepared = |executor| Prepared::new(executor, case).with_schedule(opts.schedule);
    let mut interp = prepared(Executor::Interp);
    let full = interp.run(opts.full_budget).map_err(|e| interp_failed(opts.full_budget, e))?;
    if !opts.assume_verified {
        if let Err(status) = verify_case(case) {
            return Ok(Compared { outcome: full, jit: JitVerdict::Rejected(status), runs: 1, out_of_gas: 0 });
        }
    }
    let mut other = prepared(Executor::Jit);
    let (name, verdict, first) = match other.run(opts.full_budget) {
        Err(RunError::Failed(e)) => {
            return Err(Divergence {
                budget: opts.full_budget,
                field: "jit compile",
                executor: "jit",
                interp: full,
                jit: Err(e),
            })
        }
        Err(RunError::Unsupported(reason)) => {
            other = prepared(Executor::Auto);
            let first = other.run(opts.full_budget);
            let outcome = compare("auto", opts.full_budget, full, first)?;
            if other.first_stats().is_none_or(|s| s.compiled_functions == 0) {
                // Nothing ran compiled: that was the interpreter again.
                return Ok(Compared { outcome, jit: JitVerdict::Unsupported(reason), runs: 1, out_of_gas: 0 });
            }
            ("auto", JitVerdict::Mixed(reason), outcome)
        }
        Ok(o) => ("jit", JitVerdict::Agreed, compare("jit", opts.full_budget, full, Ok(o))?),
    };
    let outcome = first;
    let mut runs = 1;
    if opts.tier_switch {
        let mut tiered = Prepared::tiered(case, switch_threshold(case)).with_schedule(opts.schedule);
        for _ in 0..2 {
            compare("auto (tier switch)", opts.full_budget, outcome.clone(), tiered.run(opts.full_budget))?;
            runs += 1;
        }
    }
    let mut out_of_gas = u64::from(outcome.status == StatusCode::OUT_OF_GAS);
    for budget in gas_budgets(outcome.gas_used, opts.gas_points) {
        let i = interp.run(budget).map_err(|e| interp_failed(budget, e))?;
        let o = compare(name, budget, i, other.run(budget))?;
        runs += 1;
        out_of_gas += u64::from(o.status == StatusCode::OUT_OF_GAS);
    }
    Ok(Compared { outcome, jit: verdict, runs, out_of_gas })
}

/// [`run_both_with`] with the default options: the interpreter's outcome,
/// or the first divergence.
pub fn run_both(case: &Case) -> Result<Outcome, Divergence> {
    run_both_with(case, &Options::default()).map(|c| c.outcome)
}

/// Placeholder outcome for a divergence where the interpreter itself
/// could not run (never expected: it runs every verified case).
fn setup_failure() -> Outcome {
    Outcome {
        status: StatusCode::UNKNOWN_INVARIANT_VIOLATION_ERROR,
        sub_status: None,
        abort_code: None,
        message: None,
        location: None,
        returns: Vec::new(),
        mutrefs: Vec::new(),
        changes: Vec::new(),
        gas_used: 0,
        memory_used: None,
    }
}

/// Panics with both results (and the case) if the executors disagree; for
/// tests. Returns the comparison otherwise.
pub fn assert_agree(case: &Case) -> Compared {
    match run_both_with(case, &Options::default()) {
        Ok(c) => c,
        Err(d) => panic!("executors diverge on {} ({}):\n{d}", case.name, case.describe()),
    }
}

/// Declares a `#[test]` that runs a case on both executors (full budget and
/// tiny-gas reruns) and fails on any divergence:
///
/// ```ignore
/// movejit_diff::diff_test!(adds_wrap, my_case_builder());
/// ```
#[macro_export]
macro_rules! diff_test {
    ($name:ident, $case:expr) => {
        #[test]
        fn $name() {
            let case: $crate::Case = $case;
            $crate::assert_agree(&case);
        }
    };
}
