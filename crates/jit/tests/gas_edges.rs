//! Gas edge cases of metered compiled code against the reference
//! interpreter: hand-written functions whose segments mix instructions
//! that cannot fail with ones that can (arithmetic, vector indexing,
//! aborts, calls), run with EVERY budget from 0 to what they use, so that
//! gas runs out at every instruction of every segment, before, at and after
//! an instruction that fails on its own. Deep recursion that holds many
//! operand-stack values per frame runs into the operand-stack limit, with
//! budgets around that point (running out of gas vs the overflow). Status,
//! error location and gas used must be the interpreter's.

use movejit_engine::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId};
use movejit_engine::{Engine, EngineConfig};
use movejit_format::{serialize_module, AccountAddress, StatusCode};
use movejit_jit::{JitConfig, JitEngine};

const SOURCE: &str = "
module 0xcafe::edges

// Infallible instructions around overflowing arithmetic.
public fun arith(x: u64, y: u64): u64
    local t: u64
    copy_loc x
    ld_u64 1
    ld_u64 2
    pop
    pop
    copy_loc y
    add
    st_loc t
    copy_loc t
    copy_loc x
    mul
    ld_u64 7
    copy_loc y
    div
    add
    ret

// Values pushed, then an abort or a division by zero.
public fun abort_after(x: u64): u64
    copy_loc x
    ld_u64 0
    eq
    br_false L1
    ld_u64 1
    ld_u64 2
    pop
    pop
    ld_u64 99
    abort
L1: ld_u64 1
    ld_u64 2
    ld_u64 10
    copy_loc x
    ld_u64 5
    sub
    div
    add
    add
    ret

// Vector indexing that may be out of range, between infallible code.
public fun index(v: vector<u64>, i: u64): u64
    local r: &vector<u64>
    borrow_loc v
    st_loc r
    copy_loc r
    vec_len <u64>
    pop
    copy_loc r
    copy_loc i
    vec_borrow <u64>
    read_ref
    move_loc r
    copy_loc i
    ld_u64 1
    add
    vec_borrow <u64>
    read_ref
    add
    ret

// A swap through the runtime's shim (which records a sub-status when
// an index is out of range), between infallible code.
public fun swap(v: vector<u64>, i: u64): u64
    local r: &mut vector<u64>
    mut_borrow_loc v
    st_loc r
    ld_u64 5
    ld_u64 6
    add
    pop
    copy_loc r
    ld_u64 0
    copy_loc i
    vec_swap <u64>
    ld_u64 7
    pop
    move_loc r
    ld_u64 0
    vec_borrow <u64>
    read_ref
    ret

// A loop of calls: gas runs out in caller and callee, at the call.
public fun calls(n: u64): u64
    local i: u64
    local acc: u64
    ld_u64 0
    st_loc i
    ld_u64 0
    st_loc acc
L0: copy_loc i
    copy_loc n
    lt
    br_false L1
    copy_loc acc
    copy_loc i
    call step
    st_loc acc
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc acc
    ret

fun step(a: u64, i: u64): u64
    copy_loc a
    copy_loc i
    ld_u64 3
    mul
    add
    ret

// Each frame holds 12 operand-stack values across its recursive call:
// deep enough recursion overflows the shared operand stack.
public fun deep(n: u64): u64
    copy_loc n
    ld_u64 0
    eq
    br_false L1
    ld_u64 0
    ret
L1: ld_u64 1
    ld_u64 2
    ld_u64 3
    ld_u64 4
    ld_u64 5
    ld_u64 6
    ld_u64 7
    ld_u64 8
    ld_u64 9
    ld_u64 10
    ld_u64 11
    copy_loc n
    ld_u64 1
    sub
    call deep
    add
    add
    add
    add
    add
    add
    add
    add
    add
    add
    add
    ret

// Pushes in a later block to heights an earlier block already checked
// (skipped: lower/checked.rs) and above them (checked).
public fun deep2(n: u64): u64
    ld_u64 1
    ld_u64 2
    ld_u64 3
    pop
    pop
    pop
    copy_loc n
    ld_u64 0
    eq
    br_false L1
    ld_u64 0
    ret
