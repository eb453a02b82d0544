//! Aptos's production gas, reproduced: every conformance call run under
//! the v50 schedule at the balances of `../shared/conformance/aptos/gas/`
//! (full, 2 and 3 external units) must end with the same status, abort
//! code and location, and use the same execution and I/O gas and the same
//! peak memory (`memory_used`, abstract units), as the real
//! Aptos VM. Cases marked `approx_natives` are priced approximately in the
//! reference (a native Aptos's framework lacks): their status must match,
//! and at least a floor of them must match on gas too.
//!
//! Every other case must match; the first differences are printed with
//! the reference's per-charge breakdown (`trace.jsonl`). To look into one
//! case: `GAS_CASE=<id>`; every difference, one a line: `MOVEJIT_GAS_DIFFS=1`.

use movejit_engine::runtime::gas::aptos::AptosPricing;
use movejit_engine::runtime::GasMeter;
use movejit_engine::{new_engine, Engine, EngineConfig, ExecutorKind};
use movejit_testkit::balances::{agree_at_balances, every_executor};
use movejit_testkit::*;
use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};

/// What a run is compared on.
#[derive(Debug, PartialEq, Eq)]
struct Charged {
    status: String,
    abort_code: Option<u64>,
    location: Option<(String, u16, u16)>,
    execution_gas_used: u64,
    io_gas_used: u64,
}

/// Peak memory of a run, in abstract units (compared apart from gas).
type MemoryUsed = u64;

fn expected_memory(j: &Json) -> MemoryUsed {
    j["memory_used"].as_u64().unwrap_or(u64::MAX)
}

fn expected(j: &Json) -> Charged {
    let loc = j["location"].as_str().map(|m| {
        (m.to_string(), j["function_index"].as_u64().unwrap_or(0) as u16, j["code_offset"].as_u64().unwrap_or(0) as u16)
    });
    Charged {
        status: j["status"].as_str().unwrap_or_default().to_string(),
        abort_code: j["abort_code"].as_u64(),
        location: loc,
        execution_gas_used: j["execution_gas_used"].as_u64().unwrap_or(u64::MAX),
        io_gas_used: j["io_gas_used"].as_u64().unwrap_or(u64::MAX),
    }
}

/// A case's charges and peak memory at a balance in external units, and
/// how many function instances ran compiled.
fn run(engine: &Engine, case: &Case, balance_external: u64) -> Result<(Charged, MemoryUsed, usize), String> {
    run_internal(engine, case, AptosPricing::v50().limits.to_internal(balance_external))
}

/// [`run`] with a balance in internal units.
fn run_internal(engine: &Engine, case: &Case, balance: u64) -> Result<(Charged, MemoryUsed, usize), String> {
    let call = case.call()?;
    let mut gas = GasMeter::aptos(AptosPricing::v50(), balance);
    let mut session = engine.new_session(&call.storage);
    let r = session.execute_function(&call.module, &call.function, &call.ty_args, &call.args, &mut gas);
    let compiled = session.compiled_stats().map_or(0, |s| s.compiled_functions);
    let o = outcome_of(r);
    let a = gas.aptos_meter().ok_or("not an Aptos meter")?;
    let charged = Charged {
        location: if o.status != "EXECUTED" { o.location } else { None },
        status: o.status,
        abort_code: o.abort_code,
        execution_gas_used: a.algebra.execution_used(),
        io_gas_used: a.algebra.io_used(),
    };
    Ok((charged, a.memory_used(), compiled))
}

fn read_jsonl(name: &str) -> HashMap<String, Json> {
    let path = shared_dir().join("conformance/aptos/gas").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Json>(l).expect("gas json"))
        .map(|j| (j["id"].as_str().unwrap_or_default().to_string(), j))
        .collect()
}

