//! Vector reference parameters whose headers compiled code reads once per
//! frame (`lower/headers.rs`) against the reference interpreter: borrows
//! and lengths in loops driven past the end of the vector, through an
//! index the loop does not test, on an empty vector that never allocated,
//! and in functions that replace the vector through the reference (where
//! the headers must not be pinned). Status, abort code, error location and
//! results must be the interpreter's, on both tiers.

mod common;

use common::Pair;
use movejit_format::StatusCode;
use movejit_jit::JitConfig;

/// The start of both summing loops: `s` and `i` from 0, then the loop
/// test reads `i`.
macro_rules! sum_loop_head {
    () => {
        "    local i: u64\n    local s: u64\n    ld_u64 0\n    st_loc s\n    ld_u64 0\n    st_loc i\nL0: copy_loc i\n"
    };
}

const SOURCE: &str = concat!(
    r#"
module 0xcafe::pinned

// Sets v[i - 1] = false for i in k, 2k, 3k, .. <= limit; counts the writes.
public fun strike(v: &mut vector<bool>, k: u64, limit: u64): u64
    local i: u64
    local n: u64
    ld_u64 0
    st_loc n
    copy_loc k
    st_loc i
L0: copy_loc i
    copy_loc limit
    le
    br_false L1
    ld_false
    copy_loc v
    copy_loc i
    ld_u64 1
    sub
    vec_mut_borrow <bool>
    write_ref
    move_loc n
    ld_u64 1
    add
    st_loc n
    move_loc i
    copy_loc k
    add
    st_loc i
    branch L0
L1: move_loc v
    pop
    move_loc n
    ret

// Sums v[i] for i < len(v), then reads v[extra] once more.
public fun sum_then(v: &vector<u64>, extra: u64): u64
"#,
    sum_loop_head!(),
    r#"    copy_loc v
    vec_len <u64>
    lt
    br_false L1
    move_loc s
    copy_loc v
    copy_loc i
    vec_borrow <u64>
    read_ref
    add
    st_loc s
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc s
    move_loc v
    copy_loc extra
    vec_borrow <u64>
    read_ref
    add
    ret

// Reads v[i] for i < n; after the read at i == at, replaces *v by [7, 8]
// (lowered after the reads, so their loads were emitted pinned).
public fun replace_midway(v: &mut vector<u64>, n: u64, at: u64): u64
"#,
    sum_loop_head!(),
    r#"    copy_loc n
    lt
    br_false L2
    move_loc s
    copy_loc v
    freeze_ref
    copy_loc i
    vec_borrow <u64>
    read_ref
    add
    copy_loc v
    freeze_ref
    vec_len <u64>
    add
    st_loc s
    copy_loc i
    copy_loc at
    eq
    br_false L1
    ld_u64 7
    ld_u64 8
    vec_pack <u64>, 2
    copy_loc v
    write_ref
L1: move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L2: move_loc v
    pop
    move_loc s
    ret

// A sieve of `len` trues struck by `k` up to `limit`.
public fun run_strike(len: u64, k: u64, limit: u64): u64
    local v: vector<bool>
    vec_pack <bool>, 0
    st_loc v
L0: copy_loc len
    ld_u64 0
    eq
    br_true L1
    mut_borrow_loc v
    ld_true
    vec_push_back <bool>
    move_loc len
    ld_u64 1
    sub
    st_loc len
    branch L0
L1: mut_borrow_loc v
    copy_loc k
    copy_loc limit
    call strike
    ret

// 10, 20, .., 10 * len, summed and read at `extra`.
public fun run_sum(len: u64, extra: u64): u64
    local v: vector<u64>
    vec_pack <u64>, 0
    st_loc v
L0: copy_loc len
    ld_u64 0
    eq
    br_true L1
    mut_borrow_loc v
    copy_loc len
    ld_u64 10
    mul
    vec_push_back <u64>
    move_loc len
    ld_u64 1
    sub
    st_loc len
    branch L0
L1: borrow_loc v
    copy_loc extra
    call sum_then
    ret

public fun run_replace(n: u64, at: u64): u64
    local v: vector<u64>
    ld_u64 1
    ld_u64 2
    ld_u64 3
    ld_u64 4
    ld_u64 5
    vec_pack <u64>, 5
    st_loc v
    mut_borrow_loc v
    copy_loc n
    copy_loc at
    call replace_midway
    ret

// Reads v[i - 1], then pushes i: the push may move the header, so it is
// read at the borrow (not pinned).
public fun read_then_push(v: &mut vector<u64>, i: u64): u64
    local x: u64
    copy_loc v
    freeze_ref
    copy_loc i
    ld_u64 1
    sub
    vec_borrow <u64>
    read_ref
    st_loc x
    move_loc v
    copy_loc i
    vec_push_back <u64>
    move_loc x
    ret

// read_then_push at `i` of [10, 20, 30], or (n == 0) of an empty vector
// that never allocated.
public fun run_read_push(n: u64, i: u64): u64
    local v: vector<u64>
    copy_loc n
    ld_u64 0
    neq
    br_true L0
    vec_pack <u64>, 0
    st_loc v
    branch L1
L0: ld_u64 10
    ld_u64 20
    ld_u64 30
    vec_pack <u64>, 3
    st_loc v
L1: mut_borrow_loc v
    copy_loc i
    call read_then_push
    ret
"#
);

