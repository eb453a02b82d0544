//! `movejit run` meters by default (a runaway loop ends with `OUT_OF_GAS`),
//! and its gas flags mean the same on every executor: `--max-gas` (the
//! schedule's external units), `--gas` (internal units), `--unmetered`,
//! `--gas-schedule` (`aptos`, the default for Aptos-flavoured modules, or
//! `unit`). `--json` reports the gas in the names outside scripts read.

mod common;

use common::movejit;
use std::path::PathBuf;

const SOURCE: &str = "version 7
module 0xcafe::spin
public fun spin(): u64
    local i: u64
    ld_u64 0
    st_loc i
L0: move_loc i
    ld_u64 1
    add
    st_loc i
    branch L0

public fun count(n: u64): u64
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
";

/// A module of its own (the size of `spin`'s module is priced in its gas).
const HOARD: &str = "version 7
module 0xcafe::hoard
public fun hoard(n: u64, copies: u64): u64
    local v: vector<u64>
    local all: vector<vector<u64>>
    local i: u64
    vec_pack <u64>, 0
    st_loc v
    vec_pack <vector<u64>>, 0
    st_loc all
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
L1: ld_u64 0
    st_loc i
L2: copy_loc i
    copy_loc copies
    lt
    br_false L3
    mut_borrow_loc all
    copy_loc v
    vec_push_back <vector<u64>>
    move_loc i
    ld_u64 1
    add
    st_loc i
    branch L2
L3: borrow_loc all
    vec_len <vector<u64>>
    ret
";