/// The reference's native charges of case `id` (Aptos's trace shows a
/// native's charges as bare amounts), one per line.
fn native_trace(traces: &HashMap<String, Json>, id: &str) -> String {
    traces[id]["trace"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter(|c| c["charge"].as_str().is_some_and(|s| s.contains("InternalGasUnit")))
                .map(|c| format!("    {} ×{} = {}", c["charge"], c["count"], c["gas"]))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .join("\n")
}

/// The reference's charges of case `id`, one per line.
fn trace(traces: &HashMap<String, Json>, id: &str) -> String {
    traces[id]["trace"]
        .as_array()
        .map(|t| t.iter().map(|c| format!("    {} ×{} = {}", c["charge"], c["count"], c["gas"])).collect::<Vec<_>>())
        .unwrap_or_default()
        .join("\n")
}

/// Runs every case at `balance` external units against `file` on every
/// executor (compiled code charges the Aptos schedule; functions whose
/// charges it cannot fix when compiling run interpreted, under the same
/// meter): at least `cases_compared` are compared on gas and on peak
/// memory (`memory_used`) on each, all of them match, and on `auto` and
/// `jit` compiled code ran in at least `compiled_cases` (it feeds the
/// memory meter too, so functions that pack, unpack or grow vectors run
/// compiled); of the `approx_natives` cases, at least `approx_matching`
/// match on gas.
fn check(file: &str, balance: u64, cases_compared: usize, approx_matching: usize, compiled_cases: usize) {
    let cases = load_aptos_cases();
    let reference = read_jsonl(file);
    let traces = read_jsonl("trace.jsonl");
    let only = std::env::var("GAS_CASE").ok();
    for (label, kind) in
        [("interp", ExecutorKind::Interpreter), ("auto", ExecutorKind::Auto), ("jit", ExecutorKind::Jit)]
    {
        let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
        let (mut compared, mut matching, mut status_only, mut ran_compiled) = (0, 0, 0, 0);
        let mut compiled_instances = 0;
        let mut approx_matched = 0;
        let mut diffs = Vec::new();
        let (mut memory_matching, mut memory_diffs) = (0, Vec::new());
        for case in &cases {
            if only.as_ref().is_some_and(|o| *o != case.id) {
                continue;
            }
            let Some(j) = reference.get(&case.id) else { continue };
            let want = expected(j);
            let (got, memory, compiled) = run(&engine, case, balance).unwrap_or_else(|e| panic!("{}: {e}", case.id));
            ran_compiled += usize::from(compiled > 0);
            compiled_instances += compiled;
            if !j["approx_natives"].is_null() {
                status_only += 1;
                assert_eq!(got.status, want.status, "{label} {}: status", case.id);
                if got == want {
                    approx_matched += 1;
                } else if diffs.len() < 12 {
                    let natives = native_trace(&traces, &case.id);
                    diffs.push(format!(
                        "{label} {} (approx_natives):\n  got  {got:?}\n  want {want:?}\n  reference native charges:\n{natives}",
                        case.id
                    ));
                }
                continue;
            }
            compared += 1;
            let want_memory = expected_memory(j);
            if memory == want_memory {
                memory_matching += 1;
            } else if memory_diffs.len() < 12 {
                memory_diffs.push(format!("{label} {}: memory_used {memory}, want {want_memory}", case.id));
            }
            if got == want {
                matching += 1;
                continue;
            }
            if std::env::var_os("MOVEJIT_GAS_DIFFS").is_some() {
                let delta = want.execution_gas_used as i128 - got.execution_gas_used as i128;
                eprintln!("ALL {label} {} {delta} {} {}", case.id, got.status, want.status);
            }
            if diffs.len() < 12 {
                let charges = trace(&traces, &case.id);
                diffs.push(format!(
                    "{label} {}:\n  got  {got:?}\n  want {want:?}\n  reference charges:\n{charges}",
                    case.id
                ));
            }
        }
        eprintln!(
            "{file} on {label}: {matching}/{compared} cases match the reference gas exactly \
             ({approx_matched}/{status_only} approx_natives match too; compiled code ran in {ran_compiled}, \
             {compiled_instances} function instances in all)"
        );
        eprintln!("{file} on {label}: {memory_matching}/{compared} cases match the reference memory_used");
        for d in &diffs {
            eprintln!("DIFF {d}");
        }
        for d in &memory_diffs {
            eprintln!("MEMORY DIFF {d}");
        }
        // Under Aptos's schedule no executor refuses a call (the JIT runs
        // interpreted what it cannot charge as constants).
        assert!(
            only.is_some() || compared >= cases_compared,
            "{label}: expected the full case file, compared {compared}"
        );
        assert_eq!(matching, compared, "{file} on {label}: {} cases differ", compared - matching);
        assert_eq!(
            memory_matching,
            compared,
            "{file} on {label}: {} cases differ on memory_used",
            compared - memory_matching
        );
        assert!(
            only.is_some() || approx_matched >= approx_matching,
            "{file} on {label}: {approx_matched} approx_natives cases match, fewer than {approx_matching}"
        );
        if label != "interp" && only.is_none() {
            assert!(
                ran_compiled >= compiled_cases,
                "{file} on {label}: compiled code ran in only {ran_compiled} cases, fewer than {compiled_cases}"
            );
        }
    }
}

#[test]
fn full_balance_matches_aptos() {
    check("gas.jsonl", 20_000_000, 2427, 14, 2425);
}

#[test]
fn balance_of_two_units_matches_aptos() {
    check("gas_budget2.jsonl", 2, 2441, 0, 1933);
}

#[test]
fn balance_of_three_units_matches_aptos() {
    check("gas_budget3.jsonl", 3, 2427, 14, 2425);
}

/// `bench_gas.jsonl`: the benchmarks (clob aside) at each size, at the
/// default balance, on every executor: the same status at the same
/// location with the same gas (most pass Aptos's execution limit).
#[test]
fn benchmarks_match_aptos() {
    for (label, kind) in
        [("interp", ExecutorKind::Interpreter), ("auto", ExecutorKind::Auto), ("jit", ExecutorKind::Jit)]
    {
        let ran_compiled = benchmarks_match_aptos_on(label, kind);
        if label != "interp" {
            assert!(ran_compiled >= 10, "{label}: compiled code ran in only {ran_compiled} benchmark runs");
        }
    }
}

/// [`benchmarks_match_aptos`] on one executor; how many runs ran compiled
/// code.
fn benchmarks_match_aptos_on(label: &str, kind: ExecutorKind) -> usize {
    let dir = shared_dir().join("bench");
    let reference = read_jsonl("bench_gas.jsonl");
    let text = std::fs::read_to_string(dir.join("benchmarks.jsonl")).expect("benchmarks.jsonl");
    let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
    let (mut compared, mut bad, mut bad_memory, mut ran_compiled) = (0, Vec::new(), Vec::new(), 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let b: Json = serde_json::from_str(line).expect("benchmark json");
        let name = b["name"].as_str().unwrap_or_default();
        let strs = |v: &Json| -> Vec<String> {
            v.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
        };
        let sizes = std::iter::once(("ref".to_string(), &b))
            .chain(b["scaling"].as_array().into_iter().flatten().enumerate().map(|(k, s)| (format!("scale{k}"), s)));
        for (size, s) in sizes {
            let id = format!("{name}.{size}");
            let Some(j) = reference.get(&id) else { continue };
            let case = Case {
                id: id.clone(),
                family: "bench".into(),
                modules: strs(&b["modules"]).iter().map(|m| dir.join(m)).collect(),
                function: b["function"].as_str().unwrap_or_default().to_string(),
                type_args: strs(&b["type_args"]),
                args: strs(&s["args"]),
                expect: Json::Null,
                vm_message: None,
            };
            let want = expected(j);
            let (got, memory, compiled) = run(&engine, &case, 20_000_000).unwrap_or_else(|e| panic!("{id}: {e}"));
            compared += 1;
            ran_compiled += usize::from(compiled > 0);
            if got != want {
                bad.push(format!("{label} {id}:\n  got  {got:?}\n  want {want:?}"));
            }
            let want_memory = expected_memory(j);
            if memory != want_memory {
                bad_memory.push(format!("{label} {id}: memory_used {memory}, want {want_memory}"));
            }
        }
    }
    for d in &bad {
        eprintln!("DIFF {d}");
    }
    for d in &bad_memory {
        eprintln!("MEMORY DIFF {d}");
    }
    eprintln!(
        "bench_gas.jsonl on {label}: {}/{compared} runs match ({} on memory_used); compiled code ran in {ran_compiled}",
        compared - bad.len(),
        compared - bad_memory.len()
    );
    assert!(compared >= 40, "only {compared} benchmark runs found");
    assert!(bad.is_empty(), "{label}: {} benchmark runs differ", bad.len());
    assert!(bad_memory.is_empty(), "{label}: {} benchmark runs differ on memory_used", bad_memory.len());
    ran_compiled
}

/// A `0xcafe::dep` nobody calls, for tests whose user module needs no
/// dependency of its own.
const IDLE_DEP: &str = "version 8
module 0xcafe::dep

public fun one(): u64
    ld_u64 1
    ret
";

/// `0xcafe::dep` and `0xcafe::user` assembled (`user_src` is `user`'s
/// text), in storage; `dep`'s size.
fn two_modules(dep_src: &str, user_src: &str) -> (movejit_engine::runtime::InMemoryStorage, u64) {
    use movejit_testkit::masm::publish_masm;
    let mut st = movejit_engine::runtime::InMemoryStorage::default();
    let dep = publish_masm(&mut st, dep_src);
    publish_masm(&mut st, user_src);
    (st, movejit_format::serialize_module(&dep).len() as u64)
}

/// The execution gas of `0xcafe::user::<f>()` under the v50 schedule, on
/// `kind`, in a fresh session (one transaction).
fn execution_gas(kind: ExecutorKind, st: &movejit_engine::runtime::InMemoryStorage, f: &str) -> u64 {
    use movejit_engine::runtime::{AccountAddress, ModuleId};
    let engine = new_engine(EngineConfig { executor: kind, ..EngineConfig::aptos() });
    let mut session = engine.new_session(st);
    let pricing = AptosPricing::v50();
    let mut gas = GasMeter::aptos(pricing.clone(), pricing.limits.to_internal(1_000));
    let user = ModuleId::new(AccountAddress::from_u64(0xcafe), "user");
    session.execute_function(&user, f, &[], &[], &mut gas).unwrap_or_else(|e| panic!("{f}: {e:?}"));
    gas.aptos_meter().expect("an Aptos meter").algebra.execution_used()
}

/// What loading a module of `size` bytes costs (`txn.dependency_per_module`
/// + `txn.dependency_per_byte` × size).
fn loading(size: u64) -> u64 {
    744_600 + 420 * size
}

/// A resource's layout reaches the datatypes of its fields: reading it
/// (even `exists` of one that is not there) loads their modules. `R` holds
/// a `dep::Coin`, `Q` a `u64`; only `exists_r` loads `dep`.
#[test]
fn reading_a_resource_loads_the_modules_of_its_layout() {
    let (st, dep_size) = two_modules(
        "version 8
module 0xcafe::dep

struct Coin has store
  v: u64
",
        "version 8
module 0xcafe::user
use 0xcafe::dep
    struct Coin has store

struct R has key
  c: dep::Coin

struct Q has key
  c: u64

public fun exists_r(): bool
    ld_const <address> 0xcafe
    exists R
    ret

public fun exists_q(): bool
    ld_const <address> 0xcafe
    exists Q
    ret
",
    );
    for kind in [ExecutorKind::Interpreter, ExecutorKind::Auto, ExecutorKind::Jit] {
        let (r, q) = (execution_gas(kind, &st, "exists_r"), execution_gas(kind, &st, "exists_q"));
        assert_eq!(r, q + loading(dep_size), "{kind:?}");
    }
}

/// Packing a closure over another module's function loads that module:
/// Aptos's lazy loader charges its dependency gas then (once per
/// transaction), even when the closure is never called. `pack_dep` and
/// `pack_local` run the same instructions; only `pack_dep` loads `dep`.
#[test]
fn packing_a_closure_loads_its_module() {
    let (st, dep_size) = two_modules(
        "version 8
module 0xcafe::dep

public fun f(x: u64): u64
    move_loc x
    ret
",
        "version 8
module 0xcafe::user
use 0xcafe::dep
    fun f(l0: u64): u64

fun g(x: u64): u64
    move_loc x
    ret

public fun pack_dep(): u64
    pack_closure dep::f, 0
    pop
    ld_u64 1
    ret

public fun pack_local(): u64
    pack_closure g, 0
    pop
    ld_u64 1
    ret
",
    );
    for kind in [ExecutorKind::Interpreter, ExecutorKind::Auto, ExecutorKind::Jit] {
        let (packed_dep, packed_local) = (execution_gas(kind, &st, "pack_dep"), execution_gas(kind, &st, "pack_local"));
        assert_eq!(packed_dep, packed_local + loading(dep_size), "{kind:?}");
    }
}

/// A storable closure (over a public function) builds its captured
/// values' layouts when it is packed: capturing a `vector<dep::Coin>`
/// loads `dep`, capturing a `vector<u64>` loads nothing more.
#[test]
fn a_storable_closure_loads_the_modules_of_its_captured_values() {
    let (st, dep_size) = two_modules(
        "version 8
module 0xcafe::dep

struct Coin has copy + drop + store
  v: u64
",
        "version 8
module 0xcafe::user
use 0xcafe::dep
    struct Coin has copy + drop + store

public fun take_coins(v: vector<dep::Coin>): u64
    ld_u64 1
    ret

public fun take_u64s(v: vector<u64>): u64
    ld_u64 1
    ret

public fun capture_coins(): u64
    vec_pack <dep::Coin>, 0
    pack_closure take_coins, 1
    pop
    ld_u64 1
    ret

public fun capture_u64s(): u64
    vec_pack <u64>, 0
    pack_closure take_u64s, 1
    pop
    ld_u64 1
    ret
",
    );
    for kind in [ExecutorKind::Interpreter, ExecutorKind::Auto, ExecutorKind::Jit] {
        let (coins, u64s) = (execution_gas(kind, &st, "capture_coins"), execution_gas(kind, &st, "capture_u64s"));
        assert_eq!(coins, u64s + loading(dep_size), "{kind:?}");
    }
}

/// `0xcafe::user::<f>(args)` under the v50 schedule with `balance`
/// internal units, on `engine`, in a fresh session: its charges, peak
/// memory and how many function instances ran compiled.
fn run_user(
    engine: &Engine,
    st: &movejit_engine::runtime::InMemoryStorage,
    f: &str,
    args: &[Vec<u8>],
    balance: u64,
) -> (Charged, MemoryUsed, usize) {
    run_user_on(engine, st, f, args, GasMeter::aptos(AptosPricing::v50(), balance))
}

/// [`run_user`] on the Aptos meter `gas`.
fn run_user_on(
    engine: &Engine,
    st: &movejit_engine::runtime::InMemoryStorage,
    f: &str,
    args: &[Vec<u8>],
    mut gas: GasMeter,
) -> (Charged, MemoryUsed, usize) {
    use movejit_engine::runtime::{AccountAddress, ModuleId};
    let mut session = engine.new_session(st);
    let user = ModuleId::new(AccountAddress::from_u64(0xcafe), "user");
    let r = session.execute_function(&user, f, &[], args, &mut gas);
    let compiled = session.compiled_stats().map_or(0, |s| s.compiled_functions);
    let o = outcome_of(r);
    let a = gas.aptos_meter().expect("an Aptos meter");
    let charged = Charged {
        location: if o.status != "EXECUTED" { o.location } else { None },
        status: o.status,
        abort_code: o.abort_code,
        execution_gas_used: a.algebra.execution_used(),
        io_gas_used: a.algebra.io_used(),
    };
    (charged, a.memory_used(), compiled)
}

/// [`run_user`] of `f(args)` as [`agree_at_balances`] runs it: charges
/// and peak memory compared, compiled instances counted.
fn user_run<'a>(
    st: &'a movejit_engine::runtime::InMemoryStorage,
    f: &'a str,
    args: &'a [Vec<u8>],
) -> impl FnMut(&Engine, u64) -> ((Charged, MemoryUsed), usize) + 'a {
    move |engine, balance| {
        let (charged, memory, compiled) = run_user(engine, st, f, args, balance);
        ((charged, memory), compiled)
    }
}

