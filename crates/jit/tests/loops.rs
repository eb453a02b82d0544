//! Loops of unmetered compiled code against the reference interpreter:
//! rotated loops (`lower/rotate.rs`) whose bodies' leading stack checks
//! run on entry from outside the loop only, driven into the operand-stack
//! limit at every depth; loop counters whose `± 1` steps run without an
//! overflow test (`lower/counters.rs`), at the edges of their types.
//! Status, abort code, error location and results must be the
//! interpreter's.

mod common;

use common::Pair;
use movejit_format::StatusCode;
use movejit_jit::JitConfig;

const SOURCE: &str = "
module 0xcafe::loops

// Each frame runs a loop of `pad` iterations whose body starts with four
// pushes (deeper than anything else the frame pushes), then recurses
// holding one value: some frame runs out of room in its loop.
public fun deep(n: u64, pad: u64): u64
    local i: u64
    local acc: u64
    ld_u64 0
    st_loc acc
    ld_u64 0
    st_loc i
L0: copy_loc i
    copy_loc pad
    lt
    br_false L1
    copy_loc acc
    copy_loc i
    copy_loc i
    copy_loc i
    xor
    xor
    add
    st_loc acc
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: copy_loc n
    ld_u64 0
    eq
    br_false L2
    move_loc acc
    ret
L2: copy_loc acc
    copy_loc n
    ld_u64 1
    sub
    copy_loc pad
    call deep
    add
    ret

// `deep` whose loop body starts by borrowing `acc` and freezing that
// reference (a no-op) before its pushes of `i`.
public fun deep_frozen(n: u64, pad: u64): u64
    local i: u64
    local acc: u64
    local t: u64
    ld_u64 0
    st_loc acc
    ld_u64 0
    st_loc i
L0: copy_loc i
    copy_loc pad
    lt
    br_false L1
    mut_borrow_loc acc
    freeze_ref
    copy_loc i
    copy_loc i
    copy_loc i
    xor
    xor
    st_loc t
    read_ref
    copy_loc t
    add
    st_loc acc
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: copy_loc n
    ld_u64 0
    eq
    br_false L2
    move_loc acc
    ret
L2: copy_loc acc
    copy_loc n
    ld_u64 1
    sub
    copy_loc pad
    call deep_frozen
    add
    ret

// Counts a u8 up from `from` while below `to`, then adds `extra`.
public fun up8(from: u8, to: u8, extra: u8): u8
    local i: u8
    copy_loc from
    st_loc i
L0: copy_loc i
    copy_loc to
    lt
    br_false L1
    move_loc i
    ld_u8 1
    add
    st_loc i
    branch L0
L1: move_loc i
    copy_loc extra
    add
    ret

// Counts a u64 down from `from` while above zero, then takes one more.
public fun down(from: u64): u64
    local i: u64
    copy_loc from
    st_loc i
L0: copy_loc i
    ld_u64 0
    gt
    br_false L1
    move_loc i
    ld_u64 1
    sub
    st_loc i
    branch L0
L1: move_loc i
    ld_u64 1
    sub
    ret

// `i != 0` on one edge, `i - 1` on both.
public fun not_zero(i: u64): u64
    copy_loc i
    ld_u64 0
    neq
    br_true L0
    copy_loc i
    ld_u64 1
    sub
    ret
L0: copy_loc i
    ld_u64 1
    sub
    ret
";

const TIERS: [(&str, usize); 2] = [("optimizing", usize::MAX), ("baseline", 0)];

fn u64_arg(x: u64) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

#[test]
fn stack_overflow_in_rotated_loops() {
    for (tier, baseline_above) in TIERS {
        let mut s = Pair::new(SOURCE, JitConfig { cost: None, baseline_above, ..JitConfig::default() });
        let mut bad = Vec::new();
        // Depths around the limit (a frame holds one value), loops of
        // 0 to 3 iterations: the overflow lands in the loop body's first
        // iteration, or after the loop when it runs no iteration.
        // Per function: its index, and the offsets of the overflow in the body's first
        // iteration (its fourth push: the check moved to the body's
        // entry) and after the loop.
        for (f, fdef, in_body, after) in [("deep", 0, 11, 29), ("deep_frozen", 1, 12, 33)] {
            let mut outcomes = std::collections::BTreeSet::new();
            for n in (1000..1030).chain([5, 2000]) {
                for pad in 0..4 {
                    let args = [u64_arg(n), u64_arg(pad)];
                    let want = s.interp(f, &args);
                    let got = s.jit(f, &args);
                    outcomes.insert((want.0, want.2));
                    if got != want {
                        bad.push(format!("{tier}: {f}({n}, {pad}): jit {got:?} interp {want:?}"));
                    }
                }
            }
            let overflow = |at: u16| outcomes.contains(&(StatusCode::EXECUTION_STACK_OVERFLOW, Some((fdef, at))));
            assert!(overflow(in_body) && overflow(after), "{tier}: {f}: outcomes {outcomes:?}");
            assert!(outcomes.iter().any(|o| o.0 == StatusCode::EXECUTED), "{tier}: {f}: {outcomes:?}");
        }
        assert!(bad.is_empty(), "{bad:#?}");
    }
}

#[test]
fn loop_counters_at_the_edges_of_their_types() {
    // (function, arguments, what the interpreter does with them).
    let cases: Vec<(&str, Vec<Vec<u8>>, &str)> = vec![
        ("up8", vec![vec![250], vec![255], vec![0]], "counts to 255"),
        ("up8", vec![vec![250], vec![255], vec![1]], "255 + 1 after the loop overflows"),
        ("up8", vec![vec![255], vec![255], vec![0]], "no iteration"),
        ("up8", vec![vec![0], vec![0], vec![255]], "no iteration, 0 + 255"),
        ("down", vec![u64_arg(3)], "0 - 1 after the loop underflows"),
        ("down", vec![u64_arg(0)], "no iteration, underflows"),
        ("not_zero", vec![u64_arg(0)], "0 - 1 on the false edge underflows"),
        ("not_zero", vec![u64_arg(1)], "1 - 1 on the true edge"),
        ("not_zero", vec![u64_arg(u64::MAX)], "MAX - 1"),
    ];
    for (tier, baseline_above) in TIERS {
        let mut s = Pair::new(SOURCE, JitConfig { cost: None, baseline_above, ..JitConfig::default() });
        let mut statuses = std::collections::BTreeSet::new();
        for (f, args, what) in &cases {
            let want = s.interp(f, args);
            let got = s.jit(f, args);
            assert_eq!(got, want, "{tier}: {f}: {what}");
            statuses.insert(want.0);
        }
        assert!(statuses.contains(&StatusCode::ARITHMETIC_ERROR) && statuses.contains(&StatusCode::EXECUTED));
    }
}
