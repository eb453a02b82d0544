//! `movejit bench`'s report contract: Sui builds run as `NAME@sui` with the
//! Sui VM as their reference, `--json` rows carry it, `--plot` draws them.

mod common;

use common::movejit;
use serde_json::Value;
use std::path::PathBuf;

fn shared_bench() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/bench")
}

#[test]
fn sui_builds_run_with_the_sui_vm_as_reference() {
    let dir = std::env::temp_dir().join(format!("movejit-bench-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, svg) = (dir.join("r.json"), dir.join("r.svg"));
    let suite = shared_bench();
    let (code, out, err) = movejit(&[
        "bench",
        suite.to_str().unwrap(),
        "--engine",
        "interp,jit",
        "--iters",
        "1",
        "--size",
        "smallest",
        "--filter",
        "fib",
        "--json",
        json.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("over the Sui VM"), "{out}");

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = doc["results"].as_array().unwrap();
    for engine in ["interp", "jit"] {
        let row = |name: &str| {
            rows.iter()
                .find(|r| r["name"] == name && r["engine"] == engine)
                .unwrap_or_else(|| panic!("{name} {engine}"))
        };
        let (aptos, sui) = (row("fib"), row("fib@sui"));
        for r in [aptos, sui] {
            assert_eq!(r["kind"], "call");
            assert_eq!(r["correct"], true, "{r}");
            assert!(r["median_ns"].as_u64().unwrap() > 0);
        }
        assert!(aptos["reference"]["aptos_vm_ns"].as_u64().is_some());
        assert!(sui["reference"]["aptos_vm_ns"].is_null(), "a Sui build is compared with the Sui VM: {sui}");
        assert!(sui["reference"]["sui_vm_ns"].as_u64().is_some());
    }

    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.starts_with("<svg"));
    assert!(picture.contains("fib@sui") && picture.contains("interp") && picture.contains("jit"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `generics` keeps a struct in a local it overwrites every iteration; Aptos's
/// memory tracker releases nothing on `st_loc`, so at its reference size the
/// call ends at the memory quota once `--metered` lifts the execution limit
/// (bench_gas.jsonl's peak at the limit is reproduced by the aptos_gas test).
/// That is the program's status, the same on every executor, not a failure.
#[test]
fn metered_memory_quota_is_a_status() {
    let suite = shared_bench();
    let (code, out, err) = movejit(&[
        "bench",
        suite.to_str().unwrap(),
        "--engine",
        "interp,jit",
        "--iters",
        "1",
        "--metered",
        "--filter",
        "generics",
    ]);
    assert_eq!(code, Some(0), "stdout:\n{out}\nstderr:\n{err}");
    for engine in ["interp", "jit"] {
        let line = out
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{engine} metered (Aptos): MEMORY_LIMIT_EXCEEDED")))
            .unwrap_or_else(|| panic!("{engine}: {out}"));
        assert!(line.contains("bench_generics #35") && line.contains("not a failure"), "{line}");
    }
    assert!(!out.contains("FAILED"), "{out}");
}

/// Stream rows keep the issue's `--json` fields, add the last quarter's
/// median, and `--transactions` sets every stream's length.
#[test]
fn stream_rows_carry_their_fields_and_transactions_sets_the_length() {
    let dir = std::env::temp_dir().join(format!("movejit-bench-streams-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("s.json");
    let streams = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../benches/streams");
    let (code, out, err) = movejit(&[
        "bench",
        streams.to_str().unwrap(),
        "--engine",
        "interp,auto",
        "--filter",
        "sui_table_adds",
        "--transactions",
        "12",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "stdout:\n{out}\nstderr:\n{err}");
    assert!(out.contains("warm p50 us"), "{out}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = doc["results"].as_array().unwrap();
    for engine in ["interp", "auto"] {
        let r = rows.iter().find(|r| r["engine"] == engine).unwrap_or_else(|| panic!("{engine}: {doc}"));
        assert_eq!(
            (r["name"].as_str(), r["kind"].as_str(), &r["correct"]),
            (Some("sui_table_adds"), Some("stream"), &Value::Bool(true)),
            "{r}"
        );
        assert_eq!(r["transactions"], 12, "{r}");
        for field in ["tx_per_s", "first_tx_ns", "p50_tx_ns", "p99_tx_ns", "warm_p50_tx_ns"] {
            assert!(r[field].as_f64().is_some_and(|v| v > 0.0), "{field}: {r}");
        }
        assert!(r.get("compile_ns").is_some(), "{r}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