/// `0xcafe::user::f(args)` on `jit` at a full balance: it must end with
/// `status`, having run compiled code. What it was charged.
fn whole_compiled_run(
    jit: &Engine,
    st: &movejit_engine::runtime::InMemoryStorage,
    f: &str,
    args: &[Vec<u8>],
    status: &str,
) -> Charged {
    let full = AptosPricing::v50().limits.to_internal(1_000);
    let (whole, _, compiled) = run_user(jit, st, f, args, full);
    assert_eq!(whole.status, status, "{f}");
    assert!(compiled > 0, "{f} did not run compiled");
    whole
}

/// `n` balances from `low` up to `total`, off any regular grid.
fn balances_between(low: u64, total: u64, n: u64) -> impl Iterator<Item = u64> {
    (0..n).map(move |k| low + (total - low) / n * k + k * 997 % 101)
}

/// How many of the reference's runs ran out of gas at (function index,
/// code offset) `at` of `module`.
fn out_of_gas_at(
    agreement: &movejit_testkit::balances::Agreement<(Charged, MemoryUsed)>,
    module: &str,
    at: (u16, u16),
) -> usize {
    let here = |l: &(String, u16, u16)| l.0 == module && (l.1, l.2) == at;
    agreement
        .reference
        .iter()
        .filter(|(_, (want, _))| want.status == "OUT_OF_GAS" && want.location.as_ref().is_some_and(here))
        .count()
}

/// Global storage in compiled code under Aptos's schedule: `store` moves
/// resources to storage, tests, borrows and moves them back (plain and
/// generic forms; `R`'s layout reaches `dep`), run at 600 balances over the
/// whole run on every executor. Compiled code stops at the same charge as
/// the interpreter (status, location, execution and I/O gas, peak memory),
/// among them running out in `move_to R`'s resource read (all the gas
/// spent, some of it as I/O gas, less than the run's).
#[test]
fn global_storage_out_of_gas_agrees_across_executors() {
    let (st, _) = two_modules(
        "version 8
module 0xcafe::dep

struct Coin has store
  v: u64

public fun new(v: u64): Coin
    move_loc v
    pack Coin
    ret
",
        "version 8
module 0xcafe::user
use 0xcafe::dep
    struct Coin has store
    fun new(l0: u64): dep::Coin

struct R has key
  c: dep::Coin
  v: vector<u64>

struct G<T> has key
  x: T

public fun store(s: &signer, n: u64): u64 acquires R, G
    copy_loc s
    copy_loc n
    call dep::new
    copy_loc n
    vec_pack <u64>, 1
    pack R
    move_to R
    ld_const <address> 0xcafe
    exists G<u64>
    pop
    copy_loc s
    copy_loc n
    pack G<u64>
    move_to G<u64>
    ld_const <address> 0xcafe
    exists R
    pop
    ld_const <address> 0xcafe
    mut_borrow_global R
    mut_borrow_field R, v
    copy_loc n
    vec_push_back <u64>
    ld_const <address> 0xcafe
    borrow_global G<u64>
    borrow_field G<u64>, x
    read_ref
    ld_const <address> 0xcafe
    move_from G<u64>
    unpack G<u64>
    add
    ret
",
    );
    // Variant 0 (an account's own signer), then the address; n = 7.
    let signer = [&[0u8][..], &movejit_engine::runtime::AccountAddress::from_u64(0xcafe).0].concat();
    let args = [signer, 7u64.to_le_bytes().to_vec()];
    let engines = every_executor(&EngineConfig::aptos());
    let whole = whole_compiled_run(&engines[2].1, &st, "store", &args, "EXECUTED");
    let total = whole.execution_gas_used + whole.io_gas_used;
    let move_to_r = Some(("0xcafe::user".to_string(), 0, 6));
    let balances = (0..=600u64).map(|k| total / 600 * k + k * 997 % 1009);
    let agreement = agree_at_balances(&engines, balances, user_run(&st, "store", &args));
    let in_read = agreement
        .reference
        .iter()
        .filter(|(balance, (want, _))| {
            let read = want.io_gas_used > 0 && want.execution_gas_used + want.io_gas_used == *balance;
            want.status == "OUT_OF_GAS" && want.location == move_to_r && read && want.io_gas_used < whole.io_gas_used
        })
        .count();
    let compiled_runs = agreement.compiled_runs;
    eprintln!("601 balances: compiled code ran in {compiled_runs}; out of gas in move_to R's read {in_read}");
    agreement.assert_agreed();
    assert!(compiled_runs > 300, "compiled code ran in only {compiled_runs} runs");
    assert!(in_read > 0, "no run ran out of gas in move_to R's resource read");
}

/// A resource borrowed again in the same run is answered from compiled
/// code's `GlobalHints` without reading it: the price its segment
/// precharged must still be checked there. At 5,715 balances over the
/// run's last 40,000 units every executor agrees, some running out at the
/// second borrow (offset 9; the hit path once reported it at the next
/// instruction) and some at the next.
#[test]
fn a_borrow_answered_from_the_hints_still_checks_its_price() {
    let (st, _) = two_modules(
        IDLE_DEP,
        "version 8
module 0xcafe::user

struct R has key
  v: u64

public fun twice(s: &signer): u64 acquires R
    move_loc s
    ld_u64 5
    pack R
    move_to R
    ld_const <address> 0xcafe
    borrow_global R
    borrow_field R, v
    read_ref
    ld_const <address> 0xcafe
    borrow_global R
    borrow_field R, v
    read_ref
    add
    ret
",
    );
    let signer = [&[0u8][..], &movejit_engine::runtime::AccountAddress::from_u64(0xcafe).0].concat();
    let args = [signer];
    let engines = every_executor(&EngineConfig::aptos());
    let whole = whole_compiled_run(&engines[2].1, &st, "twice", &args, "EXECUTED");
    let total = whole.execution_gas_used + whole.io_gas_used;
    // The run's last 40,000 units (from the first borrow's field on),
    // every 7.
    let tail = (1..=40_000u64).step_by(7).map(|k| total - k);
    let agreement = agree_at_balances(&engines, tail, user_run(&st, "twice", &args));
    let stopped_at = |offset: u16| {
        agreement
            .reference
            .iter()
            .filter(|(_, (w, _))| w.status == "OUT_OF_GAS" && w.location.as_ref().is_some_and(|l| l.2 == offset))
            .count()
    };
    let (at_second, after_it) = (stopped_at(9), stopped_at(10));
    eprintln!("5,715 balances: out of gas at the second borrow {at_second}, at its field {after_it}");
    agreement.assert_agreed();
    assert!(at_second > 0 && after_it > 0, "no run ran out of gas at the second borrow or right after it");
}