/// The module `name` of `source`, assembled into a folder of this test's own.
fn assembled(name: &str, source: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("movejit-gas-flags-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join(format!("{name}.masm"));
    std::fs::write(&src, source).expect("write source");
    let (code, out, err) = movejit(&["asm", src.to_str().expect("path"), "-o", dir.to_str().expect("path")]);
    assert_eq!(code, Some(0), "asm: {out}{err}");
    dir.join(format!("{name}.mv"))
}

#[test]
fn gas_flags_mean_the_same_on_every_executor() {
    let mv = assembled("spin", SOURCE);
    let mv = mv.to_str().expect("path");
    // (function, argument, flags, expected exit code, status, gas used: exact, or None for "some")
    type Case<'a> = (&'a str, &'a str, &'a [&'a str], i32, &'a str, Option<u64>);
    let cases: &[Case] = &[
        // Aptos's schedule by default: external units of 1,000,000.
        ("spin", "", &["--max-gas", "1000"], 0, "OUT_OF_GAS", Some(1_000_000_000)),
        ("spin", "", &["--gas", "500"], 0, "OUT_OF_GAS", Some(500)),
        // The default balance (20,000,000 units) outlasts the execution
        // limit (9,200,000,000 internal units): the last charge passes it.
        ("spin", "", &[], 0, "EXECUTION_LIMIT_REACHED", Some(9_200_001_620)),
        ("spin", "", &["--gas-schedule", "unit", "--max-gas", "1000"], 0, "OUT_OF_GAS", Some(1000)),
        // Metered by default: a terminating call reports what it used.
        ("count", "100", &[], 0, "EXECUTED", None),
        ("count", "100", &["--unmetered"], 0, "EXECUTED", Some(0)),
        ("count", "100", &["--gas-schedule", "unit"], 0, "EXECUTED", None),
        ("count", "100", &["--gas-schedule", "aptos"], 0, "EXECUTED", None),
    ];
    let mut wrong = Vec::new();
    for engine in ["interp", "jit", "auto"] {
        // Gas used by `count` with no schedule named, under `aptos` and `unit`.
        let (mut default_used, mut aptos_used, mut unit_used) = (None, None, None);
        for &(f, arg, flags, exit, status, gas) in cases {
            let function = format!("0xcafe::spin::{f}");
            let mut args = vec!["run", "--json", "--engine", engine, mv, "--function", &function];
            if !arg.is_empty() {
                args.extend_from_slice(&["--args", arg]);
            }
            args.extend_from_slice(flags);
            let (code, out, err) = movejit(&args);
            let v: serde_json::Value = match serde_json::from_str(out.lines().last().unwrap_or_default()) {
                Ok(v) => v,
                Err(e) => {
                    wrong.push(format!("{engine} {f} {flags:?}: {e}: {out}{err}"));
                    continue;
                }
            };
            let used = v["gas_used"].as_u64().unwrap_or(u64::MAX);
            let gas_ok = match gas {
                Some(g) => used == g,
                None => used > 0 && used < u64::MAX,
            };
            if code != Some(exit) || v["status"] != status || !gas_ok {
                wrong.push(format!("{engine} {f} {flags:?}: exit {code:?}, {} gas {used}", v["status"]));
            }
            // The parts add up; external units round up (the unit
            // schedule's are its internal ones).
            let part = |k: &str| v[k].as_u64().unwrap_or(u64::MAX);
            let unit = flags.contains(&"unit");
            let external = if unit { used } else { used.div_ceil(1_000_000) };
            if part("execution_gas_used").checked_add(part("io_gas_used")) != Some(used)
                || part("gas_used_external") != external
                || !v.as_object().is_some_and(|o| o.contains_key("memory_used"))
            {
                wrong.push(format!("{engine} {f} {flags:?}: gas fields {v}"));
            }
            match (f, flags) {
                ("count", []) => default_used = Some(used),
                ("count", ["--gas-schedule", "unit"]) => unit_used = Some(used),
                ("count", ["--gas-schedule", "aptos"]) => aptos_used = Some(used),
                _ => {}
            }
        }
        // Aptos's schedule is the default for an Aptos-flavoured module.
        assert_eq!(default_used, aptos_used, "{engine}");
        assert!(default_used.is_some() && default_used != unit_used, "{engine}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Flags that contradict each other are refused by the parser.
    for flags in [&["--unmetered", "--gas", "5"][..], &["--max-gas", "5", "--gas", "5"]] {
        let mut args = vec!["run", mv, "--function", "0xcafe::spin::spin"];
        args.extend_from_slice(flags);
        let (code, _, _) = movejit(&args);
        assert_eq!(code, Some(2), "{flags:?}");
    }
}

/// Aptos's memory quota (`txn.memory_quota`, 10,000,000 abstract units):
/// `hoard(n, copies)` fills a `vector<u64>` of `n` elements (8 units each)
/// and keeps `copies` copies of it (each its elements plus 40 for the
/// vector in the outer one). Peak memory is reported as `memory_used` (null
/// under the unit schedule), and passing the quota ends the call with
/// `MEMORY_LIMIT_EXCEEDED`, the whole quota used.
#[test]
fn aptos_memory_is_reported_and_limited() {
    let mv = assembled("hoard", HOARD);
    let mv = mv.to_str().expect("path");
    // (n, copies, flags, status, memory_used)
    type Case<'a> = (&'a str, &'a str, &'a [&'a str], &'a str, Option<u64>);
    let cases: &[Case] = &[
        ("1000", "2", &[], "EXECUTED", Some(8 * 1000 + 2 * (8 * 1000 + 40))),
        ("10", "0", &[], "EXECUTED", Some(80)),
        ("100000", "13", &[], "MEMORY_LIMIT_EXCEEDED", Some(10_000_000)),
        ("1000", "2", &["--gas-schedule", "unit"], "EXECUTED", None),
    ];
    let mut wrong = Vec::new();
    for engine in ["interp", "jit", "auto"] {
        for &(n, copies, flags, status, memory) in cases {
            let mut args = vec!["run", mv, "--function", "0xcafe::hoard::hoard", "--engine", engine, "--json"];
            args.extend_from_slice(&["--args", n, copies]);
            args.extend_from_slice(flags);
            let (_, out, err) = movejit(&args);
            let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap_or_default())
                .unwrap_or_else(|e| panic!("{engine} hoard({n}, {copies}): {e}: {out}{err}"));
            if v["status"] != status || v["memory_used"].as_u64() != memory {
                wrong.push(format!(
                    "{engine} hoard({n}, {copies}) {flags:?}: {} memory_used {}",
                    v["status"], v["memory_used"]
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `movejit compile --metered` shows the code the engine runs under Aptos's
/// schedule: it keeps the gas left in a register and writes it back to
/// `ExecContext::gas_left` before it returns; the unmetered code never
/// writes it.
#[test]
fn compile_shows_metered_code_on_request() {
    // A folder of its own (the module is `spin`, so is the file).
    let mv = assembled("compile", SOURCE).with_file_name("spin.mv");
    let mv = mv.to_str().expect("path");
    let gas_left = format!("+{}", std::mem::offset_of!(movejit_runtime::flat::ExecContext, gas_left));
    let gas_stores = |flags: &[&str]| {
        let args = [&["compile", mv, "0xcafe::spin::count", "--emit", "clif"][..], flags].concat();
        let (code, out, err) = movejit(&args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        out.lines().filter(|l| l.contains("store") && l.ends_with(&gas_left)).count()
    };
    assert_eq!(gas_stores(&[]), 0, "unmetered code writes the gas left");
    assert!(gas_stores(&["--metered"]) > 0, "metered code never writes the gas left");
}
