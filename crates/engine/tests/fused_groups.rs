//! The flat interpreter's fused groups (register forms, compare + branch,
//! reads through a reference made from a local, ld_i64 + op, in-place casts
//! and shifts) against the JIT, which fuses nothing: results, errors (status
//! and the code offset of the failing instruction inside a group) and gas
//! used at every budget from 0 to the call's full use, so that running out
//! of gas is tried at each instruction of each group.

use movejit_engine::runtime::{
    AccountAddress, CostTable, ErrorLocation, GasMeter, InMemoryStorage, ModuleId, StatusCode,
};
use movejit_engine::{new_engine, EngineConfig, ExecutorKind};

const SOURCE: &str = "version 9
module 0xcafe::fused

struct P has copy + drop
  a: u64
  b: u64

public fun sum_down(n: u64, k: u64): u64
    local i: u64
    local acc: u64
    ld_u64 0
    st_loc acc
    copy_loc n
    st_loc i
L0: copy_loc i
    ld_u64 0
    gt
    br_false L1
    copy_loc acc
    copy_loc i
    add
    st_loc acc
    copy_loc i
    copy_loc k
    sub
    st_loc i
    branch L0
L1: move_loc acc
    ret

public fun mul_keep(a: u64, b: u64): u64
    copy_loc a
    copy_loc b
    mul
    ret

public fun count_to(n: u64): u64
    local i: u64
    ld_u64 0
    st_loc i
L0: copy_loc i
    copy_loc n
    lt
    br_false L1
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc i
    ret

public fun same(a: u64, b: u64): u64
    copy_loc a
    copy_loc b
    eq
    br_true L0
    ld_u64 2
    ret
L0: ld_u64 1
    ret

public fun elem(v: vector<u64>, i: u64): u64
    borrow_loc v
    copy_loc i
    vec_borrow <u64>
    read_ref
    ret

public fun field_b(a: u64, b: u64): u64
    local p: P
    move_loc a
    move_loc b
    pack P
    st_loc p
    borrow_loc p
    borrow_field P, b
    read_ref
    ret

public fun i64_step(x: i64): i64
    move_loc x
    ld_i64 3
    mul
    ld_i64 -7
    add
    ret

public fun narrow(x: u64, s: u8): u8
    copy_loc x
    copy_loc s
    shl
    cast_u8
    ret
";

fn storage() -> InMemoryStorage {
    movejit_testkit::masm::storage_with(SOURCE)
}

/// What a call observably did: results, or (status, location).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Returned(Vec<Vec<u8>>),
    Failed(StatusCode, Option<ErrorLocation>),
}

fn run(kind: ExecutorKind, st: &InMemoryStorage, f: &str, args: &[Vec<u8>], budget: Option<u64>) -> (Outcome, u64) {
    let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
    let mut session = engine.new_session(st);
    let mut gas = match budget {
        Some(b) => GasMeter::new(CostTable::default(), b),
        None => GasMeter::unmetered(),
    };
    let module = ModuleId::new(AccountAddress::from_u64(0xcafe), "fused");
    let o = match session.execute_function(&module, f, &[], args, &mut gas) {
        Ok(r) => Outcome::Returned(r.returns),
        Err(e) => Outcome::Failed(e.status, e.location),
    };
    (o, gas.used())
}

fn u64_arg(x: u64) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

fn vec_u64_arg(xs: &[u64]) -> Vec<u8> {
    let mut b = vec![xs.len() as u8];
    xs.iter().for_each(|x| b.extend(x.to_le_bytes()));
    b
}

/// The interpreter's outcome must be `expect`: a result, or a failure at
/// this code offset; then the JIT must agree at every budget.
enum Expect {
    Returns(Vec<u8>),
    FailsAt(StatusCode, u16),
}

#[test]
fn fused_groups_agree_with_the_jit_at_every_budget() {
    use Expect::*;
    let arith = StatusCode::ARITHMETIC_ERROR;
    let cases: Vec<(&str, Vec<Vec<u8>>, Expect)> = vec![
        ("sum_down", vec![u64_arg(9), u64_arg(3)], Returns(u64_arg(18))),
        // 10, 7, 4, 1, then 1 - 3: the `sub` at offset 14.
        ("sum_down", vec![u64_arg(10), u64_arg(3)], FailsAt(arith, 14)),
        ("mul_keep", vec![u64_arg(6), u64_arg(7)], Returns(u64_arg(42))),
        ("mul_keep", vec![u64_arg(u64::MAX), u64_arg(2)], FailsAt(arith, 2)),
        ("count_to", vec![u64_arg(5)], Returns(u64_arg(5))),
        ("same", vec![u64_arg(4), u64_arg(4)], Returns(u64_arg(1))),
        ("same", vec![u64_arg(4), u64_arg(5)], Returns(u64_arg(2))),
        ("elem", vec![vec_u64_arg(&[10, 20, 30]), u64_arg(2)], Returns(u64_arg(30))),
        ("elem", vec![vec_u64_arg(&[10, 20, 30]), u64_arg(3)], FailsAt(StatusCode::VECTOR_OPERATION_ERROR, 2)),
        ("field_b", vec![u64_arg(1), u64_arg(2)], Returns(u64_arg(2))),
        ("i64_step", vec![(-5i64).to_le_bytes().to_vec()], Returns((-22i64).to_le_bytes().to_vec())),
        ("i64_step", vec![(i64::MAX / 2).to_le_bytes().to_vec()], FailsAt(arith, 2)),
        ("narrow", vec![u64_arg(3), vec![4]], Returns(vec![48])),
        ("narrow", vec![u64_arg(3), vec![64]], FailsAt(arith, 2)),
        ("narrow", vec![u64_arg(3), vec![7]], FailsAt(arith, 3)),
    ];
    let st = storage();
    for (f, args, expect) in &cases {
        let (o, _) = run(ExecutorKind::Interpreter, &st, f, args, None);
        match (expect, &o) {
            (Returns(r), Outcome::Returned(got)) => assert_eq!(got, &vec![r.clone()], "{f}"),
            (FailsAt(s, at), Outcome::Failed(got, Some(l))) => {
                assert_eq!((got, l.function_name.as_str(), l.code_offset), (s, *f, *at), "{f}")
            }
            _ => panic!("{f}: {o:?}"),
        }
        let (_, full) = run(ExecutorKind::Interpreter, &st, f, args, Some(u64::MAX / 4));
        assert!(full > 0, "{f}");
        for budget in (0..=full + 1).map(Some).chain([None]) {
            let interp = run(ExecutorKind::Interpreter, &st, f, args, budget);
            let jit = run(ExecutorKind::Jit, &st, f, args, budget);
            assert_eq!(interp, jit, "{f} {args:?} at budget {budget:?}");
        }
    }
}