/// `eq` / `neq` of values with a vector inside, in compiled code under
/// Aptos's schedule: priced by both operands' abstract sizes where they run
/// (the references' targets; compared values release their heap parts
/// too), at 400 balances over the whole run and 400 over its last tenth
/// (the comparisons) on every executor, vectors of 40 elements compared as
/// references, as values and inside structs:
/// compiled code stops at the same charge as the interpreter (status,
/// location, execution gas, peak memory).
#[test]
fn comparisons_of_vectors_agree_across_executors() {
    let (st, _) = two_modules(
        IDLE_DEP,
        "version 8
module 0xcafe::user

struct W has copy + drop
  v: vector<u64>

public fun cmp(n: u64): bool
    local v: vector<u64>
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
L1: borrow_loc v
    borrow_loc v
    eq
    copy_loc v
    pack W
    copy_loc v
    pack W
    neq
    or
    copy_loc v
    move_loc v
    eq
    and
    ret
",
    );
    let args = [40u64.to_le_bytes().to_vec()];
    let engines = every_executor(&EngineConfig::aptos());
    let whole = whole_compiled_run(&engines[2].1, &st, "cmp", &args, "EXECUTED");
    let total = whole.execution_gas_used + whole.io_gas_used;
    let spread = (0..400u64).map(|k| total / 400 * k + k * 997 % 1009);
    let last_tenth = (0..400u64).map(|k| total - total / 10 + total / 4000 * k + k * 7 % 11);
    let agreement = agree_at_balances(&engines, spread.chain(last_tenth), user_run(&st, "cmp", &args));
    let at_compare = agreement
        .reference
        .iter()
        .filter(|(_, (want, _))| {
            let offset = want.location.as_ref().map(|(_, _, o)| *o);
            want.status == "OUT_OF_GAS" && matches!(offset, Some(18 | 23 | 27))
        })
        .count();
    let compiled_runs = agreement.compiled_runs;
    eprintln!("800 balances: compiled code ran in {compiled_runs}; out of gas at a comparison {at_compare}");
    agreement.assert_agreed();
    assert!(compiled_runs > 400, "compiled code ran in only {compiled_runs} runs");
    assert!(at_compare > 0, "no run ran out of gas at a comparison");
}

/// `unpack_variant` of a value of another variant: the interpreter prices
/// the value's variant (its fields and the tag) before it checks the
/// variant, so compiled code must charge `B`'s three units, not the named
/// `A`'s two, before failing with `STRUCT_VARIANT_MISMATCH`: at 201
/// balances over the run's last tenth and past its end, and at a full
/// balance, every executor agrees (some runs end in the mismatch, others
/// out of gas at it).
#[test]
fn a_variant_mismatch_is_priced_by_the_value() {
    let (st, _) = two_modules(
        IDLE_DEP,
        "version 8
module 0xcafe::user

enum E has drop
  A
    x: u64
  B
    x: u64
    y: u64

public fun mismatch(): u64
    ld_u64 1
    ld_u64 2
    pack_variant E, B
    unpack_variant E, A
    ret
",
    );
    let engines = every_executor(&EngineConfig::aptos());
    let whole = whole_compiled_run(&engines[2].1, &st, "mismatch", &[], "STRUCT_VARIANT_MISMATCH");
    let total = whole.execution_gas_used;
    // The last tenth of the run (the unpack), then past its end.
    let near = (0..=200u64).map(|k| total - total / 10 + total / 1000 * k + k % 7);
    let full = AptosPricing::v50().limits.to_internal(1_000);
    let agreement = agree_at_balances(&engines, near.chain([full]), user_run(&st, "mismatch", &[]));
    let out_of_gas = agreement
        .reference
        .iter()
        .filter(|(_, (want, _))| want.status == "OUT_OF_GAS" && want.location.as_ref().is_some_and(|l| l.2 == 3))
        .count();
    agreement.assert_agreed();
    assert!(out_of_gas > 0, "no run ran out of gas at the unpack_variant");
}

/// Natives in compiled code under Aptos's schedule, those compiled code
/// runs on the meter without the native bridge (`0x1::hash::sha2_256`,
/// `sha3_256`, `0x1::bcs::to_bytes`: `flat::host::aptos_native_fast`) among
/// them: each loop calls one native per iteration on a growing argument
/// (`to_bytes` of `vector<dep::Coin>` also loads `dep` for its layout, once
/// per transaction), run at 400 balances over the second half of its run on
/// every executor. Compiled code stops at the same charge as the
/// interpreter (status, location, execution gas, peak memory), some runs
/// inside the native (located at the native, offset 0).
#[test]
fn natives_in_compiled_code_agree_across_executors() {
    use movejit_testkit::masm::publish_masm;
    // (function, the native's call, its module, its function index there)
    let cases = [
        ("sha2_loop", "copy_loc v\n    call hash::sha2_256", "::hash", 0u16),
        ("sha3_loop", "copy_loc v\n    call hash::sha3_256", "::hash", 1),
        ("bcs_loop", "borrow_loc v\n    call bcs::to_bytes<vector<u8>>", "::bcs", 0),
        ("bcs_dep_loop", "borrow_loc c\n    call bcs::to_bytes<vector<dep::Coin>>", "::bcs", 0),
    ];
    let loop_of = |name: &str, call: &str| {
        format!(
            "
public fun {name}(n: u64): u64
    local v: vector<u8>
    local c: vector<dep::Coin>
    local h: vector<u8>
    local i: u64
    local acc: u64
    vec_pack <u8>, 0
    st_loc v
    vec_pack <dep::Coin>, 0
    st_loc c
    ld_u64 0
    st_loc i
    ld_u64 0
    st_loc acc
L0: copy_loc i
    copy_loc n
    lt
    br_false L1
    mut_borrow_loc v
    ld_u8 7
    vec_push_back <u8>
    {call}
    st_loc h
    borrow_loc h
    vec_len <u8>
    move_loc acc
    add
    st_loc acc
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc acc
    ret
"
        )
    };
    let mut user = String::from(
        "version 8
module 0xcafe::user
use 0x1::hash
    fun sha2_256(l0: vector<u8>): vector<u8>
    fun sha3_256(l0: vector<u8>): vector<u8>
use 0x1::bcs
    fun to_bytes<T0>(l0: &T0): vector<u8>
use 0xcafe::dep
    struct Coin has copy + drop + store
",
    );
    for (name, call, _, _) in cases {
        user.push_str(&loop_of(name, call));
    }
    let mut st = movejit_engine::runtime::InMemoryStorage::default();
    for src in [
        "version 8\nmodule 0x1::hash\n\npublic native fun sha2_256(data: vector<u8>): vector<u8>\n\npublic native fun sha3_256(data: vector<u8>): vector<u8>\n",
        "version 8\nmodule 0x1::bcs\n\npublic native fun to_bytes<T0>(v: &T0): vector<u8>\n",
        "version 8\nmodule 0xcafe::dep\n\nstruct Coin has copy + drop + store\n  v: u64\n",
        &user,
    ] {
        publish_masm(&mut st, src);
    }
    let args = [60u64.to_le_bytes().to_vec()];
    let engines = every_executor(&EngineConfig::aptos());
    for (name, _, module, index) in cases {
        let whole = whole_compiled_run(&engines[2].1, &st, name, &args, "EXECUTED");
        let total = whole.execution_gas_used;
        let second_half = (0..400u64).map(|k| total / 2 + total / 800 * k + k * 997 % 1009);
        let agreement = agree_at_balances(&engines, second_half, user_run(&st, name, &args));
        let in_native = agreement
            .reference
            .iter()
            .filter(|(_, (want, _))| {
                let at_native =
                    want.location.as_ref().is_some_and(|(m, f, o)| m.ends_with(module) && *f == index && *o == 0);
                want.status == "OUT_OF_GAS" && at_native
            })
            .count();
        let compiled_runs = agreement.compiled_runs;
        eprintln!(
            "{name}, 400 balances: compiled code ran in {compiled_runs}; out of gas inside the native {in_native}"
        );
        agreement.assert_agreed();
        assert!(compiled_runs > 200, "{name}: compiled code ran in only {compiled_runs} runs");
        assert!(in_native > 0, "{name}: no run ran out of gas inside the native");
    }
}

