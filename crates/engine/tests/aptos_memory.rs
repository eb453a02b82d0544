//! Compiled code feeds Aptos's memory meter (jit-abi.md 5.1, 5.2) where
//! the interpreter does: `pack`/`unpack` (variants too), `vec_pack`,
//! `vec_unpack`, `vec_push_back` and `vec_pop_back`, and `eq`, `pop`,
//! `read_ref`, `write_ref` of values whose layout fixes their heap size and
//! `ld_const` of vectors, and `ret` of frames whose locals with a heap part
//! own heap memory run compiled under the v50 schedule, and every executor ends each call with the same status,
//! location, execution gas and peak memory (`memory_used`), at full
//! balance (growth ends with `MEMORY_LIMIT_EXCEEDED` at the growing
//! instruction, the whole quota used) and at every small balance of a range (running out of gas
//! next to a memory use: the peak counts exactly the uses before it, and
//! an instruction whose memory use comes before its only charge runs out
//! there even after one that uses memory between two charges). A frame's
//! `ret` releases every local still holding a value, all-zero ones too (a
//! `None`, a struct of an empty vector), as a `pop` of it would.

use movejit_engine::runtime::gas::aptos::AptosPricing;
use movejit_engine::runtime::{AccountAddress, GasMeter, InMemoryStorage, ModuleId, StatusCode};
use movejit_engine::{Engine, EngineConfig};
use movejit_testkit::balances::{agree_at_balances, every_executor};

const SOURCE: &str = "version 10
module 0xcafe::grow

struct P has copy + drop
  a: u64
  b: u64

enum Opt<T> has copy + drop
  None
  Some
    v: T

enum Shape has drop
  Circle
    r: u64
  Square
    r: u64

public fun endless()
    local v: vector<vector<u64>>
    vec_pack <vector<u64>>, 0
    st_loc v
L0: mut_borrow_loc v
    ld_u64 1
    ld_u64 2
    ld_u64 3
    ld_u64 4
    ld_u64 5
    ld_u64 6
    ld_u64 7
    ld_u64 8
    vec_pack <u64>, 8
    vec_push_back <vector<u64>>
    branch L0

public fun seesaw()
    local v: vector<u64>
    vec_pack <u64>, 0
    st_loc v
L0: mut_borrow_loc v
    ld_u64 7
    vec_push_back <u64>
    mut_borrow_loc v
    ld_u64 8
    vec_push_back <u64>
    mut_borrow_loc v
    vec_pop_back <u64>
    pop
    branch L0

public fun churn(n: u64): u64
    local i: u64
    local s: u64
    ld_u64 0
    st_loc i
    ld_u64 0
    st_loc s
L0: copy_loc i
    copy_loc n
    lt
    br_false L1
    copy_loc i
    ld_u64 1
    pack P
    unpack P
    add
    ld_u64 2
    pack_variant Shape, Square
    unpack_variant Shape, Square
    add
    ld_u64 3
    ld_u64 4
    vec_pack <u64>, 2
    vec_unpack <u64>, 2
    add
    add
    copy_loc s
    add
    st_loc s
    copy_loc i
    ld_u64 5
    pack P
    copy_loc i
    ld_u64 5
    pack P
    eq
    pop
    ld_u64 9
    ld_u64 9
    pack P
    pop
    ld_const <vector<u64>> [1, 2, 3]
    vec_unpack <u64>, 3
    add
    add
    pop
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc s
    ret

public fun fill(n: u64): u64
    local v: vector<u64>
    local w: vector<u64>
    local i: u64
    vec_pack <u64>, 0
    st_loc v
    ld_u64 0
    st_loc i
L0: copy_loc i
    copy_loc n
    lt
    br_false L1
    mut_borrow_loc v
    copy_loc i
    vec_push_back <u64>
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc v
    st_loc w
    borrow_loc w
    vec_len <u64>
    ret

public fun poke(p: &mut P, n: u64): u64
    copy_loc p
    read_ref
    unpack P
    add
    copy_loc n
    add
    ld_u64 1
    ld_u64 2
    pack P
    move_loc p
    write_ref
    ret