L1: ld_u64 1
    ld_u64 2
    ld_u64 3
    ld_u64 4
    ld_u64 5
    copy_loc n
    ld_u64 1
    sub
    call deep2
    add
    add
    add
    add
    add
    ret

// A loop between the pushes: its header is entered from above and from
// its back edge (lower/checked.rs ignores the back edge it dominates).
public fun deep3(n: u64): u64
    local i: u64
    ld_u64 1
    ld_u64 2
    ld_u64 3
    pop
    pop
    pop
    ld_u64 0
    st_loc i
L0: copy_loc i
    ld_u64 2
    lt
    br_false L1
    copy_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: copy_loc n
    ld_u64 0
    eq
    br_false L2
    ld_u64 0
    ret
L2: ld_u64 1
    ld_u64 2
    ld_u64 3
    ld_u64 4
    copy_loc n
    ld_u64 1
    sub
    call deep3
    add
    add
    add
    add
    ret

public fun pad1_loop(n: u64): u64
    ld_u64 1
    copy_loc n
    call deep3
    add
    ret

public fun pad2_loop(n: u64): u64
    ld_u64 1
    ld_u64 2
    copy_loc n
    call deep3
    add
    add
    ret

public fun pad3_loop(n: u64): u64
    ld_u64 1
    ld_u64 2
    ld_u64 3
    copy_loc n
    call deep3
    add
    add
    add
    ret

public fun pad4_loop(n: u64): u64
    ld_u64 1
    ld_u64 2
    ld_u64 3
    ld_u64 4
    copy_loc n
    call deep3
    add
    add
    add
    add
    ret

// deep2 called with 1 value(s) below it: its pushes overflow at another height.
public fun pad1(n: u64): u64
    ld_u64 1
    copy_loc n
    call deep2
    add
    ret

// deep2 called with 2 value(s) below it: its pushes overflow at another height.
public fun pad2(n: u64): u64
    ld_u64 1
    ld_u64 2
    copy_loc n
    call deep2
    add
    add
    ret

// deep2 called with 3 value(s) below it: its pushes overflow at another height.
public fun pad3(n: u64): u64
    ld_u64 1
    ld_u64 2
    ld_u64 3
    copy_loc n
    call deep2
    add
    add
    add
    ret

// deep2 called with 4 value(s) below it: its pushes overflow at another height.
public fun pad4(n: u64): u64
    ld_u64 1
    ld_u64 2
    ld_u64 3
    ld_u64 4
    copy_loc n
    call deep2
    add
    add
    add
    add
    ret
";

/// (status, abort code or sub-status, function definition index and
/// offset of the error, gas used)
type Observed = (StatusCode, Option<u64>, Option<(u16, u16)>, u64);

struct Setup {
    interp: Engine,
    storage: InMemoryStorage,
    jit: JitEngine,
    module: u32,
}

/// The code tiers (`JitConfig::baseline_above`): every test runs on each.
const TIERS: [(&str, usize); 2] = [("optimizing", usize::MAX), ("baseline", 0)];

fn setup(baseline_above: usize) -> Setup {
    let m = match movejit_masm::assemble(SOURCE) {
        Ok(movejit_masm::Assembled::Module(m)) => m,
        Ok(_) => panic!("expected a module"),
        Err(e) => panic!("assemble: {e}"),
    };
    let mut storage = InMemoryStorage::default();
    storage.publish(ModuleId::new(AccountAddress::from_u64(0xcafe), "edges"), serialize_module(&m));
    let mut jit =
        JitEngine::new(JitConfig { cost: Some(CostTable::default()), baseline_above, ..JitConfig::default() })
            .expect("engine");
    let module = jit.add_module(m).expect("module added");
    Setup { interp: Engine::new(EngineConfig::aptos()), storage, jit, module }
}