/// Aptos's dependency limit reached in compiled calls: `0xcafe::m0::f`
/// calls `m1::f`, which calls `m2::f`, ... past `txn.max_num_dependencies`
/// modules, each loaded (and counted) by the call into it. Every executor
/// fails with `DEPENDENCY_LIMIT_REACHED` at the same call, located as a
/// loading error, with the same gas; at balances around the last loads
/// they also agree (some run out of gas loading a module instead). It runs
/// on the test thread's own stack: the 770 nested calls take no host stack
/// per frame (it passed on a 128 KiB thread in release builds).
#[test]
fn the_dependency_limit_in_compiled_calls_agrees_across_executors() {
    use movejit_engine::runtime::{AccountAddress, ModuleId};
    let limit = AptosPricing::v50().limits.max_num_dependencies as usize;
    let n = limit + 2;
    let mut st = movejit_engine::runtime::InMemoryStorage::default();
    for k in 0..n {
        let body = if k + 1 < n {
            format!("use 0xcafe::m{next}\n    fun f(): u64\n\npublic fun f(): u64\n    call m{next}::f\n    ld_u64 1\n    add\n    ret\n", next = k + 1)
        } else {
            "public fun f(): u64\n    ld_u64 1\n    ret\n".to_string()
        };
        movejit_testkit::masm::publish_masm(&mut st, &format!("version 8\nmodule 0xcafe::m{k}\n{body}"));
    }
    let engines = every_executor(&EngineConfig::aptos());
    let m0 = ModuleId::new(AccountAddress::from_u64(0xcafe), "m0");
    let run = |engine: &Engine, balance: u64| {
        let mut session = engine.new_session(&st);
        let mut gas = GasMeter::aptos(AptosPricing::v50(), balance);
        let r = session.execute_function(&m0, "f", &[], &[], &mut gas);
        let compiled = session.compiled_stats().map_or(0, |s| s.compiled_functions);
        let o = outcome_of(r);
        let a = gas.aptos_meter().expect("an Aptos meter");
        let charged = Charged {
            location: if o.status != "EXECUTED" { o.location } else { None },
            status: o.status,
            abort_code: o.abort_code,
            execution_gas_used: a.algebra.execution_used(),
            io_gas_used: a.algebra.io_used(),
        };
        ((charged, a.memory_used()), compiled)
    };
    let full = AptosPricing::v50().limits.to_internal(1_000_000);
    let whole = agree_at_balances(&engines, [full], run);
    whole.assert_agreed();
    let ((reached, _), compiled) = (&whole.reference[0].1, whole.compiled_runs);
    assert_eq!(reached.status, "DEPENDENCY_LIMIT_REACHED", "{reached:?}");
    assert!(compiled > 0, "the chain did not run compiled");
    // Around the last module loads.
    let used = reached.execution_gas_used;
    let near = (0..40u64).map(|k| used - used / 200 + used / 4000 * k + k * 7 % 11);
    let agreement = agree_at_balances(&engines, near, run);
    agreement.assert_agreed();
    assert!(agreement.compiled_runs > 20, "compiled code ran in only {} runs", agreement.compiled_runs);
}

/// Metered differential runs: small benchmark calls (calls, recursion,
/// loops, structs, vectors) at 400 balances spread up to what a full run
/// uses: the compiled executors stop at the
/// same charge as the interpreter (status, location, execution and I/O
/// gas, peak memory), including while making a callee's frame.
#[test]
fn tiny_balances_agree_across_executors() {
    let dir = shared_dir().join("bench");
    let text = std::fs::read_to_string(dir.join("benchmarks.jsonl")).expect("benchmarks.jsonl");
    let small: &[(&str, &[&str])] = &[
        ("fib", &["0900000000000000"]),
        ("towers", &["0500000000000000", "0200000000000000"]),
        ("queens", &["0500000000000000", "0100000000000000"]),
        ("permute", &["0400000000000000", "0100000000000000"]),
        ("exchange2", &["0200000000000000", "0100000000000000"]),
        ("merge_sort", &["1000000000000000", "2a00000000000000"]),
        ("structs", &["0a00000000000000", "0200000000000000", "2a00000000000000"]),
        ("sieve", &["6400000000000000", "0200000000000000"]),
    ];
    let engines: Vec<(&str, Engine)> =
        [("interp", ExecutorKind::Interpreter), ("auto", ExecutorKind::Auto), ("jit", ExecutorKind::Jit)]
            .into_iter()
            .map(|(l, k)| (l, new_engine(EngineConfig { executor: k, ..EngineConfig::aptos() })))
            .collect();
    let (mut runs, mut compiled_runs, mut frame_errors, mut bad) = (0, 0, 0, Vec::new());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let b: Json = serde_json::from_str(line).expect("benchmark json");
        let name = b["name"].as_str().unwrap_or_default();
        let Some((_, args)) = small.iter().find(|(n, _)| *n == name) else { continue };
        let strs = |v: &Json| -> Vec<String> {
            v.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect()).unwrap_or_default()
        };
        let case = Case {
            id: name.to_string(),
            family: "bench".into(),
            modules: strs(&b["modules"]).iter().map(|m| dir.join(m)).collect(),
            function: b["function"].as_str().unwrap_or_default().to_string(),
            type_args: strs(&b["type_args"]),
            args: args.iter().map(|a| a.to_string()).collect(),
            expect: Json::Null,
            vm_message: None,
        };
        let pricing = AptosPricing::v50();
        let full = pricing.limits.max_gas_units;
        let (whole, _, _) = run(&engines[0].1, &case, full).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(whole.status, "EXECUTED", "{name} at a full balance");
        let total = whole.execution_gas_used + whole.io_gas_used;
        // 400 balances spread over the run, off any regular grid.
        for k in 0..400u64 {
            let balance = total / 400 * k + k * 997 % 4001;
            let results: Vec<(Charged, MemoryUsed, usize)> = engines
                .iter()
                .map(|(_, e)| run_internal(e, &case, balance).unwrap_or_else(|err| panic!("{name}: {err}")))
                .collect();
            runs += 1;
            let jit = &results[2];
            if jit.2 > 0 {
                compiled_runs += 1;
                let at_load = jit.0.location.as_ref().is_some_and(|(_, f, o)| *f == 0 && *o == 0);
                frame_errors += usize::from(at_load && jit.0.status == "OUT_OF_GAS");
            }
            for ((label, _), (got, memory, _)) in engines.iter().zip(&results).skip(1) {
                if (got, memory) != (&results[0].0, &results[0].1) && bad.len() < 12 {
                    let want = (&results[0].0, results[0].1);
                    bad.push(format!("{label} {name} at {balance}:\n  got  {:?}\n  want {want:?}", (got, memory)));
                }
            }
        }
    }
    for d in &bad {
        eprintln!("DIFF {d}");
    }
    eprintln!(
        "{runs} balances: compiled code ran in {compiled_runs}; {frame_errors} ran out making a frame (or at offset 0)"
    );
    assert!(bad.is_empty(), "the executors disagree");
    assert!(compiled_runs >= runs / 2, "compiled code ran in only {compiled_runs} of {runs} runs");
    assert!(frame_errors > 0, "no compiled run ran out of gas making a callee's frame");
}

/// Closures in compiled code under Aptos's schedule: `step` packs
/// storable closures over `dep::plus` (loading `dep`, the first time) and
/// `dep::weigh` (capturing a `dep::Coin`: its layout built) and a generic
/// one over `id<u64>`, and calls each at once (the call's price by its arguments and the
/// target's locals, then the target's frame). Run at balances over the
/// whole run on every executor, compiled code stops at the same charge as
/// the interpreter (status, location, execution gas, peak memory), among
/// them running out in each `pack_closure`'s and `call_closure`'s own
/// charges and making a closure target's frame (a loading error, located
/// at the module of the frame below `step`: `run`'s).
#[test]
fn closures_in_compiled_code_agree_across_executors() {
    let (st, _) = two_modules(
        "version 8
module 0xcafe::dep

struct Coin has copy + drop + store
  v: u64

public fun coin(v: u64): Coin
    move_loc v
    pack Coin
    ret

public fun plus(k: u64, x: u64): u64
    move_loc k
    move_loc x
    add
    ret

public fun weigh(c: Coin, k: u64, x: u64): u64
    local a: u64
    local w: vector<u64>
    local d: Coin
    move_loc c
    unpack Coin
    move_loc k
    add
    move_loc x
    add
    ret
",
        "version 8
module 0xcafe::user
use 0xcafe::dep
    struct Coin has copy + drop + store
    fun coin(l0: u64): dep::Coin
    fun plus(l0: u64, l1: u64): u64
    fun weigh(l0: dep::Coin, l1: u64, l2: u64): u64

fun unused(): u64
    ld_u64 0
    ret

fun id<T: copy + drop>(x: T, y: u64): u64
    local z: vector<T>
    move_loc y
    ret

fun step(i: u64): u64
    copy_loc i
    ld_u64 2
    pack_closure dep::plus, 1
    call_closure <|u64|u64>
    copy_loc i
    copy_loc i
    call dep::coin
    ld_u64 3
    pack_closure dep::weigh, 3
    call_closure <|u64|u64>
    add
    copy_loc i
    move_loc i
    pack_closure id<u64>, 1
    call_closure <|u64|u64>
    add
    ret

public fun run(n: u64): u64
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
    copy_loc i
    call step
    move_loc acc
    add
    st_loc acc
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: move_loc acc
    ret
",
    );
    let args = [3u64.to_le_bytes().to_vec()];
    let engines = every_executor(&EngineConfig::aptos());
    let whole = whole_compiled_run(&engines[2].1, &st, "run", &args, "EXECUTED");
    let total = whole.execution_gas_used;
    // 3,000 balances over the whole run, off any regular grid.
    let balances = balances_between(0, total, 3_000);
    let agreement = agree_at_balances(&engines, balances, user_run(&st, "run", &args));
    // Where the reference stopped: `step` is function 2, its packs at
    // offsets 2, 8 and 13, its calls at 3, 9 and 14; a loading error
    // names a module only (function 0, offset 0: `unused` never runs).
    let stopped = |at: (u16, u16)| out_of_gas_at(&agreement, "0xcafe::user", at);
    let packs = [2, 8, 13].map(|o| stopped((2, o))).iter().sum::<usize>();
    let calls = [3, 9, 14].map(|o| stopped((2, o))).iter().sum::<usize>();
    let frames = stopped((0, 0));
    let compiled_runs = agreement.compiled_runs;
    eprintln!(
        "3,000 balances: compiled code ran in {compiled_runs}; out of gas in a pack {packs}, in a call {calls}, \
         making a target's frame {frames}"
    );
    agreement.assert_agreed();
    assert!(compiled_runs > 2_000, "compiled code ran in only {compiled_runs} runs");
    assert!(packs > 0 && calls > 0 && frames > 0, "some closure charge was never where a run stopped");
}