public fun pokes(n: u64): u64
    local q: P
    local s: u64
    ld_u64 0
    ld_u64 0
    pack P
    st_loc q
    ld_u64 0
    st_loc s
L0: copy_loc n
    ld_u64 0
    eq
    br_true L1
    mut_borrow_loc q
    copy_loc n
    call poke
    copy_loc s
    add
    st_loc s
    move_loc n
    ld_u64 1
    sub
    st_loc n
    branch L0
L1: move_loc s
    ret

public fun partial(n: u64): u64
    local o: Opt<u64>
    local p: P
    copy_loc n
    pack_variant Opt<u64>, Some
    st_loc o
    copy_loc n
    copy_loc n
    pack P
    st_loc p
    copy_loc p
    unpack P
    add
    ret

// A `None` packed where a `Some` holding a vector was: the frame's drop
// at `ret` sees the same bytes on every executor (a held `None` is all
// zero), then the caller's vector sets the peak past it.
fun none_after_some(n: u64): u64
    local s: Opt<vector<u64>>
    local t: Opt<vector<u64>>
    copy_loc n
    copy_loc n
    vec_pack <u64>, 2
    pack_variant Opt<vector<u64>>, Some
    st_loc s
    pack_variant Opt<vector<u64>>, None
    st_loc t
    move_loc n
    ret

public fun drops(n: u64): u64
    copy_loc n
    call none_after_some
    move_loc n
    vec_pack <u64>, 0
    vec_pack <u64>, 0
    vec_pack <u64>, 0
    vec_pack <vector<u64>>, 3
    pop
    add
    ret

public fun shout(n: u64)
    move_loc n
    ld_const <vector<u8>> [97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108]
    abort_msg
";

fn storage() -> InMemoryStorage {
    movejit_testkit::masm::storage_with(SOURCE)
}

/// What every executor must agree on: the status with its function and
/// code offset, the execution gas and the peak memory.
#[derive(Debug, PartialEq, Eq)]
struct Ran {
    status: StatusCode,
    at: Option<(String, u16)>,
    execution_gas: u64,
    memory_used: u64,
}

/// Runs `f(args)` on `engine` under the v50 schedule with `balance`
/// internal units: what it gave, and how many function instances ran
/// compiled.
fn run(engine: &Engine, st: &InMemoryStorage, f: &str, args: &[u64], balance: u64) -> (Ran, usize) {
    let mut session = engine.new_session(st);
    let args: Vec<Vec<u8>> = args.iter().map(|a| a.to_le_bytes().to_vec()).collect();
    let mut gas = GasMeter::aptos(AptosPricing::v50(), balance);
    let module = ModuleId::new(AccountAddress::from_u64(0xcafe), "grow");
    let r = session.execute_function(&module, f, &[], &args, &mut gas);
    let compiled = session.compiled_stats().map_or(0, |s| s.compiled_functions);
    let (status, at) = match r {
        Ok(_) => (StatusCode::EXECUTED, None),
        Err(e) => (e.status, e.location.map(|l| (l.function_name, l.code_offset))),
    };
    let a = gas.aptos_meter().expect("an Aptos meter");
    (Ran { status, at, execution_gas: a.algebra.execution_used(), memory_used: a.memory_used() }, compiled)
}

/// `f(args)` at each balance on every executor, which must agree with the
/// interpreter: the interpreter's results and the runs that ran compiled
/// code (on the JIT).
fn agree(
    engines: &[(&str, Engine)],
    st: &InMemoryStorage,
    f: &str,
    args: &[u64],
    balances: impl IntoIterator<Item = u64>,
) -> (Vec<Ran>, usize) {
    let agreement = agree_at_balances(engines, balances, |e, b| run(e, st, f, args, b));
    agreement.assert_agreed();
    (agreement.reference.into_iter().map(|(_, r)| r).collect(), agreement.compiled_runs)
}

/// [`agree`] at one balance: the result, and whether it ran compiled.
fn agree_once(engines: &[(&str, Engine)], st: &InMemoryStorage, f: &str, args: &[u64], balance: u64) -> (Ran, bool) {
    let (mut ran, compiled) = agree(engines, st, f, args, [balance]);
    (ran.remove(0), compiled > 0)
}

