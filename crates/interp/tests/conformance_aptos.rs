//! Replays every Aptos oracle case (shared/conformance/aptos) on the
//! interpreter and reports agreement by family. Fails on any disagreement
//! not listed in `KNOWN_GAPS`.

use movejit_engine::{Engine, EngineConfig};
use movejit_testkit::*;

/// Cases the interpreter does not agree with yet, each with the reason.
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// The whole case table on the interpreter.
#[test]
fn aptos_conformance() {
    let cases = load_aptos_cases();
    assert!(cases.len() >= 2000, "expected the full case file, got {}", cases.len());
    let exec = InterpExecutor(Engine::new(EngineConfig::aptos()));
    let mut tally = Tally::new();
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    let trace = std::env::var("CONFORMANCE_TRACE").is_ok();
    let only = std::env::var("CONFORMANCE_ONLY").ok();
    for case in &cases {
        if only.as_ref().is_some_and(|o| !case.id.starts_with(o.as_str())) {
            continue;
        }
        if trace {
            eprintln!("case {}", case.id);
        }
        let diffs = match exec.run(case) {
            Ok(out) => compare(case, &out),
            Err(e) => vec![format!("harness: {e}")],
        };
        let t = tally.entry(case.family.clone()).or_default();
        t.1 += 1;
        let known = KNOWN_GAPS.iter().any(|(id, _)| *id == case.id);
        if diffs.is_empty() {
            t.0 += 1;
            if known {
                fixed.push(case.id.clone());
            }
        } else if !known {
            unexpected.push(format!("{}: {}", case.id, diffs.join("; ")));
        }
    }
    print_tally(&format!("aptos conformance ({})", exec.name()), &tally);
    if !fixed.is_empty() {
        eprintln!("known gaps that now agree (remove them from KNOWN_GAPS): {fixed:?}");
    }
    for u in unexpected.iter().take(60) {
        eprintln!("DISAGREE {u}");
    }
    assert!(unexpected.is_empty(), "{} cases disagree", unexpected.len());
}

/// Statuses whose messages (or their absence) are the real VM's (every
/// executor reports them alike: crates/cli/tests/executors_agree.rs).
const VM_MESSAGE_STATUSES: &[&str] = &[
    "VECTOR_OPERATION_ERROR",
    "CALL_STACK_OVERFLOW",
    "EXECUTION_STACK_OVERFLOW",
    "ARITHMETIC_ERROR",
    "ABORTED",
    "ABORT_MESSAGE_LIMIT_EXCEEDED",
    "INVALID_ABORT_MESSAGE",
    "MISSING_DATA",
    "RESOURCE_ALREADY_EXISTS",
    "FAILED_TO_DESERIALIZE_ARGUMENT",
    "STRUCT_VARIANT_MISMATCH",
    "UNEXPECTED_VERIFIER_ERROR",
    "UNKNOWN_INVARIANT_VIOLATION_ERROR",
];

/// Statuses whose VM message is recorded to its first line only: the VM
/// follows it with a Rust debug dump of its inner error.
const FIRST_LINE_STATUSES: &[&str] = &["UNEXPECTED_VERIFIER_ERROR"];

#[test]
fn messages_are_the_real_vms() {
    let cases = load_aptos_cases();
    let exec = InterpExecutor(Engine::new(EngineConfig::aptos()));
    let (mut total, mut matched, mut covered, mut covered_matched) = (0, 0, 0, 0);
    let mut bad = Vec::new();
    for case in cases.iter().filter(|c| c.expect["status"] != "EXECUTED") {
        let out = exec.run(case).expect("case runs");
        total += 1;
        // `info` leaves an empty message out; `abort_message_hex` keeps it.
        let want = case.vm_message.clone().or_else(|| (case.expect["abort_message_hex"] == "").then(String::new));
        let message = match &out.message {
            Some(m) if FIRST_LINE_STATUSES.contains(&out.status.as_str()) => m.lines().next().map(String::from),
            m => m.clone(),
        };
        let same = message == want;
        matched += same as usize;
        if VM_MESSAGE_STATUSES.contains(&out.status.as_str()) {
            covered += 1;
            covered_matched += same as usize;
            if !same {
                bad.push(format!("{}: {:?}, the VM says {want:?}", case.id, out.message));
            }
        }
    }
    eprintln!("vm messages of failing calls: {matched}/{total} equal; of statuses {VM_MESSAGE_STATUSES:?}: {covered_matched}/{covered}");
    for b in bad.iter().take(30) {
        eprintln!("MESSAGE {b}");
    }
    assert!(bad.is_empty(), "{} messages differ", bad.len());
    assert!(covered > 550, "only {covered} cases with covered statuses");
}

#[test]
fn executor_comparison_finds_no_difference_between_identical_executors() {
    // The comparison the JIT will use, run interp-vs-interp on a slice of
    // the table: any difference would be nondeterminism.
    let cases: Vec<_> = load_aptos_cases().into_iter().step_by(10).collect();
    let a = InterpExecutor(Engine::new(EngineConfig::aptos()));
    let b = InterpExecutor(Engine::new(EngineConfig::aptos()));
    assert!(compare_executors(&a, &b, &cases).is_empty());
}

#[test]
fn interpreter_frees_what_it_allocates() {
    // Every call on the interpreter, successful or not, run a second
    // time (the first prepares the functions and their constants, which the
    // engine keeps): the heap blocks of flat values must all be freed
    // again, also those still held on the operand stack or in locals of the
    // frames an abort or error unwinds.
    use movejit_engine::runtime::flat::live_allocations;
    let exec = InterpExecutor(Engine::new(EngineConfig::aptos()));
    let (mut executed, mut failed) = (0, 0);
    let mut leaks = Vec::new();
    for case in load_aptos_cases() {
        let first = exec.run(&case);
        let before = live_allocations();
        let second = exec.run(&case);
        let delta = live_allocations() - before;
        assert_eq!(first, second, "{}: the second run differs", case.id);
        if delta != 0 {
            leaks.push(format!("{} ({}): {delta} blocks", case.id, case.expect["status"]));
        }
        if case.expect["status"] == "EXECUTED" {
            executed += 1;
        } else {
            failed += 1;
        }
    }
    assert!(executed > 1000 && failed > 300, "expected both outcomes, got {executed} executed, {failed} failed");
    assert!(leaks.is_empty(), "{} calls leak: {:?}", leaks.len(), &leaks[..leaks.len().min(20)]);
}