/// A closure compiled code reads from storage, whose target the JIT engine
/// has not compiled (another engine stored it), runs on the session's
/// interpreter under Aptos's schedule over the execution's own meter: the
/// call's charges (the target's module, its price, its frame), then the
/// target, as in the interpreter. At balances over the whole run every
/// executor stops at the same charge, among them in the closure call, in
/// the interpreted target, and making its frame.
#[test]
fn stored_closures_in_compiled_code_agree_across_executors() {
    use movejit_engine::runtime::{AccountAddress, ModuleId};
    let (mut st, _) = two_modules(
        "version 9
module 0xcafe::dep

public fun unused(): u64
    ld_u64 0
    ret
",
        "version 9
module 0xcafe::user

struct Holder has key
  f: |u64|u64 has copy + drop + store

fun unused(): u64
    ld_u64 0
    ret

#[persistent] public fun add(k: u64, x: u64): u64
    local a: u64
    local b: vector<u64>
    move_loc k
    move_loc x
    add
    ret

public fun store(s: &signer, k: u64)
    move_loc s
    move_loc k
    pack_closure add, 1
    pack Holder
    move_to Holder
    ret

public fun call_stored(a: address, n: u64): u64 acquires Holder
    local acc: u64
    ld_u64 0
    st_loc acc
L0: copy_loc n
    ld_u64 0
    eq
    br_true L1
    move_loc acc
    copy_loc a
    borrow_global Holder
    borrow_field Holder, f
    read_ref
    call_closure <|u64|u64>
    st_loc acc
    move_loc n
    ld_u64 1
    sub
    st_loc n
    branch L0
L1: move_loc acc
    ret

public fun run(a: address, n: u64): u64 acquires Holder
    move_loc a
    move_loc n
    call call_stored
    ret
",
    );
    let cafe = AccountAddress::from_u64(0xcafe);
    let user = ModuleId::new(cafe, "user");
    // Stored by an engine of its own (the JIT engines below never packed it).
    let storer = new_engine(EngineConfig { executor: ExecutorKind::Interpreter, ..EngineConfig::aptos() });
    let mut session = storer.new_session(&st);
    let mut gas = GasMeter::aptos(AptosPricing::v50(), AptosPricing::v50().limits.to_internal(1_000));
    let signer = [&[0u8][..], &cafe.0].concat();
    session.execute_function(&user, "store", &[], &[signer, 7u64.to_le_bytes().to_vec()], &mut gas).expect("store");
    let changes = session.finish().expect("a change set");
    st.apply(&changes);
    let args = [cafe.0.to_vec(), 4u64.to_le_bytes().to_vec()];
    let engines = every_executor(&EngineConfig::aptos());
    let whole = whole_compiled_run(&engines[2].1, &st, "run", &args, "EXECUTED");
    let total = whole.execution_gas_used + whole.io_gas_used;
    // The resource's first read takes most of the run: 2,000 balances over
    // its last fifth, off any regular grid.
    let low = total / 5 * 4;
    let balances = balances_between(low, total, 2_000);
    let agreement = agree_at_balances(&engines, balances, user_run(&st, "run", &args));
    let stopped = |module: &str, at: (u16, u16)| out_of_gas_at(&agreement, module, at);
    // `call_stored` is function 3, its closure call at offset 11; the
    // target `add` is function 1; making its frame is a loading error,
    // located at the module below `call_stored`'s frame: a module only
    // (function 0, offset 0: `unused` never runs).
    let calls = stopped("0xcafe::user", (3, 11));
    let in_target = (0..4).map(|o| stopped("0xcafe::user", (1, o))).sum::<usize>();
    let frames = stopped("0xcafe::user", (0, 0));
    let compiled_runs = agreement.compiled_runs;
    eprintln!(
        "2,000 balances: compiled code ran in {compiled_runs}; out of gas in the call {calls}, in the target \
         {in_target}, making its frame {frames}"
    );
    agreement.assert_agreed();
    assert!(compiled_runs > 1_000, "compiled code ran in only {compiled_runs} runs");
    assert!(calls > 0 && in_target > 0 && frames > 0, "no run stopped in the closure call, its frame or its target");
}

/// Closures called from a local (`copy_loc f; call_closure`: the borrowed
/// sites whose warm calls under Aptos charge the target's constant price
/// through `aptos_closure_fast`, the first of a transaction and any whose
/// price does not fit going through `call_closure`), at 3,000 balances over
/// the whole run on every executor: compiled code stops at the same charge
/// as the interpreter (status, location, execution gas, peak memory), among
/// them running out in the closure call, in copying the closure, and
/// making a target's frame (its locals' types: a loading error, located at
/// the module of the frame below `apply`: `run`'s). Targets: `dep::plus`
/// and `dep::mix` (fast entries; `mix` has locals of several type nodes),
/// `dep::weigh` (a captured struct: no fast entry).
#[test]
fn closures_called_from_locals_agree_across_executors() {
    let (st, _) = two_modules(
        "version 8
module 0xcafe::dep

struct Coin has copy + drop + store
  v: u64

public fun coin(v: u64): Coin
    move_loc v
    pack Coin
    ret

public fun plus(k: u64, x: u64): u64
    move_loc k
    move_loc x
    add
    ret

public fun mix(k: u64, x: u64): u64
    local a: u64
    local w: vector<vector<u64>>
    local d: Coin
    move_loc x
    ld_u64 3
    mul
    move_loc k
    add
    ld_u64 1000003
    mod
    ret

public fun weigh(c: Coin, k: u64, x: u64): u64
    move_loc c
    unpack Coin
    move_loc k
    add
    move_loc x
    add
    ret
",
        "version 8
module 0xcafe::user
use 0xcafe::dep
    struct Coin has copy + drop + store
    fun coin(l0: u64): dep::Coin
    fun plus(l0: u64, l1: u64): u64
    fun mix(l0: u64, l1: u64): u64
    fun weigh(l0: dep::Coin, l1: u64, l2: u64): u64

fun unused(): u64
    ld_u64 0
    ret

fun apply(f: |u64|u64 has copy + drop, x: u64, n: u64): u64
L0: copy_loc n
    ld_u64 0
    eq
    br_true L1
    move_loc x
    copy_loc f
    call_closure <|u64|u64>
    st_loc x
    move_loc n
    ld_u64 1
    sub
    st_loc n
    branch L0
L1: move_loc x
    ret

public fun run(n: u64): u64
    ld_u64 2
    pack_closure dep::plus, 1
    ld_u64 1
    copy_loc n
    call apply
    ld_u64 4
    pack_closure dep::mix, 1
    ld_u64 1
    copy_loc n
    call apply
    add
    copy_loc n
    call dep::coin
    ld_u64 3
    pack_closure dep::weigh, 3
    ld_u64 1
    copy_loc n
    call apply
    add
    ret
",
    );
    let args = [6u64.to_le_bytes().to_vec()];
    let engines = every_executor(&EngineConfig::aptos());
    let whole = whole_compiled_run(&engines[2].1, &st, "run", &args, "EXECUTED");
    let total = whole.execution_gas_used;
    // 3,000 balances over the whole run, off any regular grid.
    let balances = balances_between(0, total, 3_000);
    let agreement = agree_at_balances(&engines, balances, user_run(&st, "run", &args));
    // `apply` is function 1: its copy of the closure at offset 5, its call
    // at 6; a loading error names a module only (function 0, offset 0).
    let stopped = |at: (u16, u16)| out_of_gas_at(&agreement, "0xcafe::user", at);
    let (copies, calls, frames) = (stopped((1, 5)), stopped((1, 6)), stopped((0, 0)));
    let compiled_runs = agreement.compiled_runs;
    eprintln!(
        "3,000 balances: compiled code ran in {compiled_runs}; out of gas copying the closure {copies}, in the \
         call {calls}, making a target's frame {frames}"
    );
    agreement.assert_agreed();
    assert!(compiled_runs > 2_000, "compiled code ran in only {compiled_runs} runs");
    assert!(copies > 0 && calls > 0 && frames > 0, "some closure charge was never where a run stopped");
}