impl Setup {
    fn interp(&self, f: &str, args: &[Vec<u8>], budget: u64) -> Observed {
        let mut session = self.interp.new_session(&self.storage);
        let mut gas = GasMeter::new(CostTable::default(), budget);
        let r =
            session.execute_function(&ModuleId::new(AccountAddress::from_u64(0xcafe), "edges"), f, &[], args, &mut gas);
        match r {
            Ok(_) => (StatusCode::EXECUTED, None, None, gas.used()),
            Err(e) => {
                assert_ne!(e.status, StatusCode::UNEXPECTED_VERIFIER_ERROR, "{e:?}");
                (e.status, e.sub_status, e.location.map(|l| (l.function_index, l.code_offset)), gas.used())
            }
        }
    }

    fn jit(&mut self, f: &str, args: &[Vec<u8>], budget: u64) -> Observed {
        let key = self.jit.instance_key(self.module, f, &[]).expect("instance");
        let o = self.jit.execute(&key, args, Some(budget)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let gas_left = o.gas_left.expect("metered run reports gas left");
        (o.status, o.abort_code, o.location.map(|l| (l.function, l.code_offset)), budget - gas_left)
    }

    /// Compares both executors on `budgets`; returns (runs, out-of-gas
    /// runs, other failures) and appends differences to `bad`.
    fn sweep(
        &mut self,
        f: &str,
        args: &[Vec<u8>],
        budgets: impl Iterator<Item = u64>,
        bad: &mut Vec<String>,
    ) -> (usize, usize, usize) {
        let (mut runs, mut oog, mut other) = (0, 0, 0);
        for b in budgets {
            let want = self.interp(f, args, b);
            let got = self.jit(f, args, b);
            runs += 1;
            match want.0 {
                StatusCode::OUT_OF_GAS => oog += 1,
                StatusCode::EXECUTED => {}
                _ => other += 1,
            }
            if got != want {
                bad.push(format!("{f}({args:?}) budget {b}: jit {got:?} interp {want:?}"));
            }
        }
        (runs, oog, other)
    }
}

fn u64_arg(x: u64) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

fn u64_vec(xs: &[u64]) -> Vec<u8> {
    let mut out = vec![xs.len() as u8];
    for x in xs {
        out.extend(x.to_le_bytes());
    }
    out
}

#[test]
fn out_of_gas_at_every_instruction_matches_the_interpreter() {
    for (tier, baseline_above) in TIERS {
        println!("== {tier} tier");
        out_of_gas_at_every_instruction_matches_the_interpreter_on(baseline_above);
    }
}

fn out_of_gas_at_every_instruction_matches_the_interpreter_on(baseline_above: usize) {
    let mut s = setup(baseline_above);
    // (function, arguments, what a full budget ends with)
    let table: Vec<(&str, Vec<Vec<u8>>, StatusCode)> = vec![
        ("arith", vec![u64_arg(3), u64_arg(4)], StatusCode::EXECUTED),
        ("arith", vec![u64_arg(u64::MAX), u64_arg(1)], StatusCode::ARITHMETIC_ERROR),
        ("arith", vec![u64_arg(1 << 40), u64_arg(1 << 30)], StatusCode::ARITHMETIC_ERROR),
        ("arith", vec![u64_arg(5), u64_arg(0)], StatusCode::ARITHMETIC_ERROR),
        ("abort_after", vec![u64_arg(0)], StatusCode::ABORTED),
        ("abort_after", vec![u64_arg(5)], StatusCode::ARITHMETIC_ERROR),
        ("abort_after", vec![u64_arg(3)], StatusCode::ARITHMETIC_ERROR),
        ("abort_after", vec![u64_arg(7)], StatusCode::EXECUTED),
        ("index", vec![u64_vec(&[1, 2, 3]), u64_arg(1)], StatusCode::EXECUTED),
        ("index", vec![u64_vec(&[1, 2, 3]), u64_arg(2)], StatusCode::VECTOR_OPERATION_ERROR),
        ("index", vec![u64_vec(&[1, 2, 3]), u64_arg(9)], StatusCode::VECTOR_OPERATION_ERROR),
        ("swap", vec![u64_vec(&[1, 2, 3]), u64_arg(2)], StatusCode::EXECUTED),
        ("swap", vec![u64_vec(&[1, 2, 3]), u64_arg(3)], StatusCode::VECTOR_OPERATION_ERROR),
        ("calls", vec![u64_arg(6)], StatusCode::EXECUTED),
        ("calls", vec![u64_arg(1 << 62)], StatusCode::OUT_OF_GAS),
    ];
    let mut bad = Vec::new();
    let (mut runs, mut oog, mut other) = (0, 0, 0);
    for (f, args, end) in &table {
        // An endless loop is swept to a fixed budget.
        let cap = if *end == StatusCode::OUT_OF_GAS {
            3000
        } else {
            let full = s.interp(f, args, 1 << 40);
            assert_eq!(full.0, *end, "{f}({args:?}) with a full budget");
            full.3 + 2
        };
        let r = s.sweep(f, args, 0..=cap, &mut bad);
        runs += r.0;
        oog += r.1;
        other += r.2;
    }
    println!("{runs} metered runs ({oog} out of gas, {other} other failures), {} differ", bad.len());
    for b in bad.iter().take(30) {
        println!("  {b}");
    }
    assert!(bad.is_empty(), "{} differences", bad.len());
    assert!(oog > 1000 && other >= 20, "the sweep must hit both kinds of failure");
}

#[test]
fn operand_stack_overflow_against_out_of_gas() {
    for (tier, baseline_above) in TIERS {
        println!("== {tier} tier");
        operand_stack_overflow_against_out_of_gas_on(baseline_above);
    }
}

fn operand_stack_overflow_against_out_of_gas_on(baseline_above: usize) {
    let mut s = setup(baseline_above);
    let mut bad = Vec::new();
    // Deep enough to overflow the 1,024-value operand stack.
    let args = vec![u64_arg(200)];
    let full = s.interp("deep", &args, 1 << 40);
    assert_eq!(full.0, StatusCode::EXECUTION_STACK_OVERFLOW);
    // Every budget around the overflow (which is where its frame's pushes
    // run out of room), and a stride through the rest.
    let near = full.3.saturating_sub(400)..=full.3 + 2;
    let (runs, oog, other) = s.sweep("deep", &args, near.chain((0..full.3).step_by(97)), &mut bad);
    // Shallow recursion completes.
    s.sweep("deep", &[u64_arg(20)], 0..=3000, &mut bad);
    println!("{runs} metered runs ({oog} out of gas, {other} stack overflows), {} differ", bad.len());
    for b in bad.iter().take(30) {
        println!("  {b}");
    }
    assert!(bad.is_empty(), "{} differences", bad.len());
    assert!(oog > 100 && other >= 3);
}

#[test]
fn operand_stack_overflow_across_blocks() {
    for (tier, baseline_above) in TIERS {
        println!("== {tier} tier");
        let mut s = setup(baseline_above);
        let mut bad = Vec::new();
        let args = vec![u64_arg(400)];
        let mut offsets = std::collections::BTreeSet::new();
        for f in ["deep2", "pad1", "pad2", "pad3", "pad4", "deep3", "pad1_loop", "pad2_loop", "pad3_loop", "pad4_loop"]
        {
            let full = s.interp(f, &args, 1 << 40);
            assert_eq!(full.0, StatusCode::EXECUTION_STACK_OVERFLOW, "{f}");
            offsets.insert(full.2);
            s.sweep(f, &args, (full.3.saturating_sub(40)..=full.3 + 2).chain([1 << 40]), &mut bad);
            // Shallow recursion completes.
            s.sweep(f, &[u64_arg(30)], [1 << 40].into_iter(), &mut bad);
        }
        for b in bad.iter().take(30) {
            println!("  {b}");
        }
        assert!(bad.is_empty(), "{} differences", bad.len());
        // The paddings move the overflow to pushes in both blocks.
        assert!(offsets.len() >= 6, "overflow locations: {offsets:?}");
    }
}
