//! `movejit run` of a module that grows a vector forever ends as a process
//! that exited (not one killed by a signal) and reports
//! `MEMORY_LIMIT_EXCEEDED` at the growing instruction, on every executor.

use std::path::PathBuf;
use std::process::Command;

const SOURCE: &str = "version 9
module 0xcafe::grow

public fun endless()
    local v: vector<vector<u64>>
    vec_pack <vector<u64>>, 0
    st_loc v
L0: mut_borrow_loc v
    ld_u64 7
    vec_pack <u64>, 1
    vec_push_back <vector<u64>>
    branch L0
";

/// The module assembled into a fresh directory of its own.
fn module_file() -> PathBuf {
    let m = movejit_testkit::masm::assemble_module(SOURCE);
    let dir = std::env::temp_dir().join(format!("movejit-memory-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("grow.mv");
    std::fs::write(&path, movejit_format::serialize_module(&m)).expect("write module");
    path
}

#[test]
fn endless_growth_exits_with_the_status() {
    let path = module_file();
    for engine in ["interp", "jit", "auto"] {
        let out = Command::new(env!("CARGO_BIN_EXE_movejit"))
            .args(["run", "--engine", engine, "--memory-limit", "4000000"])
            .arg(&path)
            .args(["--function", "0xcafe::grow::endless"])
            .output()
            .expect("run movejit");
        let stdout = String::from_utf8_lossy(&out.stdout);
        // An exit code (the run reports the call's status), not a signal.
        assert!(
            out.status.code().is_some(),
            "{engine}: {:?}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("status: MEMORY_LIMIT_EXCEEDED (4028)"), "{engine}: {stdout}");
        assert!(
            stdout.contains("location: 0x") && stdout.contains("::grow::endless (function #0, offset 4)"),
            "{engine}: {stdout}"
        );
    }
    // The same --json object on every executor, apart from `engine`.
    let json_of = |engine: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_movejit"))
            .args(["run", "--json", "--engine", engine, "--memory-limit", "4000000"])
            .arg(&path)
            .args(["--function", "0xcafe::grow::endless"])
            .output()
            .expect("run movejit");
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        v.as_object_mut().expect("object").remove("engine");
        v
    };
    let interp = json_of("interp");
    assert_eq!(interp["status"], "MEMORY_LIMIT_EXCEEDED", "{interp}");
    assert_eq!(interp["message"], "memory limit exceeded", "{interp}");
    for engine in ["jit", "auto"] {
        assert_eq!(json_of(engine), interp, "{engine} differs from interp");
    }
    let _ = std::fs::remove_dir_all(path.parent().expect("dir"));
}