/// A closure target that calls a closure of itself from a local until the
/// call stack overflows: the borrowed site's fast path charges the call's
/// price before its depth check, as the interpreter does, so every
/// executor fails with `CALL_STACK_OVERFLOW` at the same call with the same
/// gas, and at balances around that point stops at the same charge.
#[test]
fn closure_recursion_overflows_alike_across_executors() {
    let (st, _) = two_modules(
        "version 8
module 0xcafe::dep

public fun unused(): u64
    ld_u64 0
    ret
",
        "version 8
module 0xcafe::user

fun unused(): u64
    ld_u64 0
    ret

fun down(x: u64): u64
    local f: |u64|u64 has copy + drop
    local a: vector<u64>
    pack_closure down, 0
    st_loc f
    copy_loc x
    ld_u64 0
    eq
    br_true L1
    move_loc x
    ld_u64 1
    sub
    copy_loc f
    call_closure <|u64|u64>
    ret
L1: ld_u64 7
    ret

public fun run(n: u64): u64
    move_loc n
    call down
    ret
",
    );
    let engines = every_executor(&EngineConfig::aptos());
    let full = AptosPricing::v50().limits.to_internal(1_000);
    // Deep enough to overflow; shallow enough to return.
    for (depth, want) in [(5_000u64, "CALL_STACK_OVERFLOW"), (900, "EXECUTED")] {
        let args = [depth.to_le_bytes().to_vec()];
        let (whole, _, compiled) = run_user(&engines[2].1, &st, "run", &args, full);
        assert_eq!(whole.status, want, "depth {depth}");
        assert!(compiled > 0, "run did not run compiled");
        let total = whole.execution_gas_used;
        // The whole run's balance, then 400 balances over its last tenth.
        let low = total / 10 * 9;
        let balances = std::iter::once(full).chain((0..400u64).map(|k| low + (total - low) / 400 * k + k * 997 % 101));
        let agreement = agree_at_balances(&engines, balances, user_run(&st, "run", &args));
        let (_, (first, _)) = &agreement.reference[0];
        assert_eq!(first.status, want, "depth {depth}: the reference");
        if want == "CALL_STACK_OVERFLOW" {
            // `down` is function 1, its closure call at offset 10.
            assert_eq!(first.location.as_ref().map(|(m, f, o)| (m.as_str(), *f, *o)), Some(("0xcafe::user", 1, 10)));
        }
        agreement.assert_agreed();
        assert!(agreement.compiled_runs > 200, "compiled code ran in only {} runs", agreement.compiled_runs);
    }
}

/// A closure an earlier transaction of the same engine packed (its target
/// compiled, with a fast entry) and stored, called from a local in a later
/// transaction: nothing in that transaction loaded the target's module
/// before the call, so the first call charges its loading (a loading
/// error when it does not fit) and only later calls charge the constant
/// price (`aptos_closure_fast` checks the transaction's meter loaded it).
/// At 2,000 balances every executor stops at the same charge, among them
/// loading the target's module at the call.
#[test]
fn stored_closures_called_from_locals_load_their_module_once() {
    use movejit_engine::runtime::{AccountAddress, InMemoryStorage, ModuleId};
    let (st, dep_size) = two_modules(
        "version 9
module 0xcafe::dep

#[persistent] public fun plus(k: u64, x: u64): u64
    local a: u64
    local b: vector<u64>
    move_loc k
    move_loc x
    add
    ret
",
        "version 9
module 0xcafe::user
use 0xcafe::dep
    #[persistent] fun plus(l0: u64, l1: u64): u64

struct Holder has key
  f: |u64|u64 has copy + drop + store

fun unused(): u64
    ld_u64 0
    ret

public fun store(s: &signer, k: u64)
    move_loc s
    move_loc k
    pack_closure dep::plus, 1
    pack Holder
    move_to Holder
    ret

public fun run(a: address, n: u64): u64 acquires Holder
    local f: |u64|u64 has copy + drop + store
    local x: u64
    move_loc a
    borrow_global Holder
    borrow_field Holder, f
    read_ref
    st_loc f
    ld_u64 1
    st_loc x
L0: copy_loc n
    ld_u64 0
    eq
    br_true L1
    move_loc x
    copy_loc f
    call_closure <|u64|u64>
    st_loc x
    move_loc n
    ld_u64 1
    sub
    st_loc n
    branch L0
L1: move_loc x
    ret
",
    );
    let cafe = AccountAddress::from_u64(0xcafe);
    let user = ModuleId::new(cafe, "user");
    let full = AptosPricing::v50().limits.to_internal(1_000);
    // `store` in a transaction of the engine's own, then `run` in the next.
    let stored = |engine: &Engine| -> InMemoryStorage {
        let mut session = engine.new_session(&st);
        let mut gas = GasMeter::aptos(AptosPricing::v50(), full);
        let signer = [&[0u8][..], &cafe.0].concat();
        session.execute_function(&user, "store", &[], &[signer, 7u64.to_le_bytes().to_vec()], &mut gas).expect("store");
        let changes = session.finish().expect("a change set");
        let mut after = st.clone();
        after.apply(&changes);
        after
    };
    let args = [cafe.0.to_vec(), 5u64.to_le_bytes().to_vec()];
    let engines = every_executor(&EngineConfig::aptos());
    let jit_storage = stored(&engines[2].1);
    let whole = whole_compiled_run(&engines[2].1, &jit_storage, "run", &args, "EXECUTED");
    // The call loads `dep` (its size's price); the balances cover the
    // window from before that load to the end.
    let total = whole.execution_gas_used + whole.io_gas_used;
    let low = total.saturating_sub(loading(dep_size) + 200_000);
    let balances = balances_between(low, total, 2_000);
    let agreement = agree_at_balances(&engines, balances, |engine: &Engine, balance| {
        let storage = stored(engine);
        let (charged, memory, compiled) = run_user(engine, &storage, "run", &args, balance);
        ((charged, memory), compiled)
    });
    // `run` is function 2, its call at offset 13; loading `dep` there is a
    // loading error, located below `run`'s frame: the entry's, so nowhere
    // (the only load in the window: `Holder`'s read comes before it).
    let stopped = |at: (u16, u16)| out_of_gas_at(&agreement, "0xcafe::user", at);
    let (calls, loads) = (
        stopped((2, 13)),
        agreement
            .reference
            .iter()
            .filter(|(_, (want, _))| want.status == "OUT_OF_GAS" && want.location.is_none())
            .count(),
    );
    let compiled_runs = agreement.compiled_runs;
    eprintln!(
        "2,000 balances: compiled code ran in {compiled_runs}; out of gas in the call {calls}, loading at it {loads}"
    );
    agreement.assert_agreed();
    assert!(compiled_runs > 1_000, "compiled code ran in only {compiled_runs} runs");
    assert!(calls > 0 && loads > 0, "no run stopped in the call or loading its target's module");
}

/// Compiled code tests a chain of segments (blocks following one another
/// in a loop, each charging on entry) against the gas on entry of the
/// chain's first segment, the charges before it added to the threshold
/// (`lower/metered.rs`, `fold_gas_floors`). At every 997th balance over the
/// whole run of a loop with four ways through it, every executor agrees
/// (status, location, execution gas, peak memory), running out at every
/// offset of the loop.
#[test]
fn loops_of_chained_segments_agree_across_executors() {
    let (st, _) = two_modules(
        IDLE_DEP,
        "version 8
module 0xcafe::user

public fun branches(n: u64): u64
    local s: u64
    local i: u64
    local r: u64
    ld_u64 0
    st_loc s
    ld_u64 0
    st_loc i
L0: copy_loc i
    copy_loc n
    lt
    br_false L5
    copy_loc i
    ld_u64 4
    mod
    st_loc r
    copy_loc r
    ld_u64 0
    eq
    br_false L2
    move_loc s
    ld_u64 10
    add
    st_loc s
L1: move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L2: copy_loc r
    ld_u64 1
    eq
    br_false L3
    move_loc s
    ld_u64 20
    add
    st_loc s
    branch L1
L3: move_loc r
    ld_u64 2
    eq
    br_false L4
    move_loc s
    ld_u64 30
    add
    st_loc s
    branch L1
L4: move_loc s
    ld_u64 40
    add
    st_loc s
    branch L1
L5: move_loc s
    ret
",
    );
    let args = [6u64.to_le_bytes().to_vec()];
    let engines = every_executor(&EngineConfig::aptos());
    let whole = whole_compiled_run(&engines[2].1, &st, "branches", &args, "EXECUTED");
    let total = whole.execution_gas_used + whole.io_gas_used;
    let balances = (0..=total).step_by(997);
    let agreement = agree_at_balances(&engines, balances, user_run(&st, "branches", &args));
    let offsets: HashSet<u16> = agreement
        .reference
        .iter()
        .filter(|(_, (w, _))| w.status == "OUT_OF_GAS")
        .filter_map(|(_, (w, _))| w.location.as_ref().map(|l| l.2))
        .collect();
    let compiled_runs = agreement.compiled_runs;
    eprintln!(
        "{} balances: compiled code ran in {compiled_runs}; out of gas at {} offsets",
        agreement.reference.len(),
        offsets.len()
    );
    agreement.assert_agreed();
    // Every offset of the function's 50.
    assert_eq!(offsets.len(), 50, "out of gas at only {} offsets", offsets.len());
    assert!(compiled_runs * 2 > agreement.reference.len(), "compiled code ran in only {compiled_runs} runs");
}

