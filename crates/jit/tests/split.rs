//! Small functions lowered as a fast copy without operand-stack and
//! call-depth checks, handing frames near either limit to a checking copy
//! (`lower_function`), against the reference interpreter: recursions
//! driven into both limits at every depth around them. Status, abort code,
//! error location and results must be the interpreter's.

mod common;

use common::Pair;
use movejit_format::StatusCode;
use movejit_jit::JitConfig;

/// Recursions that hold values near the limits (shared with the engine's
/// `split_session` test).
const SOURCE: &str = include_str!("split.masm");

#[test]
fn fast_and_checking_copies_at_the_limits() {
    // (function, depths to run, statuses the interpreter must show).
    let cases: [(&str, std::ops::Range<u64>, &[StatusCode]); 3] = [
        ("hold2", 500..520, &[StatusCode::EXECUTED, StatusCode::EXECUTION_STACK_OVERFLOW]),
        ("hold3", 500..520, &[StatusCode::EXECUTED, StatusCode::EXECUTION_STACK_OVERFLOW]),
        ("chain", 1015..1035, &[StatusCode::EXECUTED, StatusCode::CALL_STACK_OVERFLOW]),
    ];
    let mut s = Pair::new(SOURCE, JitConfig { cost: None, ..JitConfig::default() });
    let mut bad = Vec::new();
    for (f, depths, statuses) in cases {
        let mut outcomes = std::collections::BTreeSet::new();
        for n in depths.chain([0, 1, 3, 5000]) {
            let args = [n.to_le_bytes().to_vec()];
            let want = s.interp(f, &args);
            let got = s.jit(f, &args);
            outcomes.insert((want.0, want.2));
            if got != want {
                bad.push(format!("{f}({n}): jit {got:?} interp {want:?}"));
            }
        }
        for st in statuses {
            assert!(outcomes.iter().any(|o| o.0 == *st), "{f}: no {st:?} in {outcomes:?}");
        }
        // Overflows at more than one offset: the checking copy reports
        // each where the interpreter does.
        if f != "chain" {
            let places: std::collections::BTreeSet<_> =
                outcomes.iter().filter(|o| o.0 == StatusCode::EXECUTION_STACK_OVERFLOW).map(|o| o.1).collect();
            assert!(places.len() > 1, "{f}: overflows only at {places:?}");
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
