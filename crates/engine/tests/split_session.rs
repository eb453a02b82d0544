//! Split functions inside a session (`JitConfig::unchecked_copy_max_len`,
//! executor `Jit`, unmetered): the fast copy hands frames near the
//! operand-stack or call-depth limit to its checking copy, which in a
//! session is an interpreter stub. Recursions driven into both limits at
//! every depth around them must give the interpreter's status, abort code,
//! location and results, with the limit reached at more than one offset.

use movejit_engine::runtime::{AccountAddress, GasMeter, InMemoryStorage, ModuleId, StatusCode};
use movejit_engine::{new_engine, EngineConfig, ExecutorKind};

/// The JIT's split test's module (recursions that hold values near the
/// limits).
const SOURCE: &str = include_str!("../../jit/tests/split.masm");

/// Status, abort code or sub-status, location (function, offset), results.
type Observed = (StatusCode, Option<u64>, Option<(u16, u16)>, Vec<Vec<u8>>);

fn observe(kind: ExecutorKind, st: &InMemoryStorage, id: &ModuleId, f: &str, n: u64) -> Observed {
    let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
    let mut session = engine.new_session(st);
    let args = [n.to_le_bytes().to_vec()];
    match session.execute_function(id, f, &[], &args, &mut GasMeter::unmetered()) {
        Ok(r) => (StatusCode::EXECUTED, None, None, r.returns),
        Err(e) => (e.status, e.sub_status, e.location.map(|l| (l.function_index, l.code_offset)), Vec::new()),
    }
}

#[test]
fn near_limit_frames_fail_as_the_interpreter() {
    let st = movejit_testkit::masm::storage_with(&format!("version 9\n{SOURCE}"));
    let id = ModuleId::new(AccountAddress::from_u64(0xcafe), "split");
    // (function, depths to run, statuses the interpreter must show).
    let cases: [(&str, std::ops::Range<u64>, &[StatusCode]); 3] = [
        ("hold2", 500..516, &[StatusCode::EXECUTED, StatusCode::EXECUTION_STACK_OVERFLOW]),
        ("hold3", 500..516, &[StatusCode::EXECUTED, StatusCode::EXECUTION_STACK_OVERFLOW]),
        ("chain", 1018..1030, &[StatusCode::EXECUTED, StatusCode::CALL_STACK_OVERFLOW]),
    ];
    let mut bad = Vec::new();
    for (f, depths, statuses) in cases {
        let mut outcomes = std::collections::BTreeSet::new();
        for n in depths.chain([0, 3, 5000]) {
            let want = observe(ExecutorKind::Interpreter, &st, &id, f, n);
            let got = observe(ExecutorKind::Jit, &st, &id, f, n);
            outcomes.insert((want.0, want.2));
            if got != want {
                bad.push(format!("{f}({n}): jit {got:?} interp {want:?}"));
            }
        }
        for s in statuses {
            assert!(outcomes.iter().any(|o| o.0 == *s), "{f}: no {s:?} in {outcomes:?}");
        }
        if f != "chain" {
            let places: std::collections::BTreeSet<_> =
                outcomes.iter().filter(|o| o.0 == StatusCode::EXECUTION_STACK_OVERFLOW).map(|o| o.1).collect();
            assert!(places.len() > 1, "{f}: overflows only at {places:?}");
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