/// Innermost loops get a fast copy tested once per iteration, entered only
/// with the gas for the iteration's costliest path (`lower/fastloop.rs`):
/// every balance from none to the whole run's gas puts the loop header's
/// gas at that path's cost (and one unit on either side) in some
/// iteration, each branch taken in turn. Every executor must stop at the
/// same instruction with the same gas (and, under Aptos, the same peak
/// memory). A loop of one path charges it at the dispatch, so its exits
/// add back what the iteration left uncharged.
/// One row per loop: `paths` branches inside its body; `fill` calls
/// helpers that never touch the gas (vector shims, and under Aptos
/// `memory_use` at each push), which keep its loop eligible for the fast
/// copy (`helpers::GasAccess`); `nested` leaves its fast inner loop into
/// an outer loop tested per segment.
#[test]
fn loops_tested_once_per_iteration_agree_at_every_balance() {
    use movejit_engine::runtime::{AccountAddress, CostTable, ModuleId};
    let (st, _) = two_modules(
        IDLE_DEP,
        "version 8
module 0xcafe::user

public fun paths(n: u64): u64
    local s: u64
    local i: u64
    ld_u64 0
    st_loc s
    ld_u64 0
    st_loc i
L0: copy_loc i
    copy_loc n
    lt
    br_false L3
    copy_loc i
    ld_u64 3
    mod
    ld_u64 0
    eq
    br_false L1
    move_loc s
    copy_loc i
    copy_loc i
    mul
    ld_u64 7
    add
    add
    st_loc s
    branch L2
L1: move_loc s
    ld_u64 1
    add
    st_loc s
L2: move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L3: move_loc s
    ret

public fun fill(n: u64): u64
    local v: vector<u64>
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
    borrow_loc v
    copy_loc i
    vec_borrow <u64>
    read_ref
    pop
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L1: borrow_loc v
    vec_len <u64>
    ret

public fun nested(n: u64): u64
    local s: u64
    local i: u64
    local j: u64
    ld_u64 0
    st_loc s
    ld_u64 0
    st_loc i
L0: copy_loc i
    copy_loc n
    lt
    br_false L3
    ld_u64 0
    st_loc j
L1: copy_loc j
    copy_loc n
    lt
    br_false L2
    move_loc s
    copy_loc i
    copy_loc j
    xor
    add
    st_loc s
    move_loc j
    ld_u64 1
    add
    st_loc j
    branch L1
L2: move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0
L3: move_loc s
    ret
",
    );
    #[derive(Clone, Copy, Debug)]
    enum Schedule {
        Unit,
        Aptos,
    }
    // (function, iterations, schedule, offsets it runs out of gas at: all
    // of them under the unit schedule; Aptos charges nothing at some).
    let table: [(&str, u64, Schedule, usize); 6] = [
        ("paths", 9, Schedule::Unit, 34),
        ("fill", 6, Schedule::Unit, 24),
        ("nested", 4, Schedule::Unit, 32),
        ("fill", 2, Schedule::Aptos, 24),
        ("paths", 2, Schedule::Aptos, 34),
        ("nested", 2, Schedule::Aptos, 32),
    ];
    let engines = every_executor(&EngineConfig::aptos());
    let user = ModuleId::new(AccountAddress::from_u64(0xcafe), "user");
    for (f, n, schedule, offsets) in table {
        let args = [n.to_le_bytes().to_vec()];
        let run = |engine: &Engine, balance: u64| {
            let mut session = engine.new_session(&st);
            let mut gas = match schedule {
                Schedule::Unit => GasMeter::new(CostTable::default(), balance),
                Schedule::Aptos => GasMeter::aptos(AptosPricing::v50(), balance),
            };
            let r = session.execute_function(&user, f, &[], &args, &mut gas);
            let compiled = session.compiled_stats().map_or(0, |s| s.compiled_functions);
            let memory = gas.aptos_meter().map(|a| a.memory_used());
            ((outcome_of(r), gas.used(), memory), compiled)
        };
        let ((done, whole, _), compiled) = run(&engines[2].1, 1 << 40);
        assert_eq!(done.status, "EXECUTED", "{f} {schedule:?}");
        assert!(compiled > 0, "{f} did not run compiled");
        // Under Aptos, loading `user` costs most of a small balance: start
        // one unit below the least balance that reaches compiled code.
        let (mut low, mut high) = (0, whole);
        while matches!(schedule, Schedule::Aptos) && low < high {
            let mid = low + (high - low) / 2;
            if run(&engines[2].1, mid).1 > 0 {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        let agreement = agree_at_balances(&engines, low.saturating_sub(1)..=whole.saturating_add(1), run);
        let stops: HashSet<u16> = agreement
            .reference
            .iter()
            .filter_map(|(_, (o, _, _))| o.location.as_ref().filter(|_| o.status == "OUT_OF_GAS").map(|l| l.2))
            .collect();
        eprintln!(
            "{f} {schedule:?}: {} balances, compiled code ran in {}",
            agreement.reference.len(),
            agreement.compiled_runs
        );
        agreement.assert_agreed();
        assert_eq!(stops.len(), offsets, "{f} {schedule:?}: out of gas at {} offsets", stops.len());
        assert!(
            agreement.compiled_runs.saturating_mul(2) > agreement.reference.len(),
            "{f} {schedule:?}: compiled code ran too rarely"
        );
    }
}

/// A loop calling a closure of four captured `u256` from a local: each
/// copy of the closure uses 160 heap units of Aptos's memory quota (the
/// call's fast path under Aptos charges that copy as a constant per
/// target, `aptos_closure_fast`) and nothing releases them, so without the
/// execution limit (which comes first at 97.6% of the quota) the run ends
/// with `MEMORY_LIMIT_EXCEEDED` at the copy, the whole quota used, on
/// every executor with the same gas; at balances just below that point
/// every executor runs out of gas at the same charge.
#[test]
fn closure_copies_reach_the_memory_quota_alike_across_executors() {
    let (st, _) = two_modules(
        "version 8
module 0xcafe::dep

public fun four(a: u256, b: u256, c: u256, d: u256, x: u64): u64
    move_loc x
    ld_u64 1
    add
    ret
",
        "version 8
module 0xcafe::user
use 0xcafe::dep
    fun four(l0: u256, l1: u256, l2: u256, l3: u256, l4: u64): u64

fun spin(f: |u64|u64 has copy + drop, x: u64): u64
L0: move_loc x
    copy_loc f
    call_closure <|u64|u64>
    st_loc x
    branch L0

public fun run(): u64
    ld_u256 1
    ld_u256 2
    ld_u256 3
    ld_u256 4
    pack_closure dep::four, 15
    ld_u64 0
    call spin
    ret
",
    );
    let engines = every_executor(&EngineConfig::aptos());
    let unlimited = |engine: &Engine, balance: u64| {
        let mut gas = GasMeter::aptos(AptosPricing::v50(), balance);
        gas.aptos_meter_mut().expect("an Aptos meter").algebra.lift_execution_limit();
        let (charged, memory, compiled) = run_user_on(engine, &st, "run", &[], gas);
        ((charged, memory), compiled)
    };
    let full = AptosPricing::v50().limits.to_internal(2_000_000);
    let ((whole, memory), compiled) = unlimited(&engines[2].1, full);
    assert!(compiled > 0, "run did not run compiled");
    // `spin` is function 0, its copy of the closure at offset 1.
    let at_copy = Some(("0xcafe::user".to_string(), 0, 1));
    assert_eq!((whole.status.as_str(), &whole.location, memory), ("MEMORY_LIMIT_EXCEEDED", &at_copy, 10_000_000));
    // The full balance, and 60 balances over the last hundredth of the
    // run, off any regular grid.
    let total = whole.execution_gas_used;
    let balances = std::iter::once(full).chain(balances_between(total - total / 100, total, 60));
    let agreement = agree_at_balances(&engines, balances, unlimited);
    agreement.assert_agreed();
    let copies = out_of_gas_at(&agreement, "0xcafe::user", (0, 1));
    assert!(copies > 0, "no run ran out of gas copying the closure");
    assert!(agreement.compiled_runs == agreement.reference.len(), "some run did not run compiled");
}