#[test]
fn growth_ends_at_the_quota_where_the_interpreter_ends() {
    let (st, engines) = (storage(), every_executor(&EngineConfig::aptos()));
    let full = AptosPricing::v50().limits.to_internal(2_000_000);
    // `endless` passes the quota at its `vec_pack`, the whole quota used;
    // `seesaw`, growing slower, reaches the execution limit first.
    let (r, compiled) = agree_once(&engines, &st, "endless", &[], full);
    assert!(compiled, "endless: ran compiled");
    let want = (StatusCode::MEMORY_LIMIT_EXCEEDED, Some(("endless".to_string(), 12)), 10_000_000);
    assert_eq!((r.status, r.at, r.memory_used), want, "endless");
    let (r, compiled) = agree_once(&engines, &st, "seesaw", &[], full);
    assert!(compiled, "seesaw: ran compiled");
    assert_eq!(r.status, StatusCode::EXECUTION_LIMIT_REACHED, "seesaw");
    assert!(r.memory_used > 1_000_000, "seesaw: {r:?}");
    for f in ["churn", "pokes", "fill", "drops"] {
        let (r, compiled) = agree_once(&engines, &st, f, &[1000], full);
        assert!(compiled, "{f}: ran compiled");
        assert_eq!(r.status, StatusCode::EXECUTED, "{f}");
        assert!(r.memory_used > 0, "{f} feeds the memory meter");
    }
}

/// The smallest balance at which `f(args)` enters compiled code on the
/// JIT (`jit`; below it, the call runs out loading the module or making
/// the entry's frame).
fn first_compiled_balance(jit: &Engine, st: &InMemoryStorage, f: &str, args: &[u64]) -> u64 {
    let (mut lo, mut hi) = (0u64, AptosPricing::v50().limits.to_internal(2_000_000));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if run(jit, st, f, args, mid).1 > 0 {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The JIT of [`every_executor`]'s engines (the last).
fn jit<'e>(engines: &'e [(&str, Engine)]) -> &'e Engine {
    &engines.last().expect("engines").1
}

#[test]
fn small_balances_agree_next_to_memory_uses() {
    let (st, engines) = (storage(), every_executor(&EngineConfig::aptos()));
    let (mut out_of_gas, mut runs, mut compiled_runs) = (0, 0, 0);
    let mut offsets = std::collections::BTreeSet::new();
    // `partial`: a generic `pack_variant` (its types, a memory use, then
    // its price) and later `pack` and `copy_loc`, whose memory uses come
    // before their only charge.
    let fs =
        [("endless", &[][..]), ("seesaw", &[]), ("churn", &[3]), ("pokes", &[3]), ("fill", &[3]), ("partial", &[3])];
    for (f, args) in fs {
        // Balances over the first iterations, finer than one instruction's
        // price, so each instruction is the one that runs out in some run.
        let from = first_compiled_balance(jit(&engines), &st, f, args);
        let (ran, compiled) = agree(&engines, &st, f, args, (from..from + 60_000).step_by(97));
        runs += ran.len();
        compiled_runs += compiled;
        for r in ran.iter().filter(|r| r.status == StatusCode::OUT_OF_GAS) {
            out_of_gas += 1;
            offsets.insert((f, r.at.as_ref().map(|a| a.1)));
        }
    }
    assert!(compiled_runs * 10 >= runs * 9, "compiled code ran in only {compiled_runs} of {runs} runs");
    assert!(out_of_gas * 2 > runs, "only {out_of_gas} of {runs} runs ran out of gas");
    assert!(offsets.len() >= 30, "ran out at only {} distinct points: {offsets:?}", offsets.len());
}

