//! Function values (bytecode v8+) under the JIT: the Aptos conformance
//! cases of the `closures` program against the real VM's results, focused
//! tables (capture masks, generic closures, nested closure calls, aborts
//! and arithmetic errors inside closures), and metered runs against the
//! reference interpreter with budgets that run out inside closures.

use movejit_engine::runtime::{CostTable, GasMeter, InMemoryStorage, ModuleId};
use movejit_engine::{Engine, EngineConfig};
use movejit_format::{decode_module, AccountAddress, StatusCode};
use movejit_jit::{CompileError, ExecError, JitConfig, JitEngine, Outcome};
use movejit_runtime::Type;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn conformance_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/aptos")
}

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(conformance_dir().join("cases.jsonl")).expect("cases.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).expect("JSON case"))
        .filter(|c| c["program"] == "closures" || c["id"] == "natives.bcs_closure")
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().expect("array").iter().map(|x| x.as_str().expect("string").to_string()).collect()
}

/// A JIT engine (and the storage the interpreter reads) per module list.
struct Engines {
    config: JitConfig,
    by_modules: BTreeMap<Vec<String>, (JitEngine, InMemoryStorage)>,
}

impl Engines {
    fn new(config: JitConfig) -> Engines {
        Engines { config, by_modules: BTreeMap::new() }
    }

    fn get(&mut self, case: &Value) -> &mut (JitEngine, InMemoryStorage) {
        let modules = strings(&case["modules"]);
        let config = self.config.clone();
        self.by_modules.entry(modules.clone()).or_insert_with(|| {
            let mut jit = JitEngine::new(config).expect("engine");
            let mut storage = InMemoryStorage::default();
            for m in &modules {
                let bytes = std::fs::read(conformance_dir().join(m)).expect("module file");
                let module = decode_module(&bytes).expect("module decodes");
                storage.publish(ModuleId::new(*module.address(), module.name()), bytes);
                jit.add_module(module).expect("module added");
            }
            (jit, storage)
        })
    }
}

struct Call {
    addr: AccountAddress,
    module: String,
    function: String,
    type_args: Vec<Type>,
    args: Vec<Vec<u8>>,
}

fn call_of(case: &Value) -> Call {
    let func = case["function"].as_str().expect("function");
    let parts: Vec<&str> = func.split("::").collect();
    Call {
        addr: AccountAddress::parse(parts[0]).expect("address"),
        module: parts[1].to_string(),
        function: parts[2].to_string(),
        type_args: strings(&case["type_args"]).iter().map(|t| Type::parse_tag(t).expect("type tag")).collect(),
        args: strings(&case["args"]).iter().map(|a| hex::decode(a).expect("hex")).collect(),
    }
}

/// Runs a call on the JIT; `None` when it does not compile. A run that met
/// a closure target not compiled yet is run again (the engine compiled it).
fn run_jit(jit: &mut JitEngine, call: &Call, gas: Option<u64>) -> Option<Outcome> {
    let m = jit.module_index(&call.addr, &call.module).expect("module published");
    let key = jit.instance_key(m, &call.function, &call.type_args).expect("function exists");
    for _ in 0..4 {
        match jit.execute(&key, &call.args, gas) {
            Ok(o) => return Some(o),
            Err(ExecError::Compile(CompileError::Unsupported(why)))
                if why.starts_with("closure target not compiled") =>
            {
                continue
            }
            Err(ExecError::Compile(CompileError::Unsupported(_))) => return None,
            Err(e) => panic!("{}: {e}", call.function),
        }
    }
    panic!("{}: closure targets never compiled", call.function)
}

/// Differences between a JIT outcome and the case's expected result.
fn problems(jit: &JitEngine, case: &Value, out: &Outcome) -> Vec<String> {
    let expect = &case["expect"];
    let want = StatusCode::from_name(expect["status"].as_str().expect("status")).expect("known status");
    let mut p = Vec::new();
    if out.status != want {
        p.push(format!("status {:?} != {want:?}", out.status));
    }
    if let Some(code) = expect.get("abort_code").and_then(|c| c.as_u64()) {
        if out.abort_code != Some(code) {
            p.push(format!("abort code {:?} != {code}", out.abort_code));
        }
    }
    if let Some(loc) = expect.get("location").and_then(|l| l.as_str()) {
        let got = out.location.as_ref().and_then(|l| {
            let m = jit.module(l.module)?;
            Some((format!("{}::{}", m.address().to_hex_short(), m.name()), l.function as u64, l.code_offset as u64))
        });
        let want = (
            loc.to_string(),
            expect["function_index"].as_u64().unwrap_or(u64::MAX),
            expect["code_offset"].as_u64().unwrap_or(u64::MAX),
        );
        if got.as_ref() != Some(&want) {
            p.push(format!("location {got:?} != {want:?}"));
        }
    }
    if want == StatusCode::EXECUTED {
        let got: Vec<String> = out.returns.iter().map(hex::encode).collect();
        if got != strings(&expect["returns"]) {
            p.push(format!("returns {got:?} != {:?}", strings(&expect["returns"])));
        }
    }
    p
}

