//! Regression tests for what differential testing found, each named after
//! it, and single cases routed through the `diff_test!` macro.

use movejit_diff::{diff_test, run_both_with, JitVerdict, Options};
use movejit_format::StatusCode;
use movejit_tests::aptos_case;

/// Found by the conformance tiny-gas run: four hand-written modules the
/// verifier rejects (`asm_bad_*`) reached the JIT, which compiled one
/// (`bad_signed_and`, EXECUTED) and refused three as malformed, while the
/// interpreter reported UNEXPECTED_VERIFIER_ERROR. Cause: the harness gave
/// unverified modules to the JIT, whose contract is verified input. Fixed in
/// the harness: every case is verified first; a rejected case runs on the
/// interpreter only and is reported as `JitVerdict::Rejected`.
#[test]
fn unverified_module_is_not_given_to_the_jit() {
    for id in [
        "asm_bad_signed_and.call_f",
        "asm_bad_signed_shl.call_f",
        "asm_bad_neg_unsigned.call_f",
        "asm_bad_stack.call_f",
    ] {
        let case = aptos_case(id);
        let c = run_both_with(&case, &Options::default()).unwrap_or_else(|d| panic!("{id}: {d}"));
        assert!(matches!(c.jit, JitVerdict::Rejected(_)), "{id}: {:?}", c.jit);
        assert_eq!(c.outcome.status, StatusCode::UNEXPECTED_VERIFIER_ERROR, "{id}");
    }
}

// Single executor tests through the harness (full budget + tiny-gas reruns).
diff_test!(flow_sum_to_10, aptos_case("flow.sum_to_10"));
diff_test!(flow_sum_to_0, aptos_case("flow.sum_to_0"));
diff_test!(recursion_depth_1000, aptos_case("recursion.depth_1000"));