const TIERS: [(&str, usize); 2] = [("optimizing", usize::MAX), ("baseline", 0)];

fn u64_arg(x: u64) -> Vec<u8> {
    x.to_le_bytes().to_vec()
}

#[test]
fn pinned_headers_match_the_interpreter() {
    let cases: Vec<(&str, Vec<u64>, &str)> = vec![
        ("run_strike", vec![100, 3, 100], "every third of 100"),
        ("run_strike", vec![100, 1, 101], "index 100 of 100: out of bounds"),
        ("run_strike", vec![100, 40, u64::MAX], "out of bounds before the step overflows"),
        ("run_strike", vec![0, 5, 5], "empty vector that never allocated"),
        ("run_strike", vec![0, 5, 4], "empty vector, no iteration"),
        ("run_strike", vec![10, 0, 0], "index 0 - 1 underflows"),
        ("run_strike", vec![0, 0, 0], "0 - 1 on an empty vector that never allocated: the sub fails first"),
        ("run_sum", vec![20, 19], "sum, then the last element"),
        ("run_sum", vec![20, 20], "sum, then one past the end"),
        ("run_sum", vec![0, 0], "empty vector that never allocated, then index 0"),
        ("run_replace", vec![5, 9], "never replaced: sums 5 elements and lengths"),
        ("run_replace", vec![2, 0], "replaced after reading index 0, reads [7, 8][1]"),
        ("run_replace", vec![4, 1], "replaced after index 1, reads [7, 8][2]: out of bounds"),
        ("run_replace", vec![5, 4], "replaced after the last read"),
        // `v[i - 1]` tests its bounds once (lower/index.rs): the wrap of
        // `i - 1` must still fail at the sub, before the borrow's errors.
        ("run_read_push", vec![1, 3], "reads [10, 20, 30][2], header not pinned"),
        ("run_read_push", vec![1, 4], "index 4 - 1 of 3: out of bounds"),
        ("run_read_push", vec![1, u64::MAX], "index MAX - 1 does not wrap: out of bounds"),
        ("run_read_push", vec![1, 0], "index 0 - 1 wraps: the sub fails, not the borrow"),
        ("run_read_push", vec![0, 0], "0 - 1 on an empty vector that never allocated: the sub fails"),
        ("run_read_push", vec![0, 1], "index 0 of an empty vector that never allocated"),
    ];
    for (tier, baseline_above) in TIERS {
        let mut s = Pair::new(SOURCE, JitConfig { cost: None, baseline_above, ..JitConfig::default() });
        let mut statuses = std::collections::BTreeSet::new();
        for (f, args, what) in &cases {
            let args: Vec<Vec<u8>> = args.iter().map(|a| u64_arg(*a)).collect();
            let want = s.interp(f, &args);
            let got = s.jit(f, &args);
            assert_eq!(got, want, "{tier}: {f}: {what}");
            statuses.insert(want.0);
        }
        for st in [StatusCode::EXECUTED, StatusCode::VECTOR_OPERATION_ERROR, StatusCode::ARITHMETIC_ERROR] {
            assert!(statuses.contains(&st), "{tier}: no case ends in {st:?}: {statuses:?}");
        }
    }
}