#[test]
fn closure_cases_match_the_aptos_vm() {
    let mut engines = Engines::new(JitConfig::default());
    let (mut compiled, mut not_compiled, mut failed) = (0, Vec::new(), Vec::new());
    for case in cases() {
        let id = case["id"].as_str().unwrap_or_default().to_string();
        let call = call_of(&case);
        let (jit, _) = engines.get(&case);
        match run_jit(jit, &call, None) {
            None => not_compiled.push(id),
            Some(out) => {
                let p = problems(jit, &case, &out);
                if p.is_empty() {
                    compiled += 1;
                } else {
                    failed.push(format!("{id}: {}", p.join("; ")));
                }
            }
        }
    }
    println!(
        "closure cases: {compiled} compiled and identical, {} not compiled {not_compiled:?}, {} differ",
        not_compiled.len(),
        failed.len()
    );
    for f in &failed {
        println!("  FAIL {f}");
    }
    assert!(failed.is_empty(), "{} closure cases differ from the Aptos VM", failed.len());
    // Only the case returning a closure over a storage type's field... every
    // closure case compiles standalone except those needing global storage.
    assert!(compiled >= 44, "only {compiled} closure cases compiled");
}

/// What each focused case exercises; each must compile and match.
const FOCUSED: &[(&str, &[&str])] = &[
    // Masks: one of two, several of five (u8, u64, u128, vector), in a
    // loop (one closure per element), a module function partially applied.
    (
        "capture masks",
        &[
            "closures.capture_local_3_5",
            "closures.capture_many",
            "closures.closure_list_4",
            "closures.partial",
            "closures.return_partial",
            "closures.i64_closure",
        ],
    ),
    // Type arguments recorded in the box and used by the call.
    (
        "generic closures",
        &[
            "closures.generic_capture_u8",
            "closures.generic_capture_vec",
            "closures.twice_vec",
            "closures.module_fun_value",
        ],
    ),
    // Closures calling closures: composition of compositions, a closure
    // table in a vector of structs, recursion through a function value.
    (
        "nested closure calls",
        &[
            "closures.compose_10",
            "closures.ops_table_3",
            "closures.map_with_2",
            "closures.recursive_via_value_20",
            "closures.use_adder",
        ],
    ),
    // Errors raised inside the closure's body (location: the lambda).
    (
        "aborts inside closures",
        &[
            "closures.aborting_13",
            "closures.capture_many_ovf",
            "closures.use_adder_ovf",
            "closures.sum_with_ovf",
            "closures.map_with_shift_oob",
            "closures.module_fun_value_underflow",
            "closures.i64_closure_ovf",
        ],
    ),
    // Equality and BCS of closure values built by compiled code.
    (
        "closure values",
        &["closures.closure_eq_same", "closures.closure_eq_diff", "closures.return_fun_value", "natives.bcs_closure"],
    ),
];