/// `abort_msg` runs compiled under Aptos: its base with the segment, its
/// per-byte price where it runs, its message's heap released. Balances
/// around the abort: every executor ends at the same point with the same
/// gas, running out at the abort itself in some runs.
#[test]
fn abort_messages_agree_at_every_balance() {
    let (st, engines) = (storage(), every_executor(&EngineConfig::aptos()));
    let interp = &engines[0].1;
    // The least balance that reaches the abort (interpreted), then
    // balances below it, finer than the message's per-byte part.
    let limit = AptosPricing::v50().limits.to_internal(10);
    let (mut lo, mut hi) = (first_compiled_balance(jit(&engines), &st, "shout", &[7]), limit);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if run(interp, &st, "shout", &[7], mid).0.status == StatusCode::OUT_OF_GAS {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let balances: Vec<u64> = (lo.saturating_sub(20_000)..lo + 500).step_by(7).collect();
    let (ran, compiled) = agree(&engines, &st, "shout", &[7], balances.iter().copied());
    assert_eq!(compiled, balances.len(), "compiled code did not run at every balance");
    let ends: std::collections::BTreeSet<_> = ran.iter().map(|r| (r.status, r.at.as_ref().map(|a| a.1))).collect();
    assert!(ends.contains(&(StatusCode::OUT_OF_GAS, Some(2))), "never ran out at the abort: {ends:?}");
    assert!(ends.contains(&(StatusCode::ABORTED, Some(2))), "never aborted: {ends:?}");
}

/// Lines that grow the memory in use past what the functions below reach
/// before them (eight empty vectors in a vector), then drop it.
const GROW: &str = "    vec_pack <u64>, 0
    vec_pack <u64>, 0
    vec_pack <u64>, 0
    vec_pack <u64>, 0
    vec_pack <u64>, 0
    vec_pack <u64>, 0
    vec_pack <u64>, 0
    vec_pack <u64>, 0
    vec_pack <vector<u64>>, 8
    pop
";

/// The values [`held_values_release_at_ret_what_pop_releases`] holds: a
/// type and the code that pushes one. Some are all zero while held (an
/// empty vector in a struct, a `None` beside a variant owning a vector).
const HELD: [(&str, &str); 7] = [
    ("W", "vec_pack <u64>, 0\n    pack W"),
    ("W", "ld_u64 1\n    ld_u64 2\n    vec_pack <u64>, 2\n    pack W"),
    ("Opt<vector<u64>>", "pack_variant Opt<vector<u64>>, None"),
    ("Opt<vector<u64>>", "vec_pack <u64>, 0\n    pack_variant Opt<vector<u64>>, Some"),
    ("Opt<u64>", "pack_variant Opt<u64>, None"),
    ("vector<u64>", "vec_pack <u64>, 0"),
    ("Opt<W>", "vec_pack <u64>, 0\n    pack W\n    pack_variant Opt<W>, Some"),
];

/// A module with, for each of [`HELD`] (`k`), holding mode (`surely`: on
/// every path; `maybe`: only when `n` is not zero) and end (`held`: the
/// local still holds it at `ret`; `popped`: moved out and popped first),
/// a function `c{k}_{mode}_{end}(n)` that calls the one holding the value
/// and then grows the usage past that frame's peak.
fn frame_drop_source() -> String {
    let mut s = String::from(
        "version 10
module 0xcafe::grow

struct W has drop
  v: vector<u64>

enum Opt<T> has drop
  None
  Some
    v: T
",
    );
    for (k, (ty, build)) in HELD.iter().enumerate() {
        for mode in ["surely", "maybe"] {
            for end in ["held", "popped"] {
                let skip = if mode == "maybe" { "    copy_loc n\n    ld_u64 0\n    eq\n    br_true L1\n" } else { "" };
                let pop = if end == "popped" { "    move_loc x\n    pop\n" } else { "" };
                let f = format!("{k}_{mode}_{end}");
                s += &format!(
                    "
fun h{f}(n: u64): u64
    local x: {ty}
{skip}    {build}
    st_loc x
{pop}L1: move_loc n
    ret

public fun c{f}(n: u64): u64
    copy_loc n
    call h{f}
{GROW}    ret
"
                );
            }
        }
    }
    s
}

/// Aptos's `ret` releases the heap size of every local still holding a
/// value, whatever its bytes, as `pop` releases that of the value it pops:
/// a frame that returns holding a value and one that pops it first leave
/// the same usage behind, so the caller's later peak is the same.
#[test]
fn held_values_release_at_ret_what_pop_releases() {
    let st = movejit_testkit::masm::storage_with(&frame_drop_source());
    let engines = every_executor(&EngineConfig::aptos());
    let full = AptosPricing::v50().limits.to_internal(2_000_000);
    for (k, (ty, build)) in HELD.iter().enumerate() {
        for mode in ["surely", "maybe"] {
            for n in [0, 3] {
                let [held, popped] = ["held", "popped"].map(|end| {
                    let (r, compiled) = agree_once(&engines, &st, &format!("c{k}_{mode}_{end}"), &[n], full);
                    assert!(compiled, "c{k}_{mode}_{end}: ran compiled");
                    assert_eq!(r.status, StatusCode::EXECUTED, "c{k}_{mode}_{end}");
                    r.memory_used
                });
                assert_eq!(
                    held, popped,
                    "{ty} built by `{build}`, held {mode} (n = {n}): peak after the frame's `ret`"
                );
            }
        }
    }
}

/// A module with, for element type `T` (`u64` or `i64`), functions moving
/// vectors of `T` in and out of a `vector<vector<T>>`: `push_full` pushes
/// three of one element (the peak is the last push), `fill_then_pop`
/// pushes an empty one, fills it in place and pops it before a larger
/// growth, `pack_two` packs a one-element and an empty one (the peak).
fn nested_vectors_source() -> String {
    let mut s = String::from("version 10\nmodule 0xcafe::grow\n");
    for t in ["u64", "i64"] {
        let push = movejit_testkit::masm::counted_loop(
            "i",
            "n",
            &format!("    mut_borrow_loc v\n    ld_{t} 1\n    vec_pack <{t}>, 1\n    vec_push_back <vector<{t}>>"),
        );
        s += &format!(
            "
public fun push_full_{t}(n: u64): u64
    local v: vector<vector<{t}>>
    local i: u64
    vec_pack <vector<{t}>>, 0
    st_loc v
{push}
    borrow_loc v
    vec_len <vector<{t}>>
    ret

public fun fill_then_pop_{t}(): u64
    local v: vector<vector<{t}>>
    vec_pack <vector<{t}>>, 0
    st_loc v
    mut_borrow_loc v
    vec_pack <{t}>, 0
    vec_push_back <vector<{t}>>
    mut_borrow_loc v
    ld_u64 0
    vec_mut_borrow <vector<{t}>>
    ld_{t} 7
    vec_push_back <{t}>
    mut_borrow_loc v
    vec_pop_back <vector<{t}>>
    pop
{GROW}    ld_u64 0
    ret

public fun pack_two_{t}(): u64
    ld_{t} 5
    vec_pack <{t}>, 1
    vec_pack <{t}>, 0
    vec_pack <vector<{t}>>, 2
    pop
    ld_u64 0
    ret
"
        );
    }
    s
}

/// Aptos's packed size of a `vector<iN>` element (`vec_pack`, `vec_unpack`,
/// `vec_push_back`, `vec_pop_back`) is `per_iN_packed` when it is not empty
/// and `vector` when it is, where a `vector<u64>` element always counts
/// `vector` (`AbstractSizes::packed_value`): each function's peak differs
/// from its `u64` twin by `vector − per_i64_packed` (32) per non-empty
/// element counted, on every executor.
#[test]
fn signed_vector_elements_count_their_packed_size() {
    let st = movejit_testkit::masm::storage_with(&nested_vectors_source());
    let engines = every_executor(&EngineConfig::aptos());
    let full = AptosPricing::v50().limits.to_internal(2_000_000);
    // (function, args, peak of the u64 twin less that of the i64 one)
    let table: [(&str, &[u64], i64); 3] =
        [("push_full", &[3], 3 * 32), ("fill_then_pop", &[], -32), ("pack_two", &[], 32)];
    for (f, args, diff) in table {
        let [u, i] = ["u64", "i64"].map(|t| {
            let (r, _) = agree_once(&engines, &st, &format!("{f}_{t}"), args, full);
            assert_eq!(r.status, StatusCode::EXECUTED, "{f}_{t}");
            r.memory_used as i64
        });
        assert_eq!(u - i, diff, "{f}: peaks {u} (u64) and {i} (i64)");
    }
}
