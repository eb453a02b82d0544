//! Failure sites of checked integer instructions whose test is not the
//! instruction's own: the JIT lets a checked `x + y`, `x - c` and a fused
//! `v[i - c]` index free `x` right after the instruction, and its cold
//! site recomputes `x` (`r - y`, `r + c`) to re-run the instruction
//! through the runtime's helper, which records the interpreter's error
//! message; `x * c` tests `x > MAX / c`. A wrong `x` at the site does not
//! overflow again and loses the message, a wrong limit fails where the
//! interpreter does not (or the reverse), so every case compares the whole
//! error (status, message, location) or result with the interpreter's, in
//! loops (the accumulator lives in one register) and at the edges of u8
//! and u64.

use movejit_engine::runtime::{AccountAddress, GasMeter, InMemoryStorage, ModuleId, StatusCode, VmError};
use movejit_engine::{new_engine, EngineConfig, ExecutorKind};

/// `name(x, n)`: `n` times `x = x OP operand`, on a `ty` value (`operand`
/// may read the extra parameter `step`).
fn repeat(name: &str, ty: &str, params: &str, operand: &str, op: &str) -> String {
    let body = format!("    move_loc x\n    {operand}\n    {op}\n    st_loc x");
    let counted = movejit_testkit::masm::counted_loop("i", "n", &body);
    format!("public fun {name}(x: {ty}, {params}n: u64): {ty}\n    local i: u64\n{counted} move_loc x\n    ret\n")
}

fn source() -> String {
    // `v[i - 2]` for `i` from `from` to `end`: `from < 2` wraps at the
    // sub, `from > len + 1` never enters, an index past the end fails at
    // the borrow.
    let back2 = movejit_testkit::masm::counted_loop(
        "i",
        "end",
        "    move_loc acc
    borrow_loc v
    copy_loc i
    ld_u64 2
    sub
    vec_borrow <u64>
    read_ref
    add
    st_loc acc",
    )
    .replacen("ld_u64 0\n    st_loc i", "copy_loc from\n    st_loc i", 1);
    [
        "version 9\nmodule 0xcafe::cold\n".to_string(),
        repeat("acc64", "u64", "step: u64, ", "copy_loc step", "add"),
        repeat("acc8", "u8", "step: u8, ", "copy_loc step", "add"),
        repeat("down3", "u64", "", "ld_u64 3", "sub"),
        "// `x * 31`, `7 * x`, `x * 1` and `x * 0`: a multiply by a constant
// tests `x > MAX / c` before it.
public fun mul64(x: u64): u64
    copy_loc x
    ld_u64 31
    mul
    ld_u64 7
    copy_loc x
    mul
    add
    copy_loc x
    ld_u64 1
    mul
    add
    move_loc x
    ld_u64 0
    mul
    add
    ret

public fun mul8(x: u8): u8
    copy_loc x
    ld_u8 3
    mul
    ld_u8 85
    move_loc x
    mul
    add
    ret
"
        .to_string(),
        format!(
            "public fun back2(v: vector<u64>, from: u64, end: u64): u64
    local i: u64
    local acc: u64
    ld_u64 0
    st_loc acc
{back2} move_loc acc
    ret
"
        ),
    ]
    .join("\n")
}

fn run(kind: ExecutorKind, st: &InMemoryStorage, f: &str, args: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, VmError> {
    let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
    let mut session = engine.new_session(st);
    let module = ModuleId::new(AccountAddress::from_u64(0xcafe), "cold");
    session.execute_function(&module, f, &[], args, &mut GasMeter::unmetered()).map(|r| r.returns)
}

fn u64_arg(x: u64) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

fn vec_u64_arg(xs: &[u64]) -> Vec<u8> {
    let mut b = vec![xs.len() as u8];
    xs.iter().for_each(|x| b.extend(x.to_le_bytes()));
    b
}

/// A call: function, arguments, and the interpreter's error message
/// (`None`: it returns; `Some("")`: it fails at a vector borrow).
type Case = (&'static str, Vec<Vec<u8>>, Option<&'static str>);

#[test]
fn failure_sites_rebuilding_an_operand_report_the_interpreters_error() {
    let max = u64::MAX;
    let v = vec_u64_arg(&[5, 6, 7]);
    // (function, arguments, the interpreter's message; None: returns).
    let cases: Vec<Case> = vec![
        ("acc64", vec![u64_arg(0), u64_arg(7), u64_arg(5)], None),
        ("acc64", vec![u64_arg(max - 21), u64_arg(7), u64_arg(3)], None),
        ("acc64", vec![u64_arg(max - 21), u64_arg(7), u64_arg(4)], Some("Addition overflow")),
        ("acc64", vec![u64_arg(1), u64_arg(max), u64_arg(1)], Some("Addition overflow")),
        ("acc64", vec![u64_arg(max), u64_arg(max), u64_arg(2)], Some("Addition overflow")),
        ("acc8", vec![vec![249], vec![2], u64_arg(3)], None),
        ("acc8", vec![vec![249], vec![2], u64_arg(4)], Some("Addition overflow")),
        ("acc8", vec![vec![0], vec![255], u64_arg(2)], Some("Addition overflow")),
        ("down3", vec![u64_arg(9), u64_arg(3)], None),
        ("down3", vec![u64_arg(9), u64_arg(4)], Some("Subtraction overflow")),
        ("down3", vec![u64_arg(1), u64_arg(1)], Some("Subtraction overflow")),
        ("mul64", vec![u64_arg(0)], None),
        ("mul64", vec![u64_arg(max / 40)], None),
        ("mul64", vec![u64_arg(max / 31 + 1)], Some("Multiplication overflow")),
        ("mul64", vec![u64_arg(max / 31)], Some("Addition overflow")),
        ("mul64", vec![u64_arg(max)], Some("Multiplication overflow")),
        ("mul8", vec![vec![1]], None),
        ("mul8", vec![vec![2]], None),
        ("mul8", vec![vec![3]], Some("Addition overflow")),
        ("mul8", vec![vec![4]], Some("Multiplication overflow")),
        ("mul8", vec![vec![86]], Some("Multiplication overflow")),
        ("back2", vec![v.clone(), u64_arg(2), u64_arg(5)], None),
        ("back2", vec![v.clone(), u64_arg(1), u64_arg(5)], Some("Subtraction overflow")),
        ("back2", vec![v.clone(), u64_arg(0), u64_arg(5)], Some("Subtraction overflow")),
        ("back2", vec![v.clone(), u64_arg(3), u64_arg(6)], Some("")),
        ("back2", vec![vec_u64_arg(&[]), u64_arg(1), u64_arg(2)], Some("Subtraction overflow")),
    ];
    let st = movejit_testkit::masm::storage_with(&source());
    let mut bad = Vec::new();
    for (f, args, message) in &cases {
        let want = run(ExecutorKind::Interpreter, &st, f, args);
        match (message, &want) {
            (None, Ok(_)) => {}
            // The index past the end: whatever the interpreter says, at the borrow.
            (Some(""), Err(e)) => assert_eq!(e.status, StatusCode::VECTOR_OPERATION_ERROR, "{f} {args:?}"),
            (Some(m), Err(e)) => {
                assert_eq!((e.status, e.message.as_deref()), (StatusCode::ARITHMETIC_ERROR, Some(*m)), "{f} {args:?}")
            }
            _ => panic!("{f} {args:?}: interpreter {want:?}"),
        }
        for kind in [ExecutorKind::Jit, ExecutorKind::Auto] {
            let got = run(kind, &st, f, args);
            if got != want {
                bad.push(format!("{f} {args:?} on {kind:?}: {got:?}, interpreter {want:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