#[test]
fn focused_closure_cases() {
    let all: BTreeMap<String, Value> =
        cases().into_iter().map(|c| (c["id"].as_str().unwrap_or_default().to_string(), c)).collect();
    let mut engines = Engines::new(JitConfig::default());
    let mut bad = Vec::new();
    for (what, ids) in FOCUSED {
        for id in *ids {
            let case = all.get(*id).unwrap_or_else(|| panic!("{what}: case {id} missing"));
            let call = call_of(case);
            let (jit, _) = engines.get(case);
            match run_jit(jit, &call, None) {
                None => bad.push(format!("{what}: {id} not compiled")),
                Some(out) => {
                    let p = problems(jit, case, &out);
                    if !p.is_empty() {
                        bad.push(format!("{what}: {id}: {}", p.join("; ")));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

/// (status, location (module name, function, offset), gas used)
type Observed = (StatusCode, Option<(String, u16, u16)>, u64);

#[test]
fn metered_closure_calls_match_the_interpreter() {
    let interp = Engine::new(EngineConfig::aptos());
    let mut engines = Engines::new(JitConfig { cost: Some(CostTable::default()), ..JitConfig::default() });
    let (mut compared, mut out_of_gas, mut failures) = (0usize, 0usize, Vec::new());
    for case in cases() {
        let id = case["id"].as_str().unwrap_or_default().to_string();
        let call = call_of(&case);
        let (jit, storage) = engines.get(&case);
        let run_interp = |budget: u64| -> Observed {
            let mut session = interp.new_session(storage);
            let mut gas = GasMeter::new(CostTable::default(), budget);
            let r = session.execute_function(
                &ModuleId::new(call.addr, &call.module),
                &call.function,
                &call.type_args,
                &call.args,
                &mut gas,
            );
            match r {
                Ok(_) => (StatusCode::EXECUTED, None, gas.used()),
                Err(e) => {
                    let loc = e.location.map(|l| {
                        (l.module.rsplit("::").next().unwrap_or_default().to_string(), l.function_index, l.code_offset)
                    });
                    (e.status, loc, gas.used())
                }
            }
        };
        let mut jit_run = |budget: u64| -> Option<Observed> {
            let o = run_jit(jit, &call, Some(budget))?;
            let loc = o.location.map(|l| {
                (jit.module(l.module).map(|m| m.name().to_string()).unwrap_or_default(), l.function, l.code_offset)
            });
            Some((o.status, loc, budget - o.gas_left.unwrap_or(budget)))
        };
        let Some(full) = jit_run(1 << 40) else { continue };
        let want = run_interp(1 << 40);
        let used = want.2;
        // Budgets that run out before, inside and after the closure calls.
        let mut budgets = vec![0, 1, 7, 20, 50];
        for d in [1, 2, 3, 5, 7, 11] {
            budgets.push(used / d);
            budgets.push(used.saturating_sub(d));
        }
        budgets.sort();
        budgets.dedup();
        let mut check = |budget: u64, got: Option<Observed>, want: Observed| {
            compared += 1;
            if want.0 == StatusCode::OUT_OF_GAS {
                out_of_gas += 1;
            }
            if got.as_ref() != Some(&want) {
                failures.push(format!("{id} budget {budget}: jit {got:?} interp {want:?}"));
            }
        };
        check(1 << 40, Some(full), want);
        for b in budgets {
            let got = jit_run(b);
            check(b, got, run_interp(b));
        }
    }
    println!("{compared} metered closure runs compared ({out_of_gas} out of gas), {} differ", failures.len());
    for f in failures.iter().take(40) {
        println!("  {f}");
    }
    assert!(compared > 300 && out_of_gas > 150, "too few runs compared ({compared}, {out_of_gas} out of gas)");
    assert!(failures.is_empty());
}

/// Hand-written closures the Move compiler does not produce: masks that
/// skip parameters, a native as the target (taking a reference), a generic
/// target, closures called from a local twice (the copy the call consumes
/// is elided: captured vectors are copied per call), recursion through a
/// closure down to `CALL_STACK_OVERFLOW` (through the shim and through the
/// fast path of a closure left in its local), an abort in a target called
/// through a closure.
const MASKS: &str = "
version 8
module 0xcafe::masks
use 0x1::vector
    fun length<T0>(l0: &vector<T0>): u64

fun f3(a: u64, b: u8, c: u64): u64
    move_loc a
    ld_u64 100
    mul
    move_loc b
    cast_u64
    ld_u64 10
    mul
    add
    move_loc c
    add
    ret

fun first<T0: drop>(x: T0, y: T0): T0
    move_loc x
    ret

fun check(x: u64): u64
    copy_loc x
    ld_u64 13
    eq
    br_false ok
    ld_u64 77
    abort
ok: move_loc x
    ret

public fun mask_101(a: u64, b: u8, c: u64): u64
    local f: |u8|u64
    move_loc a
    move_loc c
    pack_closure f3, 5
    st_loc f
    move_loc b
    move_loc f
    call_closure <|u8|u64>
    ret

public fun mask_010(a: u64, b: u8, c: u64): u64
    local f: |u64, u64|u64
    move_loc b
    pack_closure f3, 2
    st_loc f
    move_loc a
    move_loc c
    move_loc f
    call_closure <|u64, u64|u64>
    ret

public fun mask_all(a: u64, b: u8, c: u64): u64
    move_loc a
    move_loc b
    move_loc c
    pack_closure f3, 7
    call_closure <||u64>
    ret

public fun native_len(v: vector<u64>): u64
    local f: |&vector<u64>|u64
    pack_closure vector::length<u64>, 0
    st_loc f
    borrow_loc v
    move_loc f
    call_closure <|&vector<u64>|u64>
    ret

public fun generic_first(v: vector<u8>, w: vector<u8>): vector<u8>
    local f: |vector<u8>|vector<u8>
    move_loc v
    pack_closure first<vector<u8>>, 1
    st_loc f
    move_loc w
    move_loc f
    call_closure <|vector<u8>|vector<u8>>
    ret

public fun twice_borrowed(v: vector<u8>, w: vector<u8>): vector<u8>
    local f: |vector<u8>|vector<u8> has copy + drop
    move_loc v
    pack_closure first<vector<u8>>, 1
    st_loc f
    copy_loc w
    copy_loc f
    call_closure <|vector<u8>|vector<u8>>
    pop
    move_loc w
    copy_loc f
    call_closure <|vector<u8>|vector<u8>>
    ret

public fun native_len_twice(v: vector<u64>): u64
    local f: |&vector<u64>|u64 has copy + drop
    pack_closure vector::length<u64>, 0
    st_loc f
    borrow_loc v
    copy_loc f
    call_closure <|&vector<u64>|u64>
    borrow_loc v
    copy_loc f
    call_closure <|&vector<u64>|u64>
    add
    ret

public fun deep(n: u64): u64
    local f: |u64|u64
    copy_loc n
    ld_u64 0
    eq
    br_false rec
    ld_u64 0
    ret
rec: pack_closure deep, 0
    st_loc f
    move_loc n
    ld_u64 1
    sub
    move_loc f
    call_closure <|u64|u64>
    ld_u64 1
    add
    ret

public fun mask_101_borrowed(a: u64, b: u8, c: u64): u64
    local f: |u8|u64 has copy + drop
    move_loc a
    move_loc c
    pack_closure f3, 5
    st_loc f
    copy_loc b
    copy_loc f
    call_closure <|u8|u64>
    move_loc b
    copy_loc f
    call_closure <|u8|u64>
    add
    ret

public fun mask_010_borrowed(a: u64, b: u8, c: u64): u64
    local f: |u64, u64|u64 has copy + drop
    move_loc b
    pack_closure f3, 2
    st_loc f
    copy_loc a
    copy_loc c
    copy_loc f
    call_closure <|u64, u64|u64>
    move_loc a
    move_loc c
    copy_loc f
    call_closure <|u64, u64|u64>
    add
    ret

public fun deep_borrowed(n: u64): u64
    local f: |u64|u64 has copy + drop
    copy_loc n
    ld_u64 0
    eq
    br_false rec
    ld_u64 0
    ret
rec: pack_closure deep_borrowed, 0
    st_loc f
    move_loc n
    ld_u64 1
    sub
    copy_loc f
    call_closure <|u64|u64>
    ld_u64 1
    add
    ret

public fun aborts_inside(x: u64): u64
    local f: |u64|u64
    pack_closure check, 0
    st_loc f
    move_loc x
    move_loc f
    call_closure <|u64|u64>
    ret
";

/// A hand-written call: function, arguments, expected status and first result.
type Row<'a> = (&'a str, Vec<Vec<u8>>, StatusCode, Option<Vec<u8>>);

/// (status, abort code, location (module, function, offset), returns, gas used)
type Full = (StatusCode, Option<u64>, Option<(String, u16, u16)>, Vec<Vec<u8>>, u64);

#[test]
fn hand_written_closures_match_the_interpreter() {
    let m = match movejit_masm::assemble(MASKS) {
        Ok(movejit_masm::Assembled::Module(m)) => m,
        Ok(_) => panic!("expected a module"),
        Err(e) => panic!("assemble: {e}"),
    };
    let bytes = movejit_format::serialize_module(&m);
    let vector = std::fs::read(conformance_dir().join("modules/stdlib3p/vector.mv")).expect("vector.mv");
    let mut storage = InMemoryStorage::default();
    let interp = Engine::new(EngineConfig::aptos());
    let mut jits = Vec::new();
    for cost in [None, Some(CostTable::default())] {
        let mut jit = JitEngine::new(JitConfig { cost, ..JitConfig::default() }).expect("engine");
        for b in [&vector, &bytes] {
            let module = decode_module(b).expect("decodes");
            storage.publish(ModuleId::new(*module.address(), module.name()), b.clone());
            jit.add_module(module).expect("added");
        }
        jits.push(jit);
    }
    let u64s = |xs: &[u64]| -> Vec<u8> {
        let mut out = vec![xs.len() as u8];
        xs.iter().for_each(|x| out.extend(x.to_le_bytes()));
        out
    };
    let b = |x: u64| x.to_le_bytes().to_vec();
    // (function, arguments, expected status, expected first result)
    let table: Vec<Row> = vec![
        ("mask_101", vec![b(1), vec![2], b(3)], StatusCode::EXECUTED, Some(b(123))),
        ("mask_010", vec![b(4), vec![5], b(6)], StatusCode::EXECUTED, Some(b(456))),
        ("mask_all", vec![b(7), vec![8], b(9)], StatusCode::EXECUTED, Some(b(789))),
        ("mask_101", vec![b(u64::MAX), vec![0], b(0)], StatusCode::ARITHMETIC_ERROR, None),
        ("native_len", vec![u64s(&[5, 6, 7])], StatusCode::EXECUTED, Some(b(3))),
        ("generic_first", vec![vec![2, 1, 2], vec![1, 9]], StatusCode::EXECUTED, Some(vec![2, 1, 2])),
        ("twice_borrowed", vec![vec![2, 1, 2], vec![1, 9]], StatusCode::EXECUTED, Some(vec![2, 1, 2])),
        ("native_len_twice", vec![u64s(&[5, 6, 7])], StatusCode::EXECUTED, Some(b(6))),
        ("deep", vec![b(500)], StatusCode::EXECUTED, Some(b(500))),
        ("deep", vec![b(5000)], StatusCode::CALL_STACK_OVERFLOW, None),
        // Borrowed sites: the fast path into compiled code (closure_fast).
        ("mask_101_borrowed", vec![b(1), vec![2], b(3)], StatusCode::EXECUTED, Some(b(246))),
        ("mask_101_borrowed", vec![b(u64::MAX), vec![0], b(0)], StatusCode::ARITHMETIC_ERROR, None),
        ("mask_010_borrowed", vec![b(4), vec![5], b(6)], StatusCode::EXECUTED, Some(b(912))),
        ("deep_borrowed", vec![b(500)], StatusCode::EXECUTED, Some(b(500))),
        ("deep_borrowed", vec![b(5000)], StatusCode::CALL_STACK_OVERFLOW, None),
        ("aborts_inside", vec![b(12)], StatusCode::EXECUTED, Some(b(12))),
        ("aborts_inside", vec![b(13)], StatusCode::ABORTED, None),
    ];
    let addr = AccountAddress::from_u64(0xcafe);
    let mut bad = Vec::new();
    let mut out_of_gas = 0;
    for (f, args, status, first) in &table {
        let run_interp = |budget: Option<u64>| -> Full {
            let mut session = interp.new_session(&storage);
            let mut gas = match budget {
                Some(b) => GasMeter::new(CostTable::default(), b),
                None => GasMeter::unmetered(),
            };
            match session.execute_function(&ModuleId::new(addr, "masks"), f, &[], args, &mut gas) {
                Ok(r) => (StatusCode::EXECUTED, None, None, r.returns, gas.used()),
                Err(e) => {
                    let loc = e.location.map(|l| {
                        (l.module.rsplit("::").next().unwrap_or_default().to_string(), l.function_index, l.code_offset)
                    });
                    (e.status, e.sub_status, loc, Vec::new(), gas.used())
                }
            }
        };
        let call =
            Call { addr, module: "masks".into(), function: f.to_string(), type_args: Vec::new(), args: args.clone() };
        let run = |jit: &mut JitEngine, budget: Option<u64>| -> Option<Full> {
            let o = run_jit(jit, &call, budget)?;
            let loc = o.location.map(|l| {
                (jit.module(l.module).map(|m| m.name().to_string()).unwrap_or_default(), l.function, l.code_offset)
            });
            let used = budget.map_or(0, |b| b - o.gas_left.unwrap_or(b));
            Some((o.status, o.abort_code, loc, o.returns, used))
        };
        let want = run_interp(None);
        if want.0 != *status || (first.is_some() && want.3.first() != first.as_ref()) {
            bad.push(format!("{f}: the interpreter gives {want:?}, the table says {status:?} {first:?}"));
        }
        let got = run(&mut jits[0], None);
        if got.as_ref() != Some(&want) {
            bad.push(format!("{f} unmetered: jit {got:?} interp {want:?}"));
        }
        let used = run_interp(Some(1 << 40)).4;
        let mut budgets =
            vec![1 << 40, 0, 1, 9, used / 2, used / 3, used.saturating_sub(1), used.saturating_sub(3), used];
        budgets.sort();
        budgets.dedup();
        for budget in budgets {
            let want = run_interp(Some(budget));
            out_of_gas += (want.0 == StatusCode::OUT_OF_GAS) as usize;
            let got = run(&mut jits[1], Some(budget));
            if got.as_ref() != Some(&want) {
                bad.push(format!("{f} budget {budget}: jit {got:?} interp {want:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
    assert!(out_of_gas >= 30, "only {out_of_gas} runs ran out of gas");
}
